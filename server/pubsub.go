package server

import (
	"math"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"limitdb/cluster"
	"limitdb/engine"
)

// Pub/Sub delivery (commands in pubsub_cmds.go, keyspace notifications
// in config_notify.go and engine/notify.go).
//
// Who writes a subscriber's socket. A message is published under the
// engine lock by whatever runs a unit (a client's command, a script, the
// cron's expiry, a message from another node). It is appended at once to
// the receiver's push buffer (clientPS.buf), in execution order; at the
// end of the publisher's batch, after the engine lock is released, the
// receivers whose buffer was empty are queued for the flusher goroutine
// (pushFlusher), which writes each queued receiver once per round with a
// non-blocking write (what the kernel does not take joins the receiver's
// output queue and its writer goroutine, output.go). Redis does the same
// from its event loop: replies appended during the iteration, one write
// per client in beforeSleep. Publishers writing their receivers
// themselves made one write per receiver per batch (see pushFlusher).
//
// Order. While a client is subscribed ("push mode"), its own replies go
// through the same buffer: they are moved there under the engine lock
// when its batch ends, so a message published after its SUBSCRIBE ran
// always follows the SUBSCRIBE's reply, and concurrent writers (several
// publishers, the client itself) take turns (clientPS.writing): whoever
// finds the buffer being written leaves its bytes to the writer, which
// loops until the buffer is empty.
//
// Commit. On a node that replicates (a cluster leader, or a durable
// cluster of one) no reply may reveal an effect before it is committed,
// and a keyspace event reveals one. So what a batch appends to a
// receiver is gated (pushMark) until the record the batch's replies wait
// for (its ticket) is committed: the batch settles its marks with the
// ticket at its end (settlePushes), waits, then clears them and has them
// written, or, the outcome unknown (UNCERTAIN), cuts what they gated
// (cutMarks). A writer meanwhile writes only the part before the first
// unsatisfied mark. Only what could reveal an uncommitted change is gated
// (pubsubPublish): a keyspace event, a PUBLISH after a write in its unit,
// or any message while records executed here are not committed yet.
//
// A message published to the client that publishes it (RESP3, or a
// subscribed client in MULTI) goes straight into its reply buffer, where
// Redis puts it: before the command's reply, or inside EXEC's array.

// flushGather is the least time the flusher lets publishers run before
// it writes (it waits as long as its last round of writes took, up to
// 1 ms, while publishes keep arriving). With it, PUBLISH to 50 subscribers
// from 50 clients one command at a time went from 2.7 writes per publish
// to 1.5, and from 0.75 to 0.83–1.27 of Redis's throughput (1.8 → 1.1 ×
// its CPU per publish).
const flushGather = 50 * time.Microsecond

// pendingTicket marks a gate whose unit has not ended yet.
const pendingTicket = math.MaxUint64

// pubsubState is the node's subscriptions, guarded by the engine lock.
type pubsubState struct {
	channels map[string][]*client // SUBSCRIBE: channel → subscribers, in order
	shard    map[string][]*client // SSUBSCRIBE
	patterns []*patSubs           // PSUBSCRIBE, in order of first subscription
	patIdx   map[string]*patSubs

	// dirty are the receivers given messages since the last settle;
	// pending says that a settle has work (dirty receivers, messages for
	// the other nodes)
	dirty   []*client
	pending bool
	fanout  bool // messages were handed to the cluster since the last settle

	enc  []byte // a message being encoded
	seq  uint64 // subscription numbers (UNSUBSCRIBE without arguments keeps their order)
	obuf atomic.Pointer[obufLimit]

	fl pushFlusher // writes the receivers' buffers (not under the engine lock)
}

// pushFlusher is the goroutine that writes receivers' buffers, as Redis's
// beforeSleep writes every client with pending replies once per event
// loop iteration: publishers queue the receivers they appended to and
// wake it; it takes the whole queue and writes each receiver once, so the
// messages of many publishers' batches leave in one write per receiver.
// Publishers writing their receivers themselves made one write per
// receiver per batch: PUBLISH to 50 subscribers from 50 clients one
// command at a time ran at 0.14 of Redis's throughput (7.8 × its CPU per
// publish, 50 × its write calls).
type pushFlusher struct {
	once   sync.Once
	mu     sync.Mutex
	queue  []*client // guarded by mu; clientPS.queued says who is in it
	wake   chan struct{}
	pushed atomic.Int64 // messages appended to receivers (so far)
}

