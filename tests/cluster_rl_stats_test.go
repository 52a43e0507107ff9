package tests

import (
	"context"
	"testing"
	"time"
)

// TestClusterRLStats: the decision counters are the executing node's
// (RL.ALLOW through a follower counts on the leader, RL.PEEK on the node
// asked; followers applying the effects count nothing), and RL.STATS
// CLUSTER, asked on any node, sums the three; a node that is down is
// named in nodes_missing and left out, and a follower without a leader
// still answers for itself.
func TestClusterRLStats(t *testing.T) {
	c := mustCluster(t, 3)
	ctx := context.Background()
	l := c.waitLeader(10 * time.Second)
	f1, f2 := (l+1)%3, (l+2)%3
	do := func(i int, args ...any) any {
		t.Helper()
		v, err := c.cli(i).Do(ctx, args...).Result()
		if err != nil {
			t.Fatalf("node %d %v: %v", i, args, err)
		}
		return v
	}
	do(f1, "RL.POLICY", "SET", "cst", "LIMIT", "5", "PERIOD", "600000", "ALGO", "fixed-window")
	for range 10 {
		do(f1, "RL.ALLOW", "k", "POLICY", "cst") // on the leader: 5 allowed, 5 refused
	}
	for range 4 {
		do(f2, "RL.PEEK", "k", "POLICY", "cst") // on f2: refused
	}
	for range 3 {
		do(l, "RL.PEEK", "j", "POLICY", "cst") // on the leader: allowed
	}
	counters := func(v any, name string) map[string]int64 {
		t.Helper()
		m := flatMap(t, v)[name]
		out := map[string]int64{}
		for k, x := range flatMap(t, m) {
			out[k] = x.(int64)
		}
		return out
	}
	for _, w := range []struct {
		node                             int
		requests, allowed, denied, units int64
	}{{l, 13, 8, 5, 13}, {f1, 0, 0, 0, 0}, {f2, 4, 0, 4, 4}} {
		got := counters(do(w.node, "RL.STATS", "cst"), "cst")
		if got["requests"] != w.requests || got["allowed"] != w.allowed || got["denied"] != w.denied || got["units"] != w.units {
			t.Errorf("node %d (leader %d): %v, want requests %d allowed %d denied %d", w.node, l, got, w.requests, w.allowed, w.denied)
		}
	}
	for _, i := range []int{f1, f2, l} {
		rep := flatMap(t, do(i, "RL.STATS", "CLUSTER", "cst"))
		got := counters(rep["policies"], "cst")
		if rep["nodes"] != int64(3) || len(rep["nodes_missing"].([]any)) != 0 ||
			got["requests"] != 17 || got["allowed"] != 8 || got["denied"] != 9 || got["since_ms"] == 0 {
			t.Errorf("RL.STATS CLUSTER on node %d: %v (policies %v)", i, rep, got)
		}
	}
	c.kill(f2)
	start := time.Now()
	rep := flatMap(t, do(l, "RL.STATS", "CLUSTER"))
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("RL.STATS CLUSTER with a node down took %v", took)
	}
	missing := rep["nodes_missing"].([]any)
	if rep["nodes"] != int64(2) || len(missing) != 1 || missing[0] != c.nodes[f2].id {
		t.Errorf("with node %d down: %v", f2, rep)
	}
	if got := counters(rep["policies"], "cst"); got["requests"] != 13 {
		t.Errorf("with node %d down: %v", f2, got)
	}
	// without a leader a follower still answers for itself, at once
	c.kill(l)
	start = time.Now()
	if got := counters(do(f1, "RL.STATS", "cst"), "cst"); got["requests"] != 0 {
		t.Errorf("node %d alone: %v", f1, got)
	}
	rep = flatMap(t, do(f1, "RL.STATS", "CLUSTER", "cst"))
	if rep["nodes"] != int64(1) || len(rep["nodes_missing"].([]any)) != 2 {
		t.Errorf("node %d alone: %v", f1, rep)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("RL.STATS on a node without a leader took %v", took)
	}
}

// flatMap reads a RESP2 map (a flat array of name, value).
func flatMap(t *testing.T, v any) map[string]any {
	t.Helper()
	a, ok := v.([]any)
	if !ok || len(a)%2 != 0 {
		t.Fatalf("not a map: %#v", v)
	}
	m := map[string]any{}
	for i := 0; i < len(a); i += 2 {
		m[a[i].(string)] = a[i+1]
	}
	return m
}
