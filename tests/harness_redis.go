package tests

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"
)

// Redis is a redis-server process started for the tests.
type Redis struct {
	Addr   string
	cmd    *exec.Cmd
	dir    string
	exited chan struct{} // closed once the process has been waited for
}

// StartRedis starts redis-server from PATH on a free loopback port. In
// cluster mode its bus gets a picked port too: Redis's default, the port
// + 10000, lands in the range other test processes pick from and the
// kernel's ephemeral one (CI lost TestKeySlotRedis to a bus port in use:
// redis-server exited and the PING waited 10 s for nothing). A server
// that exits before it answers is started again on other ports.
func StartRedis(extra ...string) (*Redis, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not in PATH (the README's test command installs it): %w", err)
	}
	dir, err := os.MkdirTemp("", "limitdb-redis-")
	if err != nil {
		return nil, err
	}
	for try := 1; ; try++ {
		r, err := startRedisIn(bin, dir, extra)
		if err == nil || !errors.Is(err, errRedisExited) || try == 3 {
			if err != nil {
				os.RemoveAll(dir)
			}
			return r, err
		}
	}
}

var errRedisExited = errors.New("redis-server exited before it answered PING")

func startRedisIn(bin, dir string, extra []string) (*Redis, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
		"--enable-debug-command", "yes")
	if slices.Contains(extra, "--cluster-enabled") && !slices.Contains(extra, "--cluster-port") {
		bus, err := freePort()
		if err != nil {
			return nil, err
		}
		cmd.Args = append(cmd.Args, "--cluster-port", strconv.Itoa(bus))
	}
	cmd.Args = append(cmd.Args, extra...)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	r := &Redis{Addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd, dir: dir, exited: exited}
	if err := waitPingOr(r.Addr, exited); err != nil {
		r.kill()
		return nil, err
	}
	return r, nil
}

func (r *Redis) kill() {
	if r.cmd != nil && r.cmd.Process != nil {
		r.cmd.Process.Kill()
		<-r.exited
	}
}

// Stop kills the process it started.
func (r *Redis) Stop() {
	r.kill()
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
