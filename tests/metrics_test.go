package tests

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"limitdb/server"
)

// The Prometheus endpoint (server/metrics.go, metrics_collector.go):
// metrics-port, metrics-bind, metrics-policy-labels, what /metrics
// answers, and that it passes promtool's and client_golang's lint.

// scrape GETs /metrics at addr ("host:port").
func scrape(t testing.TB, addr string) string {
	t.Helper()
	cl := http.Client{Timeout: 5 * time.Second}
	r, err := cl.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d %v\n%s", r.StatusCode, err, b)
	}
	return string(b)
}

// series parses the text format into "name{labels}" → value (labels as
// the endpoint writes them, sorted by name).
func series(body string) map[string]float64 {
	m := map[string]float64{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			m[line[:i]] = v
		}
	}
	return m
}

// metricNames are the metric family names of a scrape.
func metricNames(body string) map[string]bool {
	m := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "# TYPE ") {
			m[strings.Fields(line)[2]] = true
		}
	}
	return m
}

// withMetrics turns the endpoint on at a free loopback port and returns
// its address; the test turns it off again.
func withMetrics(t *testing.T, c *Conn) string {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	configSet(t, c, "metrics-port", strconv.Itoa(port))
	t.Cleanup(func() { c.Do("CONFIG", "SET", "metrics-port", "0") })
	return "127.0.0.1:" + strconv.Itoa(port)
}

// requirePromtool returns promtool's path, skipping the test without it
// (failing under CI, whose test command installs it).
func requirePromtool(t *testing.T) string {
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is missing (scripts/test.sh installs Debian's prometheus package)")
		}
		t.Skip("promtool not installed")
	}
	return p
}

