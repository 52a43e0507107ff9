package cluster

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Followers serve clients that know nothing of Raft: a unit that may
// write (a command, a MULTI/EXEC block, a script) is sent to the leader
// over one multiplexed connection per follower (its 'F' stream), run
// there as the client would run it, and answered once committed; the
// follower then waits until it has applied that far, so the client reads
// its own writes. Linearizable reads ask the leader for its applied index
// (after it confirmed its leadership) and wait to have applied as far.
// The same connection carries a ping every second (clock offset, applied
// index: a joining non-voter is promoted once caught up), joins,
// removals and leadership transfers (transfer.go).
//
// Frames: uint32 length, then a type byte, a uvarint request ID and the
// body. Answers: type 'a', the request ID, a status byte (statusOK …), a
// uvarint Raft index and the payload (replies, or the error text).
//
// The link is versioned (linkProto) so that a cluster can be restarted
// node by node onto a new binary: a follower's hello carries its version
// after the three fields a version-1 leader reads (it ignores the rest),
// and a leader answers the hello with its own (a version-1 leader's
// answer is empty). Version 1 had two statuses, and its refusals
// (TRYAGAIN, REBLOCK) were errors told apart by their text; towards a
// version-1 peer a leader still sends those as errors (wireStatus), and
// a follower of a version-1 leader still reads them so (decodeAnswer).
const (
	frameUnit   = 'U'
	frameRead   = 'R'
	framePing   = 'P'
	frameDrop   = 'D'
	frameJoin   = 'J'
	frameRemove = 'X'
	frameHello  = 'H'
	frameAnswer = 'a'
)

// linkProto is the version of the link's protocol this node speaks.
const linkProto = 2

// Answer statuses.
const (
	statusOK      = 0 // the payload is the replies
	statusError   = 1 // the payload is the error the client gets
	statusRetry   = 2 // refused before running (no leader here): send it again
	statusReblock = 3 // a blocked unit's leader stopped serving: block again, same rank
)

// maxFrame bounds a frame: a forwarded unit is at most a client's request
// (proto-max-bulk-len per argument) and its reply.
const maxFrame = 1 << 30

func appendBytes(b, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func (u *Unit) encode(b []byte) []byte {
	b = binary.AppendUvarint(b, u.Seq)
	b = binary.AppendUvarint(b, u.Client)
	b = binary.AppendUvarint(b, uint64(u.DB))
	b = append(b, byte(u.Proto))
	b = appendBytes(b, []byte(u.User))
	flags := byte(0)
	if u.Watching {
		flags |= unitWatching
	}
	if u.OOM {
		flags |= unitOOM
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(len(u.Cmds)))
	for _, argv := range u.Cmds {
		b = binary.AppendUvarint(b, uint64(len(argv)))
		for _, a := range argv {
			b = appendBytes(b, a)
		}
	}
	if u.Rank != 0 {
		b = binary.AppendUvarint(b, u.Rank)
	}
	return b
}

// the flags byte of an encoded unit
const (
	unitWatching = 1 << iota
	unitOOM
)

var errFrame = errors.New("cluster: malformed forwarding frame")

type reader struct {
	p   []byte
	err error
}

func (r *reader) u() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.p)
	if n <= 0 {
		r.err = errFrame
		return 0
	}
	r.p = r.p[n:]
	return v
}

func (r *reader) byte() byte {
	if r.err != nil || len(r.p) == 0 {
		r.err = errFrame
		return 0
	}
	c := r.p[0]
	r.p = r.p[1:]
	return c
}

func (r *reader) bytes() []byte {
	l := r.u()
	if r.err != nil || l > uint64(len(r.p)) {
		r.err = errFrame
		return nil
	}
	b := r.p[:l]
	r.p = r.p[l:]
	return b
}

