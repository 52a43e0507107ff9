package server

import (
	"container/heap"
	"errors"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"limitdb/engine"
	"limitdb/resp"
)

// Clients blocked in BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BLMPOP, BZPOPMIN,
// BZPOPMAX and BZMPOP (Redis's blocked.c; the commands and the pops are
// engine/blocking.go's).
//
// A blocking command that finds nothing leaves a waiter in its Ctx.Block.
// After every command (serveLoop, ExecForwarded) the server tests
// Engine.BlockPending — the only cost while nobody blocks — and then
// (afterUnit) queues the waiter on its keys and serves the keys the
// command made ready: for each ready key, in the order they became
// ready, its waiters in blocking order, each served as a unit of its own
// through the door (door.Serve), its reply written into the waiter's
// buffer, until the key is gone. That is Redis's handleClientsBlockedOn
// Keys after call(): a MULTI block or a script is one command, so its
// waiters are served with the data it left.
//
// The blocked client's goroutine releases the engine lock, sends the
// replies of its batch so far and keeps reading its socket (Redis keeps
// reading a blocked client's input too, into its query buffer): a read
// error means the client went away (its waiter is dropped). Whoever
// answers the waiter — another client's unit serving it, CLIENT UNBLOCK,
// the timeout — does so under the engine lock: it writes the answer to
// the socket itself when it can (answerDirect), else it sets done and
// moves the read deadline to the past, which ends the read; the goroutine
// then waits for its reply's commit (a served pop is a write) and goes on
// with the requests that arrived meanwhile. A client blocked on an event
// loop stays there: the loop reads it, and its answer is handed to the
// loop (evLoop.answered, takeAnswers). Timeouts are one heap and one
// timer for all blocked clients (Redis's timeout table): a read deadline
// per client cost a runtime timer per block, 7% of a ping-pong's CPU in
// the scheduler's timer checks. No goroutine and no timer per blocked
// client.

// Redis's error for CLIENT UNBLOCK … ERROR, and for a bad reason.
const (
	errUnblocked     = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
	errUnblockReason = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"
)

// blockingState is the server's part (guarded by the engine lock, but
// forwarding).
type blockingState struct {
	ctx engine.Ctx  // looks ready keys up (serveReady)
	w   resp.Writer // its writer (nothing is written)
	// forwarding counts this follower's clients waiting in a forwarded
	// blocking command (blocked_clients)
	forwarding atomic.Int64
	// timeouts holds the blocked clients with a timeout, earliest first
	// (clients_in_timeout_table); timer fires at the earliest
	timeouts timeoutHeap
	timer    *time.Timer
	timerAt  time.Time
	// answerer is the client whose goroutine serves ready keys now
	// (afterUnit): it writes the direct answers once it has released
	// the lock, so that the engine lock is not held across those writes
	answerer *client
	// loop is the event loop running the unit whose ready keys are
	// served, nil off the loops (serveReady)
	loop *evLoop
	// lastRank is the last waiter's rank: its time in ms << 20 plus a
	// count within the ms (Waiter.Rank)
	lastRank uint64
	// rerank: a client blocked here before this node stopped leading
	// keeps its rank when its command is forwarded (cluster_blocked.go)
	rerank map[*client]uint64
	// fwdUnits: the followers' units blocked here, by follower client,
	// each with its seq (cluster_blocked.go)
	fwdUnits map[fwdKey]*fwdBlocked
}

