package server

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// deploy/: the Grafana dashboard and the Prometheus rules are valid
// (promtool check rules, on the rules and on the dashboard's queries) and
// name only metrics the collector exports and recording rules the rules
// file defines.

var (
	metricRefRe = regexp.MustCompile(`\blimitdb_[a-z0-9_]+`)
	recordRefRe = regexp.MustCompile(`\blimitdb:[a-z0-9_:]+`)
	recordDefRe = regexp.MustCompile(`(?m)^\s*- record:\s*(\S+)`)
)

// histogramLike are the collector's histograms and summaries, exported
// as _bucket, _sum and _count series.
var histogramLike = map[string]bool{"limitdb_command_latency_seconds": true, "limitdb_raft_log_fsync_duration_seconds": true}

func exported(name string) bool {
	if _, ok := metricDesc[name]; ok {
		return !histogramLike[name]
	}
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suf); ok && histogramLike[base] {
			return true
		}
	}
	return false
}

func promtool(t *testing.T) string {
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is missing (scripts/test.sh installs Debian's prometheus package)")
		}
		t.Skip("promtool not installed")
	}
	return p
}

// dashboardExprs are the dashboard's queries: its panels' targets and its
// template variables' queries.
func dashboardExprs(t *testing.T) []string {
	b, err := os.ReadFile("../deploy/grafana/limitdb.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
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
	for _, v := range d.Templating.List {
		out = append(out, v.Definition)
	}
	if len(out) < 20 {
		t.Fatalf("the dashboard has %d queries", len(out))
	}
	return out
}

func TestDeployReferencesExported(t *testing.T) {
	rules, err := os.ReadFile("../deploy/prometheus/rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, m := range recordDefRe.FindAllStringSubmatch(string(rules), -1) {
		defined[m[1]] = true
	}
	check := func(where, text string) {
		for _, n := range metricRefRe.FindAllString(text, -1) {
			if !exported(n) {
				t.Errorf("%s names %s, which the collector does not export", where, n)
			}
		}
		for _, n := range recordRefRe.FindAllString(text, -1) {
			if !defined[n] {
				t.Errorf("%s names %s, which rules.yml does not record", where, n)
			}
		}
	}
	check("rules.yml", string(rules))
	tests, err := os.ReadFile("../deploy/prometheus/rules_test.yml")
	if err != nil {
		t.Fatal(err)
	}
	check("rules_test.yml", string(tests))
	for _, e := range dashboardExprs(t) {
		check("the dashboard", e)
	}
	for _, want := range []string{"limitdb_raft_leader_changes_total", "limitdb_raft_apply_lag_entries", "limitdb_raft_clock_offset_seconds",
		"limitdb_raft_clock_max_skew_seconds", `result="denied"`, `result="shadow_denied"`, "limitdb_memory_max_bytes"} {
		if !strings.Contains(string(rules), want) {
			t.Errorf("rules.yml has no rule on %s", want)
		}
	}
}

// TestDeployPromtool: promtool check rules on rules.yml, its unit tests
// (rules_test.yml: promtool test rules), and check rules on the
// dashboard's queries made into recording rules (Grafana's variables
// replaced by what they stand for), so that each is valid PromQL.
func TestDeployPromtool(t *testing.T) {
	bin := promtool(t)
	if out, err := exec.Command(bin, "check", "rules", "../deploy/prometheus/rules.yml").CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	// the alerts fire, with their texts, on the series they watch
	if out, err := exec.Command(bin, "test", "rules", "../deploy/prometheus/rules_test.yml").CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
	vars := strings.NewReplacer("$__rate_interval", "5m", "$__range", "1h", "$job", ".*", "$instance", ".*", "$policy", ".*")
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, e := range dashboardExprs(t) {
		if e == "" || strings.HasPrefix(e, "label_values(") {
			continue // the data source variable; a Grafana function, not PromQL
		}
		b.WriteString("      - record: dashboard:q" + strconv.Itoa(i) + "\n        expr: " + strconv.Quote(vars.Replace(e)) + "\n")
	}
	f := filepath.Join(t.TempDir(), "dashboard.yml")
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "check", "rules", f).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules on the dashboard's queries: %v\n%s", err, out)
	}
}
