package cluster

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
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
// index: a joining non-voter is promoted once caught up), joins and
// removals.
//
// Frames: uint32 length, then a type byte, a uvarint request ID and the
// body. Answers: type 'a', the request ID, a status byte (0 ok, 1 error),
// a uvarint Raft index and the payload (replies, or the error text).
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

// maxFrame bounds a frame: a forwarded unit is at most a client's request
// (proto-max-bulk-len per argument) and its reply.
const maxFrame = 1 << 30

// Unit is a unit of a follower's client, run on the leader.
type Unit struct {
	Session uint64 // the follower process's forwarding session
	Seq     uint64 // the unit's number among the client's (at most once)
	Client  uint64 // the follower's client ID (its WATCHes on the leader)
	DB      int
	Proto   int
	User    string // the ACL user; the leader checks permissions
	// Watching: the client has WATCHed keys through this session; an
	// EXEC then aborts if the leader no longer holds them (a new leader).
	Watching bool
	// OOM: the follower was over its maxmemory when the client sent the
	// unit; a script's first deny-oom write is then refused on the leader
	// too, as on the node the client talks to.
	OOM  bool
	Cmds [][][]byte
	// Peer is the address of the follower's forwarding link (not
	// encoded): what the leader's SLOWLOG and ACL LOG name as the client
	Peer net.Addr
	// Rank: a blocking command sent again after a leader change keeps the
	// place its first leader gave it (blocking.go); 0 otherwise
	Rank uint64
}

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

func writeFrame(w *bufio.Writer, typ byte, id uint64, body []byte) error {
	var hdr [4 + 1 + binary.MaxVarintLen64]byte
	n := 5 + binary.PutUvarint(hdr[5:], id)
	binary.BigEndian.PutUint32(hdr[:4], uint32(n-4+len(body)))
	hdr[4] = typ
	if _, err := w.Write(hdr[:n]); err != nil {
		return err
	}
	_, err := w.Write(body)
	return err
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
	ok      bool
	index   uint64
	data    []byte
	interim bool // the unit blocked (frameBlocked, blocking.go)
}

func decodeAnswer(p []byte) (answer, error) {
	r := &reader{p: p}
	a := answer{ok: r.byte() == 0}
	a.index = r.u()
	if r.err != nil {
		return a, r.err
	}
	a.data = r.p
	return a, nil
}

// --- the follower's side ------------------------------------------------

// forwarder keeps the connection to the leader and multiplexes requests.
type forwarder struct {
	n       *Node
	session uint64

	mu      sync.Mutex
	conn    net.Conn
	w       *bufio.Writer
	leader  raft.ServerAddress
	nextID  uint64
	pending map[uint64]chan answer
	closed  bool
}

var errNoLeader = errors.New("cluster: no leader")
var errConnLost = errors.New("cluster: the connection to the leader was lost")

func newForwarder(n *Node) *forwarder {
	var b [8]byte
	rand.Read(b[:])
	f := &forwarder{n: n, session: binary.LittleEndian.Uint64(b[:]) | 1, pending: map[uint64]chan answer{}}
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
	f.w = bufio.NewWriterSize(c, 64<<10)
	hello := binary.AppendUvarint(nil, f.session)
	hello = appendBytes(hello, []byte(f.n.cfg.NodeID))
	hello = appendBytes(hello, []byte(f.n.cfg.ClientAddr))
	if err := writeFrame(f.w, frameHello, 0, hello); err != nil || f.w.Flush() != nil {
		f.dropLocked(err)
		return errNoLeader
	}
	// the leader acknowledges the hello: until then nothing is sent, so a
	// connection that dies here (a dead leader behind a proxy or a
	// half-open socket) costs a retry, not a unit of unknown outcome
	r := bufio.NewReaderSize(c, 64<<10)
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	typ, _, _, err := readFrame(r)
	c.SetReadDeadline(time.Time{})
	if err != nil || typ != frameAnswer {
		f.dropLocked(errConnLost)
		return errNoLeader
	}
	go f.readLoop(c, r)
	return nil
}

// dropLocked closes the connection; pending requests fail (mu held).
func (f *forwarder) dropLocked(error) {
	if f.conn != nil {
		f.conn.Close()
		f.conn, f.w, f.leader = nil, nil, ""
	}
	for id, ch := range f.pending {
		close(ch)
		delete(f.pending, id)
	}
}