// blockState is a blocked client (Redis's CLIENT_BLOCKED and bpop).
type blockState struct {
	cl       *client
	rank     uint64 // the waiter's (kept: the waiter is reused once unblocked)
	hidx     int    // index in blocking.timeouts, -1 when not there
	w        *engine.Waiter
	cmd      *engine.Command
	argv     [][]byte  // a copy of the command (run again after a leader change)
	argBuf   []byte    // argv's bytes (kept with the pooled state)
	deadline time.Time // zero: no timeout
	// done: answered (served, timed out, unblocked, dropped). Set under
	// the engine lock after the reply was written; the blocked goroutine
	// reads it without the lock.
	done atomic.Bool
	// woke: the answerer has also moved the read deadline or written the
	// answer (1); the blocked goroutine resets the deadline only then (a
	// past deadline set after its reset would end its next read at once,
	// and the connection with it). 2: the goroutine sleeps on wokeCh
	// (awaitWoke).
	woke   atomic.Int32
	wokeCh chan struct{}
	// parked: 1 once the blocked goroutine sent the batch's earlier
	// replies and waits with nothing buffered; an answerer that needs no
	// commit then writes the answer to the socket itself (2, sent) and
	// does not wake the goroutine, which goes on reading as any client
	// (3: requests are buffered, the goroutine must be woken)
	parked atomic.Int32
	sent   bool
	// wake is signalled when done, for clients without a connection
	// (forwarded units, cluster.go)
	wake chan struct{}
	// reroute: this node stopped executing before the waiter was served;
	// nothing was popped, and the command is to run again where it now
	// runs (the leader)
	reroute bool
	// onLoop: the client stays on its event loop while blocked; its
	// answer is handed to the loop (evLoop.answered). Set under the lock
	// when it blocks.
	onLoop bool
	// a follower's unit (cluster_blocked.go): its client and sequence
	fwdKey fwdKey
	fwdSeq uint64
	// The answer is written here, under the engine lock, by whoever
	// answers: the client's own buffer belongs to its goroutine, which
	// may be sending the batch's earlier replies meanwhile. ticket is
	// the commit the answer waits for.
	out    resp.Writer
	ctx    engine.Ctx
	ticket uint64
}

// pastDeadline ends a blocked goroutine's read at once.
var pastDeadline = time.Unix(1, 0)

// afterUnit runs when Engine.BlockPending is set after a command (the
// lock is held): cl is blocked if its command asked to, and the ready
// keys are served. It reports whether cl is now blocked.
func (s *Server) afterUnit(cl *client, argv [][]byte) bool {
	if !cl.connless() {
		s.blocking.answerer = cl // answers are written after its unlock
	}
	if cl.onLoop {
		s.blocking.loop = cl.lc.lp // serveReady: this loop's own waiters
	}
	blocked := false
	if w := cl.ctx.Block; w != nil {
		cl.ctx.Block = nil
		s.block(cl, w, argv)
		blocked = true
	}
	if s.eng.HasReady() {
		// the clock is read again, as Redis's handleClientsBlockedOnKeys
		// updates its cached time: a key that expired while the unit ran
		// (DEBUG SLEEP in a MULTI) serves nobody
		now, _ := s.door.Now()
		s.serveReady(now)
	}
	s.eng.ClearBlockPending()
	s.blocking.answerer, s.blocking.loop = nil, nil
	return blocked
}

// block queues cl's waiter on its keys (Redis's blockForKeys).
func (s *Server) block(cl *client, w *engine.Waiter, argv [][]byte) {
	bs := newBlockState(cl, w)
	bs.cmd = cl.ctx.Cmd
	bs.out.Proto = cl.w.Proto
	bs.ctx = engine.Ctx{E: s.eng, W: &bs.out, ACL: cl}
	if s.replicated() {
		// (run again after a leader change: a node without Raft never
		// does) into the pooled state's own buffers: a copy per argument
		// was 4 allocations per BLPOP, 18 % of the objects a BLPOP/LPUSH
		// ping-pong allocated
		n := 0
		for _, a := range argv {
			n += len(a)
		}
		buf := bs.argBuf[:0]
		if cap(buf) < n {
			buf = make([]byte, 0, n)
		}
		bs.argv = bs.argv[:0]
		for _, a := range argv {
			off := len(buf)
			buf = append(buf, a...)
			bs.argv = append(bs.argv, buf[off:len(buf):len(buf)])
		}
		bs.argBuf = buf
	}
	if w.TimeoutMs > 0 {
		// Redis adds mstime() to the timeout; a sum past int64 wraps
		// there and the client never times out, which is what a zero
		// deadline does here
		if now := time.Now(); now.UnixMilli() <= 1<<62 && w.TimeoutMs < 1<<62 {
			bs.deadline = now.Add(time.Duration(w.TimeoutMs) * time.Millisecond)
			s.addTimeout(bs)
		}
	}
	if w.Rank == 0 {
		r := uint64(max(cl.ctx.Now, 0)) << 20
		if r <= s.blocking.lastRank {
			r = s.blocking.lastRank + 1
		}
		s.blocking.lastRank = r
		w.Rank = r
	}
	w.Owner = cl
	bs.rank = w.Rank
	bs.onLoop = cl.onLoop && cl.ps == nil
	s.eng.Block(w)
	cl.blk = bs
	if cl.connless() {
		bs.wake = make(chan struct{}, 1)
	}
}

