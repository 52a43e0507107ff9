package server

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"limitdb/cluster"
	"limitdb/engine"
)

// Blocking commands in a cluster (cluster/blocking.go has the protocol).
//
// On the leader a follower's blocking command runs as the follower's
// client (ExecForwarded) and blocks like a local client; the forwarded
// unit waits for its answer (fwdBlocked.Wait), its timeout measured here,
// and is held by its unit ID (blocking.fwdUnits) for the follower's
// cancel and query.
//
// On a follower the client's goroutine forwards the command from a
// helper goroutine and meanwhile reads its socket as a blocked client
// does (forwardBlocking): a read error cancels the unit on the leader, and
// CLIENT UNBLOCK here sends the cancel with its reply mode. The client
// shows as blocked (INFO, CLIENT LIST's b) once the leader said it
// blocked.
//
// When this node stops leading, its blocked clients run their command
// again (rerouteBlocked), now forwarded to the new leader with what is
// left of their timeout, and followers' units blocked here are answered
// REBLOCK, which makes their follower send them again: nothing was
// popped for them. A client whose pop was executed and not committed
// gets -UNCERTAIN, as any write.

// fwdBlocked is a follower's unit blocked here. The leader finds it by
// its unit ID, (session, client) in blocking.fwdUnits and seq here: a
// cancel or a 'Q' names the unit, and only that unit's waiter answers
// it. (Found through the client's mapping, fwdClients, and the client's
// current blockState, a cancel missed a waiter that was still queued
// whenever a dropped unit's late Wait had removed the mapping or a later
// unit of the client had replaced the state; the follower, told "not
// served", answered nil, and the waiter popped the next element for
// nobody.)
type fwdBlocked struct {
	s   *Server
	cl  *client
	key fwdKey
	seq uint64
	bs  *blockState
}

// holdFwdUnit registers the blocked unit b (the lock is held).
func (s *Server) holdFwdUnit(b *fwdBlocked) {
	if s.blocking.fwdUnits == nil {
		s.blocking.fwdUnits = map[fwdKey]*fwdBlocked{}
	}
	s.blocking.fwdUnits[b.key] = b
}

// staleUnit ends, unanswered, a unit of the client key still queued here
// when the client's unit seq arrives, and reports whether the arriving
// unit is itself the stale one (the lock is held). A follower sends a
// client's next unit only once it holds the previous one ended (answered,
// REBLOCK, or dropped or not found here by its cancel), so a waiter
// still queued then is one nobody waits for: served, it would pop an
// element for nobody. A unit older than the one queued (seqs grow with
// each unit) arrived late, after its follower gave up on it (-UNCERTAIN):
// it is not run, and the waiter queued stays.
func (s *Server) staleUnit(key fwdKey, seq uint64) bool {
	b := s.blocking.fwdUnits[key]
	if b == nil || b.seq == seq || b.bs.done.Load() || b.cl.blk != b.bs {
		return false
	}
	if b.seq > seq {
		return true
	}
	delete(s.blocking.fwdUnits, key)
	s.endBlock(b.cl, b.bs)
	return false
}

// errLateUnit answers a unit that arrived after a later one of its
// client (staleUnit); nobody waits for the answer.
const errLateUnit = "UNCERTAIN this forwarded command arrived after a later one of its client and was not executed"

// Wait implements cluster.BlockedUnit.
func (b *fwdBlocked) Wait() ([]byte, uint64, bool) {
	s, cl, bs := b.s, b.cl, b.bs
	<-bs.wake // answered, dropped, timed out (expireBlocked) or rerouted
	s.door.Lock()
	defer s.door.Unlock()
	out := binary.AppendUvarint(nil, uint64(cl.db))
	out = append(out, bs.out.B...)
	ticket := bs.ticket
	if s.blocking.fwdUnits[b.key] == b {
		delete(s.blocking.fwdUnits, b.key)
	}
	// (a later unit of the client may have blocked meanwhile: cl.blk is
	// its; the mapping stays for it)
	if s.fwdClients[b.key] == cl && cl.blk == nil && !cl.tx.Watching() && !cl.tx.Active {
		delete(s.fwdClients, b.key)
	}
	return out, ticket, bs.reroute
}

// Rank implements cluster.BlockedUnit.
func (b *fwdBlocked) Rank() uint64 { return b.bs.rank }