func decodeUnit(session uint64, p []byte) (*Unit, error) {
	r := &reader{p: p}
	u := &Unit{Session: session}
	u.Seq = r.u()
	u.Client = r.u()
	u.DB = int(r.u())
	u.Proto = int(r.byte())
	u.User = string(r.bytes())
	flags := r.byte()
	u.Watching, u.OOM = flags&unitWatching != 0, flags&unitOOM != 0
	nc := r.u()
	if r.err == nil && nc > uint64(len(r.p)) {
		return nil, errFrame
	}
	for i := uint64(0); i < nc && r.err == nil; i++ {
		na := r.u()
		if r.err == nil && na > uint64(len(r.p)) {
			return nil, errFrame
		}
		argv := make([][]byte, 0, na)
		for j := uint64(0); j < na && r.err == nil; j++ {
			argv = append(argv, r.bytes())
		}
		u.Cmds = append(u.Cmds, argv)
	}
	if r.err == nil && len(r.p) > 0 {
		u.Rank = r.u()
	}
	return u, r.err
}

// appendFrame appends a frame: a 4-byte big-endian length of what follows,
// the type, the uvarint id, the body (readFrame's format).
func appendFrame(b []byte, typ byte, id uint64, body []byte) []byte {
	var hdr [1 + binary.MaxVarintLen64]byte
	hdr[0] = typ
	n := 1 + binary.PutUvarint(hdr[1:], id)
	b = binary.BigEndian.AppendUint32(b, uint32(n+len(body)))
	b = append(b, hdr[:n]...)
	return append(b, body...)
}

func readFrame(r *bufio.Reader) (typ byte, id uint64, body []byte, err error) {
	var l [4]byte
	if _, err = io.ReadFull(r, l[:]); err != nil {
		return
	}
	n := binary.BigEndian.Uint32(l[:])
	if n < 2 || n > maxFrame {
		return 0, 0, nil, errFrame
	}
	buf := make([]byte, n)
	if _, err = io.ReadFull(r, buf); err != nil {
		return
	}
	typ = buf[0]
	v, k := binary.Uvarint(buf[1:])
	if k <= 0 {
		return 0, 0, nil, errFrame
	}
	return typ, v, buf[1+k:], nil
}

// answer is a decoded answer frame.
type answer struct {
	status  byte
	index   uint64
	data    []byte
	interim bool   // the unit blocked (frameBlocked, blocking.go)
	proto   uint64 // the link's version: a kept answer inside is decoded by it
}

// decodeAnswer decodes an answer's body that came over a link of version
// proto.
func decodeAnswer(p []byte, proto uint64) (answer, error) {
	r := &reader{p: p}
	a := answer{status: r.byte(), proto: proto}
	a.index = r.u()
	if r.err != nil {
		return a, r.err
	}
	a.data = r.p
	if proto < 2 && a.status == statusError {
		switch {
		case bytes.HasPrefix(a.data, []byte("TRYAGAIN")):
			a.status = statusRetry
		case bytes.HasPrefix(a.data, []byte("REBLOCK")):
			a.status = statusReblock
		}
	}
	return a, nil
}

// ok: the answer carries the replies. An interim answer (the unit
// blocked) has status 0 too, and is not one.
func (a answer) ok() bool { return a.status == statusOK && !a.interim }

// encodeAnswer appends an answer's body.
func encodeAnswer(b []byte, status byte, index uint64, data []byte) []byte {
	b = append(b, status)
	b = binary.AppendUvarint(b, index)
	return append(b, data...)
}

// statusOf is the status of a unit's outcome err (nil: statusOK).
func statusOf(err error) byte {
	switch {
	case err == nil:
		return statusOK
	case errors.Is(err, errNotLeader):
		return statusRetry
	case errors.Is(err, errReblock):
		return statusReblock
	}
	return statusError
}

// wireStatus is status as a peer of version proto knows it: version 1
// has only statusOK and statusError (its refusals are told by the text).
func wireStatus(status byte, proto uint64) byte {
	if proto < 2 && status > statusError {
		return statusError
	}
	return status
}

// --- the follower's side ------------------------------------------------

// forwarder keeps the connection to the leader and multiplexes requests.
type forwarder struct {
	n       *Node
	session uint64

	mu      sync.Mutex
	conn    net.Conn
	out     *linkWriter // conn's frames after the hello (linkwrite.go)
	proto   uint64      // the connected leader's link version
	leader  raft.ServerAddress
	nextID  uint64
	pending map[uint64]chan answer
	closed  bool
	// drops not sent yet (no connection): sent after the next hello
	drops [][]byte
}

