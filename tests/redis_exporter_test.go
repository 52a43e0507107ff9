package tests

import (
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// redis_exporter users are not left behind: oliver006/redis_exporter
// pointed at limitdb exports (nearly) the metric names it exports for a
// real redis-server under the same load. The exporter is not part of the
// repository: LIMITDB_REDIS_EXPORTER names a binary built elsewhere (see
// commands.md, "Prometheus metrics"); without it the test is skipped.

// exporterLoad is the small load both servers get before the scrape: a
// few commands of each kind, an expiring key, an error, a script, a
// subscription, so that every per-command, per-db and per-error series
// of the exporter has something to show.
func exporterLoad(t *testing.T, c *Conn) {
	for i := 0; i < 20; i++ {
		k := strconv.Itoa(i)
		mustDo(t, c, "SET", "s:"+k, "v")
		mustDo(t, c, "GET", "s:"+k)
		mustDo(t, c, "HSET", "h:"+k, "f", "v")
		mustDo(t, c, "LPUSH", "l", k)
		mustDo(t, c, "SADD", "set", k)
		mustDo(t, c, "ZADD", "z", k, k)
		mustDo(t, c, "INCR", "n")
	}
	mustDo(t, c, "SET", "ttl", "v", "EX", "100")
	mustDo(t, c, "GET", "missing")
	mustDo(t, c, "SELECT", "1")
	mustDo(t, c, "SET", "db1", "v")
	mustDo(t, c, "SELECT", "0")
	mustDo(t, c, "INCR", "s:0") // an error reply
	mustDo(t, c, "EVAL", "return 1", "0")
	mustDo(t, c, "PUBLISH", "ch", "m")
}

// exporterScrape runs the exporter against addr and returns the metric
// names of one scrape (with their redis_ prefix).
func exporterScrape(t *testing.T, bin, addr string) map[string]bool {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	listen := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "-redis.addr", "redis://"+addr, "-web.listen-address", listen)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := waitTCP(listen); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis_exporter did not listen on %s", listen)
		}
		time.Sleep(50 * time.Millisecond)
	}
	body := scrape(t, listen)
	names := map[string]bool{}
	for n := range metricNames(body) {
		if strings.HasPrefix(n, "redis_") {
			names[n] = true
		}
	}
	if series(body)["redis_up"] != 1 {
		t.Fatalf("redis_exporter against %s: redis_up is not 1", addr)
	}
	return names
}

func waitTCP(addr string) error {
	c, err := Dial(addr)
	if err == nil {
		c.Close()
	}
	return err
}

// TestRedisExporterCoverage: of the names the exporter gives for
// redis-server, limitdb gives at least 90% (the rest are listed, and
// commands.md says why each has no meaning in limitdb), and none
// that redis-server does not.
func TestRedisExporterCoverage(t *testing.T) {
	bin := os.Getenv("LIMITDB_REDIS_EXPORTER")
	if bin == "" {
		t.Skip("LIMITDB_REDIS_EXPORTER is not set (a redis_exporter binary)")
	}
	r, rc := mustRedisConn(t)
	la, lc := mustLimitdbConn(t)
	exporterLoad(t, rc)
	exporterLoad(t, lc)
	want := exporterScrape(t, bin, r.Addr)
	got := exporterScrape(t, bin, la)
	var missing, extra []string
	for n := range want {
		if !got[n] {
			missing = append(missing, n)
		}
	}
	for n := range got {
		if !want[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	have := len(want) - len(missing)
	t.Logf("redis_exporter: limitdb gives %d of the %d metric names it gives for redis-server (%.1f%%)", have, len(want), float64(have)*100/float64(len(want)))
	t.Logf("missing: %s", strings.Join(missing, " "))
	if len(extra) > 0 {
		t.Errorf("only for limitdb: %s", strings.Join(extra, " "))
	}
	if have*10 < len(want)*9 {
		t.Errorf("coverage below 90%%")
	}
	// each name left out is explained in commands.md ("Prometheus metrics")
	design, err := os.ReadFile("../commands.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range missing {
		if !strings.Contains(string(design), "`"+n+"`") {
			t.Errorf("%s is missing and commands.md does not say why", n)
		}
	}
}
