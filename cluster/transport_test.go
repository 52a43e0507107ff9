package cluster

import (
	"errors"
	"net"
	"testing"
)

// TestHandshake: equal secrets pass both ways; a different secret fails on
// both ends; without a secret loopback passes.
func TestHandshake(t *testing.T) {
	try := func(a, b string) (error, error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		srvErr := make(chan error, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				srvErr <- err
				return
			}
			defer c.Close()
			srvErr <- (&auth{secret: []byte(a)}).handshake(c, false)
		}()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		cliErr := (&auth{secret: []byte(b)}).handshake(c, true)
		c.Close()
		return <-srvErr, cliErr
	}
	if s, c := try("s3cret", "s3cret"); s != nil || c != nil {
		t.Fatalf("same secret: %v / %v", s, c)
	}
	if s, c := try("s3cret", "other"); !errors.Is(s, errAuth) || c == nil {
		t.Fatalf("other secret: %v / %v", s, c)
	}
	if s, c := try("", ""); s != nil || c != nil {
		t.Fatalf("no secret on loopback: %v / %v", s, c)
	}
}