// maxQueuedDrops bounds the drops kept while the leader cannot be
// reached; beyond it a gone client's row stays in the leader's table
// until this process's session ends.
const maxQueuedDrops = 4096

var errNoLeader = errors.New("cluster: no leader")
var errConnLost = errors.New("cluster: the connection to the leader was lost")

// newSession returns a forwarding session for a new process of node: the
// node's hash in the high 32 bits, so that any leader tells the node's
// earlier sessions in its table (noteSession), random low bits.
func newSession(node string) uint64 {
	var b [4]byte
	rand.Read(b[:])
	return uint64(nodeHash(node))<<32 | uint64(binary.LittleEndian.Uint32(b[:])) | 1
}

func nodeHash(node string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(node))
	return h.Sum32()
}

func newForwarder(n *Node) *forwarder {
	f := &forwarder{n: n, session: newSession(n.cfg.NodeID), pending: map[uint64]chan answer{}}
	n.wg.Add(1)
	go func() { defer n.wg.Done(); f.pinger() }()
	return f
}

// connect returns a connection to the current leader (mu held).
func (f *forwarder) connect() error {
	addr, _ := f.n.raft.LeaderWithID()
	if addr == "" {
		return errNoLeader
	}
	if f.conn != nil && f.leader == addr {
		return nil
	}
	if f.conn != nil {
		f.dropLocked(errConnLost)
	}
	if f.n.mux == nil {
		return errNoLeader
	}
	c, err := f.n.mux.dial(string(addr), streamForward, 2*time.Second)
	if err != nil {
		return err
	}
	f.conn, f.leader = c, addr
	hello := binary.AppendUvarint(nil, f.session)
	hello = appendBytes(hello, []byte(f.n.rid))
	hello = appendBytes(hello, []byte(f.n.cfg.ClientAddr))
	hello = binary.AppendUvarint(hello, linkProto)
	if _, err := c.Write(appendFrame(nil, frameHello, 0, hello)); err != nil {
		f.dropLocked(err)
		return errNoLeader
	}
	// the leader acknowledges the hello: until then nothing is sent, so a
	// connection that dies here (a dead leader behind a proxy or a
	// half-open socket) costs a retry, not a unit of unknown outcome
	r := bufio.NewReaderSize(c, 64<<10)
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	typ, _, body, err := readFrame(r)
	c.SetReadDeadline(time.Time{})
	if err != nil || typ != frameAnswer {
		f.dropLocked(errConnLost)
		return errNoLeader
	}
	f.proto = 1 // a version-1 leader answers the hello with nothing
	if a, err := decodeAnswer(body, 1); err == nil && len(a.data) > 0 {
		if v, k := binary.Uvarint(a.data); k > 0 {
			f.proto = v
		}
	}
	var drops []byte
	for _, body := range f.drops {
		drops = appendFrame(drops, frameDrop, 0, body)
	}
	if len(drops) > 0 {
		if _, err := c.Write(drops); err != nil {
			f.dropLocked(errConnLost)
			return errNoLeader
		}
	}
	f.drops = nil
	f.out = newLinkWriter(c)
	go f.readLoop(c, r, f.proto)
	return nil
}

// dropLocked closes the connection; pending requests fail (mu held).
func (f *forwarder) dropLocked(error) {
	if f.conn != nil {
		f.conn.Close()
		f.conn, f.leader = nil, ""
	}
	if f.out != nil {
		f.out.stop()
		f.out = nil
	}
	for id, ch := range f.pending {
		close(ch)
		delete(f.pending, id)
	}
}

func (f *forwarder) readLoop(c net.Conn, r *bufio.Reader, proto uint64) {
	for {
		typ, id, body, err := readFrame(r)
		if err == nil && typ == frameBlocked {
			f.mu.Lock()
			ch := f.pending[id]
			f.mu.Unlock()
			if ch != nil {
				rank, _ := binary.Uvarint(body)
				ch <- answer{interim: true, index: rank}
			}
			continue
		}
		if err != nil || typ != frameAnswer {
			f.mu.Lock()
			if f.conn == c {
				f.dropLocked(errConnLost)
			}
			f.mu.Unlock()
			return
		}
		a, err := decodeAnswer(body, proto)
		f.mu.Lock()
		ch := f.pending[id]
		delete(f.pending, id)
		f.mu.Unlock()
		if ch != nil && err == nil {
			ch <- a
		} else if ch != nil {
			close(ch)
		}
	}
}