// serveReady serves the clients blocked on the keys that became ready
// (Redis's handleClientsBlockedOnKeys), at now, the time of the unit that
// made them ready. Serving a BLMOVE may make its destination ready: the
// loop goes on until no key is.
func (s *Server) serveReady(now int64) {
	if s.blocking.ctx.E == nil {
		s.blocking.ctx = engine.Ctx{E: s.eng, W: &s.blocking.w}
	}
	for s.eng.HasReady() {
		round := s.eng.TakeReady()
		for _, rk := range round {
			s.eng.ReadyDone(rk)
			s.blocking.ctx.Now = now
			kind := s.door.ReadyKind(&s.blocking.ctx, rk.DB, rk.Key)
			s.blocking.w.B = s.blocking.w.B[:0]
			if kind != engine.KindList && kind != engine.KindZSet {
				continue
			}
			for n := rk.DB.FirstWaiter(rk.Key); n != nil; {
				next := n.Next()
				w := n.Waiter()
				// a waiter whose peer hung up is left to be dropped
				// (peerClosed); one kept by the event loop that runs this
				// unit needs no look at its socket: the loop reads events
				// in the order they came, as Redis's does, so a hang-up
				// that came first was handled first (the look cost a
				// recvfrom per served waiter, 1 in 4.8 system calls of a
				// BLPOP/LPUSH half-exchange)
				rc := w.Owner.(*client)
				peek := !(rc.blk.onLoop && rc.lc != nil && rc.lc.lp == s.blocking.loop)
				if w.OnList() == (kind == engine.KindList) && !rc.peerClosed(peek) {
					if s.serveWaiter(rc, w, rk.Key, now) {
						break // the key was emptied and deleted
					}
				}
				n = next
			}
		}
		s.eng.RoundDone(round)
	}
}

// serveWaiter serves rc's waiter w from key as a unit of its own and
// answers rc. It reports whether the key was emptied.
func (s *Server) serveWaiter(rc *client, w *engine.Waiter, key string, now int64) bool {
	bs := rc.blk
	c := &bs.ctx
	c.Now, c.Cmd = now, bs.cmd
	s.noteServed(rc)
	before := len(bs.out.B)
	deleted := s.door.Serve(c, w, key)
	s.answerBlocked(rc, bs, before, false)
	return deleted
}

// answerBlocked ends rc's block once its reply (from before in its
// buffer) is written: a served pop's reply gets the commit ticket of its
// unit (a timeout's too: it may have seen an uncommitted pop), errors
// are counted (failed: a failed call whatever the reply, as Redis counts
// CLIENT UNBLOCK), the waiter leaves its keys' queues and the blocked
// goroutine (or a forwarded unit's) is woken. The lock is held.
func (s *Server) answerBlocked(rc *client, bs *blockState, before int, failed bool) {
	if s.gated() {
		bs.ticket = s.node.Ticket()
	}
	b := bs.out.B
	isErr := len(b) > before && b[before] == '-'
	if failed || isErr {
		s.statOf(bs.cmd).failed++
	}
	if isErr {
		s.countError(b[before+1:])
	}
	s.endBlock(rc, bs)
}

