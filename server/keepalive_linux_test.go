package server

import (
	"syscall"
	"testing"
	"time"
)

// serverSideConn returns the server's end of the newest connection.
func serverSideConn(t *testing.T, s *Server) syscall.Conn {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		var newest *client
		for _, c := range s.clients {
			if newest == nil || c.id > newest.id {
				newest = c
			}
		}
		s.mu.Unlock()
		if newest != nil {
			return newest.nc.(syscall.Conn) // a *net.TCPConn, or a *loopConn (io-model loop)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no client registered")
	return nil
}

func sockopt(t *testing.T, tc syscall.Conn, level, opt int) int {
	t.Helper()
	rc, err := tc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	rc.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), level, opt) })
	if gerr != nil {
		t.Fatal(gerr)
	}
	return v
}

// TestTCPKeepalive: accepted connections get tcp-keepalive as Redis sets
// it (SO_KEEPALIVE, TCP_KEEPIDLE = n, TCP_KEEPINTVL = n/3, TCP_KEEPCNT =
// 3), read from the server's side of the socket; 0 turns it off.
func TestTCPKeepalive(t *testing.T) {
	s := startTest(t, Config{})
	addr := s.Addr().String()
	c := dialT(t, addr)
	c.do(t, "PING")
	check := func(on, idle, intvl int) {
		t.Helper()
		tc := serverSideConn(t, s)
		if got := sockopt(t, tc, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE); got != on {
			t.Fatalf("SO_KEEPALIVE = %d, want %d", got, on)
		}
		if on == 0 {
			return
		}
		if got := sockopt(t, tc, syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE); got != idle {
			t.Fatalf("TCP_KEEPIDLE = %d, want %d", got, idle)
		}
		if got := sockopt(t, tc, syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL); got != intvl {
			t.Fatalf("TCP_KEEPINTVL = %d, want %d", got, intvl)
		}
		if got := sockopt(t, tc, syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT); got != 3 {
			t.Fatalf("TCP_KEEPCNT = %d, want 3", got)
		}
	}
	check(1, 300, 100) // Redis's default
	c.do(t, "CONFIG", "SET", "tcp-keepalive", "60")
	d := dialT(t, addr)
	d.do(t, "PING")
	check(1, 60, 20)
	c.do(t, "CONFIG", "SET", "tcp-keepalive", "0")
	e := dialT(t, addr)
	e.do(t, "PING")
	check(0, 0, 0)
}