// request sends a request frame to the leader and registers the channel
// its answers arrive on (room: how many frames it may get).
func (f *forwarder) request(typ byte, body []byte, room int) (uint64, chan answer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, nil, errConnLost
	}
	if err := f.connect(); err != nil {
		return 0, nil, err
	}
	f.nextID++
	id := f.nextID
	ch := make(chan answer, room)
	f.pending[id] = ch
	// a write that fails closes the connection: readLoop then closes ch
	f.out.send(typ, id, body)
	return id, ch, nil
}

// call sends a request to the leader and waits for its answer.
func (f *forwarder) call(typ byte, body []byte, timeout time.Duration) (answer, error) {
	id, ch, err := f.request(typ, body, 1)
	if err != nil {
		return answer{}, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case a, ok := <-ch:
		if !ok {
			return answer{}, errConnLost
		}
		return a, nil
	case <-t.C:
		f.mu.Lock()
		delete(f.pending, id)
		f.mu.Unlock()
		return answer{}, errConnLost
	case <-f.n.closing:
		return answer{}, errConnLost
	}
}

// send is a request without an answer.
func (f *forwarder) send(typ byte, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.connect() != nil {
		return
	}
	f.out.send(typ, 0, body)
}

// drop sends a client's drop, or keeps it for the next connection (the
// pinger makes one within a second). It never dials: a client's close
// may run on an event loop.
func (f *forwarder) drop(body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	if f.conn != nil {
		// lost if the write fails: the leader forgets the session's
		// clients when the link drops (dropLink)
		f.out.send(frameDrop, 0, body)
		return
	}
	if len(f.drops) < maxQueuedDrops {
		f.drops = append(f.drops, body)
	}
}

func (f *forwarder) close() {
	f.mu.Lock()
	f.closed = true
	f.dropLocked(errConnLost)
	f.mu.Unlock()
}

// pinger measures the clock offset from the leader and reports this
// node's applied index, once a second.
func (f *forwarder) pinger() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	warned := time.Time{}
	for {
		select {
		case <-f.n.closing:
			return
		case <-t.C:
		}
		if f.n.raft == nil || f.n.raft.State() == raft.Leader {
			f.n.skewMs.Store(0)
			continue
		}
		body := binary.AppendUvarint(nil, f.n.appliedIndex())
		pinged, _ := f.n.raft.LeaderWithID()
		t0 := f.n.door.WallNs() / 1e6
		a, err := f.call(framePing, body, 2*time.Second)
		t1 := f.n.door.WallNs() / 1e6
		if err != nil || !a.ok() {
			continue
		}
		r := &reader{p: a.data}
		leaderMs := int64(r.u())
		leaderClient := string(r.bytes())
		if r.err != nil {
			continue
		}
		f.n.leaderClient.Store(leaderClient)
		f.n.leaderPinged.Store(string(pinged))
		// the members' client addresses (a leader before them sends
		// none: the first read fails and the map is empty)
		clients := map[string]string{}
		for k := r.u(); r.err == nil && k > 0; k-- {
			id, client := string(r.bytes()), string(r.bytes())
			if r.err == nil {
				clients[id] = client
			}
		}
		f.n.otherClients.Store(clients)
		skew := (t0+t1)/2 - leaderMs
		f.n.skewMs.Store(skew)
		if f.n.skewed() && time.Since(warned) > time.Minute {
			warned = time.Now()
			// one of the two clocks is wrong; the leader, which measures
			// every voter's, serves only while a quorum agrees with it
			f.n.log.Warn("cluster: CLOCK SKEW: this node's clock is off the leader's past max-clock-skew-ms", "offset_ms", skew, "max_ms", f.n.cfg.maxSkew().Milliseconds())
		}
	}
}

// skewed reports whether the measured offset exceeds max-clock-skew-ms.
func (n *Node) skewed() bool {
	s := n.skewMs.Load()
	if s < 0 {
		s = -s
	}
	return time.Duration(s)*time.Millisecond > n.cfg.maxSkew()
}

