package server

// The Prometheus endpoint (metrics-port, metrics-bind): an HTTP listener
// of its own, apart from the Redis ports, serving /metrics from a
// registry that holds the scrape-time collector (metrics_collector.go)
// and client_golang's Go runtime and process collectors. It is off until
// metrics-port is set (0, the default): an operator opts in to a second
// listener, which then binds to loopback unless metrics-bind says
// otherwise, since /metrics names policies and the data set's size and
// has no authentication. Both settings apply at once through CONFIG SET
// (the listener is reopened; a port that cannot be bound refuses the SET
// and keeps the old one).

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsState is the endpoint: its listener and server, guarded by mu
// (CONFIG SET holds the engine lock too; a scrape takes neither).
type metricsState struct {
	mu   sync.Mutex
	ln   net.Listener
	addr string // metrics-bind:metrics-port as configured ("" while off)
	srv  *http.Server
	reg  *prometheus.Registry // built on the first open, kept across reopenings
	coll *metricsCollector
}

// errMetricsListen refuses a metrics-port or metrics-bind that cannot be
// bound (CONFIG SET; at start-up Listen fails with the error itself).
const errMetricsListen = "Unable to listen on metrics-bind:metrics-port. Check server logs."

var applyMetrics = &applyFn{run: func(s *Server) string {
	if err := s.openMetrics(); err != nil {
		s.log.Warn("metrics: " + err.Error())
		return errMetricsListen
	}
	return ""
}}

func init() {
	paramApply["metrics-port"] = applyMetrics
	paramApply["metrics-bind"] = applyMetrics
}

// metricsHandler is the endpoint's mux: /metrics, and the status page
// (GET / and /status.json, status_page.go).
func (s *Server) metricsHandler() http.Handler {
	m := &s.metrics
	if m.reg == nil {
		m.coll = newMetricsCollector(s)
		m.reg = prometheus.NewRegistry()
		m.reg.MustRegister(m.coll, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	s.registerStatusPage(mux)
	return mux
}

// openMetrics (re)opens the endpoint as metrics-port and metrics-bind
// say: closed when the port is 0. The new listener is bound while the old
// one still serves, so a refused change keeps the endpoint as it was;
// when that bind fails with the old one open (127.0.0.1 to 0.0.0.0 on
// the same port overlaps), the old one is closed and the bind tried
// again, and if that fails too the old address is taken back. The engine
// lock is held (CONFIG SET, Listen).
func (s *Server) openMetrics() error {
	m := &s.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	port, _ := strconv.Atoi(s.conf.params["metrics-port"])
	want := ""
	if port != 0 {
		want = net.JoinHostPort(s.conf.params["metrics-bind"], strconv.Itoa(port))
	}
	if want == m.addr {
		return nil
	}
	if want == "" {
		m.stop()
		return nil
	}
	ln, err := net.Listen("tcp", want)
	if err != nil && m.ln != nil {
		old := m.addr
		m.stop()
		if ln, err = net.Listen("tcp", want); err != nil {
			if back, err2 := net.Listen("tcp", old); err2 == nil {
				s.serveMetrics(back, old)
			}
			return err
		}
	}
	if err != nil {
		return err
	}
	m.stop()
	s.serveMetrics(ln, want)
	return nil
}

// serveMetrics serves the endpoint on ln (bound to addr, as configured).
// m.mu is held.
func (s *Server) serveMetrics(ln net.Listener, addr string) {
	m := &s.metrics
	m.ln, m.addr = ln, addr
	m.srv = &http.Server{Handler: s.metricsHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func(srv *http.Server) {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Warn("metrics: " + err.Error())
		}
	}(m.srv)
}

// stop closes the endpoint: Close, not Shutdown, since a scrape waiting
// for the engine lock that CONFIG SET holds would make Shutdown wait for
// ever. m.mu is held.
func (m *metricsState) stop() {
	if m.srv != nil {
		m.srv.Close()
	}
	m.srv, m.ln, m.addr = nil, nil, ""
}

// closeMetrics stops the endpoint (Close).
func (s *Server) closeMetrics() {
	m := &s.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stop()
}

// MetricsAddr is the endpoint's address, nil while it is off.
func (s *Server) MetricsAddr() net.Addr {
	m := &s.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ln == nil {
		return nil
	}
	return m.ln.Addr()
}
