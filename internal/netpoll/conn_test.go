package netpoll

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// TestConn: Conn reads and writes as a TCPConn does: a write larger than
// the socket buffers waits for room (EAGAIN, the poller), a read waits
// for input, a deadline gives a net.Error whose Timeout is true, the
// peer's close gives io.EOF, and a write after the peer reset fails.
func TestConn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- NewConn(c)
	}()
	d, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := NewConn(d)
	if _, ok := c.(*Conn); !ok {
		t.Fatalf("NewConn of a TCP connection gave %T", c)
	}
	s := <-accepted
	if s == nil {
		t.Fatal("no connection accepted")
	}
	defer s.Close()

	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB: more than the buffers hold
	wrote := make(chan error, 1)
	go func() {
		n, err := c.Write(big)
		if err == nil && n != len(big) {
			err = io.ErrShortWrite
		}
		wrote <- err
	}()
	got := make([]byte, len(big))
	if _, err := io.ReadFull(s, got); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, big) {
		t.Fatal("the bytes read are not the bytes written")
	}

	s.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	var ne net.Error
	if _, err := s.Read(got[:1]); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("a read past its deadline gave %v, want a timeout", err)
	}
	s.SetReadDeadline(time.Time{})

	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Read(got[:8]); err != nil || n != 1 || got[0] != 'x' {
		t.Fatalf("read %d %q %v, want 1 \"x\"", n, got[:n], err)
	}
	c.Close()
	if _, err := s.Read(got[:1]); err != io.EOF {
		t.Fatalf("a read after the peer closed gave %v, want EOF", err)
	}
	var werr error
	for i := 0; i < 100 && werr == nil; i++ {
		_, werr = s.Write([]byte("y"))
		time.Sleep(time.Millisecond)
	}
	if werr == nil {
		t.Fatal("writes to a closed peer kept succeeding")
	}
}
