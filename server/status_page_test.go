package server

import (
	"context"
	"html"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromium finds Debian's headless browser; the test is skipped without
// one, except under CI, where scripts/test.sh installs it.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium not found (scripts/test.sh installs it)")
	}
	t.Skip("chromium not found")
	return ""
}

// dumpDOM loads url in headless Chromium, lets its scripts run for a few
// seconds of virtual time (the page's first fetch and render), and returns
// the document as the browser then holds it.
func dumpDOM(t *testing.T, browser, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--virtual-time-budget=3000", "--dump-dom", url)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	return string(out)
}

// TestStatusPage loads the status page in a real browser and checks what
// it shows against RL.STATS (asked after the page rendered, with no
// call in between) after a known stream of decisions: every
// policy, its mode, its counters and its most-refused key.
func TestStatusPage(t *testing.T) {
	browser := chromium(t)
	s := startTest(t, Config{Dir: scratchDir})
	c := dialT(t, s.Addr().String())
	for _, cmd := range [][]string{
		{"RL.POLICY", "SET", "api", "LIMIT", "3", "PERIOD", "60000", "DESC", "<b>not html</b>"},
		{"RL.POLICY", "SET", "trial", "LIMIT", "2", "PERIOD", "60000", "SHADOW"},
	} {
		if r := c.do(t, cmd...); !strings.HasPrefix(r, ":") {
			t.Fatalf("%v: %q", cmd, r)
		}
	}
	// api: "<hot>" asks 8 times (5 refused), cool 2 times; trial: 4 calls,
	// 2 shadow-denied
	for i := 0; i < 8; i++ {
		c.do(t, "RL.ALLOW", "<hot>", "POLICY", "api")
	}
	for i := 0; i < 2; i++ {
		c.do(t, "RL.ALLOW", "cool", "POLICY", "api")
	}
	for i := 0; i < 4; i++ {
		c.do(t, "RL.ALLOW", "t", "POLICY", "trial")
	}
	c.do(t, "RL.ALLOW", "inline", "5", "1000")

	// the page on the metrics port, as an operator opens it
	port := freeLoopbackPort(t)
	if r := c.do(t, "CONFIG", "SET", "metrics-port", port); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET metrics-port: %q", r)
	}
	base := "http://127.0.0.1:" + port
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'sha256-") {
		t.Fatalf("CSP %q", csp)
	}

	dom := dumpDOM(t, browser, base+"/")
	if !strings.Contains(dom, `data-loaded="`) {
		t.Fatalf("the page never rendered status.json:\n%s", dom)
	}
	if strings.Contains(dom, "<b>not html</b>") || strings.Contains(dom, "<hot>") {
		t.Fatal("a policy description or key was rendered as HTML")
	}
	want := rlStatsReply(t, c.do(t, "RL.STATS"))
	rowRe := regexp.MustCompile(`(?s)<tr data-policy="([^"]*)">(.*?)</tr>`)
	fieldRe := regexp.MustCompile(`<td data-field="([a-z_]+)">(\d+)</td>`)
	rows := rowRe.FindAllStringSubmatch(dom, -1)
	if len(rows) != 2 {
		t.Fatalf("%d policy rows, want 2:\n%s", len(rows), dom)
	}
	for _, r := range rows {
		name := html.UnescapeString(r[1])
		w := want[name]
		if w == nil {
			t.Fatalf("RL.STATS has no row for %q", name)
		}
		for _, f := range fieldRe.FindAllStringSubmatch(r[2], -1) {
			n, _ := strconv.ParseInt(f[2], 10, 64)
			if n != w[f[1]] {
				t.Errorf("%s %s: page %d, RL.STATS %d", name, f[1], n, w[f[1]])
			}
		}
		mode := "enforce"
		if name == "trial" {
			mode = "shadow"
		}
		if !strings.Contains(r[2], ">"+mode+"</td>") {
			t.Errorf("%s: mode %s not shown", name, mode)
		}
	}
	if w := want["api"]; w["requests"] != 10 || w["denied"] != 5 || want["trial"]["shadow_denied"] != 2 {
		t.Fatalf("RL.STATS after the stream: %v", want)
	}
	if !strings.Contains(dom, `<li data-key="&lt;hot&gt;">`) {
		t.Fatalf("the most-refused key of api is not listed:\n%s", dom)
	}
}

// rlStatsReply reads RL.STATS's RESP2 reply (name, then a flat array of
// counter names and values, per policy) into name → counter → value.
func rlStatsReply(t *testing.T, raw string) map[string]map[string]int64 {
	t.Helper()
	var toks []string
	lines := strings.Split(raw, "\r\n")
	for i := 0; i < len(lines); i++ {
		switch l := lines[i]; {
		case strings.HasPrefix(l, "$"):
			i++
			toks = append(toks, lines[i])
		case strings.HasPrefix(l, ":"):
			toks = append(toks, l[1:])
		case strings.HasPrefix(l, "-"):
			t.Fatalf("RL.STATS: %s", l)
		}
	}
	out := map[string]map[string]int64{}
	const fields = 8 // requests … since_ms
	for i := 0; i+1+2*fields <= len(toks); i += 1 + 2*fields {
		m := map[string]int64{}
		for j := 0; j < fields; j++ {
			n, err := strconv.ParseInt(toks[i+2+2*j], 10, 64)
			if err != nil {
				t.Fatalf("RL.STATS %q: %v", raw, err)
			}
			m[toks[i+1+2*j]] = n
		}
		out[toks[i]] = m
	}
	return out
}
