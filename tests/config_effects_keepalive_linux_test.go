package tests

import (
	"net"
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"
)

// registered here: the socket options read are Linux's
func init() { configEffects["tcp-keepalive"] = effectTCPKeepalive }

// effectTCPKeepalive (Linux socket options): a connection accepted after
// CONFIG SET tcp-keepalive n has SO_KEEPALIVE with TCP_KEEPIDLE n and
// TCP_KEEPINTVL n/3 (Redis's anetKeepAlive); after 0, no SO_KEEPALIVE.
// The options are read from the server's end of the socket, found among
// this process's descriptors (the limitdb runs in-process).
func effectTCPKeepalive(t *testing.T, c *Conn, addr, name string) {
	defer configSet(t, c, name, "300")
	for _, n := range []int{60, 0, 300} {
		configSet(t, c, name, strconv.Itoa(n))
		x := mustDial(t, addr)
		expectDo(t, x, "+PONG\r\n", "PING")
		fd := serverSideFD(t, x.nc)
		got := []int{sockopt(t, fd, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE)}
		want := []int{min(n, 1)}
		if n > 0 {
			got = append(got, sockopt(t, fd, syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE), sockopt(t, fd, syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL))
			want = append(want, n, n/3)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s %d: SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTVL = %v, want %v", name, n, got, want)
		}
	}
}

// serverSideFD finds the descriptor of this process whose socket is the
// other end of the client connection nc.
func serverSideFD(t *testing.T, nc net.Conn) int {
	t.Helper()
	local, remote := nc.LocalAddr().(*net.TCPAddr), nc.RemoteAddr().(*net.TCPAddr)
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		sa, err1 := syscall.Getsockname(fd)
		pa, err2 := syscall.Getpeername(fd)
		s, ok1 := sa.(*syscall.SockaddrInet4)
		p, ok2 := pa.(*syscall.SockaddrInet4)
		if err1 == nil && err2 == nil && ok1 && ok2 && s.Port == remote.Port && p.Port == local.Port {
			return fd
		}
	}
	t.Fatalf("no descriptor of this process is the server's end of %v", local)
	return -1
}

func sockopt(t *testing.T, fd, level, opt int) int {
	t.Helper()
	v, err := syscall.GetsockoptInt(fd, level, opt)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
