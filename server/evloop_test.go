package server

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// TestGoRead: a loop connection that a goroutine serves reads as a Go
// connection does (goRead): the bytes sent, a read deadline's timeout
// (blocked commands' timeouts rely on it), io.EOF after the peer's close.
func TestGoRead(t *testing.T) {
	peer, c := tcpConns(t)
	defer peer.Close()
	lc, err := newLoopConn(nil, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := lc.toGoroutine(); err != nil {
		t.Fatal(err)
	}
	defer lc.nc.Close()

	peer.Write([]byte("PING\r\n"))
	b := make([]byte, 64)
	lc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := lc.Read(b); err != nil || string(b[:n]) != "PING\r\n" {
		t.Fatalf("read %q, %v", b[:n], err)
	}

	lc.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	start := time.Now()
	_, err = lc.Read(b)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a read past its deadline: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("a 20 ms deadline fired after %v", d)
	}

	lc.SetReadDeadline(time.Time{})
	peer.Close()
	if _, err := lc.Read(b); err != io.EOF {
		t.Fatalf("a read after the peer's close: %v, want io.EOF", err)
	}
}

// tcpConns returns a connected loopback pair: the dialed side and the
// accepted one.
func tcpConns(t *testing.T) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	a, err := ln.Accept()
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	return c.(*net.TCPConn), a.(*net.TCPConn)
}

// loopsOf returns s's loops, to be called once a connection was served
// (which started them): the Once's Do orders the read after loopFor's
// writes, an order the race detector does not see through the socket.
func loopsOf(s *Server) []*evLoop {
	s.loopsOnce.Do(func() {})
	return s.loops
}
