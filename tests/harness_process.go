package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// limitdbBin is cmd/limitdb built once per test run (limitdbBinary);
// TestMain removes its directory.
var limitdbBin struct {
	sync.Once
	dir, path string
	err       error
}

// limitdbBinary builds cmd/limitdb into a temporary directory, once.
func limitdbBinary(t *testing.T) string {
	t.Helper()
	limitdbBin.Do(func() {
		if limitdbBin.dir, limitdbBin.err = os.MkdirTemp("", "limitdb-bin-"); limitdbBin.err != nil {
			return
		}
		limitdbBin.path = filepath.Join(limitdbBin.dir, "limitdb")
		build := exec.Command("go", "build", "-o", limitdbBin.path, "../cmd/limitdb")
		build.Stderr = os.Stderr
		limitdbBin.err = build.Run()
	})
	if limitdbBin.err != nil {
		t.Fatal(limitdbBin.err)
	}
	return limitdbBin.path
}

// mustLimitdbProcess runs the built binary on a free loopback port with
// the given extra options (returning its address and PID), waits for it to answer and kills it (by its
// PID) when the test ends. Tests whose figures are process-wide (the
// memory used_memory counts is the Go heap) use it rather than an
// in-process server, which shares the heap with the tests.
func mustLimitdbProcess(t *testing.T, opts ...string) (addr string, pid int) {
	t.Helper()
	bin := limitdbBinary(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--loglevel", "warning", "--dir", t.TempDir()}, ioModelArgs()...)
	args = append(args, opts...)
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	if err := waitPing(addr); err != nil {
		t.Fatal(err)
	}
	return addr, cmd.Process.Pid
}

// ioModelArgs: LIMITDB_IO_MODEL=goroutine runs the suite's servers with a
// goroutine per connection (io-model; the default is loop), so that the
// same tests check both I/O models.
func ioModelArgs() []string {
	if v := os.Getenv("LIMITDB_IO_MODEL"); v != "" {
		return []string{"--io-model", v}
	}
	return nil
}
