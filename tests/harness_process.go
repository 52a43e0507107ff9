package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
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
// the given extra options, waits for it to answer and returns its address
// and PID; it kills the process (by its PID) when the test ends. Tests whose figures are process-wide (the
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

// proc is a limitdb process a test starts, restarts and stops by PID.
type proc struct {
	t    *testing.T
	args []string
	dir  string
	port int
	log  string
	cmd  *exec.Cmd
	cli  *redis.Client
	done chan struct{} // closed once the process has exited (cmd.ProcessState set)
}

// mustProc starts a limitdb process with its own port and log, in dir
// ("" for a fresh temporary one), DEBUG enabled and opts; the process is
// killed when the test ends.
func mustProc(t *testing.T, dir string, opts ...string) *proc {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	if dir == "" {
		dir = t.TempDir()
	}
	p := &proc{t: t, dir: dir, port: port, log: filepath.Join(t.TempDir(), "limitdb.log")}
	p.args = append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir, "--enable-debug-command", "yes"}, opts...)
	p.start()
	t.Cleanup(p.kill)
	return p
}

func (p *proc) addr() string { return "127.0.0.1:" + strconv.Itoa(p.port) }

func (p *proc) start() {
	p.t.Helper()
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		p.t.Fatal(err)
	}
	p.cmd = exec.Command(limitdbBinary(p.t), p.args...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	cmd, done := p.cmd, make(chan struct{})
	p.done = done
	go func() { cmd.Wait(); f.Close(); close(done) }()
	if err := waitPing(p.addr()); err != nil {
		p.t.Fatalf("%v\n%s", err, p.output())
	}
	p.cli = redis.NewClient(&redis.Options{Addr: p.addr(), MaxRetries: -1, ReadTimeout: 10 * time.Second})
}

func (p *proc) output() string { b, _ := os.ReadFile(p.log); return string(b) }

// kill ends the process with SIGKILL.
func (p *proc) kill() {
	if p.cmd != nil && p.cmd.Process != nil {
		p.cmd.Process.Kill()
		select {
		case <-p.done:
		case <-time.After(2 * time.Second):
		}
	}
	if p.cli != nil {
		p.cli.Close()
	}
	p.cmd, p.cli = nil, nil
}

// raftInfo returns RAFT INFO's fields, or nil with the error text.
func (p *proc) raftInfo() (map[string]string, string) {
	s, err := p.cli.Do(context.Background(), "RAFT", "INFO").Text()
	if err != nil {
		return nil, err.Error()
	}
	m := map[string]string{}
	for _, l := range strings.Split(s, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = v
		}
	}
	return m, ""
}

// waitServing waits until the node leads and serves.
func (p *proc) waitServing() {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m, _ := p.raftInfo(); m["raft_serving"] == "1" {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.t.Fatalf("node not serving\n%s", p.output())
}
