package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"limitdb/internal/netpoll/netpolltest"
)

// TestGoRead: a loop connection that a goroutine serves reads as a Go
// connection does (goRead): the bytes sent, a read deadline's timeout
// (blocked commands' timeouts rely on it), io.EOF after the peer's close.
func TestGoRead(t *testing.T) {
	peer, c := netpolltest.TCPConns(t)
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

// loopsOf returns s's loops, to be called once a connection was served
// (which started them): the Once's Do orders the read after loopFor's
// writes, an order the race detector does not see through the socket.
func loopsOf(s *Server) []*evLoop {
	s.loopsOnce.Do(func() {})
	return s.loops
}

// TestLoopWrites: many connections of one loop, each pipelining, get
// their replies whole and in order with the turn's replies sent through
// the ring and with write(2) each (LIMITDB_SEND_RING=0).
func TestLoopWrites(t *testing.T) {
	for _, ring := range []string{"", "0"} {
		t.Run("LIMITDB_SEND_RING="+ring, func(t *testing.T) {
			t.Setenv("LIMITDB_SEND_RING", ring)
			s := startTest(t, Config{})
			if s.conf.params["io-model"] != "loop" {
				t.Skip("io-model goroutine: no loop")
			}
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			for c := 0; c < 16; c++ {
				cn := dialT(t, s.Addr().String())
				wg.Add(1)
				go func(c int, cn *rconn) {
					defer wg.Done()
					key := "k" + strconv.Itoa(c)
					req := pipeline(20, func(int) []string { return []string{"INCR", key} })
					for round := 0; round < 10; round++ {
						var want []byte
						for i := 1; i <= 20; i++ {
							want = append(want, ":"+strconv.Itoa(round*20+i)+"\r\n"...)
						}
						cn.nc.SetDeadline(time.Now().Add(5 * time.Second))
						if _, err := cn.nc.Write(req); err != nil {
							errs <- err
							return
						}
						got := make([]byte, len(want))
						if _, err := io.ReadFull(cn.br, got); err != nil || !bytes.Equal(got, want) {
							errs <- fmt.Errorf("connection %d, round %d: %q (%v)", c, round, got, err)
							return
						}
					}
				}(c, cn)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if lps := loopsOf(s); ring == "0" && len(lps) != 0 && lps[0].ring != nil {
				t.Fatal("LIMITDB_SEND_RING=0 left the ring on")
			}
		})
	}
}

// TestLoopWritesOnce: a connection that blocks with replies still to
// send, and whose answer comes in the same turn, is twice in the turn's
// writes; its replies go out once. Client C holds the loop in a turn
// (waiting for the engine lock) while A's pipeline and B's push arrive,
// so that the loop's next turn reads both.
func TestLoopWritesOnce(t *testing.T) {
	for _, ring := range []string{"", "0"} {
		t.Run("LIMITDB_SEND_RING="+ring, func(t *testing.T) {
			t.Setenv("LIMITDB_SEND_RING", ring)
			s := startTest(t, Config{})
			a, b, c := dialT(t, s.Addr().String()), dialT(t, s.Addr().String()), dialT(t, s.Addr().String())
			c.do(t, "PING")
			s.door.Lock()
			c.nc.Write([]byte("*1\r\n$4\r\nPING\r\n"))
			time.Sleep(50 * time.Millisecond) // the loop waits for the lock in C's turn
			a.nc.Write([]byte("*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n*3\r\n$5\r\nBLPOP\r\n$1\r\nl\r\n$1\r\n0\r\n"))
			time.Sleep(20 * time.Millisecond)
			b.nc.Write([]byte("*3\r\n$5\r\nLPUSH\r\n$1\r\nl\r\n$1\r\nx\r\n"))
			time.Sleep(50 * time.Millisecond)
			s.door.Unlock()
			want := "$2\r\nhi\r\n*2\r\n$1\r\nl\r\n$1\r\nx\r\n"
			got := make([]byte, len(want))
			a.nc.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.ReadFull(a.br, got); err != nil || string(got) != want {
				t.Fatalf("A read %q (%v), want %q", got, err, want)
			}
			if r := a.do(t, "PING"); r != "+PONG\r\n" {
				t.Fatalf("A's next reply: %q (its replies sent twice?)", r)
			}
		})
	}
}

// TestLoopRingClosed: a server's close releases its loop's ring (the
// tests start hundreds of servers in one process).
func TestLoopRingClosed(t *testing.T) {
	rings := func() int {
		ents, _ := os.ReadDir("/proc/self/fd")
		n := 0
		for _, e := range ents {
			if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); l == "anon_inode:[io_uring]" {
				n++
			}
		}
		return n
	}
	before := rings()
	s := startTest(t, Config{})
	dialT(t, s.Addr().String()).do(t, "PING") // the loop starts with its first connection
	if lps := loopsOf(s); len(lps) == 0 || lps[0].ring == nil {
		t.Skip("no ring: io_uring refused here, or io-model goroutine")
	}
	if rings() != before+1 {
		t.Fatalf("io_uring descriptors: %d before the server, %d with it", before, rings())
	}
	s.Close()
	deadline := time.Now().Add(5 * time.Second)
	for rings() != before {
		if time.Now().After(deadline) {
			t.Fatalf("io_uring descriptors: %d before the server, %d after its close", before, rings())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
