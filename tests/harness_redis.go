package tests

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Redis is a redis-server process started for the tests.
type Redis struct {
	Addr string
	cmd  *exec.Cmd
	dir  string
}

// StartRedis starts redis-server from PATH on a free loopback port.
func StartRedis(extra ...string) (*Redis, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not in PATH (the README's test command installs it): %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "limitdb-redis-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
		"--enable-debug-command", "yes")
	cmd.Args = append(cmd.Args, extra...)
	cmd.Stdout = nil
	cmd.Stderr = nil
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := &Redis{Addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd, dir: dir}
	if err := waitPing(r.Addr); err != nil {
		r.Stop()
		return nil, err
	}
	return r, nil
}

// Stop kills the process it started.
func (r *Redis) Stop() {
	if r.cmd != nil && r.cmd.Process != nil {
		r.cmd.Process.Kill()
		r.cmd.Wait()
	}
	os.RemoveAll(r.dir)
}

// mustRedis starts a redis-server with StartRedis's options and extra,
// stopped when the test ends. TestMain has already failed the run when
// redis-server is missing, so a failed start fails the test.
func mustRedis(t testing.TB, extra ...string) *Redis {
	t.Helper()
	r, err := StartRedis(extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}

// mustRedisConn is mustRedis and a connection to it; both end with the
// test.
func mustRedisConn(t testing.TB, extra ...string) (*Redis, *Conn) {
	t.Helper()
	r := mustRedis(t, extra...)
	return r, mustDial(t, r.Addr)
}

// mustRedisBare starts redis-server with the given arguments only (a
// config file and/or options; none of StartRedis's) on a free loopback
// port, bound to 127.0.0.1 whatever the file says, and returns the
// address; it waits for a TCP connect rather than PING (the file may ask
// for a password or TLS) and stops the server when the test ends.
func mustRedisBare(t testing.TB, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed")
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	// loopback only, whatever the file says (options come after it)
	args = append(args, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--daemonize", "no")
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if nc, err := net.Dial("tcp", addr); err == nil {
			nc.Close()
			return addr
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("redis-server %q did not start", args)
	return ""
}
