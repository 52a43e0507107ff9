package cluster

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// Every byte between nodes — Raft's RPCs, forwarded units, joins — goes
// through one listener on the node's raft-addr. A connection starts with
// the authentication handshake (below), then one byte naming its stream:
// Raft's NetworkTransport gets the 'R' connections through StreamLayer,
// the forwarding server the 'F' ones, Pub/Sub messages the 'M' ones.
const (
	streamRaft    = 'R'
	streamForward = 'F'
)

// handshakeTimeout bounds the handshake, so that a peer that connects and
// says nothing holds a goroutine for at most this long.
const handshakeTimeout = 5 * time.Second

var errAuth = errors.New("cluster: peer failed authentication")

// auth is the inter-node authentication. With a cluster secret, both ends
// prove they know it without revealing it: the accepting end sends a
// fresh 32-byte nonce; the dialing end answers with its own nonce and
// HMAC-SHA256(secret, 'd' || its nonce || the acceptor's); only when that
// checks out does the acceptor prove itself with HMAC-SHA256(secret, 'a'
// || its nonce || the dialer's). A stranger that connects learns one
// random nonce and nothing it could replay (the nonces are fresh, the
// roles differ); a stranger that is dialed to cannot answer. Without a
// secret, only loopback peers are accepted (as protected mode does for
// clients), which is what makes the README's three commands work on one
// machine and nothing else.
type auth struct {
	secret []byte
}

// loopback reports whether addr is a loopback address.
func loopback(addr net.Addr) bool {
	if ta, ok := addr.(*net.TCPAddr); ok {
		return ta.IP.IsLoopback()
	}
	return false
}

func (a *auth) mac(role byte, mine, theirs []byte) []byte {
	m := hmac.New(sha256.New, a.secret)
	m.Write([]byte{role})
	m.Write(mine)
	m.Write(theirs)
	return m.Sum(nil)
}

// handshake authenticates c; dialer tells which end this is. The deadline
// is cleared on success.
func (a *auth) handshake(c net.Conn, dialer bool) error {
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	if len(a.secret) == 0 {
		if !loopback(c.RemoteAddr()) || !loopback(c.LocalAddr()) {
			return fmt.Errorf("%w: %s is not a loopback address and no cluster-secret is set", errAuth, c.RemoteAddr())
		}
		return c.SetDeadline(time.Time{})
	}
	mine := make([]byte, 32)
	if _, err := rand.Read(mine); err != nil {
		return err
	}
	theirs := make([]byte, 32)
	proof := make([]byte, sha256.Size)
	if dialer {
		if _, err := io.ReadFull(c, theirs); err != nil {
			return err
		}
		if _, err := c.Write(append(mine, a.mac('d', mine, theirs)...)); err != nil {
			return err
		}
		if _, err := io.ReadFull(c, proof); err != nil {
			return fmt.Errorf("%w: the peer refused this node's proof (another cluster-secret?)", errAuth)
		}
		if !hmac.Equal(proof, a.mac('a', theirs, mine)) {
			return errAuth
		}
		return c.SetDeadline(time.Time{})
	}
	if _, err := c.Write(mine); err != nil {
		return err
	}
	if _, err := io.ReadFull(c, theirs); err != nil {
		return err
	}
	if _, err := io.ReadFull(c, proof); err != nil {
		return err
	}
	if !hmac.Equal(proof, a.mac('d', theirs, mine)) {
		return errAuth
	}
	if _, err := c.Write(a.mac('a', mine, theirs)); err != nil {
		return err
	}
	return c.SetDeadline(time.Time{})
}

// mux owns the raft-addr listener: it authenticates each connection and
// routes it by its stream byte.
type mux struct {
	ln     net.Listener
	auth   *auth
	logf   func(msg string, args ...any)
	raftCh chan net.Conn
	fwd    func(net.Conn) // serves a forwarding connection (own goroutine)
	msgs   func(net.Conn) // reads another node's Pub/Sub messages (fanout.go)
	// advertise is the address the others reach this node at (raft-addr,
	// or raft-advertise behind a proxy or NAT); local is the IP outgoing
	// connections leave from (raft-addr's, when it names one), so that a
	// peer sees the same address whichever way a connection goes
	advertise net.Addr
	local     *net.TCPAddr

	closeOnce sync.Once
	closed    chan struct{}
}

func newMux(ln net.Listener, a *auth, logf func(string, ...any)) *mux {
	return &mux{ln: ln, auth: a, logf: logf, raftCh: make(chan net.Conn, 16), closed: make(chan struct{})}
}

func (m *mux) serve() {
	for {
		c, err := m.ln.Accept()
		if err != nil {
			select {
			case <-m.closed:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go m.route(c)
	}
}

func (m *mux) route(c net.Conn) {
	if err := m.auth.handshake(c, false); err != nil {
		m.logf("cluster connection refused", "peer", c.RemoteAddr().String(), "err", err.Error())
		c.Close()
		return
	}
	c.SetReadDeadline(time.Now().Add(handshakeTimeout))
	var tag [1]byte
	if _, err := io.ReadFull(c, tag[:]); err != nil {
		c.Close()
		return
	}
	c.SetReadDeadline(time.Time{})
	switch tag[0] {
	case streamRaft:
		select {
		case m.raftCh <- c:
		case <-m.closed:
			c.Close()
		}
	case streamForward:
		if m.fwd != nil {
			m.fwd(c)
			return
		}
		c.Close()
	case streamMessages:
		if m.msgs != nil {
			m.msgs(c)
			return
		}
		c.Close()
	default:
		c.Close()
	}
}

func (m *mux) close() {
	m.closeOnce.Do(func() {
		close(m.closed)
		m.ln.Close()
	})
}

// dial connects to a node's raft-addr, authenticates and opens stream tag.
func (m *mux) dial(addr string, tag byte, timeout time.Duration) (net.Conn, error) {
	dl := net.Dialer{Timeout: timeout}
	if m.local != nil {
		dl.LocalAddr = m.local
	}
	c, err := dl.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	if err := m.auth.handshake(c, true); err != nil {
		c.Close()
		return nil, err
	}
	if _, err := c.Write([]byte{tag}); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// raftLayer is the StreamLayer Raft's NetworkTransport runs on.
type raftLayer struct{ m *mux }

func (l raftLayer) Accept() (net.Conn, error) {
	select {
	case c := <-l.m.raftCh:
		return c, nil
	case <-l.m.closed:
		return nil, net.ErrClosed
	}
}

func (l raftLayer) Close() error { l.m.close(); return nil }
func (l raftLayer) Addr() net.Addr {
	if l.m.advertise != nil {
		return l.m.advertise
	}
	return l.m.ln.Addr()
}

func (l raftLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return l.m.dial(string(addr), streamRaft, timeout)
}