type patSubs struct {
	pat  string
	subs []*client
}

func (ps *pubsubState) init() {
	ps.channels = map[string][]*client{}
	ps.shard = map[string][]*client{}
	ps.patIdx = map[string]*patSubs{}
}

// clientPS is a client's Pub/Sub state, allocated when it first
// subscribes, publishes or sets CLIENT REPLY.
type clientPS struct {
	chans map[string]uint64 // channel → subscription number
	shard map[string]uint64
	pats  []string // Redis keeps patterns in a list: PUNSUBSCRIBE's order

	// subd is Redis's CLIENT_PUBSUB flag (a subscription of any kind),
	// changed under the engine lock, read by writers without it (the
	// output limit's class)
	subd atomic.Bool

	// engine lock
	active bool // push mode: its output goes through buf
	dirty  bool // in pubsubState.dirty
	gate   bool // a pending mark was opened for it in this settle period
	// CLIENT REPLY (pubsub_cmds.go): quiet holds its flags, silent is set
	// while a command runs whose reply is dropped, quietB what that
	// command pushed to the client itself (never dropped); replyOn: the
	// command was CLIENT REPLY ON
	quiet   uint8
	silent  bool
	replyOn bool
	quietB  []byte

	// the client's own goroutine: receivers its batch must write after its
	// wait for the commit, and the ticket that releases them
	flushTo   []*client
	relTicket uint64

	mu      sync.Mutex
	buf     []byte // pushes (and its own replies, in push mode) not written yet
	base    int64  // stream position of buf[0]
	marks   []pushMark
	writing bool // a goroutine is writing buf[:n] with mu released
	closed  bool // the connection is gone or over its limit: drop what comes
	queued  bool // in pushFlusher.queue (guarded by the flusher's mu)
	own     ownSeg
}

// pushMark gates the stream from pos on until ticket is committed. A
// mark of pushes (not of the client's own replies) also has end, where
// its settle period's pushes stopped: if ticket's outcome is unknown,
// pos..end is cut (cutMarks).
type pushMark struct {
	pos, end int64
	ticket   uint64
}

// ownSeg is where the client's last batch of replies sits in buf (push
// mode on a replicating node), to be replaced if its outcome is unknown.
type ownSeg struct {
	from, to int64
	n        int // commands
	ticket   uint64
}

func (p *clientPS) subscriptions() int { return len(p.chans) + len(p.pats) }
func (p *clientPS) total() int         { return len(p.chans) + len(p.pats) + len(p.shard) }

// psOf returns cl's Pub/Sub state, allocating it.
func (cl *client) psOf() *clientPS {
	if cl.ps == nil {
		cl.ps = &clientPS{chans: map[string]uint64{}, shard: map[string]uint64{}}
	}
	return cl.ps
}

// subscribed reports Redis's CLIENT_PUBSUB flag: a subscription of any kind.
func (cl *client) subscribed() bool { return cl.ps != nil && cl.ps.total() > 0 }

// Publish implements engine.Publisher for what cl's commands publish.
func (cl *client) Publish(channel, message []byte, f engine.PubFlags) int {
	return cl.s.pubsubPublish(cl, channel, message, f)
}

// nodePub publishes what units run by no client raise: the cron's expiry
// and eviction, the eviction CONFIG SET maxmemory starts.
type nodePub struct{ s *Server }

func (p nodePub) Publish(channel, message []byte, f engine.PubFlags) int {
	return p.s.pubsubPublish(nil, channel, message, f)
}

// Message kinds, as their first element spells them.
var (
	kindMessage  = "message"
	kindSMessage = "smessage"
)

// pubsubPublish delivers message to this node's subscribers of channel (shard
// channels when shard is set; patterns only match other channels) and
// hands it to the other nodes. self is the publishing client (nil when
// none). It returns the number of receivers here. The engine lock is held.
func (s *Server) pubsubPublish(self *client, channel, message []byte, f engine.PubFlags) int {
	shard := f&engine.PubShard != 0
	// a gate only when the message could reveal an uncommitted change: a
	// keyspace event, a message after a write in its unit, or one while
	// records executed here are not committed yet. PUBLISH traffic on a
	// durable node thus takes the path of a node without a log (on it,
	// settling the gates of 50 receivers per PUBLISH took 10% of the CPU)
	gated := s.gated() && (f&(engine.PubEvent|engine.PubAfterWrite) != 0 || !s.committed(s.node.Ticket()))
	n := s.deliver(self, channel, message, shard, gated)
	if s.replicated() && s.node.Fanout(channel, message, shard) {
		s.ps.fanout, s.ps.pending = true, true
	}
	return n
}

