package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// netState is the server's listening side: its sockets (plain `port` and
// TLS `tls-port`, on every `bind` address) and the settings that accepted
// connections read without the engine lock.
type netState struct {
	mu        sync.Mutex // guards listeners and serving
	listeners []*listener
	serving   bool // Serve has started: new listeners get accept loops

	tlsConf   atomic.Pointer[tls.Config] // nil until TLS is configured
	protected atomic.Bool                // protected-mode
	keepalive atomic.Int64               // tcp-keepalive, seconds
	ioLoop    atomic.Bool                // io-model loop: new plain-TCP connections join an event loop
	pending   atomic.Int64               // accepted, not yet clients (TLS handshake)
	level     slog.LevelVar              // loglevel
}

type listener struct {
	ln   net.Listener
	tls  bool
	unix bool // unixsocket: opened at start-up only (immutable, as in Redis)
}

// errTLSStartup is Redis's start-up error when tls-port is set but the
// TLS settings do not load (the detail is logged).
var errTLSStartup = errors.New("Failed to configure TLS. Check logs for more info.")

// tlsHandshakeTimeout bounds a TLS handshake, so a peer that connects to
// tls-port and sends nothing cannot hold a goroutine and a socket forever
// (Redis has no such bound; `timeout` covers only established clients).
const tlsHandshakeTimeout = 10 * time.Second

// Listen opens the listening sockets. With Config.Addr set (tests, embedded
// use) the plain listener is that address (port 0 picks a free port) and
// CONFIG's port and bind record what was bound; otherwise they come from
// the `bind`, `port` and `tls-port` parameters (LoadConfig); `unixsocket`
// adds a unix-socket listener. A tls-port needs a valid TLS configuration.
// On failure nothing stays open.
func (s *Server) Listen() (err error) {
	s.door.Lock()
	defer s.door.Unlock()
	s.net.mu.Lock()
	defer s.net.mu.Unlock()
	defer func() {
		if err != nil {
			for _, l := range s.net.listeners {
				l.ln.Close()
			}
			s.net.listeners = nil
		}
	}()
	// the metrics endpoint opens last (metrics.go); its failure closes
	// the others (the deferred close above runs after this)
	defer func() {
		if err == nil {
			err = s.openMetrics()
		}
	}()
	if s.cfg.Addr != "" {
		ln, err := s.listenOne(s.cfg.Addr)
		if err != nil {
			return err
		}
		s.net.listeners = append(s.net.listeners, &listener{ln: ln})
		if ta, ok := ln.Addr().(*net.TCPAddr); ok {
			s.conf.params["port"] = strconv.Itoa(ta.Port)
			s.conf.params["bind"] = ta.IP.String()
		}
		if why := s.configureTLS(); why != "" {
			return errTLSStartup
		}
		if err := s.openListeners(false, true); err != nil {
			return err
		}
		return s.listenUnix()
	}
	if why := s.configureTLS(); why != "" {
		return errTLSStartup
	}
	if err := s.openListeners(true, true); err != nil {
		return err
	}
	if err := s.listenUnix(); err != nil {
		return err
	}
	if len(s.net.listeners) == 0 {
		return errors.New("Configured to not listen anywhere, exiting.")
	}
	return nil
}

// listenOne opens one TCP listener. Go would turn keepalive on for every
// accepted connection (15 s); tcp-keepalive decides instead (accepted).
func (s *Server) listenOne(addr string) (net.Listener, error) {
	network := "tcp4"
	if host, _, _ := net.SplitHostPort(addr); strings.Contains(host, ":") {
		network = "tcp6"
	}
	lc := net.ListenConfig{KeepAlive: -1}
	return lc.Listen(context.Background(), network, addr)
}

// bindAddrs is the `bind` parameter as addresses: "*" is every IPv4
// address, "::*" every IPv6 one; a leading "-" marks an address that may
// be missing (Redis skips it when the system does not have it).
func bindAddrs(v string) (addrs []string, optional []bool) {
	for _, a := range strings.Fields(v) {
		opt := strings.HasPrefix(a, "-")
		a = strings.TrimPrefix(a, "-")
		switch a {
		case "*":
			a = "0.0.0.0"
		case "::*":
			a = "::"
		}
		addrs = append(addrs, a)
		optional = append(optional, opt)
	}
	return
}

