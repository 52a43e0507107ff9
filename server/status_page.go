// The status page on the metrics port: GET / is a self-contained HTML page
// (status_page.html, no external assets) that polls GET /status.json and
// shows each policy, its allowed/denied/shadow-denied rates and its top
// refused keys; GET /status.json is the same data for a script.

package server

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"regexp"
	"time"

	"limitdb/engine"
)

//go:embed status_page.html
var statusPageHTML []byte

// statusPageCSP allows the page's own inline script and style and nothing
// else (no external assets, no eval): each by the hash of its text, so a
// key name that made its way into the page could not run as script even
// if the page's escaping failed (it renders names with textContent).
var statusPageCSP = func() string {
	hash := func(tag string) string {
		m := regexp.MustCompile(`(?s)<` + tag + `>(.*?)</` + tag + `>`).FindSubmatch(statusPageHTML)
		if m == nil {
			panic("status_page.html has no <" + tag + ">")
		}
		sum := sha256.Sum256(m[1])
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	return "default-src 'none'; script-src " + hash("script") + "; style-src " + hash("style") + "; connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}()

// statusTopCount and statusTopWindowMs are what the page shows of RL.TOP:
// the five most-refused keys of each policy over the last minute.
const (
	statusTopCount    = 5
	statusTopWindowMs = 60_000
)

// statusLockWait bounds how long a request waits for the engine lock: a
// script running for seconds must not pile up page requests, so the page
// is told "busy" and polls again.
const statusLockWait = time.Second

type statusJSON struct {
	NowMs    int64              `json:"now_ms"`
	Inline   statusCounters     `json:"inline"`
	Policies []statusPolicyJSON `json:"policies"`
}

type statusPolicyJSON struct {
	Name     string         `json:"name"`
	Version  int64          `json:"version"`
	Algo     string         `json:"algo"`
	Limit    int64          `json:"limit"`
	PeriodMs int64          `json:"period_ms"`
	Burst    int64          `json:"burst"`
	Shadow   bool           `json:"shadow"`
	Desc     string         `json:"desc"`
	Stats    statusCounters `json:"stats"`
	Top      []statusTopKey `json:"top"`
}

type statusCounters struct {
	Requests     int64 `json:"requests"`
	Units        int64 `json:"units"`
	Allowed      int64 `json:"allowed"`
	Denied       int64 `json:"denied"`
	ShadowDenied int64 `json:"shadow_denied"`
	NearLimit    int64 `json:"near_limit"`
	Errors       int64 `json:"errors"`
	SinceMs      int64 `json:"since_ms"`
}

type statusTopKey struct {
	Key   string `json:"key"`
	Count int64  `json:"count"`
	Err   int64  `json:"err"`
}

func toStatusCounters(st *engine.RLStat) statusCounters {
	return statusCounters{st.Requests, st.Units, st.Allowed, st.Denied, st.ShadowDenied, st.NearLimit, st.Errors, st.SinceMs}
}

// registerStatusPage serves the status page and its data on mux (the
// metrics port's).
func (s *Server) registerStatusPage(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", statusPageCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		w.Write(statusPageHTML)
	})
	mux.HandleFunc("GET /status.json", func(w http.ResponseWriter, r *http.Request) {
		st, ok := s.statusSnapshot()
		if !ok {
			http.Error(w, "busy: the engine lock is held (a long script?); try again", http.StatusServiceUnavailable)
			return
		}
		b, err := json.Marshal(st)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(b)
	})
}

// statusSnapshot reads the registry, the counters and the top refused keys
// under one hold of the engine lock, so the page's numbers are of one
// moment (the same RL.STATS would have answered then).
func (s *Server) statusSnapshot() (*statusJSON, bool) {
	t := time.NewTimer(statusLockWait)
	ok := s.door.LockOrTimer(t.C)
	t.Stop()
	if !ok {
		return nil, false
	}
	defer s.door.Unlock()
	e := s.eng
	// the door's clock never goes back (ClockMs is the last unit's time):
	// RL.TOP's window ends at the later of the two
	now := max(time.Now().UnixMilli(), e.ClockMs)
	out := &statusJSON{NowMs: now, Policies: []statusPolicyJSON{}}
	stats := make(map[string]*engine.RLStat)
	all := e.RLStats()
	for i := range all {
		stats[all[i].Policy] = &all[i]
	}
	if st := stats[""]; st != nil {
		out.Inline = toStatusCounters(st)
	}
	for _, name := range e.Policies.Names() {
		p := e.Policies.Get([]byte(name))
		row := statusPolicyJSON{Name: name, Version: p.Version, Algo: p.Params.Algo.String(), Limit: p.Params.Limit,
			PeriodMs: p.Params.Period, Burst: p.Params.Burst, Shadow: p.Shadow, Desc: p.Desc, Top: []statusTopKey{}}
		if st := stats[name]; st != nil {
			row.Stats = toStatusCounters(st)
		}
		for _, k := range e.RLTop(name, statusTopCount, statusTopWindowMs, false, now) {
			row.Top = append(row.Top, statusTopKey{k.Key, k.Count, k.Err})
		}
		out.Policies = append(out.Policies, row)
	}
	return out, true
}