// CancelForwarded implements cluster.Executor: it answers (mode) or drops
// the unit (session, client, seq) if it is still queued here, and
// reports whether it was; false: it is not, or no longer, waiting here
// (served, timed out, dropped, or never blocked here).
func (s *Server) CancelForwarded(session, client, seq uint64, mode cluster.CancelMode) bool {
	b := s.blocking.fwdUnits[fwdKey{session, client}]
	if b == nil || b.seq != seq || b.bs.done.Load() || b.cl.blk != b.bs {
		return false
	}
	cl, bs := b.cl, b.bs
	before := len(bs.out.B)
	switch mode {
	case cluster.CancelTimeout:
		bs.out.NullArray()
		s.answerBlocked(cl, bs, before, true)
	case cluster.CancelError:
		bs.out.Error(errUnblocked)
		s.answerBlocked(cl, bs, before, true)
	default:
		s.endBlock(cl, bs)
	}
	return true
}

// StopServing implements cluster.Executor: every client blocked here is
// to run its command again where it now runs (nothing was popped for
// it). The lock is held.
func (s *Server) StopServing() {
	blocked := s.blockedConns()
	for _, b := range s.blocking.fwdUnits {
		if b.cl.blk == b.bs {
			blocked = append(blocked, b.cl)
		}
	}
	for _, c := range blocked {
		if bs := c.blk; !bs.done.Load() {
			bs.reroute = true
			s.endBlock(c, bs)
		}
	}
	s.eng.DropReady()
}

// blockedConns are the connections blocked here (the lock is held).
func (s *Server) blockedConns() []*client {
	var blocked []*client
	s.mu.Lock()
	for _, c := range s.clients {
		if c.blk != nil {
			blocked = append(blocked, c)
		}
	}
	s.mu.Unlock()
	return blocked
}

// noteServed records that a follower's blocked unit is being served
// (cluster.Node.NoteServed), before its pop. The lock is held.
func (s *Server) noteServed(rc *client) {
	if bs := rc.blk; bs.fwdSeq != 0 && s.gated() {
		s.node.NoteServed(bs.fwdKey.session, bs.fwdKey.client, bs.fwdSeq)
	}
}

// rerouteBlocked runs again the command of a client that was blocked
// here when this node stopped leading, with what is left of its timeout
// (it is forwarded now). The lock is not held.
func (s *Server) rerouteBlocked(cl *client, bs *blockState) bool {
	argv := bs.argv
	s.door.Lock()
	cl.locked = true
	if !leftTimeout(bs.cmd, argv, bs.deadline) {
		cl.w.NullArray()
		cl.ticket = 0
	} else {
		cl.ctx.Now, _ = s.door.Now()
		cl.batchStart, cl.batchN = len(cl.w.B), 1
		if s.blocking.rerank == nil {
			s.blocking.rerank = map[*client]uint64{}
		}
		s.blocking.rerank[cl] = bs.rank
		s.dispatch(cl, argv)
		delete(s.blocking.rerank, cl)
		if s.eng.BlockPending() && s.afterUnit(cl, argv) {
			nbs := cl.blk
			cl.locked = false
			s.door.Unlock()
			return cl.flush() && s.waitBlocked(cl, nbs)
		}
	}
	cl.locked = false
	s.door.Unlock()
	return s.sendTicketed(cl)
}

// sendTicketed sends the replies so far once cl.ticket is committed.
func (s *Server) sendTicketed(cl *client) bool {
	if cl.ticket != 0 {
		if err := s.node.Wait(cl.ticket); err != nil {
			cl.replaceBatch(err.Error())
		}
		cl.ticket = 0
	}
	cl.batchStart, cl.batchN = len(cl.w.B), 0
	return cl.flush()
}

// leftTimeout rewrites a blocking command's timeout argument with what
// is left until deadline (seconds, ms precision); false when nothing is.
func leftTimeout(cmd *engine.Command, argv [][]byte, deadline time.Time) bool {
	if deadline.IsZero() {
		return true
	}
	left := time.Until(deadline)
	if left <= 0 {
		return false
	}
	ms := int64(math.Ceil(float64(left) / float64(time.Millisecond)))
	argv[engine.TimeoutArg(cmd, argv)] = strconv.AppendFloat(nil, float64(ms)/1000, 'f', 3, 64)
	return true
}

// fwdWait is a follower's client waiting in a forwarded blocking
// command. blocked and cancel are read and written by the client's
// goroutine, the forwarding goroutine and CLIENT UNBLOCK.
type fwdWait struct {
	s       *Server
	cl      *client
	rank    atomic.Uint64 // the place the leader gave it (Unit.Rank)
	seq     atomic.Uint64
	blocked atomic.Bool
	cancel  atomic.Int32 // -1, or the cluster.CancelMode asked for
}

// setBlocked is the leader's interim answer: the unit blocked there.
func (f *fwdWait) setBlocked(rank uint64) {
	f.rank.Store(rank)
	if !f.blocked.Swap(true) {
		f.s.blocking.forwarding.Add(1)
	}
	if m := f.cancel.Load(); m >= 0 {
		f.s.node.CancelForward(uint64(f.cl.id), f.seq.Load(), cluster.CancelMode(m))
	}
}

