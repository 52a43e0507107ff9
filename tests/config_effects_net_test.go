package tests

import (
	"bufio"
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"limitdb/server"
)

// Effect tests of the network parameters. Those that move or close the
// listener, or leave connections idle, run on a limitdb of their own so
// that TestConfigEffects's connection and address stay usable.

// pingFrom connects to addr from the local address from (nil: any) and
// returns the reply to PING, or the error.
func pingFrom(addr string, from net.IP) (string, error) {
	d := net.Dialer{Timeout: time.Second}
	if from != nil {
		d.LocalAddr = &net.TCPAddr{IP: from}
	}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	c := &Conn{nc: nc, br: bufio.NewReader(nc)}
	nc.SetDeadline(time.Now().Add(2 * time.Second))
	r, err := c.Do("PING")
	return string(r), err
}

// listening fails the test unless addr serves PING (want) or refuses
// connections (!want).
func listening(t *testing.T, addr string, want bool) {
	t.Helper()
	r, err := pingFrom(addr, nil)
	switch {
	case want && r != "+PONG\r\n":
		t.Fatalf("%s: %q %v, want PONG", addr, r, err)
	case !want && err == nil:
		t.Fatalf("%s still serves (%q)", addr, r)
	}
}

// effectPort: the new port serves, the old one refuses, and back.
func effectPort(t *testing.T, _ *Conn, _, name string) {
	old, c := mustLimitdbConn(t)
	np, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	configSet(t, c, name, strconv.Itoa(np))
	listening(t, "127.0.0.1:"+strconv.Itoa(np), true)
	listening(t, old, false)
	_, oldPort, _ := net.SplitHostPort(old)
	configSet(t, c, name, oldPort)
	listening(t, old, true)
	listening(t, "127.0.0.1:"+strconv.Itoa(np), false)
}

// effectBind: the listener follows the bind addresses (127.0.0.2, then
// 127.0.0.1 and ::1).
func effectBind(t *testing.T, _ *Conn, _, name string) {
	addr, c := mustLimitdbConn(t)
	_, port, _ := net.SplitHostPort(addr)
	at := func(ip string) string { return net.JoinHostPort(ip, port) }
	configSet(t, c, name, "127.0.0.2")
	listening(t, at("127.0.0.1"), false)
	// from 127.0.0.1: a client from 127.0.0.2 is not local (protected mode)
	if r, err := pingFrom(at("127.0.0.2"), net.ParseIP("127.0.0.1")); r != "+PONG\r\n" {
		t.Fatalf("bind 127.0.0.2: %q %v", r, err)
	}
	configSet(t, c, name, "127.0.0.1 -::1")
	listening(t, at("127.0.0.1"), true)
	listening(t, at("127.0.0.2"), false)
	if hasIPv6Loopback() {
		listening(t, at("::1"), true)
	}
}

// hasIPv6Loopback reports whether ::1 can be bound here.
func hasIPv6Loopback() bool {
	l, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// effectTimeout: at timeout 1 an idle client is closed after more than a
// second (Redis: idle time > timeout, whole seconds, checked by the cron);
// at 0 a client idle for 2.5 s is still served.
func effectTimeout(t *testing.T, _ *Conn, _, name string) {
	addr, c := mustLimitdbConn(t)
	configSet(t, c, name, "1")
	x := mustDial(t, addr)
	expectDo(t, x, "+PONG\r\n", "PING")
	start := time.Now()
	x.nc.SetReadDeadline(start.Add(4 * time.Second))
	if _, err := readUntilEOF(x.nc, 0, -1); err != nil {
		t.Fatalf("%s 1: idle client not closed: %v", name, err)
	}
	if d := time.Since(start); d < 900*time.Millisecond || d > 3500*time.Millisecond {
		t.Fatalf("%s 1: idle client closed after %v", name, d)
	}
	configSet(t, mustDial(t, addr), name, "0")
	y := mustDial(t, addr)
	expectDo(t, y, "+PONG\r\n", "PING")
	time.Sleep(2500 * time.Millisecond)
	expectDo(t, y, "+PONG\r\n", "PING")
}

// logCapture is a slog handler keeping every record's level and message.
type logCapture struct {
	mu    sync.Mutex
	lines []string
}

func (l *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (l *logCapture) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logCapture) WithGroup(string) slog.Handler            { return l }
func (l *logCapture) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.lines = append(l.lines, r.Level.String()+" "+r.Message)
	l.mu.Unlock()
	return nil
}

