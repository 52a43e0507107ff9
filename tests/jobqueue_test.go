package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestJobQueueLibrary runs bee-queue (tests/node/jobqueue: a Node job queue
// whose workers wait in BRPOPLPUSH with timeout 0, with MULTI and Lua for
// the rest) against redis-server and limitdb and requires the same
// observations: a worker blocked on an empty queue, woken by each job,
// jobs processed in order, retries, health counts, two blocked workers
// sharing 30 jobs without loss, and no blocked client once the queues
// are closed. scripts/test.sh installs node and the package (npm ci); run
// by hand without them, the test is skipped (it fails under CI=true).
func TestJobQueueLibrary(t *testing.T) {
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat("node/jobqueue/node_modules/bee-queue")
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node or tests/node/jobqueue/node_modules missing (scripts/test.sh installs them): %v", err)
		}
		t.Skipf("node or tests/node/jobqueue/node_modules missing (scripts/test.sh installs them): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "check.js", redisAddr, limitAddr)
	cmd.Dir = "node/jobqueue"
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node check.js: %v\n%s", err, stderr.String())
	}
	var res struct{ Redis, Limitdb json.RawMessage }
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("check.js printed %q: %v", out, err)
	}
	if !bytes.Equal(res.Redis, res.Limitdb) {
		t.Fatalf("bee-queue observed different things:\n  redis:   %s\n  limitdb: %s", res.Redis, res.Limitdb)
	}
	if bytes.HasPrefix(res.Redis, []byte(`"ERROR`)) {
		t.Fatalf("bee-queue failed on both servers: %s", res.Redis)
	}
	t.Logf("bee-queue: %s", res.Limitdb)
}