func (f *fwdWait) clearBlocked() {
	if f.blocked.Swap(false) {
		f.s.blocking.forwarding.Add(-1)
	}
}

// requestCancel asks the leader to answer the blocked unit (mode); it
// is sent once the leader has said the unit blocked.
func (f *fwdWait) requestCancel(mode cluster.CancelMode) {
	if f.cancel.CompareAndSwap(-1, int32(mode)) && f.blocked.Load() {
		f.s.node.CancelForward(uint64(f.cl.id), f.seq.Load(), mode)
	}
}

// unblockForwarding is CLIENT UNBLOCK of a follower's client waiting in
// a forwarded blocking command: the leader answers it (the lock is held).
func (s *Server) unblockForwarding(target *client, asError bool) bool {
	f := target.fwdBlk
	if f == nil || !f.blocked.Load() || f.cancel.Load() >= 0 {
		return false
	}
	mode := cluster.CancelTimeout
	if asError {
		mode = cluster.CancelError
	}
	f.requestCancel(mode)
	return true
}

// forwardBlocking forwards a blocking command of a follower's client (the
// lock is held; it is released while waiting). It reports whether this
// node became the leader meanwhile (the caller executes the command).
func (s *Server) forwardBlocking(cl *client, cmd *engine.Command, argv [][]byte) bool {
	if cl.connless() {
		return s.forward(cl, [][][]byte{argv}) // a forwarded client cannot forward
	}
	var deadline time.Time
	if ms, bad := engine.ParseBlockTimeout(argv[engine.TimeoutArg(cmd, argv)]); bad == "" && ms > 0 && ms < 1<<62 {
		deadline = time.Now().Add(time.Duration(ms) * time.Millisecond)
	}
	cp := make([][]byte, len(argv))
	for i, a := range argv {
		cp[i] = append([]byte(nil), a...)
	}
	// seq for the unit, seq+1 for its serve (cluster/blocking.go)
	u := &cluster.Unit{Client: uint64(cl.id), Seq: cl.fwdSeq + 1, DB: cl.db, Proto: cl.w.Proto, User: cl.user.Name, Watching: cl.fwdWatching, Cmds: [][][]byte{cp}}
	f := &fwdWait{s: s, cl: cl}
	if r := s.blocking.rerank[cl]; r != 0 {
		// blocked here before this node stopped leading: keep its place
		u.Rank = r
		f.rank.Store(r)
		delete(s.blocking.rerank, cl)
	}
	f.seq.Store(u.Seq)
	f.cancel.Store(-1)
	cl.fwdBlk = f
	s.door.Unlock()

	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := s.node.ForwardBlocking(u, cluster.BlockingHooks{
			Blocked: f.setBlocked,
			Refresh: func(u *cluster.Unit) bool {
				f.clearBlocked()
				if f.cancel.Load() >= 0 || !leftTimeout(cmd, u.Cmds[0], deadline) {
					return false
				}
				u.Seq += 2
				u.Rank = f.rank.Load()
				f.seq.Store(u.Seq)
				return true
			},
			Left: func(u *cluster.Unit) bool { return leftTimeout(cmd, u.Cmds[0], deadline) },
		})
		cl.nc.SetReadDeadline(pastDeadline) // before the result: see endBlock
		done <- result{data, err}
	}()
	// read the socket meanwhile, as a blocked client does
	var r result
	gone := false
wait:
	for {
		select {
		case r = <-done:
			break wait
		default:
		}
		err := cl.rd.Fill()
		if err == nil || isTimeout(err) {
			continue
		}
		// the client went away: the leader drops the unit (or, if it
		// was served meanwhile, the reply is lost, as in Redis)
		f.requestCancel(cluster.CancelDrop)
		gone = true
		r = <-done
		break
	}
	cl.nc.SetReadDeadline(time.Time{})
	f.clearBlocked()
	s.door.Lock()
	cl.fwdBlk = nil
	cl.fwdSeq = f.seq.Load() + 1
	s.resumeNow(cl)
	if gone {
		cl.closeNow = true
		return false
	}
	switch {
	case errors.Is(r.err, cluster.ErrLocal):
		return true
	case errors.Is(r.err, cluster.ErrTimedOut):
		cl.w.NullArray()
		return false
	case r.err != nil:
		cl.w.Error(r.err.Error())
		return false
	}
	db, n := binary.Uvarint(r.data)
	if n <= 0 {
		cl.w.Error("ERR malformed reply from the leader")
		return false
	}
	cl.db = int(db)
	cl.w.B = append(cl.w.B, r.data[n:]...)
	return false
}
