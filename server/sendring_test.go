package server

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// tcpPair returns a connected loopback pair: the sending side's
// descriptor (non-blocking, as a loop's sockets are) and the peer.
func tcpPair(t *testing.T) (int, *net.TCPConn) {
	t.Helper()
	c, peer := tcpConns(t)
	t.Cleanup(func() { c.Close(); peer.Close() })
	f, err := c.File() // a blocking duplicate
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	unix.SetNonblock(fd, true)
	t.Cleanup(func() { unix.Close(fd) })
	return fd, peer
}

func newRingT(t *testing.T, n uint32) *sendRing {
	t.Helper()
	r, err := newSendRing(n)
	if err != nil {
		t.Skipf("no io_uring here (%v): the loop writes with write(2)", err)
	}
	t.Cleanup(r.close)
	return r
}

// TestSendRing: the ring's sends give write(2)'s outcomes: every byte to
// its own socket, over more sockets than the ring holds; a short count
// on a socket whose buffer fills, then EAGAIN; the errno of a connection
// the peer reset; and a descriptor it cannot send on left to write(2).
func TestSendRing(t *testing.T) {
	r := newRingT(t, 4)

	t.Run("many", func(t *testing.T) {
		var fds []int32
		var bufs [][]byte
		var peers []*net.TCPConn
		for i := 0; i < 11; i++ { // 3 rounds of the 4-entry ring
			fd, peer := tcpPair(t)
			fds = append(fds, int32(fd))
			bufs = append(bufs, bytes.Repeat([]byte{byte('a' + i)}, 100+i))
			peers = append(peers, peer)
		}
		res := make([]int32, len(fds))
		if err := r.send(fds, bufs, res); err != nil {
			t.Fatal(err)
		}
		for i, peer := range peers {
			if int(res[i]) != len(bufs[i]) {
				t.Fatalf("socket %d: sent %d of %d", i, res[i], len(bufs[i]))
			}
			got := make([]byte, len(bufs[i]))
			peer.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.ReadFull(peer, got); err != nil || !bytes.Equal(got, bufs[i]) {
				t.Fatalf("socket %d: peer read %q (%v)", i, got, err)
			}
		}
	})

	t.Run("full", func(t *testing.T) {
		fd, _ := tcpPair(t)
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
		big := make([]byte, 8<<20)
		res := []int32{0}
		if err := r.send([]int32{int32(fd)}, [][]byte{big}, res); err != nil {
			t.Fatal(err)
		}
		if res[0] <= 0 || int(res[0]) >= len(big) {
			t.Fatalf("a send past the socket's buffers took %d of %d bytes", res[0], len(big))
		}
		for i := 0; i < 100 && res[0] > 0; i++ { // the peer reads nothing
			r.send([]int32{int32(fd)}, [][]byte{big}, res)
		}
		if res[0] != -int32(unix.EAGAIN) {
			t.Fatalf("a send to a full socket: %d, want -EAGAIN", res[0])
		}
	})

	t.Run("reset", func(t *testing.T) {
		fd, peer := tcpPair(t)
		peer.SetLinger(0)
		peer.Close() // RST
		time.Sleep(20 * time.Millisecond)
		res := []int32{0}
		r.send([]int32{int32(fd)}, [][]byte{[]byte("+OK\r\n")}, res)
		if e := syscall.Errno(-res[0]); res[0] >= 0 || e != unix.ECONNRESET && e != unix.EPIPE {
			t.Fatalf("a send to a reset connection: %d", res[0])
		}
	})

	t.Run("not a socket", func(t *testing.T) {
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		defer unix.Close(p[0])
		defer unix.Close(p[1])
		fd, _ := tcpPair(t)
		res := []int32{0, 0}
		err := r.send([]int32{int32(p[1]), int32(fd)}, [][]byte{[]byte("x"), []byte("y")}, res)
		if err == nil || res[0] != ringNotSent {
			t.Fatalf("a pipe: %v, result %d (want an error and ringNotSent)", err, res[0])
		}
	})
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