// --- the leader's side ----------------------------------------------------

type forwardServer struct {
	n     *Node
	mu    sync.Mutex
	conns map[net.Conn]bool
	// peers' last reported applied index and when, by node ID (promotion)
	peers map[string]peerInfo
	// sessions: each node's forwarding session, from its last hello
	sessions map[string]uint64
	// kept: each follower client's last unit's answer (keptAnswer)
	kept  map[clientKey]*keptAnswer
	swept time.Time
}

type peerInfo struct {
	applied uint64
	client  string
	seen    time.Time
}

func newForwardServer(n *Node) *forwardServer {
	return &forwardServer{n: n, conns: map[net.Conn]bool{}, peers: map[string]peerInfo{}, sessions: map[string]uint64{}, kept: map[clientKey]*keptAnswer{}}
}

// keptAnswer is the answer of a follower client's last unit, kept on the
// leader until the client's next unit or its leaving: a follower whose
// link broke before the answer arrived asks for it ('Q'), and its client
// gets it instead of -UNCERTAIN (the unit ran once). Only the leader that
// ran the unit has it.
type keptAnswer struct {
	seq     uint64
	done    chan struct{} // closed once settled
	answer  []byte        // as an answer frame's body: status, index, data
	blocked atomic.Bool   // its command blocked: the answer counts if served
	at      time.Time     // when it settled
}

// keptFor is how long an answer is kept after its unit ended (at most; the
// client's next unit replaces it): its follower asks within leader-wait-ms
// of losing the link, and a node that stops leading is asked nothing more.
const keptFor = 30 * time.Second

// maxKeptAnswer bounds an answer kept (a BLPOP's is a few dozen bytes):
// a longer one is not, and its client gets -UNCERTAIN if its link breaks.
const maxKeptAnswer = 4 << 10

// keep starts keeping the answer of unit id (engine lock held, after its
// ID was recorded: the unit runs).
func (s *forwardServer) keep(id unitID) *keptAnswer {
	k := &keptAnswer{seq: id.seq, done: make(chan struct{})}
	s.mu.Lock()
	s.kept[clientKey{id.session, id.client}] = k
	if now := time.Now(); now.Sub(s.swept) > time.Second {
		s.swept = now
		for key, o := range s.kept {
			select {
			case <-o.done:
				if now.Sub(o.at) > keptFor {
					delete(s.kept, key)
				}
			default:
			}
		}
	}
	s.mu.Unlock()
	return k
}

// settle records the unit's answer.
func (k *keptAnswer) settle(data []byte, index uint64, err error) {
	if err != nil {
		data = []byte(err.Error())
	}
	if len(data) <= maxKeptAnswer {
		k.answer = encodeAnswer(nil, statusOf(err), index, data)
	}
	k.at = time.Now()
	close(k.done)
}

// keptAnswer returns the answer kept for unit id, waiting up to d for
// the unit to end (answer nil: none, or too long), and whether its
// command blocked; found is false when this node has none for id.
func (s *forwardServer) keptAnswer(id unitID, d time.Duration) (answer []byte, blocked, found bool) {
	s.mu.Lock()
	k := s.kept[clientKey{id.session, id.client}]
	s.mu.Unlock()
	if k == nil || k.seq != id.seq {
		return nil, false, false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-k.done:
		return k.answer, k.blocked.Load(), true
	case <-t.C:
		return nil, false, false
	}
}

