package main

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestStartsOnFreePorts: with no port flags the started servers listen on
// free loopback ports, so a run works while the ports of the old fixed
// defaults (7701, 7801) are taken, as by a second run on the machine.
func TestStartsOnFreePorts(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	for _, port := range []string{"7701", "7801"} {
		// a listener that never answers, like a busy server of another run;
		// if the port is already taken, it is taken anyway
		if ln, err := net.Listen("tcp", "127.0.0.1:"+port); err == nil {
			defer ln.Close()
		}
	}
	dir := buildBins(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "loadgen"), "-limitdb-bin", filepath.Join(dir, "limitdb"),
		"-workloads", "ping", "-pipeline", "1", "-pairs", "1", "-slice", "50ms", "-warmup", "10ms", "-conns", "2", "-max-time", "10s")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("loadgen: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "ping") || strings.Contains(string(out), ":7701") || strings.Contains(string(out), ":7801") {
		t.Fatalf("loadgen output:\n%s", out)
	}
}

// TestStartsReplicatedSides: -redis-replicas 2 and -limitdb-nodes 3 start
// a primary with two online replicas and a three-voter cluster, measure
// at the primary and the leader, and leave none of the five extra
// processes running.
func TestStartsReplicatedSides(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	dir := buildBins(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(dir, "loadgen"), "-limitdb-bin", filepath.Join(dir, "limitdb"),
		"-redis-replicas", "2", "-limitdb-nodes", "3", "-workloads", "set", "-pipeline", "1", "-pairs", "1",
		"-slice", "50ms", "-warmup", "10ms", "-conns", "2", "-max-time", "10s").CombinedOutput()
	if err != nil {
		t.Fatalf("loadgen: %v\n%s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, "(primary of 2 replicas)") || !strings.Contains(s, "(leader n") ||
		!strings.Contains(s, "of 3 nodes, leader in term") || !strings.Contains(s, "measured node at the end: leader") {
		t.Fatalf("loadgen output:\n%s", out)
	}
	// the started binaries are this test's own: none may be left
	if b, _ := exec.Command("pgrep", "-f", filepath.Join(dir, "limitdb")).Output(); len(b) > 0 {
		t.Fatalf("limitdb nodes left running: %s", b)
	}
}

// TestStartsShardedSides: -shards starts a Redis Cluster and a limitdb of
// as many groups, measures both through the ClusterClient with no error
// reply, -mode idle reports every process, and no started process is
// left running.
func TestStartsShardedSides(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	dir := buildBins(t)
	run := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, filepath.Join(dir, "loadgen"), append([]string{"-limitdb-bin", filepath.Join(dir, "limitdb"),
			"-shards", "3", "-pipeline", "1,4", "-pairs", "1", "-slice", "50ms", "-warmup", "10ms", "-conns", "2"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("loadgen: %v\n%s", err, out)
		}
		return string(out)
	}
	s := run("-workloads", "set")
	if !strings.Contains(s, "(Redis Cluster: 3 masters, 0 replicas each)") || !strings.Contains(s, "(3 groups × 1 node; leaders g0n1") ||
		!strings.Contains(s, " 0/0\n") || strings.Contains(s, "skipped") {
		t.Fatalf("loadgen output:\n%s", s)
	}
	s = run("-mode", "idle", "-idle", "1s", "-shard-nodes", "3")
	perNode := func(side string) int {
		return len(regexp.MustCompile(`(?m)^  `+side+` +shard \d  \S+ +0\.\d{4} `).FindAllString(s, -1))
	}
	if perNode("redis") != 3 || perNode("limitdb") != 9 || !strings.Contains(s, "  limitdb shard 2  ") {
		t.Fatalf("loadgen output:\n%s", s)
	}
	if b, _ := exec.Command("pgrep", "-f", filepath.Join(dir, "limitdb")).Output(); len(b) > 0 {
		t.Fatalf("limitdb nodes left running: %s", b)
	}
}

// buildBins builds limitdb and loadgen into a temporary directory.
func buildBins(t *testing.T) string {
	dir := t.TempDir()
	for pkg, out := range map[string]string{"../../cmd/limitdb": "limitdb", ".": "loadgen"} {
		if b, err := exec.Command("go", "build", "-o", filepath.Join(dir, out), pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	return dir
}
