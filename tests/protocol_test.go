package tests

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"limitdb/engine"
	"limitdb/server"
)

// rawExchange sends data on a fresh connection and returns what came back
// until the server closed the connection (closed=true) or went quiet.
func rawExchange(t *testing.T, addr string, data []byte, quiet time.Duration) (reply []byte, closed bool) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	go func() {
		// the server may close before reading everything: ignore errors
		_, _ = nc.Write(data)
	}()
	buf := make([]byte, 64*1024)
	var out []byte
	for {
		nc.SetReadDeadline(time.Now().Add(quiet))
		n, err := nc.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return out, false
			}
			return out, true // EOF or reset
		}
	}
}

func mustPing(t *testing.T, addr string) {
	t.Helper()
	c := mustDial(t, addr)
	defer c.Close()
	r, err := c.Do("PING")
	if err != nil || string(r) != "+PONG\r\n" {
		t.Fatalf("PING on a new connection: %q %v", r, err)
	}
}

// TestHostileInput sends malformed and oversized requests to both servers:
// the reply bytes and whether the connection closes must match Redis, and
// the server must keep serving other connections.
func TestHostileInput(t *testing.T) {
	cases := []string{
		"*1\r\n$9223372036854775807\r\nx\r\n",
		"*9223372036854775807\r\n",
		"*abc\r\n", "*3000000000\r\n", "*1 \r\n$4\r\nPING\r\n", "*01\r\n$4\r\nPING\r\n",
		"*+1\r\n$4\r\nPING\r\n", "*1\nPING\r\n",
		"*0\r\nPING\r\n", "*-5\r\nPING\r\n",
		"*1\r\n$-1\r\n", "*1\r\n$-0\r\n", "*1\r\n$abc\r\n", "*1\r\n$04\r\nPING\r\n", "*1\r\n$ 4\r\nPING\r\n",
		"*1\r\n$4\n\nPING\r\n", "*1\r\n$536870913\r\n", "*1\r\n$536870912\r\n",
		"*1\r\nx\r\n", "*2\r\n$4\r\nPING\r\n:1\r\n",
		"PING \"abc\r\n", "PING 'a\r\n", "PING \"a\"b\r\n", "PING \"a\\x4\"\r\n",
		"\r\n\r\nPING\r\n", "PING\n", "*1\r\n$4\r\nPINGxx\r\n", "*1\r\n$4\r\nPING",
		strings.Repeat("a", 70000),
		"*" + strings.Repeat("1", 70000),
		"*1\r\n$" + strings.Repeat("1", 70000),
		strings.Repeat("x", 10<<20),   // 10 MB line without newline
		"PING\r\n*1\r\nx\r\nPING\r\n", // replies before the error stay, nothing after
	}
	for _, in := range cases {
		name := in
		if len(name) > 40 {
			name = name[:40]
		}
		ref, refClosed := rawExchange(t, redisAddr, []byte(in), 300*time.Millisecond)
		cand, candClosed := rawExchange(t, limitAddr, []byte(in), 300*time.Millisecond)
		if !bytes.Equal(ref, cand) || refClosed != candClosed {
			t.Errorf("%q:\n  redis:   %q closed=%v\n  limitdb: %q closed=%v", name, ref, refClosed, cand, candClosed)
		}
		mustPing(t, limitAddr)
	}
}

// TestQueryBufferLimit: a client whose unparsed input passes
// client-query-buffer-limit is disconnected without a reply; others go on.
func TestQueryBufferLimit(t *testing.T) {
	srv := server.New(server.Config{Addr: "127.0.0.1:0", QueryBufferLimit: 1 << 20}, engine.New())
	serveLimitdb(t, srv)
	addr := srv.Addr().String()
	// a bulk under proto-max-bulk-len whose body exceeds 1 MB of query buffer
	data := append([]byte("*1\r\n$100000000\r\n"), bytes.Repeat([]byte("z"), 3<<20)...)
	reply, closed := rawExchange(t, addr, data, 2*time.Second)
	if !closed || len(reply) != 0 {
		t.Fatalf("want silent disconnect, got %q closed=%v", reply, closed)
	}
	mustPing(t, addr)
	// a big but legal request still works
	c := mustDial(t, addr)
	r, err := c.Do("ECHO", strings.Repeat("q", 512*1024))
	if err != nil || len(r) < 512*1024 {
		t.Fatalf("ECHO 512 KB: %d bytes, %v", len(r), err)
	}
}

// TestConfigLimitsApply: CONFIG SET of maxclients, timeout and
// proto-max-bulk-len takes effect at once, on open connections too.
func TestConfigLimitsApply(t *testing.T) {
	srv := server.New(server.Config{Addr: "127.0.0.1:0"}, engine.New())
	serveLimitdb(t, srv)
	addr := srv.Addr().String()
	a := mustDial(t, addr)
	if r := mustDo(t, a, "CONFIG", "SET", "maxclients", "1"); string(r) != "+OK\r\n" {
		t.Fatalf("CONFIG SET maxclients: %q", r)
	}
	reply, closed := rawExchange(t, addr, []byte("PING\r\n"), time.Second)
	if string(reply) != "-ERR max number of clients reached\r\n" || !closed {
		t.Fatalf("over maxclients: %q closed=%v", reply, closed)
	}
	mustDo(t, a, "CONFIG", "SET", "maxclients", "10000")
	// proto-max-bulk-len applies to this already open connection
	mustDo(t, a, "CONFIG", "SET", "proto-max-bulk-len", "1mb")
	if err := a.Send([]byte("*1\r\n$2000000\r\n")); err != nil {
		t.Fatal(err)
	}
	if r, _ := a.ReadReply(); string(r) != "-ERR Protocol error: invalid bulk length\r\n" {
		t.Fatalf("bulk over proto-max-bulk-len: %q", r)
	}
	// timeout closes idle clients
	b := mustDial(t, addr)
	mustDo(t, b, "CONFIG", "SET", "timeout", "1")
	time.Sleep(2500 * time.Millisecond)
	if _, err := b.Do("PING"); err == nil {
		t.Fatal("idle client not closed after timeout")
	}
	c := mustDial(t, addr)
	mustDo(t, c, "CONFIG", "SET", "timeout", "0")
}