// queryAnswer answers a 'Q' frame: 0, not served (nothing popped: send it
// again); 1, it ran or may have, and no answer is kept here; 2 then the
// answer frame's body: it ran, and this is its answer; 3 (queryAnswer
// only) it blocked and was dropped unserved: send it again. A unit that
// did not say it blocked is otherwise never sent again.
func (s *forwardServer) queryAnswer(id unitID, mode CancelMode) ([]byte, error) {
	// cancels the unit if it still waits here (its answer then settles)
	served, err := s.n.queryServed(id.session, id.client, id.seq)
	if err != nil {
		return nil, err
	}
	if mode == queryServedOnly {
		if served {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	}
	answer, blocked, found := s.keptAnswer(id, s.n.cfg.leaderWait())
	switch {
	case mode == queryAnswer && found && blocked && !served:
		return []byte{3}, nil
	case (mode == queryAnswer || served) && answer != nil:
		return append([]byte{2}, answer...), nil
	case mode == queryAnswer || served:
		return []byte{1}, nil
	}
	return []byte{0}, nil
}

// forgetKept drops the answers kept for a client (client 0: a session).
func (s *forwardServer) forgetKept(session, client uint64) {
	s.mu.Lock()
	for k := range s.kept {
		if k.session == session && (client == 0 || k.client == client) {
			delete(s.kept, k)
		}
	}
	s.mu.Unlock()
}

// fwdLink is one forwarding connection's blocked units. A connection
// that closes takes only them: nobody waits for their answers any more,
// so they are dropped (the follower asks about them with 'Q' on its next
// connection). The session outlives its connections, and with it its
// rows of the table of executed units and its clients' WATCHes: a link
// reset forgetting the table made a served pop look unserved to that
// 'Q', and the command popped a second element (the first was lost).
type fwdLink struct {
	mu      sync.Mutex
	closed  bool
	blocked map[uint64]uint64 // client → seq of its unit blocked here
}

// hold notes a unit that blocked (engine lock held); false when the
// connection has closed already: the caller drops the unit.
func (l *fwdLink) hold(client, seq uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.blocked[client] = seq
	return true
}

// release forgets a blocked unit that was answered.
func (l *fwdLink) release(client, seq uint64) {
	l.mu.Lock()
	if l.blocked[client] == seq {
		delete(l.blocked, client)
	}
	l.mu.Unlock()
}

// dropLink drops the units still blocked through a connection that
// closed. Under the engine lock, so a unit blocking meanwhile either is
// in the set or sees the connection closed (runForwarded).
func (n *Node) dropLink(session uint64, l *fwdLink) {
	n.door.Lock()
	defer n.door.Unlock()
	l.mu.Lock()
	l.closed = true
	units := l.blocked
	l.blocked = nil
	l.mu.Unlock()
	for client, seq := range units {
		n.exec.CancelForwarded(session, client, seq, CancelDrop)
	}
}

// noteSession records a node's forwarding session from its hello. A
// node's other sessions are of its earlier processes: their clients are
// gone with them, so their state here and their rows of the table of
// executed units go too (what keeps the table as big as the clients
// alive, with the drops a follower sends for each client that leaves).
// They are the one this leader saw before, and the table's rows with the
// node's hash (newSession), which a leader elected since the node's
// restart finds too.
func (s *forwardServer) noteSession(node string, session uint64) {
	s.mu.Lock()
	old := s.sessions[node]
	s.sessions[node] = session
	s.mu.Unlock()
	gone := map[uint64]bool{}
	if old != 0 && old != session {
		gone[old] = true
	}
	// the hello names the node's Raft ID (node-id@incarnation); the
	// session carries the hash of its node-id, which a replaced disk
	// (a new incarnation) keeps
	if prefix := session >> 32; prefix == uint64(nodeHash(nodeName(raft.ServerID(node)))) {
		s.n.door.Lock()
		for k := range s.n.fsm.units {
			if k.session>>32 == prefix && k.session != session {
				gone[k.session] = true
			}
		}
		s.n.door.Unlock()
	}
	for g := range gone {
		s.n.exec.DropSession(g, 0)
		s.n.forgetClient(g, 0)
	}
}

func (s *forwardServer) close() {
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
}

// serveConn serves one follower's forwarding connection.
func (s *forwardServer) serveConn(c net.Conn) {
	s.mu.Lock()
	s.conns[c] = true
	s.mu.Unlock()
	r := bufio.NewReaderSize(c, 64<<10)
	out := newLinkWriter(c) // the answers of the unit goroutines (linkwrite.go)
	defer out.stop()
	var session uint64
	var peer, peerClient string
	peerProto := uint64(1) // until its hello says more
	link := &fwdLink{blocked: map[uint64]uint64{}}
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		if session != 0 {
			s.n.dropLink(session, link)
		}
	}()
	reply := func(id uint64, status byte, index uint64, data []byte) {
		if index != 0 && status == statusOK && peer != "" {
			// the follower waits until it applied index: it learns the
			// commit index now, not at the next send (commit_notify.go
			// in third_party/raft)
			s.n.raft.TellCommit(raft.ServerID(peer))
		}
		out.send(frameAnswer, id, encodeAnswer(nil, wireStatus(status, peerProto), index, data))
	}
	for {
		typ, id, body, err := readFrame(r)
		if err != nil {
			return
		}
		switch typ {
		case frameHello:
			rd := &reader{p: body}
			session = rd.u()
			peer = string(rd.bytes())
			peerClient = string(rd.bytes())
			if rd.err == nil && len(rd.p) > 0 {
				if v := rd.u(); rd.err == nil && v > 1 {
					peerProto = v
				}
			}
			if rd.err == nil && session != 0 {
				s.noteSession(peer, session)
			}
			// a version-1 follower reads only the frame's type
			reply(id, statusOK, 0, binary.AppendUvarint(nil, linkProto))
		case frameUnit:
			u, err := decodeUnit(session, body)
			if err != nil {
				return
			}
			u.Peer = c.RemoteAddr()
			go func() {
				data, index, err := s.n.runForwarded(u, link, func(rank uint64) {
					out.send(frameBlocked, id, binary.AppendUvarint(nil, rank))
				})
				if err != nil {
					reply(id, statusOf(err), 0, []byte(err.Error()))
					return
				}
				reply(id, statusOK, index, data)
			}()
		case frameRead:
			go func() {
				index, err := s.n.readIndex()
				if err != nil {
					reply(id, statusOf(err), 0, []byte(err.Error()))
					return
				}
				// the time the follower's reads judge deadlines by
				reply(id, statusOK, index, binary.AppendVarint(nil, s.n.door.ReadTime()))
			}()
		case framePing:
			rd := &reader{p: body}
			applied := rd.u()
			s.mu.Lock()
			s.peers[peer] = peerInfo{applied, peerClient, time.Now()}
			s.mu.Unlock()
			s.n.maybePromote(peer, applied)
			ms := s.n.door.WallNs() / 1e6
			pong := binary.AppendUvarint(nil, uint64(ms))
			pong = appendBytes(pong, []byte(s.n.cfg.ClientAddr))
			// then the members' client addresses, which followers read
			// for cluster mode's map (older ones read no further)
			s.mu.Lock()
			pong = binary.AppendUvarint(pong, uint64(len(s.peers)))
			for id, p := range s.peers {
				pong = appendBytes(pong, []byte(id))
				pong = appendBytes(pong, []byte(p.client))
			}
			s.mu.Unlock()
			reply(id, statusOK, s.n.raft.CommitIndex(), pong)
		case frameDrop:
			rd := &reader{p: body}
			if client := rd.u(); rd.err == nil && session != 0 {
				s.n.exec.DropSession(session, client)
				s.n.forgetClient(session, client)
			}
		case frameCancel:
			client, seq, mode, err := decodeCancel(body)
			if err != nil || session == 0 {
				return
			}
			go func() {
				s.n.door.Lock()
				s.n.exec.CancelForwarded(session, client, seq, mode)
				s.n.door.Unlock()
			}()
		case frameQuery:
			client, seq, mode, err := decodeCancel(body)
			if err != nil || session == 0 {
				return
			}
			go func() {
				b, err := s.queryAnswer(unitID{session, client, seq}, mode)
				if err != nil {
					reply(id, statusOf(err), 0, []byte(err.Error()))
					return
				}
				if len(b) > 1 && b[0] == 2 {
					// the kept answer, as this peer's version knows it
					b[1] = wireStatus(b[1], peerProto)
				}
				reply(id, statusOK, 0, b)
			}()
		case frameJoin:
			rd := &reader{p: body}
			jid, jaddr := string(rd.bytes()), string(rd.bytes())
			go func() {
				if err := s.n.addNode(jid, jaddr); err != nil {
					reply(id, statusOf(err), 0, []byte(err.Error()))
					return
				}
				reply(id, statusOK, 0, nil)
			}()
		case frameRemove:
			rd := &reader{p: body}
			rid := string(rd.bytes())
			go func() {
				if err := s.n.removeNode(rid); err != nil {
					reply(id, statusOf(err), 0, []byte(err.Error()))
					return
				}
				reply(id, statusOK, 0, nil)
			}()
		case frameTransfer:
			rd := &reader{p: body}
			tid := string(rd.bytes())
			go func() {
				if err := s.n.transfer(tid, transferWait, true); err != nil {
					reply(id, statusOf(err), 0, []byte(err.Error()))
					return
				}
				reply(id, statusOK, 0, nil)
			}()
		default:
			return
		}
	}
}

