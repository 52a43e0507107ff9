package cluster

import (
	"container/heap"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"limitdb/engine"
)

// ErrUnknown answers a unit whose batch was executed but not committed
// when this node stopped being the leader: the entry may still be
// committed by the next leader, or lost. The engine has been rebuilt from
// the log, which decides.
var ErrUnknown = errors.New("UNCERTAIN the outcome of this command is unknown: leadership was lost before it was committed (it may or may not have been applied)")

// proposer is the leader's half of the log: the door hands it each unit's
// record in execution order (Append, under the engine lock); one
// goroutine cuts everything appended since the previous cut into one
// entry and proposes it (group commit: one log write and one replication
// round for every unit executed while the previous entries were in
// flight); clients wait for the sequence number of the last record
// executed before their replies (Ticket, Wait).
type proposer struct {
	n *Node

	mu      sync.Mutex
	cutCond *sync.Cond // the submitter waits for records or a free slot
	// waiters, ordered by ticket (a heap): a completion wakes exactly the
	// ones it acknowledges. A sync.Cond broadcast woke all 50 clients of
	// a P=1 run on every entry, and their lock traffic was 11% of the CPU.
	waiters waitHeap

	// stage holds the records of the running hold of the engine lock,
	// length-prefixed, until Flush (guarded by the engine lock)
	stage  []byte
	stageN int

	// guarded by mu
	pend     []byte // records since the last cut, length-prefixed
	pendN    int
	pendIDs  []unitID
	pendGone []unitID // clients to forget
	pendNow  int64
	cutSeq   uint64 // last sequence handed to Raft
	inflight int
	// idle: the submitter waits for a first record or an epoch, so
	// Append wakes it (a Signal per record otherwise cost 1 % of the CPU
	// at SET P=16); applied and stop wake it for the other conditions
	idle    bool
	epoch   uint64 // the epoch records are executed under; 0: not leader
	stopped bool

	seq       atomic.Uint64 // last sequence executed in an ended hold of the engine lock (Flush)
	done      atomic.Uint64 // last sequence committed and applied
	doneIndex atomic.Uint64 // Raft index of the entry holding done
	// lost are the ranges (from, to] of sequences executed under an epoch
	// that ended before they were committed (guarded by mu). Sequences are
	// never reused, so done passing them says nothing about them.
	lost    []seqRange
	lostMax atomic.Uint64 // the highest lost sequence: above it, done decides alone

	stopCh   chan struct{} // closed by stop
	progress atomic.Int64  // unix ns of the last proposal or acknowledgement

	// settledHook, when set (Node.OnSettled), is called once each time
	// outcomes become known — done advanced, an epoch's records were
	// lost, the proposer stopped — after mu is released: the server's
	// event loops wake up then and write the replies that waited for
	// them (one call per advance, not per waiting client)
	settledHook atomic.Pointer[func()]
}

type seqRange struct{ from, to uint64 }

// maxLost bounds the lost ranges kept: a waiter gives up after its
// timeout, long before 64 leadership changes.
const maxLost = 64

// inflightLimit is how many entries may be proposed and not yet
// committed. A cluster of one takes one: while an entry is being stored,
// everything executed meanwhile gathers into the next, which makes
// entries as big as they can be. With the gathering below, 1 and 2
// measured the same, with the raft-boltdb log (INCR at P=1: 0.53 and 0.51
// of Redis's throughput) and with raft-wal (CPU per command, 2 against 1:
// 0.97 at SET P=1, 1.01 at INCR P=1, 0.98 at P=16). With peers, an entry
// also waits for a replication round trip, and keeping 4 in flight keeps
// the pipeline to the followers busy (RL.ALLOW at P=16 on three nodes:
// 0.67 of Redis's token-bucket script with 1, 0.76 with 4).
func (p *proposer) inflightLimit() int {
	if p.n != nil && p.n.peers.Load() {
		return 4
	}
	return 1
}

// gatherRounds bounds the yields before a cut (see run).
const gatherRounds = 64

