package tests

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// promQuery asks a Prometheus one instant query: its status, how many
// series it returned, and its error.
type promQuery func(q string) (status string, n int, errText string)

// mustPrometheus starts Debian's Prometheus (skipped without it outside
// CI) scraping targets once a second with deploy/prometheus/rules.yml,
// and returns its query function and a wait that calls load between
// scrapes until every target has been scraped five times (rates need two
// samples with an increase between them).
func mustPrometheus(t *testing.T, targets ...string) (promQuery, func(load func(round int))) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("prometheus is missing (scripts/test.sh installs Debian's prometheus package)")
		}
		t.Skip("prometheus not installed")
	}
	rules, err := filepath.Abs("../deploy/prometheus/rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	conf := "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - " + rules +
		"\nscrape_configs:\n  - job_name: limitdb\n    static_configs:\n      - targets: ['" + strings.Join(targets, "', '") + "']\n"
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	paddr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+paddr, "--log.level=warn")
	logf, _ := os.Create(filepath.Join(dir, "prometheus.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); logf.Close() })
	query := func(q string) (string, int, string) {
		cl := http.Client{Timeout: 5 * time.Second}
		r, err := cl.Get("http://" + paddr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return "", 0, err.Error()
		}
		defer r.Body.Close()
		var out struct {
			Status string `json:"status"`
			Error  string `json:"error"`
			Data   struct {
				Result []json.RawMessage `json:"result"`
			} `json:"data"`
		}
		json.NewDecoder(r.Body).Decode(&out)
		return out.Status, len(out.Data.Result), out.Error
	}
	wait := func(load func(round int)) {
		deadline := time.Now().Add(30 * time.Second)
		for round := 0; ; round++ {
			load(round)
			time.Sleep(500 * time.Millisecond)
			if st, n, _ := query(`count_over_time(limitdb_build_info[1m]) >= 5`); st == "success" && n == len(targets) {
				break
			}
			if time.Now().After(deadline) {
				b, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
				t.Fatalf("Prometheus did not scrape %v five times in 30 s\n%s", targets, b)
			}
		}
		time.Sleep(1500 * time.Millisecond) // an evaluation of the rules after the last scrape
	}
	return query, wait
}

// dashboardEmpty asks every dashboard query (Grafana's variables
// replaced) and returns those without data; an invalid one fails the
// test.
func dashboardEmpty(t *testing.T, query promQuery) []string {
	vars := strings.NewReplacer("$__rate_interval", "1m", "$__range", "1m", "$job", ".*", "$instance", ".*", "$policy", ".*")
	var empty []string
	for _, e := range dashboardQueries(t) {
		if e == "" {
			continue
		}
		q := vars.Replace(e)
		st, n, errText := query(q)
		if st != "success" {
			t.Errorf("dashboard query %s: %s %s", q, st, errText)
			continue
		}
		if n == 0 {
			empty = append(empty, q)
		}
	}
	return empty
}

// TestMetricsPrometheusEndToEnd: a real Prometheus scrapes limitdb once a
// second with deploy/prometheus/rules.yml loaded; every query of the
// Grafana dashboard is valid there, the limiter's and the server's
// panels have data, and the recording rules produce series.
func TestMetricsPrometheusEndToEnd(t *testing.T) {
	_, c := mustLimitdbConn(t)
	maddr := withMetrics(t, c)
	mustDo(t, c, "RL.POLICY", "SET", "api", "LIMIT", "5", "PERIOD", "60000")
	mustDo(t, c, "RL.POLICY", "SET", "login", "LIMIT", "2", "PERIOD", "60000", "SHADOW")
	query, wait := mustPrometheus(t, maddr)
	wait(func(round int) {
		for i := 0; i < 10; i++ {
			mustDo(t, c, "RL.ALLOW", "u:"+strconv.Itoa(i%3), "POLICY", "api")
			mustDo(t, c, "RL.ALLOW", "u:"+strconv.Itoa(i%3), "POLICY", "login")
			mustDo(t, c, "SET", "k:"+strconv.Itoa(round*10+i), "v")
		}
	})
	// a standalone node without maxmemory has no Raft series and no
	// maxmemory line; every other panel has data
	for _, q := range dashboardEmpty(t, query) {
		if !strings.Contains(q, "raft_") && !strings.Contains(q, "limitdb_memory_max_bytes") {
			t.Errorf("dashboard query without data: %s", q)
		}
	}
	for _, rec := range []string{"limitdb:rl_requests:rate5m", "limitdb:rl_denied_ratio:rate5m", "limitdb:rl_shadow_denied_ratio:rate5m", "limitdb:commands:rate1m"} {
		if st, n, errText := query(rec); st != "success" || n == 0 {
			t.Errorf("recording rule %s: %s, %d series %s", rec, st, n, errText)
		}
	}
	if !rlStatsKnown(t, c) {
		t.Log("RL.STATS is not a command in this build: the limiter's counters are 0")
		return
	}
	if st, n, _ := query(`limitdb:rl_shadow_denied_ratio:rate5m{policy="login"} > 0`); st != "success" || n != 1 {
		t.Errorf("the shadow policy's shadow-denied share is not above 0 (%s, %d series)", st, n)
	}
}

// dashboardQueries are the expressions of deploy/grafana/limitdb.json.
func dashboardQueries(t *testing.T) []string {
	b, err := os.ReadFile("../deploy/grafana/limitdb.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	return out
}