var errNotLeader = errors.New("TRYAGAIN this node is no longer the leader")
var errDuplicate = errors.New("UNCERTAIN this forwarded command was already executed")

// runForwarded executes a follower's unit, which came through link, on
// this leader and waits for its commit. It returns the replies and the
// Raft index the follower must have applied before answering its client.
func (n *Node) runForwarded(u *Unit, link *fwdLink, blocked func(rank uint64)) ([]byte, uint64, error) {
	id := unitID{u.Session, u.Client, u.Seq}
	d := n.door
	if !n.LeaseHeld() && !n.ConfirmLease() {
		return nil, 0, errNotLeader // after a pause (lease.go); not run: resent
	}
	if busy := n.exec.LockForwarded(u); busy != nil {
		// refused before running, nothing of it recorded: an answer, not
		// an unknown outcome (a wait here outlived the follower's
		// forwarding timeout and its client got UNCERTAIN after 10 s,
		// then the unit ran once the script ended)
		return busy, 0, nil
	}
	if n.serving.Load() == 0 {
		d.Unlock()
		return nil, 0, errNotLeader
	}
	if n.fsm.seenUnit(id) {
		d.Unlock()
		return nil, 0, errDuplicate
	}
	// the ID goes with (or before) the unit's effects: if the entry that
	// holds it is committed, the unit is never executed again
	n.fsm.markUnit(id)
	n.prop.addForwarded(id)
	kept := n.fsrv.keep(id)
	data, index, err := n.runMarked(u, link, kept, blocked)
	kept.settle(data, index, err)
	return data, index, err
}