// take returns and forgets the records so far.
func (l *logCapture) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := strings.Join(l.lines, "\n")
	l.lines = nil
	return s
}

// effectLoglevel, on a limitdb logging to a capture: a record passes
// at its level and those under it. The server's own records: each accepted
// connection ("Accepted 127.0.0.1:<port>", Redis's verbose line) and a
// warning (a port already in use); debug and notice records are those that
// embedders write through Server.Logger (cmd/limitdb's "ready to accept
// connections" is notice), as the server itself writes none.
func effectLoglevel(t *testing.T, _ *Conn, _, name string) {
	logs := &logCapture{}
	srv := mustLimitdbConfig(t, server.Config{Addr: "127.0.0.1:0", Log: slog.New(logs)}, "")
	addr := srv.Addr().String()
	c := mustDial(t, addr)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	for _, lv := range []string{"debug", "verbose", "notice", "warning"} {
		configSet(t, c, name, lv)
		logs.take()
		x := mustDial(t, addr)
		expectDo(t, x, "+PONG\r\n", "PING")
		expectDo(t, c, "-ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs.\r\n",
			"CONFIG", "SET", "port", busyPort) // logged as a warning
		srv.Logger().Debug("a debug line")
		srv.Logger().Info("a notice line")
		got := logs.take()
		for _, l := range []struct {
			line string
			want bool
		}{
			{"DEBUG a debug line", lv == "debug"},
			{"Accepted " + x.nc.LocalAddr().String(), lv == "debug" || lv == "verbose"},
			{"INFO a notice line", lv != "warning"},
		} {
			if strings.Contains(got, l.line) != l.want {
				t.Fatalf("%s %s: %q logged %v: %q", name, lv, l.line, !l.want, got)
			}
		}
		if !strings.Contains(got, "WARN Warning: Could not create server TCP listening socket") {
			t.Fatalf("%s %s: the warning was not logged: %q", name, lv, got)
		}
	}
	configSet(t, c, name, "notice")
}

// effectProtectedMode: with no password, a client from 127.0.0.2 (not
// local for Redis 7.0) gets -DENIED and is closed under yes, and is served
// under no.
func effectProtectedMode(t *testing.T, c *Conn, addr, name string) {
	defer configSet(t, c, name, "yes")
	for _, v := range []string{"no", "yes"} {
		configSet(t, c, name, v)
		reply, closed := outsideExchange(t, addr)
		denied := bytes.HasPrefix(reply, []byte("-DENIED Redis is running in protected mode")) && closed
		if v == "no" && string(reply) != "+PONG\r\n" || v == "yes" && !denied {
			t.Fatalf("%s %s: client from 127.0.0.2 got %q (closed %v)", name, v, reply, closed)
		}
	}
}

