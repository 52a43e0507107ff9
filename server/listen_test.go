package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// startTest starts a server on a free loopback port.
func startTest(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	s := New(cfg, nil)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	return s
}

// rconn is a raw RESP test connection.
type rconn struct {
	nc net.Conn
	br *bufio.Reader
}

func dialT(t *testing.T, addr string) *rconn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rconn{nc, bufio.NewReader(nc)}
}

// do sends a command and returns its reply's bytes.
func (c *rconn) do(t *testing.T, args ...string) string {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	c.nc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.nc.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := readReply(c.br, &out); err != nil {
		t.Fatalf("%q: %v (read %q)", args, err, out.String())
	}
	return out.String()
}

func readReply(br *bufio.Reader, out *bytes.Buffer) error {
	line, err := br.ReadString('\n')
	out.WriteString(line)
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	switch line[0] {
	case '$':
		if n >= 0 {
			buf := make([]byte, n+2)
			_, err := io.ReadFull(br, buf)
			out.Write(buf)
			return err
		}
	case '*', '%':
		if line[0] == '%' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			if err := readReply(br, out); err != nil {
				return err
			}
		}
	}
	return nil
}

func freeLoopbackPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func pingOK(addr string) bool {
	nc, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(2 * time.Second))
	nc.Write([]byte("PING\r\n"))
	b := make([]byte, 7)
	n, _ := io.ReadFull(nc, b)
	return string(b[:n]) == "+PONG\r\n"
}

// TestConfigSetPortRebinds: CONFIG SET port moves the listener (the new
// port answers, the old one refuses, open connections stay); a port that
// cannot be bound gets Redis's error and the old listener is restored.
func TestConfigSetPortRebinds(t *testing.T) {
	s := startTest(t, Config{})
	old := s.Addr().String()
	c := dialT(t, old)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	if r := c.do(t, "CONFIG", "SET", "port", busyPort); r != "-ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs.\r\n" {
		t.Fatalf("busy port: %q", r)
	}
	_, oldPort, _ := net.SplitHostPort(old)
	if r := c.do(t, "CONFIG", "GET", "port"); !strings.HasSuffix(r, "$"+strconv.Itoa(len(oldPort))+"\r\n"+oldPort+"\r\n") {
		t.Fatalf("port after failed set: %q", r)
	}
	if !pingOK(old) {
		t.Fatal("old port not restored after a failed CONFIG SET port")
	}
	np := freeLoopbackPort(t)
	if r := c.do(t, "CONFIG", "SET", "port", np); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET port: %q", r)
	}
	if !pingOK("127.0.0.1:" + np) {
		t.Fatal("new port does not answer")
	}
	if _, err := net.DialTimeout("tcp", old, time.Second); err == nil {
		t.Fatal("old port still accepts")
	}
	if r := c.do(t, "PING"); r != "+PONG\r\n" {
		t.Fatalf("open connection after rebind: %q", r)
	}
	// port 0 closes the plain listener (Redis: no TCP port)
	if r := c.do(t, "CONFIG", "SET", "port", "0"); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET port 0: %q", r)
	}
	if pingOK("127.0.0.1:" + np) {
		t.Fatal("port 0 still accepts")
	}
}

// TestConfigSetBind: an address the machine does not have fails with
// Redis's error (old listener kept), an optional one ("-addr") is skipped,
// and a new address moves the listener.
func TestConfigSetBind(t *testing.T) {
	s := startTest(t, Config{})
	addr := s.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	c := dialT(t, addr)
	if r := c.do(t, "CONFIG", "SET", "bind", "192.0.2.1"); r != "-ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses.\r\n" {
		t.Fatalf("bind to a missing address: %q", r)
	}
	if !pingOK(addr) {
		t.Fatal("listener not restored after failed bind")
	}
	if r := c.do(t, "CONFIG", "SET", "bind", "-192.0.2.1 127.0.0.2"); r != "+OK\r\n" {
		t.Fatalf("bind with optional address: %q", r)
	}
	if !pingOK("127.0.0.2:" + port) {
		t.Fatal("127.0.0.2 does not answer")
	}
	if pingOK(addr) {
		t.Fatal("127.0.0.1 still answers after bind 127.0.0.2")
	}
	if r := c.do(t, "CONFIG", "SET", "bind", "127.0.0.1", "port", "0", "protected-mode", "no"); r != "+OK\r\n" {
		t.Fatalf("bind and port together: %q", r)
	}
}