// runMarked is runForwarded's part once the unit's ID is recorded (engine
// lock held; it releases it).
func (n *Node) runMarked(u *Unit, link *fwdLink, kept *keptAnswer, blocked func(rank uint64)) ([]byte, uint64, error) {
	d := n.door
	data, b := n.exec.ExecForwarded(u)
	ticket := n.prop.Ticket()
	if b != nil {
		kept.blocked.Store(true)
	}
	held := b != nil && link.hold(u.Client, u.Seq)
	if b != nil && !held {
		// its connection closed while it ran (dropLink did not see it):
		// a waiter nobody waits for would pop an element for nobody
		n.exec.CancelForwarded(u.Session, u.Client, u.Seq, CancelDrop)
	}
	d.Unlock()
	if b != nil {
		// its command blocked: no forwarding timeout applies (blocking.go)
		if held {
			defer link.release(u.Client, u.Seq)
		}
		blocked(b.Rank())
		return n.runBlocked(b)
	}
	if err := n.prop.Wait(ticket, 0); err != nil {
		return nil, 0, err
	}
	return data, n.prop.doneIndex.Load(), nil
}

// readIndex confirms leadership and returns the index a linearizable read
// must wait for: every acknowledged write is applied on the leader, so
// its applied index covers them.
func (n *Node) readIndex() (uint64, error) {
	if n.serving.Load() == 0 {
		return 0, errNotLeader
	}
	if err := n.raft.VerifyLeader().Error(); err != nil {
		return 0, errNotLeader
	}
	return n.raft.AppliedIndex(), nil
}

// forgetClient drops a follower's client from the table of executed
// units, here and, through the next entry, everywhere.
func (n *Node) forgetClient(session, client uint64) {
	n.fsrv.forgetKept(session, client)
	n.door.Lock()
	defer n.door.Unlock()
	if n.serving.Load() == 0 {
		return
	}
	n.fsm.forgetUnits(session, client)
	n.prop.addForget(unitID{session: session, client: client})
}
