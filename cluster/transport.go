package cluster

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"limitdb/door"
	"limitdb/internal/netpoll"
)

// Every byte between nodes — Raft's RPCs, forwarded units, joins — goes
// through one listener on the node's raft-addr. A connection starts with
// the authentication handshake (below), then one byte naming its stream:
// Raft's NetworkTransport gets the 'R' connections through StreamLayer,
// the forwarding server the 'F' ones, Pub/Sub messages the 'M' ones,
// the leader's clock probes the 'T' ones (clock.go), queries between
// nodes the 'S' ones (query.go).
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
// roles differ); a stranger that is dialed to cannot answer.
//
// Without a secret, only loopback peers are accepted (as protected mode
// does for clients), which is what makes the README's three commands work
// on one machine and nothing else. Loopback is every local process,
// though: when the node requires its clients to authenticate (requirepass,
// or a default user that is off), a link must authenticate too, or any
// process on the machine could run units as any user through the
// forwarding stream or write the log through the Raft one. The dialer then
// sends credAuth and proves it knows a password of masteruser (masterauth,
// as a Redis replica authenticates to its master): the same exchange as
// with a secret, keyed by the password's SHA-256 (what the acceptor's ACL
// keeps), with the user's name in the dialer's MAC; the acceptor takes it
// only for an enabled user that may run RAFT JOIN (the link can do what a
// member can), and proves itself with the same key.
type auth struct {
	secret []byte
	link   LinkAuth // nil: no credentials (tests, a node without a server)
	// tls: the connection is TLS with a verified certificate at both ends
	// (tls-cluster / tls-replication, tls.go), which takes the place of
	// the loopback rule without a secret
	tls bool
}

// credAuth opens the credentials exchange of a link without a secret.
const credAuth = 'A'

// errNoMasterauth: this node requires authentication and has no
// credentials to give its peers.
var errNoMasterauth = errors.New("cluster: this node requires authentication (requirepass or ACL) and has no masterauth to authenticate its links to the other nodes with: set masterauth (and masteruser) on every node")

// loopback reports whether addr is a loopback address.
func loopback(addr net.Addr) bool {
	if ta, ok := addr.(*net.TCPAddr); ok {
		return ta.IP.IsLoopback()
	}
	return false
}

func macWith(key []byte, role byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte{role})
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

func (a *auth) mac(role byte, mine, theirs []byte) []byte {
	return macWith(a.secret, role, mine, theirs)
}

func (a *auth) required() bool { return a.link != nil && a.link.LinkRequired() }