// deliver is pubsubPublish's local half.
func (s *Server) deliver(self *client, channel, message []byte, shard, gated bool) int {
	ps := &s.ps
	n := 0
	reg, kind := ps.channels, kindMessage
	if shard {
		reg, kind = ps.shard, kindSMessage
	}
	if subs := reg[string(channel)]; len(subs) > 0 {
		ps.fl.pushed.Add(1)
		ps.enc = appendMessage(ps.enc[:0], kind, "", channel, message)
		for _, r := range subs {
			s.push(self, r, ps.enc, gated)
		}
		n += len(subs)
	}
	if !shard {
		ch := unsafe.String(unsafe.SliceData(channel), len(channel))
		for _, p := range ps.patterns {
			if !engine.Match(p.pat, ch, false) {
				continue
			}
			ps.enc = appendMessage(ps.enc[:0], "pmessage", p.pat, channel, message)
			for _, r := range p.subs {
				s.push(self, r, ps.enc, gated)
			}
			n += len(p.subs)
		}
	}
	return n
}

// appendMessage encodes a message as RESP2 pushes it: *3 message channel
// payload, or *4 pmessage pattern channel payload. A RESP3 receiver gets
// the same bytes with '>' for '*'.
func appendMessage(b []byte, kind, pat string, channel, message []byte) []byte {
	if pat != "" || kind == "pmessage" {
		b = append(b, "*4\r\n$8\r\npmessage\r\n"...)
		b = appendBulkString(b, pat)
	} else {
		b = append(b, "*3\r\n"...)
		b = appendBulkString(b, kind)
	}
	b = appendBulk(b, channel)
	return appendBulk(b, message)
}