// maxEntry caps an entry's records: a cut stops adding units past it.
// A single unit bigger than that still goes out alone (its effects are
// already applied on the leader), up to Raft's own limits.
const maxEntry = 16 << 20

func newProposer(n *Node) *proposer {
	p := &proposer{n: n, stopCh: make(chan struct{})}
	p.cutCond = sync.NewCond(&p.mu)
	return p
}

// Record implements door.Log: the effects of a unit just executed (the
// engine lock is held, so records arrive in execution order). Its record
// is encoded once, into the records of the running hold of the engine
// lock, which Flush hands to the cut; Ticket counts it at once.
func (p *proposer) Record(f *engine.Effects, clockMs int64) {
	p.stage = appendEntryEffects(p.stage, f, clockMs)
	p.stageN++
}

// Flush implements door.Log: the hold of the engine lock that recorded
// ends (engine lock held); its records join the entry being gathered and
// are numbered (seq) together. Per record, p.mu (which the gathering
// polls) and the atomic add on seq (a cache line the committing
// goroutines share) cost 3 % of the CPU at SET P=16.
func (p *proposer) Flush() {
	if p.stageN == 0 {
		return
	}
	p.mu.Lock()
	p.pend = append(p.pend, p.stage...)
	p.pendN += p.stageN
	p.pendNow = p.n.door.E.ClockMs
	p.seq.Add(uint64(p.stageN))
	wake := p.idle
	p.mu.Unlock()
	p.stage, p.stageN = p.stage[:0], 0
	if cap(p.stage) > maxEntry {
		p.stage = nil
	}
	if wake {
		p.cutCond.Signal()
	}
}

// dropStage numbers and drops the records of the running hold (engine
// lock held and mu): the epoch they were executed under ends.
func (p *proposer) dropStage() {
	p.seq.Add(uint64(p.stageN))
	p.stage, p.stageN = p.stage[:0], 0
}

// addForwarded notes that the unit just executed came from a follower's
// client, so that the entry carries its ID (engine lock held).
func (p *proposer) addForwarded(id unitID) {
	p.mu.Lock()
	p.pendIDs = append(p.pendIDs, id)
	p.mu.Unlock()
}

// addForget notes clients that went away (engine lock held); the next
// entry carries them, so every node's table forgets them. It wakes the
// submitter only with records pending: the IDs ride the next entry.
func (p *proposer) addForget(id unitID) {
	p.mu.Lock()
	p.pendGone = append(p.pendGone, id)
	p.mu.Unlock()
}

// Ticket is the sequence a client's replies wait for: the last record
// executed so far, its own or another's it may have read (engine lock
// held: the running hold's records count, numbered when it ends).
func (p *proposer) Ticket() uint64 { return p.seq.Load() + uint64(p.stageN) }

// Wait blocks until every record up to ticket is committed, or returns
// ErrUnknown when they were lost with the leadership, or when timeout
// passes first.
func (p *proposer) Wait(ticket uint64, timeout time.Duration) error {
	if ticket <= p.done.Load() && ticket > p.lostMax.Load() {
		return nil
	}
	p.mu.Lock()
	if err, ok := p.settled(ticket); ok {
		p.mu.Unlock()
		return err
	}
	w := waiterPool.Get().(*waiter)
	w.ticket = ticket
	heap.Push(&p.waiters, w)
	p.mu.Unlock()
	// no timer per wait (one per command cost measurable CPU at P=1): every
	// proposal is acknowledged by the state machine, or its failure ends
	// the epoch (abort), which answers the waiter; callers on the command
	// path pass 0, tests bound their waits
	var err error
	if timeout <= 0 {
		err = <-w.ch
	} else {
		t := time.NewTimer(timeout)
		select {
		case err = <-w.ch:
		case <-t.C:
			err = p.giveUp(w)
		case <-p.stopCh:
			err = p.giveUp(w)
		}
		t.Stop()
	}
	waiterPool.Put(w)
	return err
}