// endBlock takes rc's waiter out of its keys' queues and wakes the
// blocked goroutine. The lock is held.
func (s *Server) endBlock(rc *client, bs *blockState) {
	s.eng.Unblock(bs.w)
	s.eng.FreeWaiter(bs.w)
	bs.w = nil
	if bs.hidx >= 0 {
		heap.Remove(&s.blocking.timeouts, bs.hidx)
	}
	rc.blk = nil
	if bs.onLoop {
		bs.done.Store(true)
		bs.setWoke()
		rc.lc.lp.answered(rc, s.blocking.answerer)
		return
	}
	if a := s.blocking.answerer; a != nil && !bs.reroute && s.canAnswerDirect(rc, bs) {
		a.directs = append(a.directs, bs) // written after a's unlock (sendDirects)
		return
	}
	direct := !bs.reroute && s.answerDirect(rc, bs)
	bs.done.Store(true)
	if bs.wake != nil {
		bs.wake <- struct{}{}
	} else if !direct {
		rc.nc.SetReadDeadline(pastDeadline)
	}
	bs.setWoke()
}

// answerDirect writes a blocked client's answer to its socket from the
// answerer's goroutine when that is safe: the answer waits for no commit,
// nothing of the client's output is pending, and its goroutine has sent
// the batch's earlier replies (parked). The lock is held.
func (s *Server) answerDirect(rc *client, bs *blockState) bool {
	if !s.canAnswerDirect(rc, bs) {
		return false
	}
	s.writeDirect(rc, bs)
	return true
}

// canAnswerDirect claims the writing of bs's answer (see answerDirect).
func (s *Server) canAnswerDirect(rc *client, bs *blockState) bool {
	return bs.ticket == 0 && len(bs.out.B) != 0 && rc.out.raw != nil && rc.out.pending.Load() == 0 && bs.parked.CompareAndSwap(1, 2)
}

// sendDirects writes the answers cl's goroutine claimed while it held the
// lock (the lock is released): the answered clients' goroutines were
// never woken, and done is set only now.
func (s *Server) sendDirects(cl *client) {
	for i, bs := range cl.directs {
		s.writeDirect(bs.cl, bs)
		bs.done.Store(true)
		bs.setWoke()
		cl.directs[i] = nil
	}
	cl.directs = cl.directs[:0]
}

// writeDirect writes bs's answer to rc's socket (claimed: parked 2).
func (s *Server) writeDirect(rc *client, bs *blockState) {
	b := bs.out.B
	n, err := rc.tryWrite(b)
	s.noteWrite(n)
	if err == nil && n < len(b) {
		rc.enqueue(append([]byte(nil), b[n:]...)) // the queue keeps the order
	}
	// (a write error: the goroutine meets the dead connection when it reads)
	bs.sent = true
}

// timedOut answers a blocked client as Redis's replyToBlockedClientTimedOut
// does for lists and sorted sets: the null array (BLMOVE's too). The lock
// is held.
func (s *Server) timedOut(rc *client, bs *blockState) {
	before := len(bs.out.B)
	bs.out.NullArray()
	s.answerBlocked(rc, bs, before, false)
}

// waitBlocked is the blocked client's goroutine between blocking and its
// answer (no lock held; the batch's replies so far were sent). It reports
// whether the connection goes on.
func (s *Server) waitBlocked(cl *client, bs *blockState) bool {
	// parked 1: an answerer may write the answer itself and leave this
	// goroutine reading; 3: requests are buffered (pipelined after the
	// blocking command), so the goroutine must be woken to run them
	if cl.rd.Buffered() > 0 {
		bs.parked.Store(3)
	} else {
		bs.parked.Store(1)
	}
	// (parked 2: an answerer is writing the answer; the client may have
	// read it and sent its next request before done is set)
	for !bs.done.Load() && bs.parked.Load() != 2 {
		err := cl.rd.Fill()
		if err == nil {
			// more requests: they wait in the buffer, as in Redis
			bs.parked.CompareAndSwap(1, 3)
			continue
		}
		if isTimeout(err) {
			continue // an answerer moved the deadline: done is set
		}
		if errors.Is(err, resp.ErrQueryBufferLimit) {
			s.log.Warn("closing client that reached max query buffer length", "client", cl.id)
		}
		s.dropBlocked(cl)
		return false
	}
	bs.awaitWoke()
	if bs.sent {
		freeBlockState(bs)
		return true // answered on the socket already; the deadline was not moved
	}
	cl.nc.SetReadDeadline(time.Time{})
	if bs.reroute {
		return s.rerouteBlocked(cl, bs)
	}
	ok := s.sendBlockedReply(cl, bs)
	freeBlockState(bs)
	return ok
}