// lintMetrics runs client_golang's promlint and `promtool check metrics`
// on a scrape.
func lintMetrics(t *testing.T, body string) {
	t.Helper()
	probs, err := promlint.New(strings.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	cmd := exec.Command(requirePromtool(t), "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestMetricsEndpoint: off by default, on at metrics-port, and /metrics
// answers what INFO says, lint-clean.
func TestMetricsEndpoint(t *testing.T) {
	_, c := mustLimitdbConn(t)
	expectDo(t, c, "*2\r\n$12\r\nmetrics-port\r\n$1\r\n0\r\n", "CONFIG", "GET", "metrics-port")
	expectDo(t, c, "*2\r\n$12\r\nmetrics-bind\r\n$9\r\n127.0.0.1\r\n", "CONFIG", "GET", "metrics-bind")
	addr := withMetrics(t, c)
	for i := 0; i < 5; i++ {
		mustDo(t, c, "SET", "k"+strconv.Itoa(i), "v")
	}
	mustDo(t, c, "EXPIRE", "k0", "100")
	mustDo(t, c, "RL.ALLOW", "lim:a", "10", "60000")
	mustDo(t, c, "RL.ALLOW", "lim:b", "10", "60000", "ALGO", "sliding-window")
	mustDo(t, c, "GET", "missing")
	info := infoMap(t, c)
	body := scrape(t, addr)
	lintMetrics(t, body)
	m := series(body)
	want := map[string]float64{
		`limitdb_command_calls_total{cmd="set"}`:           5,
		`limitdb_db_keys{db="db0"}`:                        7,
		`limitdb_db_keys_expiring{db="db0"}`:               3, // k0 and the two limiter keys
		`limitdb_rl_keys{algorithm="gcra"}`:                1,
		`limitdb_rl_keys{algorithm="sliding-window"}`:      1,
		`limitdb_rl_keys{algorithm="token-bucket"}`:        0,
		`limitdb_keyspace_misses_total`:                    num(t, info["keyspace_misses"]),
		`limitdb_memory_max_bytes`:                         0,
		`limitdb_scrape_engine_lock_timeout`:               0,
		`limitdb_command_latency_seconds_count{cmd="set"}`: 5,
	}
	for k, v := range want {
		if got, ok := m[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	for _, name := range []string{"limitdb_connected_clients", "limitdb_memory_used_bytes", "limitdb_commands_processed_total",
		"limitdb_rdb_last_save_timestamp_seconds", "limitdb_build_info", "go_goroutines", "process_cpu_seconds_total"} {
		if !metricNames(body)[name] {
			t.Errorf("%s missing", name)
		}
	}
	if m["limitdb_connected_clients"] < 1 {
		t.Errorf("limitdb_connected_clients %v", m["limitdb_connected_clients"])
	}
	if names := metricNames(body); names["limitdb_raft_term"] {
		t.Error("raft metrics on a server without a cluster node")
	}
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return f
}

// infoMap is INFO everything as field → value.
func infoMap(t *testing.T, c *Conn) map[string]string {
	t.Helper()
	v := mustDoValue(t, c, "INFO", "everything")
	s, _ := v.(string)
	m := map[string]string{}
	for _, line := range strings.Split(s, "\r\n") {
		if k, val, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			m[k] = val
		}
	}
	return m
}

// rlStatsKnown reports whether this build has RL.STATS (the counters of
// RLStats): without it the limiter's counters are 0 and only their shape
// is checked.
func rlStatsKnown(t *testing.T, c *Conn) bool {
	r := mustDo(t, c, "RL.STATS")
	return !bytes.HasPrefix(r, []byte("-ERR unknown command"))
}

// TestMetricsLimiter: the limiter's series per policy, and, where RL.STATS
// counts, their values against the decisions RL.ALLOW answered.
func TestMetricsLimiter(t *testing.T) {
	_, c := mustLimitdbConn(t)
	addr := withMetrics(t, c)
	mustDo(t, c, "RL.POLICY", "SET", "api", "LIMIT", "3", "PERIOD", "60000")
	mustDo(t, c, "RL.POLICY", "SET", "login", "LIMIT", "1", "PERIOD", "60000", "SHADOW")
	allowed := map[string]int{}
	denied := map[string]int{}
	for i := 0; i < 5; i++ {
		for _, p := range []string{"api", "login"} {
			r := string(mustDo(t, c, "RL.ALLOW", "user:1:"+p, "POLICY", p))
			if strings.HasPrefix(r, "-") {
				t.Fatalf("RL.ALLOW POLICY %s: %q", p, r)
			}
			if strings.Contains(r, "shadow_denied\r\n:1") || strings.Contains(r, "allowed\r\n:0") {
				denied[p]++
			} else {
				allowed[p]++
			}
		}
		mustDo(t, c, "RL.ALLOW", "inline:"+strconv.Itoa(i), "10", "1000")
	}
	body := scrape(t, addr)
	lintMetrics(t, body)
	m := series(body)
	for _, k := range []string{
		`limitdb_rl_requests_total{policy="api",result="allowed"}`,
		`limitdb_rl_requests_total{policy="api",result="denied"}`,
		`limitdb_rl_requests_total{policy="login",result="shadow_denied"}`,
		`limitdb_rl_units_total{policy="api",result="allowed"}`,
		`limitdb_rl_units_total{policy="api",result="denied"}`,
		`limitdb_rl_near_limit_total{policy="api"}`,
		`limitdb_rl_policy_shadow{policy="login"}`,
	} {
		if _, ok := m[k]; !ok {
			t.Errorf("%s missing", k)
		}
	}
	if m["limitdb_rl_policies"] != 2 || m[`limitdb_rl_policy_shadow{policy="login"}`] != 1 || m[`limitdb_rl_policy_limit{policy="api"}`] != 3 ||
		m[`limitdb_rl_policy_period_seconds{policy="api"}`] != 60 {
		t.Errorf("policy gauges: %v %v %v", m["limitdb_rl_policies"], m[`limitdb_rl_policy_shadow{policy="login"}`], m[`limitdb_rl_policy_limit{policy="api"}`])
	}
	if got := m[`limitdb_rl_keys{algorithm="gcra"}`]; got != 7 {
		t.Errorf("gcra keys %v, want 7 (one per policy, five inline)", got)
	}
	for k := range m {
		if strings.Contains(k, "user:1") || strings.Contains(k, "inline:") {
			t.Errorf("a key in a label: %s", k)
		}
	}
	if !rlStatsKnown(t, c) {
		t.Log("RL.STATS is not a command in this build: counter values not compared")
		return
	}
	// against RL.STATS's own rows, whatever its reply's nesting, and
	// against the replies where their meaning is unambiguous
	rows := rlStatsRows(mustDoValue(t, c, "RL.STATS"), "")
	for policy, label := range map[string]string{"api": "api", "login": "login", "": "_inline"} {
		row, ok := rows[policy]
		if !ok {
			t.Errorf("RL.STATS has no row for %q: %v", policy, rows)
			continue
		}
		for field, result := range map[string]string{"allowed": "allowed", "denied": "denied", "shadow_denied": "shadow_denied", "errors": "error"} {
			k := `limitdb_rl_requests_total{policy="` + label + `",result="` + result + `"}`
			if float64(row[field]) != m[k] {
				t.Errorf("%s = %v, RL.STATS %s %s %d", k, m[k], policy, field, row[field])
			}
		}
		units := 0.0
		for _, result := range []string{"allowed", "denied", "shadow_denied"} {
			units += m[`limitdb_rl_units_total{policy="`+label+`",result="`+result+`"}`]
		}
		if float64(row["units"]) != units {
			t.Errorf("limitdb_rl_units_total{policy=%q} sums to %v, RL.STATS %s units %d", label, units, policy, row["units"])
		}
		if k := `limitdb_rl_near_limit_total{policy="` + label + `"}`; float64(row["near_limit"]) != m[k] {
			t.Errorf("%s = %v, RL.STATS %s near_limit %d", k, m[k], policy, row["near_limit"])
		}
	}
	exact := map[string]float64{
		`limitdb_rl_requests_total{policy="api",result="allowed"}`:         float64(allowed["api"]),
		`limitdb_rl_requests_total{policy="api",result="denied"}`:          float64(denied["api"]),
		`limitdb_rl_requests_total{policy="login",result="shadow_denied"}`: float64(denied["login"]),
		`limitdb_rl_units_total{policy="api",result="allowed"}`:            float64(allowed["api"]),
		`limitdb_rl_units_total{policy="api",result="denied"}`:             float64(denied["api"]),
		`limitdb_rl_requests_total{policy="_inline",result="allowed"}`:     5,
	}
	for k, v := range exact {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
}

// rlStatsRows finds RL.STATS's rows in its RESP2 reply without assuming
// its nesting: a row is an array of field/value pairs with an "allowed"
// field; its policy is its own "policy" (or "name") field, else the key
// it stands under in the array around it.
func rlStatsRows(v any, under string) map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	a, ok := v.([]any)
	if !ok {
		return out
	}
	row := map[string]int64{}
	name, isRow := under, false
	for i := 0; i+1 < len(a); i += 2 {
		k, ok := a[i].(string)
		if !ok {
			continue
		}
		switch x := a[i+1].(type) {
		case int64:
			row[k] = x
			isRow = isRow || k == "allowed"
		case string:
			if k == "policy" || k == "name" {
				name = x
			}
		}
	}
	if isRow {
		out[name] = row
		return out
	}
	for i, e := range a {
		key := under
		if i > 0 {
			if s, ok := a[i-1].(string); ok {
				key = s
			}
		}
		for n, r := range rlStatsRows(e, key) {
			out[n] = r
		}
	}
	return out
}

var policyLabelRe = regexp.MustCompile(`policy="([^"]*)"`)

// policyLabelValues are the values the policy label takes in a scrape.
func policyLabelValues(body string) map[string]bool {
	out := map[string]bool{}
	for _, mm := range policyLabelRe.FindAllStringSubmatch(body, -1) {
		out[mm[1]] = true
	}
	return out
}

// effectMetricsPort: metrics-port opens /metrics at once, a port in use
// is refused with the old one kept, and 0 closes it.
func effectMetricsPort(t *testing.T, c *Conn, _, name string) {
	addr := withMetrics(t, c)
	if body := scrape(t, addr); !strings.Contains(body, "limitdb_build_info") {
		t.Fatalf("%s: no limitdb_build_info:\n%.500s", name, body)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	r := mustDo(t, c, "CONFIG", "SET", name, strconv.Itoa(busy.Addr().(*net.TCPAddr).Port))
	if !strings.HasPrefix(string(r), "-ERR CONFIG SET failed (possibly related to argument 'metrics-port') - Unable to listen") {
		t.Fatalf("%s on a port in use: %q", name, r)
	}
	scrape(t, addr) // still served where it was
	configSet(t, c, name, "0")
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Fatalf("%s 0: %s still accepts", name, addr)
	}
}

// effectMetricsBind: the endpoint moves to metrics-bind's address.
func effectMetricsBind(t *testing.T, c *Conn, _, name string) {
	addr := withMetrics(t, c)
	_, port, _ := net.SplitHostPort(addr)
	configSet(t, c, name, "127.0.0.2")
	defer configSet(t, c, name, "127.0.0.1")
	scrape(t, "127.0.0.2:"+port)
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Fatalf("%s 127.0.0.2: %s still accepts", name, addr)
	}
	r := mustDo(t, c, "CONFIG", "SET", name, "192.0.2.1") // TEST-NET-1: not this machine's, never bound
	if !strings.HasPrefix(string(r), "-ERR CONFIG SET failed (possibly related to argument 'metrics-bind')") {
		t.Fatalf("%s to an address not here: %q", name, r)
	}
	scrape(t, "127.0.0.2:"+port)
	// an address that overlaps the bound one on the same port (as
	// 127.0.0.1 and 0.0.0.0 do): the old listener makes way
	configSet(t, c, name, "127.0.0.1")
	if r := mustDo(t, c, "CONFIG", "SET", name, "localhost"); string(r) != "+OK\r\n" {
		// localhost is ::1 too, and the port was picked free on
		// 127.0.0.1 only: another process of the run may hold [::1]:port
		// (or [::]:port) — then the refusal is right (CI saw it once)
		if l, err := net.Listen("tcp", net.JoinHostPort("::1", port)); err == nil {
			l.Close()
			t.Fatalf("%s localhost: %q, and [::1]:%s is free", name, r, port)
		}
		t.Logf("%s localhost refused: [::1]:%s is another process's", name, port)
		return
	}
	scrape(t, addr)
}

// effectMetricsPolicyLabels: past the cap, policies count as _other, and
// only the registry's names are label values.
func effectMetricsPolicyLabels(t *testing.T, c *Conn, _, name string) {
	addr := withMetrics(t, c)
	for _, p := range []string{"pa", "pb", "pc"} {
		mustDo(t, c, "RL.POLICY", "SET", p, "LIMIT", "5", "PERIOD", "1000")
		mustDo(t, c, "RL.ALLOW", "key:"+p, "POLICY", p)
	}
	defer func() {
		for _, p := range []string{"pa", "pb", "pc"} {
			mustDo(t, c, "RL.POLICY", "DEL", p, "FORCE")
		}
	}()
	got := policyLabelValues(scrape(t, addr))
	if !got["pa"] || !got["pb"] || !got["pc"] {
		t.Fatalf("%s 64: policy labels %v", name, got)
	}
	configSet(t, c, name, "1")
	defer configSet(t, c, name, "64")
	got = policyLabelValues(scrape(t, addr))
	delete(got, "_other")
	delete(got, "_inline")
	if len(got) != 1 || !got["pa"] {
		t.Fatalf("%s 1: policy labels %v, want pa (and _other, _inline)", name, got)
	}
}

// TestRLStatsRowsShapes: rlStatsRows reads the reply shapes RL.STATS may
// have (rows naming their policy; a map of policy to row).
func TestRLStatsRowsShapes(t *testing.T) {
	flat := []any{[]any{"policy", "api", "allowed", int64(3)}, []any{"policy", "", "allowed", int64(5)}}
	keyed := []any{"api", []any{"allowed", int64(3), "denied", int64(2)}, "", []any{"allowed", int64(5)}}
	for _, v := range []any{flat, keyed} {
		r := rlStatsRows(v, "")
		if r["api"]["allowed"] != 3 || r[""]["allowed"] != 5 || len(r) != 2 {
			t.Errorf("%v: %v", v, r)
		}
	}
}

// TestMetricsLockTimeout: while a script holds the engine lock, a scrape
// answers after about a second with what needs no lock, and says so.
func TestMetricsLockTimeout(t *testing.T) {
	addr, c := mustLimitdbConn(t)
	maddr := withMetrics(t, c)
	busy := mustDial(t, addr)
	// a script that runs about 2.5 s: a loop of a count measured first
	script := `local n = 0 while n < tonumber(ARGV[1]) do n = n + 1 end return n`
	start := time.Now()
	mustDo(t, c, "EVAL", script, "0", "2000000")
	per := time.Since(start) / 2000000
	iters := int64(2500 * time.Millisecond / max(per, 1))
	if err := busy.Send(Encode("EVAL", script, "0", strconv.FormatInt(iters, 10))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	t0 := time.Now()
	body := scrape(t, maddr)
	took := time.Since(t0)
	m := series(body)
	if m["limitdb_scrape_engine_lock_timeout"] != 1 {
		t.Skipf("the script ended before the scrape's wait did (took %v, script %d iterations)", took, iters)
	}
	if took < 900*time.Millisecond || took > 2*time.Second {
		t.Errorf("the scrape took %v, want about the 1 s wait", took)
	}
	if _, ok := m["limitdb_memory_used_bytes"]; ok {
		t.Error("a metric under the engine lock in a scrape that did not get it")
	}
	if m["limitdb_connected_clients"] < 2 {
		t.Errorf("limitdb_connected_clients %v", m["limitdb_connected_clients"])
	}
	busy.ReadReply()
}

// TestMetricsOddLabels: an error reply whose first word is not UTF-8
// (errorstats keeps it, and it cannot be a label value) leaves that one
// series out; the other error series, the scrape and the server go on.
func TestMetricsOddLabels(t *testing.T) {
	_, c := mustLimitdbConn(t)
	addr := withMetrics(t, c)
	mustDo(t, c, "EVAL", "return redis.error_reply('\xff\xfeODD bytes')", "0")
	mustDo(t, c, "NOSUCHCOMMAND")
	m := series(scrape(t, addr))
	if m[`limitdb_error_replies_total{error="ERR"}`] != 1 {
		t.Errorf(`limitdb_error_replies_total{error="ERR"} = %v, want 1`, m[`limitdb_error_replies_total{error="ERR"}`])
	}
	mustDo(t, c, "PING")
}

// effectLatencyPercentiles: INFO latencystats reports the percentiles
// latency-tracking-info-percentiles names, none when it is empty.
func effectLatencyPercentiles(t *testing.T, c *Conn, _, name string) {
	mustDo(t, c, "SET", "lat:k", "v")
	line := func() string {
		for _, l := range strings.Split(string(mustDo(t, c, "INFO", "latencystats")), "\r\n") {
			if strings.HasPrefix(l, "latency_percentiles_usec_set:") {
				return strings.TrimPrefix(l, "latency_percentiles_usec_set:")
			}
		}
		t.Fatalf("%s: no latency_percentiles_usec_set line", name)
		return ""
	}
	defer configSet(t, c, name, "50 99 99.9")
	configSet(t, c, name, "0 100 12.5")
	if l := line(); !regexp.MustCompile(`^p0=\d+\.\d{3},p100=\d+\.\d{3},p12\.5=\d+\.\d{3}$`).MatchString(l) {
		t.Errorf("%s 0 100 12.5: %q", name, l)
	}
	configSet(t, c, name, "")
	if l := line(); l != "" {
		t.Errorf("%s \"\": %q", name, l)
	}
}

// TestLatencyPercentilesConfigFile: latency-tracking-info-percentiles
// takes several arguments in a config file and on the command line, as
// in Redis, and CONFIG REWRITE writes a value that loads back.
func TestLatencyPercentilesConfigFile(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/limitdb.conf"
	if err := os.WriteFile(path, []byte("latency-tracking-info-percentiles 10 20.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := mustLimitdbConfig(t, server.Config{Addr: "127.0.0.1:0", Dir: dir}, path)
	c := mustDial(t, srv.Addr().String())
	expectDo(t, c, "*2\r\n$33\r\nlatency-tracking-info-percentiles\r\n$7\r\n10 20.5\r\n", "CONFIG", "GET", "latency-tracking-info-percentiles")
	for _, v := range []string{"", "1 2 3"} {
		configSet(t, c, "latency-tracking-info-percentiles", v)
		expectDo(t, c, "+OK\r\n", "CONFIG", "REWRITE")
		srv2 := mustLimitdbConfig(t, server.Config{Addr: "127.0.0.1:0", Dir: dir}, path)
		c2 := mustDial(t, srv2.Addr().String())
		want := "*2\r\n$33\r\nlatency-tracking-info-percentiles\r\n$" + strconv.Itoa(len(v)) + "\r\n" + v + "\r\n"
		expectDo(t, c2, want, "CONFIG", "GET", "latency-tracking-info-percentiles")
	}
	srv3 := mustLimitdbConfig(t, server.Config{Addr: "127.0.0.1:0", Dir: dir}, "", "--latency-tracking-info-percentiles", "5", "95")
	expectDo(t, mustDial(t, srv3.Addr().String()), "*2\r\n$33\r\nlatency-tracking-info-percentiles\r\n$4\r\n5 95\r\n", "CONFIG", "GET", "latency-tracking-info-percentiles")
}
