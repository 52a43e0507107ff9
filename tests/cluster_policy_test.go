package tests

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// policyGet is RL.POLICY GET name on cli as name → value.
func policyGet(t *testing.T, cli *redis.Client, name string) map[string]string {
	t.Helper()
	v, err := cli.Do(context.Background(), "RL.POLICY", "GET", name).Slice()
	if err != nil {
		t.Fatalf("RL.POLICY GET %s: %v", name, err)
	}
	m := map[string]string{}
	for i := 0; i+1 < len(v); i += 2 {
		m[fmt.Sprint(v[i])] = fmt.Sprint(v[i+1])
	}
	return m
}

// TestClusterPolicies: named policies are replicated state. One set
// through a follower (forwarded, one log entry) reads the same on every
// node, and RL.ALLOW under it decides on any node; a follower that was
// down catches up from a snapshot holding the policy (after enough writes
// for the leader to snapshot past its log), a stale IFVERSION is refused,
// and after the leader is killed and restarted from its dir every node
// still has the policy and its history, with equal strict digests (which
// cover the registry).
func TestClusterPolicies(t *testing.T) {
	c := mustCluster(t, 3, "--raft-snapshot-threshold", "64", "--raft-trailing-logs", "16", "--raft-snapshot-interval", "1")
	ctx := context.Background()
	l := c.waitLeader(10 * time.Second)
	f, down := (l+1)%3, (l+2)%3
	c.kill(down)
	v, err := c.cli(f).Do(ctx, "RL.POLICY", "SET", "api", "LIMIT", "5", "PERIOD", "600000", "DESC", "set through a follower").Int64()
	if err != nil || v < 1 {
		t.Fatalf("RL.POLICY SET on a follower: %d %v", v, err)
	}
	want := policyGet(t, c.cli(f), "api")
	if want["version"] != strconv.FormatInt(v, 10) || want["limit"] != "5" || want["updated_by"] != "default" {
		t.Fatalf("RL.POLICY GET on the follower that set it: %v", want)
	}
	if got := policyGet(t, c.cli(l), "api"); got["version"] != want["version"] || got["created_ms"] != want["created_ms"] {
		t.Fatalf("RL.POLICY GET on the leader: %v, want %v", got, want)
	}
	// decisions under the policy through both running nodes share one key
	for i := 0; i < 6; i++ {
		r, err := c.cli([]int{l, f}[i%2]).Do(ctx, "RL.ALLOW", "user:1", "POLICY", "api").Slice()
		if err != nil || len(r) != 16 {
			t.Fatalf("RL.ALLOW … POLICY api: %v %v", r, err)
		}
		if allowed := r[1] == int64(1); allowed != (i < 5) || r[11] != "api" {
			t.Fatalf("RL.ALLOW call %d: %v", i, r)
		}
	}
	// enough writes for a snapshot past the down node's log
	for i := 0; i < 300; i++ {
		if err := c.cli(l).Set(ctx, "k:"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for si, _ := strconv.Atoi(c.info(l)["raft_snapshot_index"]); si < 100; si, _ = strconv.Atoi(c.info(l)["raft_snapshot_index"]) {
		if time.Now().After(deadline) {
			t.Fatal("the leader took no snapshot")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := c.cli(f).Do(ctx, "RL.POLICY", "SET", "api", "LIMIT", "9", "PERIOD", "600000", "IFVERSION", strconv.FormatInt(v-1, 10)).Result(); err == nil ||
		!strings.Contains(err.Error(), "version mismatch") {
		t.Fatalf("a stale IFVERSION: %v", err)
	}
	v2, err := c.cli(f).Do(ctx, "RL.POLICY", "SET", "api", "LIMIT", "9", "PERIOD", "600000", "IFVERSION", strconv.FormatInt(v, 10)).Int64()
	if err != nil || v2 <= v {
		t.Fatalf("RL.POLICY SET … IFVERSION %d: %d %v", v, v2, err)
	}
	c.start(down)
	c.mustConverge(30 * time.Second)
	if n, _ := strconv.Atoi(c.info(down)["raft_snapshots_installed"]); n < 1 {
		t.Fatalf("the node that was down installed no snapshot: %v", c.info(down))
	}
	want = policyGet(t, c.cli(l), "api")
	for i := range c.nodes {
		if got := policyGet(t, c.cli(i), "api"); got["version"] != strconv.FormatInt(v2, 10) || got["limit"] != "9" || got["live_until_ms"] != want["live_until_ms"] {
			t.Fatalf("RL.POLICY GET on %s after the catch-up: %v, want %v", c.nodes[i].id, got, want)
		}
	}
	// the leader killed and restarted from its dir
	c.kill(l)
	nl := c.waitLeader(10 * time.Second)
	if _, err := c.cli(nl).Do(ctx, "FLUSHALL").Result(); err != nil {
		t.Fatal(err)
	}
	c.start(l)
	c.mustConverge(30 * time.Second)
	for i := range c.nodes {
		h, err := c.cli(i).Do(ctx, "RL.POLICY", "HISTORY", "api").Slice()
		if err != nil || len(h) != 2 {
			t.Fatalf("RL.POLICY HISTORY on %s after the restart: %v %v", c.nodes[i].id, h, err)
		}
		if got := policyGet(t, c.cli(i), "api"); got["version"] != strconv.FormatInt(v2, 10) {
			t.Fatalf("RL.POLICY GET on %s after FLUSHALL and the restart: %v", c.nodes[i].id, got)
		}
		if n, err := c.cli(i).DBSize(ctx).Result(); err != nil || n != 0 {
			t.Fatalf("DBSIZE on %s: %d %v", c.nodes[i].id, n, err)
		}
	}
}
