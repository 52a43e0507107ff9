package main

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
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
	dir := t.TempDir()
	for pkg, out := range map[string]string{"../../cmd/limitdb": "limitdb", ".": "loadgen"} {
		if b, err := exec.Command("go", "build", "-o", filepath.Join(dir, out), pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
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