// effectUnixSocket: immutable; set at start-up, the server listens on that
// socket: a client connected over it is served, as a unix-socket client.
func effectUnixSocket(t *testing.T, c *Conn, addr, name string) {
	refusedWith("/tmp/limitdb.sock", "can't set immutable config")(t, c, addr, name)
	sock := filepath.Join(t.TempDir(), "l.sock")
	mustLimitdbConfig(t, server.Config{Addr: "127.0.0.1:0"}, "", "--unixsocket", sock)
	nc, err := net.DialTimeout("unix", sock, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	u := &Conn{nc: nc, br: bufio.NewReader(nc)}
	expectDo(t, u, "+PONG\r\n", "PING")
	if !strings.Contains(string(mustDo(t, u, "CLIENT", "INFO")), " flags=U ") {
		t.Fatal("client over the unix socket lacks flag U")
	}
}

// effectUnixSocketPerm: immutable; at start-up it is the socket file's
// mode (700 and 777 on two servers).
func effectUnixSocketPerm(t *testing.T, c *Conn, addr, name string) {
	refusedWith("777", "can't set immutable config")(t, c, addr, name)
	for _, perm := range []fs.FileMode{0o700, 0o777} {
		sock := filepath.Join(t.TempDir(), "l.sock")
		mustLimitdbConfig(t, server.Config{Addr: "127.0.0.1:0"}, "", "--unixsocket", sock, "--"+name, strconv.FormatUint(uint64(perm), 8))
		st, err := os.Stat(sock)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != perm {
			t.Fatalf("%s %o: socket mode %v", name, perm, st.Mode().Perm())
		}
	}
}

// effectIOModel: an unknown model is refused; connections accepted under
// io-model loop are served by an event loop with the same behaviour: a
// pipeline, a blocking pop answered by another client (the blocked client
// stays on the loop), Pub/Sub, MULTI, CLIENT KILL; a
// connection accepted after goroutine is set again is served too.
func effectIOModel(t *testing.T, _ *Conn, _, name string) {
	addr, c := mustLimitdbConn(t)
	r := mustDo(t, c, "CONFIG", "SET", name, "epoll")
	if !strings.HasPrefix(string(r), "-ERR CONFIG SET failed (possibly related to argument 'io-model')") {
		t.Fatalf("%s epoll: %q", name, r)
	}
	configSet(t, c, name, "loop")
	x, y, z := mustDial(t, addr), mustDial(t, addr), mustDial(t, addr)
	if err := x.Send([]byte("*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"+PONG\r\n", "+OK\r\n", "$1\r\nv\r\n"} {
		if got, err := x.ReadReply(); err != nil || string(got) != want {
			t.Fatalf("%s loop: pipeline reply %q, %v; want %q", name, got, err, want)
		}
	}
	if err := y.Send([]byte("*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n5\r\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	expectDo(t, x, ":1\r\n", "LPUSH", "q", "a")
	if got, err := y.ReadReply(); err != nil || string(got) != "*2\r\n$1\r\nq\r\n$1\r\na\r\n" {
		t.Fatalf("%s loop: BLPOP got %q, %v", name, got, err)
	}
	expectDo(t, y, "+PONG\r\n", "PING")
	expectDo(t, z, "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n", "SUBSCRIBE", "ch")
	expectDo(t, x, ":1\r\n", "PUBLISH", "ch", "hi")
	if got, err := z.ReadReply(); err != nil || string(got) != "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n" {
		t.Fatalf("%s loop: message %q, %v", name, got, err)
	}
	expectDo(t, y, "+OK\r\n", "MULTI")
	expectDo(t, y, "+QUEUED\r\n", "INCR", "n")
	expectDo(t, y, "*1\r\n:1\r\n", "EXEC")
	id := strings.TrimSpace(strings.TrimPrefix(string(mustDo(t, x, "CLIENT", "ID")), ":"))
	expectDo(t, c, ":1\r\n", "CLIENT", "KILL", "ID", id)
	x.nc.SetReadDeadline(time.Now().Add(4 * time.Second))
	if _, err := readUntilEOF(x.nc, 0, -1); err != nil {
		t.Fatalf("%s loop: killed client not closed: %v", name, err)
	}
	configSet(t, c, name, "goroutine")
	expectDo(t, mustDial(t, addr), "$1\r\nv\r\n", "GET", "k")
	expectDo(t, y, "$1\r\nv\r\n", "GET", "k") // still served by the loop
}
