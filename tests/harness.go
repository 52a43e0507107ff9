// Package tests holds limitdb's differential tests: every scenario is sent
// to a real redis-server and to limitdb, and the raw RESP replies are
// compared byte for byte.
package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"limitdb/engine"
	"limitdb/resp"
	"limitdb/server"
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

// startLimitdbProcess runs the built binary on a free loopback port with
// the given extra options (returning its address and PID), waits for it to answer and kills it (by its
// PID) when the test ends. Tests whose figures are process-wide (the
// memory used_memory counts is the Go heap) use it rather than an
// in-process server, which shares the heap with the tests.
func startLimitdbProcess(t *testing.T, opts ...string) (addr string, pid int) {
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

// scratchDir is the dir of StartLimitdb's servers (TestMain makes and
// removes it): scenarios SAVE, DEBUG RELOAD and FLUSHALL under save rules,
// and their dump.rdb belongs nowhere in the tree.
var scratchDir string

// StartLimitdb starts an in-process limitdb server on a free loopback port.
func StartLimitdb() (*server.Server, error) {
	srv := server.New(server.Config{Addr: "127.0.0.1:0", Dir: scratchDir}, engine.New())
	// as StartRedis does, so that scenarios can use DEBUG on both servers
	// (not through LoadConfig: applying the whole configuration makes
	// TestScriptBusyKill hang, see the h/digest report)
	srv.SetDebugCommand("yes")
	if err := srv.Listen(); err != nil {
		return nil, err
	}
	go srv.Serve()
	if v := os.Getenv("LIMITDB_IO_MODEL"); v != "" {
		// for the connections the test opens from here on
		c, err := Dial(srv.Addr().String())
		if err != nil {
			return nil, err
		}
		_, err = c.Do("CONFIG", "SET", "io-model", v)
		c.Close()
		if err != nil {
			return nil, err
		}
	}
	return srv, nil
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

func freePort() (int, error) { return pickPort("127.0.0.1") }

// Ports the tests pass to servers they start come from below the
// kernel's ephemeral range (32768-60999 on Linux): a port the kernel
// handed out for a listen on :0 is free again once closed, and any
// outgoing connection from that IP (a node dials its peers from its own
// 127.0.0.x) may take it as its source port before the server binds it.
// CI lost a cluster test to that ("bind: address already in use" on a
// Raft address picked a moment before). Each test process walks the
// range from its own offset, and a port is handed out only once per
// process and only if a listen on it succeeds now.
const (
	pickLow  = 20000
	pickHigh = 32767
)

var pickNext atomic.Int64

func init() { pickNext.Store(int64(os.Getpid()*7919) % (pickHigh - pickLow)) }

func pickPort(ip string) (int, error) {
	for range pickHigh - pickLow {
		port := pickLow + int(pickNext.Add(1)%(pickHigh-pickLow))
		l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
		if err != nil {
			continue
		}
		l.Close()
		return port, nil
	}
	return 0, fmt.Errorf("no free port on %s in %d-%d", ip, pickLow, pickHigh)
}

func waitPing(addr string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := Dial(addr)
		if err == nil {
			r, err := c.Do("PING")
			c.Close()
			if err == nil && string(r) == "+PONG\r\n" {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("server at %s did not answer PING", addr)
}

// Conn is a raw RESP connection: it sends commands and returns each reply's
// exact bytes.
type Conn struct {
	nc net.Conn
	br *bufio.Reader
	// ReplyTimeout bounds the wait for one reply (0: 10 s)
	ReplyTimeout time.Duration
}

// Dial connects to addr.
func Dial(addr string) (*Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &Conn{nc: nc, br: bufio.NewReader(nc)}, nil
}

func (c *Conn) Close() error { return c.nc.Close() }

// Encode encodes args as a multibulk request.
func Encode(args ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.Bytes()
}

// Do sends one command and returns its raw reply.
func (c *Conn) Do(args ...string) ([]byte, error) {
	if err := c.Send(Encode(args...)); err != nil {
		return nil, err
	}
	return c.ReadReply()
}

// Send writes raw bytes.
func (c *Conn) Send(b []byte) error {
	c.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := c.nc.Write(b)
	return err
}

// ReadReply reads one complete reply and returns its raw bytes.
func (c *Conn) ReadReply() ([]byte, error) {
	d := c.ReplyTimeout
	if d == 0 {
		d = 10 * time.Second
	}
	c.nc.SetReadDeadline(time.Now().Add(d))
	var out bytes.Buffer
	err := readValue(c.br, &out)
	return out.Bytes(), err
}

func readLine(br *bufio.Reader, out *bytes.Buffer) (string, error) {
	line, err := br.ReadString('\n')
	out.WriteString(line)
	if err != nil {
		return "", err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return "", fmt.Errorf("bad reply line %q", line)
	}
	return line[:len(line)-2], nil
}

func readValue(br *bufio.Reader, out *bytes.Buffer) error {
	line, err := readLine(br, out)
	if err != nil {
		return err
	}
	switch line[0] {
	case '+', '-', ':', ',', '_', '#', '(':
		return nil
	case '$', '=', '!':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return err
		}
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := ioReadFull(br, buf); err != nil {
			return err
		}
		out.Write(buf)
		return nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return err
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			if err := readValue(br, out); err != nil {
				return err
			}
		}
		if line[0] == '|' { // an attribute precedes the real reply
			return readValue(br, out)
		}
		return nil
	}
	return fmt.Errorf("unknown reply type %q", line)
}

func ioReadFull(br *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := br.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// SplitLine splits a scenario line like redis-cli does.
func SplitLine(line string) ([]string, error) {
	args, ok := resp.SplitArgs([]byte(line), nil)
	if !ok {
		return nil, fmt.Errorf("unbalanced quotes in %q", line)
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out, nil
}

// scenarioFiles lists the scenario files under dir (recursively).
// ownRunner are the folders of scenarios/ that a test of their own runs
// (scenarios/README.md): a walk of the whole tree leaves them out.
var ownRunner = map[string]bool{
	"scenarios/acl":     true, // TestACLScenarios: servers with an aclfile
	"scenarios/pubsub":  true, // TestPubsubScenarios
	"scenarios/effects": true, // TestEffects only: cases for the effects
}

// scenarioFiles lists the *.txt files under dir.
func scenarioFiles(t *testing.T, dir string) []string {
	var files []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.IsDir() && p != dir && ownRunner[p] {
			return filepath.SkipDir
		}
		if err == nil && !info.IsDir() && strings.HasSuffix(p, ".txt") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		t.Fatalf("no scenarios under %s", dir)
	}
	return files
}

// newStrays notes which of a server's files (dump.rdb, raft/, the AOF's
// folder) are in the working directory, the package's folder; the
// function it returns lists those that appeared since. A server started
// without a dir of its own writes them there (TestBinary did).
func newStrays() func() []string {
	names := []string{"dump.rdb", "raft", "appendonlydir"}
	before := map[string]bool{}
	for _, n := range names {
		if _, err := os.Stat(n); err == nil {
			before[n] = true
		}
	}
	return func() []string {
		var appeared []string
		for _, n := range names {
			if _, err := os.Stat(n); err == nil && !before[n] {
				appeared = append(appeared, n)
			}
		}
		return appeared
	}
}