// awaitWoke waits for the answerer to finish (woke). It is a matter of
// microseconds unless the answerer's thread loses its CPU between writing
// the answer and setting woke: the goroutine spun on runtime.Gosched
// until then, which on a loaded machine took the CPU the answerer needed
// (a BLPOP/LPUSH ping-pong spent 54 % of limitdb's CPU in Gosched, with a
// p99 of 6.7 ms against Redis's 1.1). Now it yields a few times, then
// sleeps on wokeCh.
func (bs *blockState) awaitWoke() {
	for i := 0; i < 4; i++ {
		if bs.woke.Load() == 1 {
			return
		}
		runtime.Gosched()
	}
	if bs.woke.CompareAndSwap(0, 2) {
		<-bs.wokeCh
	}
}

// setWoke marks bs woken, waking its goroutine if it sleeps (awaitWoke).
func (bs *blockState) setWoke() {
	if bs.woke.Swap(1) == 2 {
		bs.wokeCh <- struct{}{}
	}
}

// blockStates keeps blockStates (with their answer buffers) for reuse:
// one per block was half of what a ping-pong allocated. Only a
// connection's goroutine gives one back, once its wait is over and nothing
// else refers to it.
var blockStates = sync.Pool{New: func() any { return &blockState{wokeCh: make(chan struct{}, 1)} }}

func newBlockState(cl *client, w *engine.Waiter) *blockState {
	bs := blockStates.Get().(*blockState)
	bs.cl, bs.w, bs.hidx = cl, w, -1
	return bs
}

func freeBlockState(bs *blockState) {
	out := bs.out.B[:0]
	if cap(out) > 64<<10 {
		out = nil
	}
	bs.cl, bs.w, bs.cmd, bs.wake = nil, nil, nil, nil
	clear(bs.argv)
	bs.argv = bs.argv[:0]
	if cap(bs.argBuf) > 64<<10 {
		bs.argv, bs.argBuf = nil, nil
	}
	bs.rank, bs.deadline, bs.reroute, bs.sent, bs.ticket, bs.onLoop = 0, time.Time{}, false, false, 0, false
	bs.fwdKey, bs.fwdSeq = fwdKey{}, 0
	bs.done.Store(false)
	bs.woke.Store(0)
	bs.parked.Store(0)
	bs.ctx = engine.Ctx{}
	bs.out.B = out
	blockStates.Put(bs)
}

// sendBlockedReply waits for the commit of a served pop (its ticket) and
// sends the answer.
func (s *Server) sendBlockedReply(cl *client, bs *blockState) bool {
	start := len(cl.w.B)
	cl.w.B = append(cl.w.B, bs.out.B...)
	if bs.ticket != 0 {
		if err := s.node.Wait(bs.ticket); err != nil {
			cl.batchStart, cl.batchN = start, 1
			cl.replaceBatch(err.Error())
		}
	}
	cl.batchStart, cl.batchN = len(cl.w.B), 0
	return cl.flush()
}

// dropBlocked takes a client that is going away out of its keys' queues.
func (s *Server) dropBlocked(cl *client) {
	if len(cl.directs) != 0 {
		s.sendDirects(cl) // answers it claimed before it failed
	}
	s.lockDoor()
	if bs := cl.blk; bs != nil && !bs.done.Load() {
		bs.wake = nil
		s.endBlock(cl, bs)
	}
	s.door.Unlock()
}