// handshake authenticates c; dialer tells which end this is (the
// accepting end uses accept, which reads the stream byte too). The
// deadline is cleared on success.
func (a *auth) handshake(c net.Conn, dialer bool) error {
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	if len(a.secret) == 0 {
		if !a.tls && (!loopback(c.RemoteAddr()) || !loopback(c.LocalAddr())) {
			return fmt.Errorf("%w: %s is not a loopback address and no cluster-secret is set", errAuth, c.RemoteAddr())
		}
		if dialer && a.required() {
			if err := a.dialCredentials(c); err != nil {
				return err
			}
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

// accept authenticates an accepted connection and returns its stream
// byte.
func (a *auth) accept(c net.Conn) (byte, error) {
	if err := a.handshake(c, false); err != nil {
		return 0, err
	}
	c.SetReadDeadline(time.Now().Add(handshakeTimeout))
	defer c.SetReadDeadline(time.Time{})
	var b [1]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return 0, err
	}
	if len(a.secret) != 0 {
		return b[0], nil
	}
	if b[0] != credAuth {
		if a.required() {
			return 0, fmt.Errorf("%w: the peer sent no credentials and this node requires authentication (set masterauth on it)", errAuth)
		}
		return b[0], nil
	}
	if err := a.acceptCredentials(c); err != nil {
		return 0, err
	}
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return 0, err
	}
	return b[0], nil
}

// dialCredentials: credAuth, the acceptor's nonce, then this end's nonce,
// user and MAC; the acceptor's proof last.
func (a *auth) dialCredentials(c net.Conn) error {
	user, pass := a.link.LinkCredentials()
	if pass == "" {
		return errNoMasterauth
	}
	if user == "" {
		user = "default"
	}
	if len(user) > 255 {
		return fmt.Errorf("%w: masteruser is longer than 255 bytes", errAuth)
	}
	key := passKey(pass)
	if _, err := c.Write([]byte{credAuth}); err != nil {
		return err
	}
	theirs := make([]byte, 32)
	if _, err := io.ReadFull(c, theirs); err != nil {
		return fmt.Errorf("%w: the peer closed the link before the credentials exchange", errAuth)
	}
	mine := make([]byte, 32)
	if _, err := rand.Read(mine); err != nil {
		return err
	}
	msg := append(append(append([]byte{}, mine...), byte(len(user))), user...)
	msg = append(msg, macWith(key, 'd', mine, theirs, []byte(user))...)
	if _, err := c.Write(msg); err != nil {
		return err
	}
	proof := make([]byte, sha256.Size)
	if _, err := io.ReadFull(c, proof); err != nil {
		return fmt.Errorf("%w: the peer refused masteruser %q with this masterauth", errAuth, user)
	}
	if !hmac.Equal(proof, macWith(key, 'a', theirs, mine)) {
		return errAuth
	}
	return nil
}

func (a *auth) acceptCredentials(c net.Conn) error {
	mine := make([]byte, 32)
	if _, err := rand.Read(mine); err != nil {
		return err
	}
	if _, err := c.Write(mine); err != nil {
		return err
	}
	theirs := make([]byte, 33)
	if _, err := io.ReadFull(c, theirs); err != nil {
		return err
	}
	user := make([]byte, theirs[32])
	theirs = theirs[:32]
	proof := make([]byte, sha256.Size)
	if _, err := io.ReadFull(c, user); err != nil {
		return err
	}
	if _, err := io.ReadFull(c, proof); err != nil {
		return err
	}
	if a.link == nil {
		return fmt.Errorf("%w: this node has no users to check credentials against", errAuth)
	}
	for _, h := range a.link.LinkKeys(string(user)) {
		key := []byte(h)
		if hmac.Equal(proof, macWith(key, 'd', theirs, mine, user)) {
			_, err := c.Write(macWith(key, 'a', mine, theirs))
			return err
		}
	}
	return fmt.Errorf("%w: wrong credentials for user %q (or the user is off or may not run RAFT JOIN)", errAuth, user)
}

// passKey is the key a password authenticates a link with: its SHA-256 in
// hex, as an ACL keeps it.
func passKey(pass string) []byte {
	h := sha256.Sum256([]byte(pass))
	return []byte(hex.EncodeToString(h[:]))
}

// mux owns the raft-addr listener: it authenticates each connection and
// routes it by its stream byte.
type mux struct {
	ln     net.Listener
	auth   *auth
	tls    *LinkTLS // nil: plain TCP
	logf   func(msg string, args ...any)
	raftCh chan net.Conn
	fwd    func(net.Conn) // serves a forwarding connection (own goroutine)
	msgs   func(net.Conn) // reads another node's Pub/Sub messages (fanout.go)
	clock  func(net.Conn) // answers the leader's clock probes (clock.go)
	query  func(net.Conn) // answers other nodes' queries (query.go)
	// ready is set once the node's Raft and the handlers above are: the
	// listener runs before (Raft's transport needs it), and a forwarding
	// ping that came first reached a nil Raft (a panic seen in the fault
	// soak on a restarted node). Until then the other streams are closed;
	// their dialers come back.
	ready *atomic.Bool
	// advertise is the address the others reach this node at (raft-addr,
	// or raft-advertise behind a proxy or NAT); local is the IP outgoing
	// connections leave from (raft-addr's, when it names one), so that a
	// peer sees the same address whichever way a connection goes
	advertise net.Addr
	local     *net.TCPAddr
	// self is this node's Raft ID (node-id and incarnation, membership.go):
	// a Raft connection names the ID it is meant for, and one meant for
	// another ID is refused, so a node whose dir was replaced never answers
	// (votes, acknowledges) for the member it was before
	self string
	// dialedAs is told the ID a refused Raft connection was meant for
	dialedAs func(id string)

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
		go m.route(netpoll.NewConn(c))
	}
}

