// Package netpolltest holds what the tests of netpoll and of the server's
// event loops share. It is a package of its own because a test file of
// one package cannot be seen from another's tests, and netpoll's tests
// cannot import server's.
package netpolltest

import (
	"net"
	"testing"
)

// TCPConns returns a connected loopback pair: the dialed side and the
// accepted one.
func TCPConns(t testing.TB) (*net.TCPConn, *net.TCPConn) {
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