// blockedClients is INFO's blocked_clients: the waiters here (a
// leader's include followers' forwarded ones) and this follower's
// clients waiting in a forwarded blocking command. The lock is held.
func (s *Server) blockedClients() int {
	return s.eng.BlockedClients() + int(s.blocking.forwarding.Load())
}

// addTimeout puts bs in the timeout heap and arms the timer if bs is now
// the earliest. The lock is held.
func (s *Server) addTimeout(bs *blockState) {
	b := &s.blocking
	heap.Push(&b.timeouts, bs)
	if b.timer == nil {
		b.timer = time.AfterFunc(time.Until(bs.deadline), s.expireBlocked)
		b.timerAt = bs.deadline
	} else if b.timerAt.IsZero() || bs.deadline.Before(b.timerAt) {
		b.timer.Reset(time.Until(bs.deadline))
		b.timerAt = bs.deadline
	}
}

// expireBlocked is the timer: the clients whose timeout passed get the
// null array (Redis's replyToBlockedClientTimedOut), and the timer is set
// for the next deadline.
func (s *Server) expireBlocked() {
	s.door.Lock()
	defer s.door.Unlock()
	b := &s.blocking
	now := time.Now()
	for len(b.timeouts) > 0 && !b.timeouts[0].deadline.After(now) {
		bs := b.timeouts[0]
		s.timedOut(bs.cl, bs) // takes it out of the heap
	}
	b.timerAt = time.Time{}
	if len(b.timeouts) > 0 {
		b.timerAt = b.timeouts[0].deadline
		b.timer.Reset(time.Until(b.timerAt))
	}
}

// timeoutHeap orders blocked clients by deadline.
type timeoutHeap []*blockState

func (h timeoutHeap) Len() int           { return len(h) }
func (h timeoutHeap) Less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }
func (h timeoutHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx, h[j].hidx = i, j
}
func (h *timeoutHeap) Push(x any) {
	bs := x.(*blockState)
	bs.hidx = len(*h)
	*h = append(*h, bs)
}
func (h *timeoutHeap) Pop() any {
	old := *h
	bs := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	bs.hidx = -1
	return bs
}

// cmdClientUnblock: CLIENT UNBLOCK client-id [TIMEOUT|ERROR] — answers a
// client blocked in a blocking command as on its timeout (the null
// array), or with -UNBLOCKED; 1 when it was blocked, else 0. Errors:
// Redis's for a bad reason (checked first) or id.
func cmdClientUnblock(s *Server, cl *client, argv [][]byte) {
	if len(argv) > 4 {
		cl.w.Error("ERR unknown subcommand or wrong number of arguments for '" + string(argv[1]) + "'. Try " + strings.ToUpper(string(argv[0])) + " HELP.")
		return
	}
	asError := false
	if len(argv) == 4 {
		switch {
		case engine.EqualFold(argv[3], "timeout"):
		case engine.EqualFold(argv[3], "error"):
			asError = true
		default:
			cl.w.Error(errUnblockReason)
			return
		}
	}
	id, ok := engine.ParseIntB(argv[2])
	if !ok {
		cl.w.Error(engine.ErrNotInt)
		return
	}
	s.mu.Lock()
	target := s.clients[id]
	s.mu.Unlock()
	if target == nil {
		cl.w.Int(0)
		return
	}
	if bs := target.blk; bs != nil && !bs.done.Load() {
		before := len(bs.out.B)
		if asError {
			bs.out.Error(errUnblocked)
		} else {
			bs.out.NullArray()
		}
		// Redis's updateStatsOnUnblock(target, 0, 0, 1): a failed call
		s.answerBlocked(target, bs, before, true)
		cl.w.Int(1)
		return
	}
	if s.unblockForwarding(target, asError) {
		cl.w.Int(1)
		return
	}
	cl.w.Int(0)
}

// isTimeout reports a read that ended at its deadline (a plain socket's
// *net.OpError is asserted directly: errors.As cost 4% of a ping-pong's
// CPU).
func isTimeout(err error) bool {
	if ne, ok := err.(net.Error); ok {
		return ne.Timeout()
	}
	return errors.Is(err, os.ErrDeadlineExceeded)
}