func (f *forwarder) readLoop(c net.Conn, r *bufio.Reader) {
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
		a, err := decodeAnswer(body)
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
	err := writeFrame(f.w, typ, id, body)
	if err == nil {
		err = f.w.Flush()
	}
	if err != nil {
		f.dropLocked(err)
		return 0, nil, errConnLost
	}
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
	if writeFrame(f.w, typ, 0, body) != nil || f.w.Flush() != nil {
		f.dropLocked(errConnLost)
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
		t0 := time.Now().UnixMilli() + f.n.door.Skew
		a, err := f.call(framePing, body, 2*time.Second)
		t1 := time.Now().UnixMilli() + f.n.door.Skew
		if err != nil || !a.ok {
			continue
		}
		r := &reader{p: a.data}
		leaderMs := int64(r.u())
		leaderClient := string(r.bytes())
		if r.err != nil {
			continue
		}
		f.n.leaderClient.Store(leaderClient)
		skew := (t0+t1)/2 - leaderMs
		f.n.skewMs.Store(skew)
		if f.n.skewed() && time.Since(warned) > time.Minute {
			warned = time.Now()
			f.n.log.Warn("cluster: CLOCK SKEW: this node's clock is off the leader's past max-clock-skew-ms; it will not lead", "offset_ms", skew, "max_ms", f.n.cfg.maxSkew().Milliseconds())
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
}

type peerInfo struct {
	applied uint64
	client  string
	seen    time.Time
}

func newForwardServer(n *Node) *forwardServer {
	return &forwardServer{n: n, conns: map[net.Conn]bool{}, peers: map[string]peerInfo{}}
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
	var wmu sync.Mutex
	w := bufio.NewWriterSize(c, 64<<10)
	var session uint64
	var peer, peerClient string
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		if session != 0 {
			s.n.exec.DropSession(session, 0)
			s.n.forgetClient(session, 0)
		}
	}()
	reply := func(id uint64, ok bool, index uint64, data []byte) {
		b := []byte{1}
		if ok {
			b[0] = 0
		}
		b = binary.AppendUvarint(b, index)
		b = append(b, data...)
		wmu.Lock()
		if writeFrame(w, frameAnswer, id, b) == nil {
			w.Flush()
		}
		wmu.Unlock()
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
			reply(id, true, 0, nil)
		case frameUnit:
			u, err := decodeUnit(session, body)
			if err != nil {
				return
			}
			u.Peer = c.RemoteAddr()
			go func() {
				data, index, err := s.n.runForwarded(u, func(rank uint64) {
					wmu.Lock()
					if writeFrame(w, frameBlocked, id, binary.AppendUvarint(nil, rank)) == nil {
						w.Flush()
					}
					wmu.Unlock()
				})
				if err != nil {
					reply(id, false, 0, []byte(err.Error()))
					return
				}
				reply(id, true, index, data)
			}()
		case frameRead:
			go func() {
				index, err := s.n.readIndex()
				if err != nil {
					reply(id, false, 0, []byte(err.Error()))
					return
				}
				reply(id, true, index, nil)
			}()
		case framePing:
			rd := &reader{p: body}
			applied := rd.u()
			s.mu.Lock()
			s.peers[peer] = peerInfo{applied, peerClient, time.Now()}
			s.mu.Unlock()
			s.n.maybePromote(peer, applied)
			ms := time.Now().UnixMilli() + s.n.door.Skew
			pong := binary.AppendUvarint(nil, uint64(ms))
			pong = appendBytes(pong, []byte(s.n.cfg.ClientAddr))
			reply(id, true, s.n.raft.CommitIndex(), pong)
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
			client, seq, _, err := decodeCancel(body)
			if err != nil || session == 0 {
				return
			}
			go func() {
				served, err := s.n.queryServed(session, client, seq)
				if err != nil {
					reply(id, false, 0, []byte(err.Error()))
					return
				}
				b := []byte{0}
				if served {
					b[0] = 1
				}
				reply(id, true, 0, b)
			}()
		case frameJoin:
			rd := &reader{p: body}
			jid, jaddr := string(rd.bytes()), string(rd.bytes())
			go func() {
				if err := s.n.addNode(jid, jaddr); err != nil {
					reply(id, false, 0, []byte(err.Error()))
					return
				}
				reply(id, true, 0, nil)
			}()
		case frameRemove:
			rd := &reader{p: body}
			rid := string(rd.bytes())
			go func() {
				if err := s.n.removeNode(rid); err != nil {
					reply(id, false, 0, []byte(err.Error()))
					return
				}
				reply(id, true, 0, nil)
			}()
		default:
			return
		}
	}
}

var errNotLeader = errors.New("TRYAGAIN this node is no longer the leader")
var errDuplicate = errors.New("UNCERTAIN this forwarded command was already executed")

// runForwarded executes a follower's unit on this leader and waits for
// its commit. It returns the replies and the Raft index the follower must
// have applied before answering its client.
func (n *Node) runForwarded(u *Unit, blocked func(rank uint64)) ([]byte, uint64, error) {
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
	data, b := n.exec.ExecForwarded(u)
	ticket := n.prop.Ticket()
	d.Unlock()
	if b != nil {
		// its command blocked: no forwarding timeout applies (blocking.go)
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
	n.door.Lock()
	defer n.door.Unlock()
	if n.serving.Load() == 0 {
		return
	}
	n.fsm.forgetUnits(session, client)
	n.prop.addForget(unitID{session: session, client: client})
}
