package cluster

import (
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"
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
			_, err = (&auth{secret: []byte(a)}).accept(c)
			srvErr <- err
		}()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		cliErr := (&auth{secret: []byte(b)}).handshake(c, true)
		if cliErr == nil {
			c.Write([]byte{streamRaft})
		}
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

// fakeLink is a node's users and masteruser/masterauth.
type fakeLink struct {
	required   bool
	user, pass string
	keys       map[string][]string
}

func (f fakeLink) LinkRequired() bool                   { return f.required }
func (f fakeLink) LinkCredentials() (user, pass string) { return f.user, f.pass }
func (f fakeLink) LinkKeys(user string) []string        { return f.keys[user] }

// TestHandshakeCredentials: without a secret, a node that requires
// authentication takes a link only from a peer proving a password of a
// user its LinkKeys names, and a dialer checks the acceptor's proof.
func TestHandshakeCredentials(t *testing.T) {
	users := map[string][]string{"default": {string(passKey("pw"))}, "repl": {string(passKey("rpw"))}}
	try := func(acc, dial fakeLink) (byte, error, error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		type res struct {
			tag byte
			err error
		}
		srv := make(chan res, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				srv <- res{0, err}
				return
			}
			defer c.Close()
			tag, err := (&auth{link: acc}).accept(c)
			srv <- res{tag, err}
		}()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		cliErr := (&auth{link: dial}).handshake(c, true)
		if cliErr == nil {
			c.Write([]byte{streamForward})
		}
		c.Close()
		r := <-srv
		return r.tag, r.err, cliErr
	}
	acc := fakeLink{required: true, keys: users}
	if tag, s, c := try(acc, fakeLink{required: true, pass: "pw"}); s != nil || c != nil || tag != streamForward {
		t.Fatalf("the default user's password: %q %v / %v", tag, s, c)
	}
	if tag, s, c := try(acc, fakeLink{required: true, user: "repl", pass: "rpw"}); s != nil || c != nil || tag != streamForward {
		t.Fatalf("masteruser repl: %q %v / %v", tag, s, c)
	}
	if _, s, c := try(acc, fakeLink{required: true, user: "repl", pass: "pw"}); !errors.Is(s, errAuth) || c == nil {
		t.Fatalf("a wrong password: %v / %v", s, c)
	}
	if _, s, c := try(acc, fakeLink{}); !errors.Is(s, errAuth) || c != nil {
		t.Fatalf("no credentials: %v / %v", s, c)
	}
	if _, _, c := try(acc, fakeLink{required: true}); !errors.Is(c, errNoMasterauth) {
		t.Fatalf("a dialer without masterauth: %v", c)
	}
	if tag, s, c := try(fakeLink{}, fakeLink{}); s != nil || c != nil || tag != streamForward {
		t.Fatalf("no authentication required: %q %v / %v", tag, s, c)
	}
	// an acceptor that cannot prove the key: the dialer refuses it
	if _, s, c := try(fakeLink{keys: map[string][]string{"default": {string(passKey("pw"))}}}, fakeLink{required: true, pass: "other"}); s == nil || c == nil {
		t.Fatalf("mismatched keys: %v / %v", s, c)
	}
}

// TestMuxWaitsForReady: until the node is ready (its Raft set up) the
// listener closes forwarding, message and clock streams without calling
// their handlers; a forwarding ping reaching a restarted node's listener
// before its Raft existed panicked (fault soak). Once ready they are served.
func TestMuxWaitsForReady(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := newMux(ln, &auth{}, func(string, ...any) {})
	var ready atomic.Bool
	m.ready = &ready
	served := make(chan struct{}, 4)
	m.fwd = func(c net.Conn) { served <- struct{}{}; c.Close() }
	go m.serve()
	defer m.close()
	try := func() bool {
		c, err := m.dial(ln.Addr().String(), streamForward, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		c.Read(make([]byte, 1)) // returns when the listener closes it
		select {
		case <-served:
			return true
		case <-time.After(100 * time.Millisecond):
			return false
		}
	}
	if try() {
		t.Fatal("a forwarding stream was served before the node was ready")
	}
	ready.Store(true)
	if !try() {
		t.Fatal("a forwarding stream was not served once the node was ready")
	}
}
