package tests

import (
	"strings"
	"testing"
)

// TestMinReplicasInfoDiff: INFO replication lists the same fields, up to master_replid, as
// redis-server 7.0.15 (a primary without replicas) with
// min-replicas-to-write and -max-lag unset, set (min_slaves_good_slaves:0
// after connected_slaves) and one of them back at 0.
func TestMinReplicasInfoDiff(t *testing.T) {
	r, err := StartRedis()
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(r.Stop)
	ref, err := Dial(r.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	_, cand := ownLimitdb(t)
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