func (m *mux) route(c net.Conn) {
	if m.tls != nil {
		tc, err := m.tls.server(c)
		if err != nil {
			m.logf("cluster connection refused", "peer", c.RemoteAddr().String(), "err", err.Error())
			c.Close()
			return
		}
		c = tc
	}
	tag, err := m.auth.accept(c)
	if err != nil {
		m.logf("cluster connection refused", "peer", c.RemoteAddr().String(), "err", err.Error())
		c.Close()
		return
	}
	if tag != streamRaft && (m.ready == nil || !m.ready.Load()) {
		c.Close()
		return
	}
	switch tag {
	case streamRaft:
		if err := m.checkTarget(c); err != nil {
			m.logf("cluster: refused a Raft connection", "peer", c.RemoteAddr().String(), "err", err.Error())
			c.Close()
			return
		}
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
	case streamClock:
		if m.clock != nil {
			m.clock(c)
			return
		}
		c.Close()
	case streamQuery:
		if m.query != nil {
			m.query(c)
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

// maxTargetID bounds the Raft ID a Raft connection names.
const maxTargetID = 1024

// checkTarget reads the Raft ID a Raft connection is meant for and
// refuses it unless it is this node's.
func (m *mux) checkTarget(c net.Conn) error {
	c.SetReadDeadline(time.Now().Add(handshakeTimeout))
	defer c.SetReadDeadline(time.Time{})
	br := byteReader{c}
	n, err := binary.ReadUvarint(br)
	if err != nil || n > maxTargetID {
		return fmt.Errorf("cluster: malformed Raft connection preamble")
	}
	id := make([]byte, n)
	if _, err := io.ReadFull(c, id); err != nil {
		return err
	}
	if string(id) != m.self {
		if m.dialedAs != nil {
			m.dialedAs(string(id))
		}
		return fmt.Errorf("the peer dialed member %q and this node is %q: a node whose dir was replaced comes back only as a new member (RAFT JOIN; README, \"Replacing a node's disk\")", id, m.self)
	}
	return nil
}

// byteReader reads one byte at a time (ReadUvarint), so that nothing of
// the Raft stream after the preamble is consumed.
type byteReader struct{ c net.Conn }

func (b byteReader) ReadByte() (byte, error) {
	var p [1]byte
	_, err := io.ReadFull(b.c, p[:])
	return p[0], err
}

// dial connects to a node's raft-addr, authenticates and opens stream tag
// (followed by preamble).
func (m *mux) dial(addr string, tag byte, timeout time.Duration, preamble ...byte) (net.Conn, error) {
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
	c = netpoll.NewConn(c) // reads and writes without waking sysmon
	if m.tls != nil {
		tc, err := m.tls.client(c, timeout)
		if err != nil {
			c.Close()
			return nil, err
		}
		c = tc
	}
	if err := m.auth.handshake(c, true); err != nil {
		c.Close()
		return nil, err
	}
	if _, err := c.Write(append([]byte{tag}, preamble...)); err != nil {
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

// Dial opens a Raft connection to target, which identTransport made
// "address/raft-id": the preamble names the member it is meant for.
func (l raftLayer) Dial(target raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	addr, id, ok := strings.Cut(string(target), "/")
	if !ok {
		return nil, fmt.Errorf("cluster: a Raft connection to %s names no member", target)
	}
	return l.m.dial(addr, streamRaft, timeout, appendBytes(nil, []byte(id))...)
}

// identTransport is Raft's NetworkTransport with the target member's ID
// added to each target address (its connection pool keys on the result,
// so two incarnations at one address never share a connection). It also
// notes in acks, per server, when the newest AppendEntries it
// acknowledged was sent (lease.go: the read lease counts from sends, not
// from replies' arrivals): a heartbeat's or a catch-up's own call, and a
// pipelined request's through ackPipeline.
type identTransport struct {
	*raft.NetworkTransport
	acks *peerAcks
}

func withID(id raft.ServerID, target raft.ServerAddress) raft.ServerAddress {
	return target + "/" + raft.ServerAddress(id)
}

func (t identTransport) AppendEntriesPipeline(id raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	p, err := t.NetworkTransport.AppendEntriesPipeline(id, withID(id, target))
	if err != nil {
		return p, err
	}
	ap := &ackPipeline{AppendPipeline: p, id: id, acks: t.acks, out: make(chan raft.AppendFuture), done: make(chan struct{})}
	go ap.relay()
	return ap, nil
}

func (t identTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	sent := door.Nanotime()
	err := t.NetworkTransport.AppendEntries(id, withID(id, target), args, resp)
	if err == nil && resp.Success && t.acks != nil {
		t.acks.acked(id, sent)
	}
	return err
}

// ackPipeline hands Raft the pipeline's replies through a goroutine that
// notes each successful one's send time first (AppendFuture.Start: the
// pipeline stamps it before writing the request), so the note is there
// before Raft counts the reply.
//
// It also ends a deadlock of hashicorp/raft v1.7.3's pipeline. Raft's
// decoder (pipelineDecode) returns after the first reply that is not a
// success (a follower whose log does not match, a newer term) and reads
// no more; the transport's channels are unbuffered (MaxRPCsInFlight 2),
// so the next reply parks its decoder, and a send that Raft's loop makes
// before it notices the decoder's end parks on the hand-off to it. The
// pipeline's Close, which would free both, is deferred in that loop: the
// follower gets heartbeats and never another entry, until the leader
// restarts (a fault-soak schedule: both followers stopped at "appendEntries
// rejected, sending older logs" after a leader change and never caught
// up; grafana/pyroscope#5518 describes the same). So after handing Raft a
// reply that is not a success, the relay closes the pipeline: the parked
// send fails, Raft's loop ends and replicates without a pipeline until it
// opens a new one.
type ackPipeline struct {
	raft.AppendPipeline
	id        raft.ServerID
	acks      *peerAcks
	out       chan raft.AppendFuture
	done      chan struct{}
	closeOnce sync.Once
}

func (p *ackPipeline) relay() {
	in := p.AppendPipeline.Consumer()
	for {
		select {
		case f := <-in:
			ok := f.Error() == nil && f.Response().Success
			if ok && p.acks != nil {
				p.acks.acked(p.id, door.Nanotime()-int64(time.Since(f.Start())))
			}
			select {
			case p.out <- f:
			case <-p.done:
				return
			}
			if !ok {
				p.AppendPipeline.Close() // Raft's decoder has returned
				return
			}
		case <-p.done:
			return
		}
	}
}

func (p *ackPipeline) Consumer() <-chan raft.AppendFuture { return p.out }

func (p *ackPipeline) Close() error {
	p.closeOnce.Do(func() { close(p.done) })
	return p.AppendPipeline.Close()
}

func (t identTransport) RequestVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	return t.NetworkTransport.RequestVote(id, withID(id, target), args, resp)
}

func (t identTransport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	return t.NetworkTransport.RequestPreVote(id, withID(id, target), args, resp)
}

func (t identTransport) InstallSnapshot(id raft.ServerID, target raft.ServerAddress, args *raft.InstallSnapshotRequest, resp *raft.InstallSnapshotResponse, data io.Reader) error {
	return t.NetworkTransport.InstallSnapshot(id, withID(id, target), args, resp, data)
}

func (t identTransport) TimeoutNow(id raft.ServerID, target raft.ServerAddress, args *raft.TimeoutNowRequest, resp *raft.TimeoutNowResponse) error {
	return t.NetworkTransport.TimeoutNow(id, withID(id, target), args, resp)
}