// TestLogLevel: loglevel decides what reaches the log (verbose logs each
// accepted connection, notice does not).
func TestLogLevel(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	h := slog.NewTextHandler(lockedWriter{&mu, &buf}, &slog.HandlerOptions{Level: slog.LevelDebug})
	s := startTest(t, Config{Log: slog.New(h)})
	addr := s.Addr().String()
	pingOK(addr)
	c := dialT(t, addr)
	c.do(t, "PING")
	mu.Lock()
	quiet := buf.String()
	mu.Unlock()
	if strings.Contains(quiet, "Accepted") {
		t.Fatalf("notice level logged a verbose line: %q", quiet)
	}
	c.do(t, "CONFIG", "SET", "loglevel", "verbose")
	pingOK(addr)
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	loud := buf.String()
	mu.Unlock()
	if !strings.Contains(loud, "Accepted 127.0.0.1:") {
		t.Fatalf("verbose level did not log the accepted connection: %q", loud)
	}
	c.do(t, "CONFIG", "SET", "loglevel", "warning")
	mu.Lock()
	buf.Reset()
	mu.Unlock()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	// a port in use: the failure is logged as a warning
	c.do(t, "CONFIG", "SET", "port", strconv.Itoa(busy.Addr().(*net.TCPAddr).Port))
	mu.Lock()
	warn := buf.String()
	mu.Unlock()
	if !strings.Contains(warn, "level=WARN") {
		t.Fatalf("warning level dropped a warning: %q", warn)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestProtectedMode: with no password a connection from 127.0.0.2 (not
// local for Redis 7.0) gets the DENIED text and is closed, and counts in
// rejected_connections (not in total_connections_received); 127.0.0.1 is
// served; a password or protected-mode no lets 127.0.0.2 in.
func TestProtectedMode(t *testing.T) {
	s := New(Config{Addr: "0.0.0.0:0"}, nil)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	defer s.Close()
	_, port, _ := net.SplitHostPort(s.Addr().String())
	local := dialT(t, "127.0.0.1:"+port)
	if r := local.do(t, "PING"); r != "+PONG\r\n" {
		t.Fatalf("local PING: %q", r)
	}
	if got := fromOutside(t, "127.0.0.1:"+port); got != errProtected {
		t.Fatalf("outside client got %q", got)
	}
	info := local.do(t, "INFO", "stats")
	if !strings.Contains(info, "rejected_connections:1\r\n") || !strings.Contains(info, "total_connections_received:1\r\n") {
		t.Fatalf("INFO after a DENIED connection: %q", info)
	}
	local.do(t, "CONFIG", "SET", "requirepass", "pw")
	if got := fromOutside(t, "127.0.0.1:"+port); strings.HasPrefix(got, "-DENIED") {
		t.Fatal("DENIED with a password set")
	}
	local.do(t, "CONFIG", "SET", "requirepass", "", "protected-mode", "no")
	if got := fromOutside(t, "127.0.0.1:"+port); strings.HasPrefix(got, "-DENIED") {
		t.Fatal("DENIED with protected-mode no")
	}
}

// fromOutside connects from 127.0.0.2, sends PING and returns everything
// it reads until the server closes or 500 ms pass.
func fromOutside(t *testing.T, addr string) string {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 2 * time.Second}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write([]byte("PING\r\n"))
	nc.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	b, _ := io.ReadAll(nc)
	return string(b)
}
