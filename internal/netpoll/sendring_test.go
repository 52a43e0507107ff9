package netpoll

import (
	"bytes"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"limitdb/internal/netpoll/netpolltest"
)

// tcpPair returns a connected loopback pair: the sending side's
// descriptor (non-blocking, as a loop's sockets are) and the peer.
func tcpPair(t *testing.T) (int, *net.TCPConn) {
	t.Helper()
	c, peer := netpolltest.TCPConns(t)
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

func newRingT(t *testing.T, n uint32) *SendRing {
	t.Helper()
	r, err := NewSendRing(n)
	if err != nil {
		t.Skipf("no io_uring here (%v)", err)
	}
	t.Cleanup(r.Close)
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
		if err := r.Send(fds, bufs, res); err != nil {
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
		if err := r.Send([]int32{int32(fd)}, [][]byte{big}, res); err != nil {
			t.Fatal(err)
		}
		if res[0] <= 0 || int(res[0]) >= len(big) {
			t.Fatalf("a send past the socket's buffers took %d of %d bytes", res[0], len(big))
		}
		for i := 0; i < 100 && res[0] > 0; i++ { // the peer reads nothing
			r.Send([]int32{int32(fd)}, [][]byte{big}, res)
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
		r.Send([]int32{int32(fd)}, [][]byte{[]byte("+OK\r\n")}, res)
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
		err := r.Send([]int32{int32(p[1]), int32(fd)}, [][]byte{[]byte("x"), []byte("y")}, res)
		if err == nil || res[0] != NotSent {
			t.Fatalf("a pipe: %v, result %d (want an error and NotSent)", err, res[0])
		}
	})
}
