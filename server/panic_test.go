package server

import (
	"bufio"
	"net"
	"testing"
	"time"

	"limitdb/engine"
)

func init() {
	// test-only commands (registered only in the test binary): one panics
	// before writing anything, one after writing part of its reply
	registerConn(&engine.Command{Name: "__testpanic", Arity: 1, Flags: "fast", Group: "server", Since: "0.0.0", Summary: "Panics (tests only)."},
		func(s *Server, cl *client, argv [][]byte) { panic("test panic") })
	registerConn(&engine.Command{Name: "__testpanichalf", Arity: 1, Flags: "fast", Group: "server", Since: "0.0.0", Summary: "Writes half a reply, then panics (tests only)."},
		func(s *Server, cl *client, argv [][]byte) {
			cl.w.Array(3)
			cl.w.BulkString("a")
			panic("test panic after partial reply")
		})
}

// readN reads n CRLF-terminated lines.
func readN(t *testing.T, br *bufio.Reader, n int) string {
	t.Helper()
	out := ""
	for i := 0; i < n; i++ {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", out, err)
		}
		out += l
	}
	return out
}

// TestPanicContained: a panicking command gets an error reply (its partial
// reply dropped), the engine lock is released at the end of the batch, the
// same connection and other connections keep being served, and inside EXEC
// only the panicking element is an error.
func TestPanicContained(t *testing.T) {
	s := startTest(t, Config{})
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(nc)
	nc.Write([]byte("SET k v\r\n__TESTPANIC\r\n__TESTPANICHALF\r\nGET k\r\n"))
	want := "+OK\r\n-" + errPanicked("__testpanic") + "\r\n-" + errPanicked("__testpanichalf") + "\r\n$1\r\nv\r\n"
	if got := readN(t, br, 5); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	nc.Write([]byte("MULTI\r\nINCR n\r\n__TESTPANICHALF\r\nINCR n\r\nEXEC\r\n"))
	want = "+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n:1\r\n-" + errPanicked("__testpanichalf") + "\r\n:2\r\n"
	if got := readN(t, br, 8); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	// another connection gets the engine lock
	other, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.SetDeadline(time.Now().Add(2 * time.Second))
	other.Write([]byte("PING\r\n"))
	if got := readN(t, bufio.NewReader(other), 1); got != "+PONG\r\n" {
		t.Fatalf("PING on another connection: %q", got)
	}
}