func appendBulk(b, s []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

func appendBulkString(b []byte, s string) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// appendPush appends an encoded push (RESP2 form) for a client of proto.
func appendPush(b []byte, proto int, msg []byte) []byte {
	if proto >= 3 {
		b = append(b, '>')
		return append(b, msg[1:]...)
	}
	return append(b, msg...)
}

// selfOut is where cl's pushes to itself go: its reply buffer, or aside
// while CLIENT REPLY drops its replies (pushes are never silenced).
func (cl *client) selfOut() *[]byte {
	if cl.ps != nil && cl.ps.silent {
		return &cl.ps.quietB
	}
	return &cl.w.B
}

// push appends msg to r's output. The engine lock is held.
func (s *Server) push(self, r *client, msg []byte, gated bool) {
	if r == self {
		out := r.selfOut()
		*out = appendPush(*out, r.w.Proto, msg)
		return
	}
	st := r.ps
	st.mu.Lock()
	if !st.closed {
		// A receiver goes on the settle list once per period when its
		// gate must be settled, else only when its buffer was empty: one
		// with bytes waiting is queued for the flusher already, or being
		// written (the writer loops until the buffer is empty). PUBLISH to
		// 50 subscribers at P1 spent 8% of the CPU queueing receivers
		// that were queued already.
		if gated && !st.gate {
			// from here on this period's bytes wait for its ticket
			st.gate = true
			st.marks = append(st.marks, pushMark{pos: st.base + int64(len(st.buf)), ticket: pendingTicket})
		}
		if !st.dirty && (st.gate || len(st.buf) == 0 && !st.writing) {
			st.dirty = true
			s.ps.dirty = append(s.ps.dirty, r)
			s.ps.pending = true
		}
		st.buf = appendPush(st.buf, r.w.Proto, msg)
	}
	st.mu.Unlock()
}

// committed reports whether ticket's records are committed.
func (s *Server) committed(ticket uint64) bool {
	return ticket == 0 || (ticket != pendingTicket && s.replicated() && s.node.Committed(ticket))
}

// settlePushes ends a settle period (the engine lock is held): the marks
// of this period get ticket (0: nothing to wait for), the messages for
// the other nodes are released after it, and the dirty receivers are
// appended to to, which the caller writes (flushPushes) once ticket is
// committed.
//
// It returns the ticket the caller must release the receivers with (0
// when there is nothing to wait for: the gates were dropped at once, so
// PUBLISH traffic, whose batches wait for nothing, leaves no marks
// behind; PUBLISH to 50 subscribers spent 10% of its CPU walking them).
func (s *Server) settlePushes(ticket uint64, to []*client) ([]*client, uint64) {
	ps := &s.ps
	if ps.fanout {
		s.node.FanoutSettle(ticket)
		ps.fanout = false
	}
	if s.committed(ticket) {
		ticket = 0
	}
	for _, r := range ps.dirty {
		st := r.ps
		st.dirty = false
		if st.gate {
			st.gate = false
			st.mu.Lock()
			i := len(st.marks) - 1
			if i >= 0 && st.marks[i].ticket == pendingTicket {
				if ticket == 0 {
					st.marks = st.marks[:i]
				} else {
					st.marks[i].ticket = ticket
					st.marks[i].end = st.base + int64(len(st.buf))
				}
			}
			st.mu.Unlock()
		}
		to = append(to, r)
	}
	clear(ps.dirty)
	ps.dirty = ps.dirty[:0]
	ps.pending = false
	return to, ticket
}

// settleAsync settles what a unit run outside a client's batch published
// (the cron's expiry and eviction, a follower's unit executed here) and
// writes it from a goroutine once committed. The engine lock is held.
func (s *Server) settleAsync() {
	if !s.ps.pending {
		return
	}
	var ticket uint64
	if s.gated() {
		ticket = s.node.Ticket()
	}
	list, ticket := s.settlePushes(ticket, nil)
	if len(list) == 0 {
		return
	}
	if ticket == 0 || s.committed(ticket) {
		s.releasePushes(list, 0, false)
		return
	}
	go func() {
		err := s.node.Wait(ticket)
		s.releasePushes(list, ticket, err != nil)
	}()
}

// releasePushes clears the marks of ticket (waited for) in the
// receivers' buffers and has the flusher write them. When ticket's
// outcome is unknown (lost: leadership ended before its commit) the
// pushes it gated are cut first: a keyspace event, or a message
// published after a write, must not report a write that may never have
// happened (the write may still be committed by the next leader; its
// event is then missed, as a message is by a node that is down). The
// engine lock is not needed.
func (s *Server) releasePushes(list []*client, ticket uint64, lost bool) {
	if ticket != 0 {
		for _, r := range list {
			st := r.ps
			st.mu.Lock()
			if lost {
				st.cutMarks(ticket)
			}
			for i := range st.marks {
				if st.marks[i].ticket == ticket {
					st.marks[i].ticket = 0
				}
			}
			st.mu.Unlock()
		}
	}
	fl := &s.ps.fl
	fl.once.Do(func() {
		fl.wake = make(chan struct{}, 1)
		go s.flushLoop()
	})
	fl.mu.Lock()
	for _, r := range list {
		if !r.ps.queued {
			r.ps.queued = true
			fl.queue = append(fl.queue, r)
		}
	}
	fl.mu.Unlock()
	select {
	case fl.wake <- struct{}{}:
	default:
	}
}

// cutMarks removes the pushes that the marks of ticket gated (pos..end;
// not yet written: a writer stops at the first unsatisfied mark) and
// shifts what follows. st.mu is held.
func (st *clientPS) cutMarks(ticket uint64) {
	for i := 0; i < len(st.marks); {
		m := st.marks[i]
		from, to := m.pos-st.base, m.end-st.base
		if m.ticket != ticket || m.end <= m.pos || from < 0 || to > int64(len(st.buf)) {
			i++
			continue
		}
		st.buf = append(st.buf[:from], st.buf[to:]...)
		st.marks = append(st.marks[:i], st.marks[i+1:]...)
		shift := m.end - m.pos
		for j := i; j < len(st.marks); j++ {
			if st.marks[j].pos >= m.end {
				st.marks[j].pos -= shift
				if st.marks[j].end != 0 {
					st.marks[j].end -= shift
				}
			}
		}
		if st.own.from >= m.end {
			st.own.from -= shift
			st.own.to -= shift
		}
	}
}

// flushLoop is the flusher: it writes every queued receiver once, then
// waits for more, until the server closes.
func (s *Server) flushLoop() {
	fl := &s.ps.fl
	var batch []*client
	var lastWrite time.Duration
	for {
		select {
		case <-fl.wake:
		case <-s.stop:
			return
		}
		for {
			// let the connections that are ready run their batches
			// first (Redis serves every readable client before it
			// writes), so that one write carries many publishes: yield
			// while publishes keep arriving, a few times at most
			gather := min(max(lastWrite, flushGather), time.Millisecond)
			for t0, n := time.Now(), fl.pushed.Load(); time.Since(t0) < gather; {
				runtime.Gosched()
				m := fl.pushed.Load()
				if m == n && time.Since(t0) > flushGather/4 {
					break
				}
				n = m
			}
			fl.mu.Lock()
			batch, fl.queue = fl.queue, batch[:0]
			for _, r := range batch {
				r.ps.queued = false
			}
			fl.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			t1 := time.Now()
			for i, r := range batch {
				s.flushPushes(r, 0)
				batch[i] = nil
			}
			lastWrite = time.Since(t1)
		}
	}
}

// batchEnd is serveLoop's release for a client with Pub/Sub state or
// after publishes (engine lock held): in push mode its replies join its
// buffer (gated by its ticket), and the receivers to write are settled.
// It reports whether the replies were moved (batchDone replaces them if
// the batch's outcome is unknown).
func (s *Server) batchEnd(cl *client) (moved bool) {
	st := cl.psOf()
	if st.active {
		moved = true
		st.mu.Lock()
		if cl.ticket != 0 && s.gated() && !s.committed(cl.ticket) {
			from := st.base + int64(len(st.buf))
			st.marks = append(st.marks, pushMark{pos: from, ticket: cl.ticket})
			st.own = ownSeg{from + int64(min(cl.batchStart, len(cl.w.B))), from + int64(len(cl.w.B)), cl.batchN, cl.ticket}
		}
		st.buf = append(st.buf, cl.w.B...)
		st.mu.Unlock()
		cl.w.B = cl.w.B[:0]
		cl.batchStart = 0
		st.flushTo = append(st.flushTo, cl)
		if st.total() == 0 {
			s.leavePushMode(cl)
		}
	}
	if s.ps.pending {
		st.flushTo, st.relTicket = s.settlePushes(cl.ticket, st.flushTo)
	}
	return moved
}

// leavePushMode returns an unsubscribed client to the direct write path
// once nothing of its stream is left to write (engine lock held).
func (s *Server) leavePushMode(cl *client) {
	st := cl.ps
	st.mu.Lock()
	if len(st.buf) == 0 && !st.writing && len(st.marks) == 0 {
		st.active = false
	}
	st.mu.Unlock()
}

// batchDone is serveLoop's release after the wait for the batch's ticket
// (the engine lock is not held): in push mode a batch whose outcome is
// unknown has its replies replaced, then every receiver is written.
func (s *Server) batchDone(cl *client, ticket uint64, err error) {
	st := cl.ps
	if err != nil && st.own.ticket == ticket && ticket != 0 {
		st.mu.Lock()
		if st.own.from >= st.base && st.own.to-st.base <= int64(len(st.buf)) {
			from, to := int(st.own.from-st.base), int(st.own.to-st.base)
			var w respErrs
			for i := 0; i < st.own.n; i++ {
				w.add(err.Error())
			}
			tail := append(w.b, st.buf[to:]...)
			st.buf = append(st.buf[:from], tail...)
			shift := int64(len(w.b) - (to - from))
			for i := range st.marks {
				if st.marks[i].pos > st.own.from {
					st.marks[i].pos += shift
				}
			}
		}
		st.own = ownSeg{}
		st.mu.Unlock()
	}
	if st.active {
		// its own replies: written at once by its own goroutine (pushes
		// its buffer holds under the same unknown outcome are cut first)
		if err != nil && ticket != 0 {
			st.mu.Lock()
			st.cutMarks(ticket)
			st.mu.Unlock()
		}
		s.flushPushes(cl, ticket)
	}
	s.releasePushes(st.flushTo, st.relTicket, err != nil)
	st.relTicket = 0
	clear(st.flushTo)
	st.flushTo = st.flushTo[:0]
}

// respErrs builds error replies.
type respErrs struct{ b []byte }

func (e *respErrs) add(msg string) {
	e.b = append(e.b, '-')
	e.b = append(e.b, msg...)
	e.b = append(e.b, '\r', '\n')
}

// flushPushes writes what of r's buffer may be revealed: everything
// before the first mark whose ticket is not committed. Marks of force (a
// ticket its caller has waited for, whatever the outcome) are cleared
// first. The engine lock is not held.
func (s *Server) flushPushes(r *client, force uint64) {
	st := r.ps
	st.mu.Lock()
	if force != 0 {
		for i := range st.marks {
			if st.marks[i].ticket == force {
				st.marks[i].ticket = 0
			}
		}
	}
	for !st.writing && !st.closed {
		lim := len(st.buf)
		for len(st.marks) > 0 {
			m := st.marks[0]
			if s.committed(m.ticket) {
				st.marks = st.marks[1:]
				continue
			}
			lim = int(m.pos - st.base)
			break
		}
		if lim <= 0 {
			break
		}
		st.writing = true
		chunk := st.buf[:lim]
		st.mu.Unlock()
		ok := r.writePushes(chunk)
		st.mu.Lock()
		st.writing = false
		st.buf = st.buf[:copy(st.buf, st.buf[lim:])]
		st.base += int64(lim)
		if cap(st.buf) > 1<<20 && len(st.buf) < 1<<16 {
			st.buf = append([]byte(nil), st.buf...)
		}
		if !ok {
			st.closed = true
			st.buf, st.marks = nil, nil
			r.nc.Close()
		}
	}
	st.mu.Unlock()
}

// writePushes writes b to r's socket: one non-blocking write while
// nothing is queued, the rest (a copy) to the output queue, whose limits
// (the pubsub class while subscribed) it then checks. It returns false
// when r is to be closed. Only the goroutine holding clientPS.writing
// calls it, so it has the write path to itself.
func (r *client) writePushes(b []byte) bool {
	if r.out.dead.Load() {
		return false
	}
	if r.out.raw != nil && r.out.pending.Load() == 0 {
		n, err := r.tryWrite(b)
		r.s.noteWrite(n)
		if err != nil {
			return false
		}
		if n == len(b) {
			return true
		}
		b = b[n:]
	}
	r.enqueue(append([]byte(nil), b...))
	used := r.out.pending.Load()
	l := r.s.obufNormal.Load()
	if r.ps.subd.Load() {
		l = r.s.ps.obuf.Load()
	}
	if used > 0 && r.overLimit(l, used) {
		// Redis's line; the client is named by what other goroutines
		// may read of it without the engine lock
		r.s.log.Warn("Client id=" + strconv.FormatInt(r.id, 10) + " addr=" + r.nc.RemoteAddr().String() +
			" laddr=" + r.nc.LocalAddr().String() + " flags=P" +
			" scheduled to be closed ASAP for overcoming of output buffer limits.")
		return false
	}
	return true
}

// dropSubscriber forgets a closing client's subscriptions and stops
// every writer of its buffer (dropClient, engine lock not held).
func (s *Server) dropSubscriber(cl *client) {
	st := cl.ps
	st.mu.Lock()
	st.closed = true
	for st.writing {
		st.mu.Unlock()
		runtime.Gosched()
		st.mu.Lock()
	}
	st.buf, st.marks = nil, nil
	st.mu.Unlock()
	if st.total() == 0 {
		return
	}
	s.door.Lock()
	s.unsubscribeAll(cl)
	s.door.Unlock()
}

// waitPushed waits, at most limit, until cl's buffer is written (a
// client closed after its replies: QUIT).
func (cl *client) waitPushed(limit time.Duration) {
	st := cl.ps
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		st.mu.Lock()
		empty := len(st.buf) == 0 && !st.writing
		st.mu.Unlock()
		if empty {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// --- subscriptions (engine lock held) ----------------------------------

// subscribe adds cl to channel's subscribers (shard channels when shard
// is set); false when it was subscribed already.
func (s *Server) subscribe(cl *client, channel string, shard bool) bool {
	st := cl.psOf()
	own, reg := st.chans, s.ps.channels
	if shard {
		own, reg = st.shard, s.ps.shard
	}
	if _, ok := own[channel]; ok {
		return false
	}
	s.ps.seq++
	own[channel] = s.ps.seq
	reg[channel] = append(reg[channel], cl)
	st.active = true // its output goes through its push buffer from now on
	st.subd.Store(true)
	return true
}

func (s *Server) unsubscribe(cl *client, channel string, shard bool) bool {
	st := cl.ps
	if st == nil {
		return false
	}
	own, reg := st.chans, s.ps.channels
	if shard {
		own, reg = st.shard, s.ps.shard
	}
	if _, ok := own[channel]; !ok {
		return false
	}
	delete(own, channel)
	st.subd.Store(st.total() > 0)
	subs := removeClient(reg[channel], cl)
	if len(subs) == 0 {
		delete(reg, channel) // so that PUBSUB CHANNELS forgets it
	} else {
		reg[channel] = subs
	}
	return true
}

func removeClient(subs []*client, cl *client) []*client {
	for i, c := range subs {
		if c == cl {
			copy(subs[i:], subs[i+1:])
			subs[len(subs)-1] = nil
			return subs[:len(subs)-1]
		}
	}
	return subs
}

func (s *Server) psubscribe(cl *client, pat string) bool {
	st := cl.psOf()
	for _, p := range st.pats {
		if p == pat {
			return false
		}
	}
	st.pats = append(st.pats, pat)
	p := s.ps.patIdx[pat]
	if p == nil {
		p = &patSubs{pat: pat}
		s.ps.patIdx[pat] = p
		s.ps.patterns = append(s.ps.patterns, p)
	}
	p.subs = append(p.subs, cl)
	st.active = true
	st.subd.Store(true)
	return true
}

func (s *Server) punsubscribe(cl *client, pat string) bool {
	st := cl.ps
	if st == nil {
		return false
	}
	i := -1
	for j, p := range st.pats {
		if p == pat {
			i = j
			break
		}
	}
	if i < 0 {
		return false
	}
	st.pats = append(st.pats[:i], st.pats[i+1:]...)
	st.subd.Store(st.total() > 0)
	p := s.ps.patIdx[pat]
	p.subs = removeClient(p.subs, cl)
	if len(p.subs) == 0 {
		delete(s.ps.patIdx, pat)
		pats := s.ps.patterns
		for j, q := range pats {
			if q == p {
				copy(pats[j:], pats[j+1:])
				pats[len(pats)-1] = nil
				s.ps.patterns = pats[:len(pats)-1]
				break
			}
		}
	}
	return true
}

// channelsOf lists cl's channels (or shard channels) in subscription order.
func channelsOf(m map[string]uint64) []string {
	out := make([]string, 0, len(m))
	for ch := range m {
		out = append(out, ch)
	}
	sort.Slice(out, func(i, j int) bool { return m[out[i]] < m[out[j]] })
	return out
}

// unsubscribeAll drops every subscription of cl without replying (RESET,
// a closing connection).
func (s *Server) unsubscribeAll(cl *client) {
	st := cl.ps
	if st == nil {
		return
	}
	for _, ch := range channelsOf(st.chans) {
		s.unsubscribe(cl, ch, false)
	}
	for _, ch := range channelsOf(st.shard) {
		s.unsubscribe(cl, ch, true)
	}
	for len(st.pats) > 0 {
		s.punsubscribe(cl, st.pats[0])
	}
}

// deliverRemote delivers a batch of messages published on another node to
// this node's subscribers (cluster.Node.OnMessages); they go nowhere else.
func (s *Server) deliverRemote(batch []byte) {
	s.door.Lock()
	cluster.DecodeMessages(batch, func(channel, message []byte, shard bool) {
		s.deliver(nil, channel, message, shard, false)
	})
	list, _ := s.settlePushes(0, nil)
	s.door.Unlock()
	s.releasePushes(list, 0, false)
}

// killRevokedSubscribers closes the subscribed clients whose user may no
// longer access one of their channels or patterns, as Redis 7.0's
// ACLKillPubsubClientsIfNeeded does after ACL SETUSER (here also after
// ACL LOAD and a change replicated from the leader). self, the client
// that made the change, is closed after its reply. Engine lock held.
func (s *Server) killRevokedSubscribers(self *client) {
	for _, c := range s.sortedClients() {
		if !c.subscribed() || c.user.Free() {
			continue
		}
		ok := true
		for _, p := range c.ps.pats {
			ok = ok && c.user.ChannelAllowed(p, true)
		}
		for ch := range c.ps.chans {
			ok = ok && c.user.ChannelAllowed(ch, false)
		}
		for ch := range c.ps.shard {
			ok = ok && c.user.ChannelAllowed(ch, false)
		}
		if !ok {
			s.kill(self, c)
		}
	}
}