// poll is Wait without waiting: the ticket's outcome, and whether it is
// known yet. An unsettled ticket above every lost one costs two atomic
// loads (the event loops poll their parked clients on every settle).
func (p *proposer) poll(ticket uint64) (error, bool) {
	if ticket > p.lostMax.Load() {
		if ticket <= p.done.Load() {
			return nil, true
		}
		select {
		case <-p.stopCh:
		default:
			return nil, false
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.settled(ticket)
}

// notifySettled calls the settled hook (mu not held).
func (p *proposer) notifySettled() {
	if f := p.settledHook.Load(); f != nil {
		(*f)()
	}
}

// giveUp takes w out of the heap (ErrUnknown), unless it was answered
// meanwhile.
func (p *proposer) giveUp(w *waiter) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.index >= 0 {
		heap.Remove(&p.waiters, w.index)
		return ErrUnknown
	}
	return <-w.ch
}

// settled says whether ticket's outcome is known (mu held).
func (p *proposer) settled(ticket uint64) (error, bool) {
	for _, r := range p.lost {
		if ticket > r.from && ticket <= r.to {
			return ErrUnknown, true
		}
	}
	if ticket <= p.done.Load() {
		return nil, true
	}
	if p.stopped {
		return ErrUnknown, true
	}
	return nil, false
}

// wake answers every waiter whose outcome is now known (mu held).
func (p *proposer) wake() {
	for len(p.waiters) > 0 {
		w := p.waiters[0]
		err, ok := p.settled(w.ticket)
		if !ok {
			// the lowest ticket is not settled: neither is any higher one,
			// unless a lost range covers it
			if len(p.lost) == 0 || w.ticket > p.lostMax.Load() {
				return
			}
			p.wakeLost()
			return
		}
		heap.Pop(&p.waiters)
		w.ch <- err
	}
}

// wakeLost answers the waiters inside lost ranges (mu held; rare).
func (p *proposer) wakeLost() {
	keep := p.waiters[:0]
	for _, w := range p.waiters {
		if err, ok := p.settled(w.ticket); ok {
			w.index = -1
			w.ch <- err
			continue
		}
		keep = append(keep, w)
	}
	for i, w := range keep {
		w.index = i
	}
	p.waiters = keep
	heap.Init(&p.waiters)
}

// waiter is one Wait in progress.
type waiter struct {
	ticket uint64
	index  int // in the heap; -1 once answered
	ch     chan error
}

var waiterPool = sync.Pool{New: func() any { return &waiter{ch: make(chan error, 1)} }}

// waitHeap orders waiters by ticket.
type waitHeap []*waiter

func (h waitHeap) Len() int           { return len(h) }
func (h waitHeap) Less(i, j int) bool { return h[i].ticket < h[j].ticket }
func (h waitHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *waitHeap) Push(x any) {
	w := x.(*waiter)
	w.index = len(*h)
	*h = append(*h, w)
}
func (h *waitHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	w.index = -1
	return w
}

// begin starts an epoch of leadership: records appended from now on are
// this epoch's. Called with the engine lock held, before the first unit.
func (p *proposer) begin(epoch uint64) {
	p.mu.Lock()
	p.epoch = epoch
	p.pend, p.pendN, p.pendIDs = p.pend[:0], 0, p.pendIDs[:0]
	p.dropStage()
	p.cutSeq = p.seq.Load()
	p.inflight = 0
	p.mu.Unlock()
}

// abort ends the epoch: every record executed and not yet committed is
// lost to its clients (ErrUnknown); the pending ones are dropped. Called
// with the engine lock held, so no unit executes meanwhile.
func (p *proposer) abort() {
	p.mu.Lock()
	p.epoch = 0
	p.inflight = 0
	p.pend, p.pendN, p.pendIDs = p.pend[:0], 0, p.pendIDs[:0]
	p.dropStage()
	if seq, done := p.seq.Load(), p.done.Load(); seq > done {
		if len(p.lost) == maxLost {
			p.lost = append(p.lost[:0], p.lost[1:]...)
		}
		p.lost = append(p.lost, seqRange{done, seq})
		p.lostMax.Store(seq)
	}
	p.cutSeq = p.seq.Load()
	p.wake()
	p.mu.Unlock()
	p.notifySettled()
}

// run is the submitter: it cuts and proposes entries in execution order.
// Their commits are acknowledged by the state machine (applied) as it
// counts them, in Raft's FSM goroutine: waiting on each Apply future in a
// goroutine of its own cost a wake-up per entry on the critical path. A
// proposal that fails without committing ends the leadership, which the
// monitor sees (Raft's state, or no progress for applyTimeout) and turns
// into abort.
func (p *proposer) run() {
	var hdr []byte
	for {
		p.mu.Lock()
		for !p.stopped && (p.pendN == 0 || p.inflight >= p.inflightLimit() || p.epoch == 0) {
			p.idle = p.pendN == 0 || p.epoch == 0
			p.cutCond.Wait()
			p.idle = false
		}
		if p.stopped {
			p.mu.Unlock()
			return
		}
		// Let the clients the last commit woke run first: each runs a
		// batch and appends its records. While yielding keeps adding
		// records the cut waits (at most gatherRounds yields, no timer);
		// once a round adds none, everything ready is in. Cutting at once
		// made entries of 2.7 records at P=1 (a cluster of one, 50
		// clients): 8,700 entries and 23,500 commands a second, 30 µs of
		// CPU per command, against 10 records, 45,000 and 17 µs after
		// a hop of a goroutine per entry had delayed the cut.
		for i := 0; i < gatherRounds && p.epoch != 0; i++ {
			n := p.pendN
			p.mu.Unlock()
			runtime.Gosched()
			p.mu.Lock()
			if p.pendN == n {
				break
			}
		}
		if p.pendN == 0 || p.epoch == 0 {
			p.mu.Unlock()
			continue
		}
		h := entryHeader{epoch: p.epoch, firstSeq: p.cutSeq + 1, now: p.pendNow, ids: p.pendIDs, forget: p.pendGone, nrec: p.pendN}
		hdr = appendEntryHeader(hdr[:0], &h)
		// the entry is Raft's from here on (the log cache keeps it): a
		// slice of its own, filled with one copy of the records. Handing
		// Raft the gathering buffer itself (the header in room left before
		// the records) and gathering the next entry in a new one cost more
		// than the copy: the new buffers grew while filling (in a SET P=16
		// profile, growing took 4 % of the CPU; the copy takes 1 %)
		data := make([]byte, len(hdr)+len(p.pend))
		copy(data[copy(data, hdr):], p.pend)
		p.pend = p.pend[:0]
		if cap(p.pend) > maxEntry {
			p.pend = nil
		}
		p.cutSeq += uint64(p.pendN)
		p.pendN, p.pendIDs, p.pendGone = 0, p.pendIDs[:0], p.pendGone[:0]
		p.inflight++
		p.progress.Store(time.Now().UnixNano())
		p.mu.Unlock()
		// no enqueue timeout: Raft's apply queue holds MaxAppendEntries
		// (BatchApplyCh) and at most inflightLimit entries are queued, so
		// this never waits; a timeout cost a timer per entry
		p.n.raft.Apply(data, 0)
	}
}

// applied acknowledges the records up to lastSeq, committed in the entry
// at index (called by the state machine for this epoch's entries).
func (p *proposer) applied(lastSeq, index uint64) {
	p.mu.Lock()
	if p.inflight > 0 {
		p.inflight--
	}
	if lastSeq > p.done.Load() {
		p.done.Store(lastSeq)
		p.doneIndex.Store(index)
	}
	p.progress.Store(time.Now().UnixNano())
	p.wake()
	p.mu.Unlock()
	p.cutCond.Signal()
	p.notifySettled()
}

// stalled reports whether an entry has been in flight without progress
// for longer than d (the monitor then ends the epoch).
func (p *proposer) stalled(d time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inflight > 0 && time.Since(time.Unix(0, p.progress.Load())) > d
}

// stop ends the submitter; waiters get ErrUnknown.
func (p *proposer) stop() {
	p.mu.Lock()
	if !p.stopped {
		close(p.stopCh)
	}
	p.stopped = true
	p.wake()
	p.mu.Unlock()
	p.cutCond.Broadcast()
	p.notifySettled()
}