// openListeners opens the plain and/or TLS listeners named by the bind,
// port and tls-port parameters (a port of 0 opens none, as in Redis). On
// failure it closes what it opened of those kinds and reports the first
// address that failed. The caller holds net.mu and the engine lock.
func (s *Server) openListeners(plain, secure bool) error {
	addrs, optional := bindAddrs(s.conf.params["bind"])
	kinds := []struct {
		on    bool
		param string
		tls   bool
	}{{plain, "port", false}, {secure, "tls-port", true}}
	for _, k := range kinds {
		port := s.conf.params[k.param]
		if !k.on || port == "0" {
			continue
		}
		for i, a := range addrs {
			ln, err := s.listenOne(net.JoinHostPort(a, port))
			if err != nil {
				s.log.Warn(fmt.Sprintf("Warning: Could not create server TCP listening socket %s:%s: %v", a, port, err))
				if errors.Is(err, syscall.EAFNOSUPPORT) || optional[i] && errors.Is(err, syscall.EADDRNOTAVAIL) {
					continue
				}
				if plain {
					s.closeListeners(false)
				}
				if secure {
					s.closeListeners(true)
				}
				kind := "TCP"
				if k.tls {
					kind = "TLS"
				}
				return fmt.Errorf("Failed listening on port %s (%s), aborting.", port, kind)
			}
			l := &listener{ln: ln, tls: k.tls}
			s.net.listeners = append(s.net.listeners, l)
			if s.net.serving {
				s.startAccept(l)
			}
		}
	}
	return nil
}

// closeListeners closes the TLS listeners (secure) or the plain TCP ones.
// Established connections stay, as in Redis.
func (s *Server) closeListeners(secure bool) {
	keep := s.net.listeners[:0]
	for _, l := range s.net.listeners {
		if !l.unix && l.tls == secure {
			l.ln.Close()
		} else {
			keep = append(keep, l)
		}
	}
	s.net.listeners = keep
}

// relisten reopens the plain and/or TLS listeners after CONFIG SET port,
// tls-port or bind (Redis closes the old sockets first, then binds).
func (s *Server) relisten(plain, secure bool) error {
	s.net.mu.Lock()
	defer s.net.mu.Unlock()
	if s.closing.Load() {
		return nil
	}
	if plain {
		s.closeListeners(false)
	}
	if secure {
		s.closeListeners(true)
	}
	return s.openListeners(plain, secure)
}

// Addr is the address of the first plain listener (the first TLS one when
// port is 0; nil when none).
func (s *Server) Addr() net.Addr { return s.firstAddr(false) }

// TLSAddr is the address of the first TLS listener (nil when none).
func (s *Server) TLSAddr() net.Addr { return s.firstAddr(true) }

func (s *Server) firstAddr(secure bool) net.Addr {
	s.net.mu.Lock()
	defer s.net.mu.Unlock()
	for _, l := range s.net.listeners {
		if !l.unix && l.tls == secure {
			return l.ln.Addr()
		}
	}
	if !secure && len(s.net.listeners) > 0 {
		return s.net.listeners[0].ln.Addr()
	}
	return nil
}

// Serve accepts connections on every listener until Close.
func (s *Server) Serve() error {
	s.wg.Add(1)
	go s.cron()
	s.startMap() // (cluster mode with a Raft node: cluster_map.go)
	s.startHandover()
	s.awaitCluster() // (cluster_start.go)
	s.net.mu.Lock()
	s.net.serving = true
	for _, l := range s.net.listeners {
		s.startAccept(l)
	}
	s.net.mu.Unlock()
	<-s.stop
	// return once Close is over: the binary exits when Serve returns, and
	// the node must be closed (its log synced) first
	<-s.closed
	return nil
}

func (s *Server) startAccept(l *listener) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.acceptLoop(l)
	}()
}

func (s *Server) acceptLoop(l *listener) {
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || s.closing.Load() {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			s.log.Warn("Accepting client connection: " + err.Error())
			return
		}
		s.setKeepalive(nc)
		if l.unix {
			nc = unixConn{nc, unixAddr(l.ln.Addr().String() + ":0")}
		}
		if l.tls {
			conf := s.net.tlsConf.Load()
			if conf == nil {
				nc.Close()
				continue
			}
			nc = tls.Server(nc, conf)
		}
		if s.refuseClient(nc) {
			continue
		}
		s.net.pending.Add(1)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.admit(nc)
		}()
	}
}

