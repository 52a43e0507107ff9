package server

import (
	"bufio"
	"net"
	"testing"
	"time"

	"limitdb/engine"
)

func init() {
	// a test-only command that panics while the engine lock is held
	registerConn(&engine.Command{Name: "__testpanic", Arity: 1, Flags: "fast", Group: "server", Since: "0.0.0", Summary: "Panics (tests only)."},
		func(s *Server, cl *client, argv [][]byte) { panic("test panic") })
}

func exchange(t *testing.T, addr, req string) (string, error) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := nc.Write([]byte(req)); err != nil {
		return "", err
	}
	return bufio.NewReader(nc).ReadString('\n')
}

// TestPanicContained: a panicking command closes only its connection and
// releases the engine lock; other clients keep being served.
func TestPanicContained(t *testing.T) {
	s := New(Config{Addr: "127.0.0.1:0"}, nil)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	defer s.Close()
	addr := s.Addr().String()
	if r, err := exchange(t, addr, "__TESTPANIC\r\n"); err == nil {
		t.Fatalf("panicking connection answered %q", r)
	}
	for i := 0; i < 3; i++ {
		r, err := exchange(t, addr, "PING\r\n")
		if err != nil || r != "+PONG\r\n" {
			t.Fatalf("PING after panic: %q %v", r, err)
		}
	}
}
