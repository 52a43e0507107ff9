package tests

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMinReplicasInfoDiff: INFO replication lists the same fields, up to master_replid, as
// redis-server 7.0.15 (a primary without replicas) with
// min-replicas-to-write and -max-lag unset, set (min_slaves_good_slaves:0
// after connected_slaves) and one of them back at 0.
func TestMinReplicasInfoDiff(t *testing.T) {
	_, ref := mustRedisConn(t)
	_, cand := mustLimitdbConn(t)
	fields := func(c *Conn) string {
		s, _ := mustDoValue(t, c, "INFO", "replication").(string)
		var n []string
		for _, l := range strings.Split(s, "\r\n") {
			if k, v, ok := strings.Cut(l, ":"); ok {
				if k == "master_replid" {
					break // limitdb lacks Redis's repl_backlog_* fields after
				}
				if k == "min_slaves_good_slaves" || k == "connected_slaves" {
					k += "=" + v
				}
				n = append(n, k)
			}
		}
		return strings.Join(n, " ")
	}
	for _, set := range [][]string{nil, {"min-replicas-to-write", "2", "min-replicas-max-lag", "5"}, {"min-replicas-max-lag", "0"}} {
		for _, c := range []*Conn{ref, cand} {
			if set != nil {
				expectDo(t, c, "+OK\r\n", append([]string{"CONFIG", "SET"}, set...)...)
			}
		}
		if want, got := fields(ref), fields(cand); got != want {
			t.Fatalf("after %q INFO replication:\nlimitdb %s\nredis   %s", set, got, want)
		}
	}
}

// TestActiveDefragStartup: a command line (config) setting activedefrag
// yes stops the start-up with the same text and status as redis-server
// 7.0.15 built without its jemalloc (the one installed here).
func TestActiveDefragStartup(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip(err)
	}
	run := func(bin string) (string, int) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, bin, "--port", "0", "--activedefrag", "yes").CombinedOutput()
		return string(out), cmdExit(err)
	}
	want, wantRC := run("redis-server")
	got, gotRC := run(limitdbBinary(t))
	if got != want || gotRC != wantRC {
		t.Fatalf("--activedefrag yes:\nlimitdb %d %q\nredis   %d %q", gotRC, got, wantRC, want)
	}
}

// TestKeySaveDelayDiff: with rdb-key-save-delay 1000 (µs a key) a BGSAVE
// of 1000 keys lasts about a second on redis-server 7.0.15 and on
// limitdb (within a factor of 2 of each other), and a second BGSAVE
// meanwhile gets the same reply; at -1000 (1 µs once in 1000 keys) it is
// quick on both.
func TestKeySaveDelayDiff(t *testing.T) {
	p := mustPersistPair(t)
	for _, c := range []*Conn{p.ref, p.cand} {
		fill1000(t, c)
	}
	p.same(t, "CONFIG", "SET", "rdb-key-save-delay", "1000")
	var d [2]time.Duration
	for i, c := range []*Conn{p.ref, p.cand} {
		d[i] = bgsaveTime(t, c, true)
	}
	if d[0] < 900*time.Millisecond || d[1] < 900*time.Millisecond || d[1] > 2*d[0] || d[0] > 2*d[1] {
		t.Fatalf("BGSAVE of 1000 keys at 1000 µs: redis %v, limitdb %v", d[0], d[1])
	}
	p.same(t, "CONFIG", "SET", "rdb-key-save-delay", "-1000")
	p.same(t, "CONFIG", "GET", "rdb-key-save-delay")
	for i, c := range []*Conn{p.ref, p.cand} {
		if d := bgsaveTime(t, c, false); d > 500*time.Millisecond {
			t.Fatalf("BGSAVE at -1000 (%d): %v", i, d)
		}
	}
	t.Logf("BGSAVE of 1000 keys at 1000 µs: redis %v, limitdb %v", d[0], d[1])
}