// admit finishes accepting a connection (TLS handshake, protected mode)
// and serves it.
func (s *Server) admit(nc net.Conn) {
	registered := false
	defer func() {
		if !registered {
			s.net.pending.Add(-1)
		}
	}()
	if tc, ok := nc.(*tls.Conn); ok {
		tc.SetDeadline(time.Now().Add(tlsHandshakeTimeout))
		if err := tc.Handshake(); err != nil {
			s.log.Warn("Error accepting a client connection: " + err.Error())
			nc.Close()
			return
		}
		tc.SetDeadline(time.Time{})
	}
	if s.protectedRefuses(nc) {
		return
	}
	s.stats.connsReceived.Add(1)
	if s.log.Enabled(context.Background(), levelVerbose) {
		s.log.Log(context.Background(), levelVerbose, acceptedLine(nc))
	}
	if s.net.ioLoop.Load() {
		if _, ok := s.admitLoop(nc); ok {
			s.net.pending.Add(-1)
			registered = true
			return
		}
	}
	cl := s.newClient(nc)
	s.net.pending.Add(-1)
	registered = true
	s.serveClient(cl, nil)
}

// setKeepalive applies tcp-keepalive to an accepted connection as Redis's
// anetKeepAlive does: probes after `n` idle seconds, then every n/3
// seconds, 3 of them; 0 turns keepalive off.
func (s *Server) setKeepalive(nc net.Conn) {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return
	}
	n := s.net.keepalive.Load()
	if n <= 0 {
		tc.SetKeepAlive(false)
		return
	}
	intvl := max(n/3, 1)
	tc.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: time.Duration(n) * time.Second, Interval: time.Duration(intvl) * time.Second, Count: 3})
}

var (
	applyPort = &applyFn{run: func(s *Server) string {
		return s.relistenWhy(true, false, "Unable to listen on this port. Check server logs.")
	}}
	applyBind    = &applyFn{run: func(s *Server) string { return s.relistenWhy(true, true, "Failed to bind to specified addresses.") }}
	applyTLSPort = &applyFn{run: func(s *Server) string {
		if why := s.configureTLS(); why != "" {
			return why
		}
		return s.relistenWhy(false, true, "Unable to listen on this port. Check server logs.")
	}}
	applyTLSCfg = &applyFn{volatile: true, run: (*Server).configureTLS}
	applyTLSSet = &applyFn{run: (*Server).configureTLS}
)

func (s *Server) relistenWhy(plain, secure bool, why string) string {
	if err := s.relisten(plain, secure); err != nil {
		return why
	}
	return ""
}

// applyNet pushes the network parameters that connections read without
// the engine lock (called by applyConfig).
func (s *Server) applyNet() {
	s.net.protected.Store(s.conf.params["protected-mode"] == "yes")
	if n, err := strconv.ParseInt(s.conf.params["tcp-keepalive"], 10, 64); err == nil {
		s.net.keepalive.Store(n)
	}
	s.net.level.Set(logLevels[s.conf.params["loglevel"]])
	s.net.ioLoop.Store(s.conf.params["io-model"] == "loop")
}

// rawConn is the socket under a connection (TCP, TLS or unix), for its
// file descriptor.
func rawConn(nc net.Conn) (syscall.Conn, bool) {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	return sc, ok
}

// acceptedLine is Redis's verbose log line for a new connection.
func acceptedLine(nc net.Conn) string {
	switch a := nc.RemoteAddr().(type) {
	case unixAddr:
		return "Accepted connection to " + strings.TrimSuffix(string(a), ":0")
	case *net.TCPAddr:
		return "Accepted " + a.IP.String() + ":" + strconv.Itoa(a.Port)
	}
	return "Accepted " + nc.RemoteAddr().String()
}

const errMaxClients = "-ERR max number of clients reached\r\n"

// refuseClient turns a connection away when maxclients are connected, as
// Redis does: one error reply, then close.
func (s *Server) refuseClient(nc net.Conn) bool {
	s.mu.Lock()
	n := int64(len(s.clients)) + s.net.pending.Load() // handshaking ones count, as in Redis
	s.mu.Unlock()
	if n < s.maxClients.Load() {
		return false
	}
	s.stats.rejectedConns.Add(1)
	if _, secure := nc.(*tls.Conn); !secure { // no handshake yet: Redis sends nothing on TLS
		nc.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = nc.Write([]byte(errMaxClients))
	}
	nc.Close()
	return true
}
