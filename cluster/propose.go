package cluster

import (
	"container/heap"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"limitdb/engine"
)

// ErrUnknown answers a unit whose batch was executed but not committed
// when this node stopped being the leader: the entry may still be
// committed by the next leader, or lost. The engine has been rebuilt from
// the log, which decides.
var ErrUnknown = errors.New("UNCERTAIN the outcome of this command is unknown: leadership was lost before it was committed (it may or may not have been applied)")

// proposer is the leader's half of the log: the door hands it each unit's
// record in execution order (Record, under the engine lock); everything
// appended since the previous cut is cut into one entry and proposed
// (group commit: one log write and one replication round for every unit
// executed while the previous entries were in flight) — by the submitter
// goroutine (run), or on a cluster of one by the event loop at the end of
// its turn and by the acknowledgement of the entry in flight (turnEnd,
// ack); clients wait for the sequence number of the last record executed
// before their replies (Ticket, Wait).
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
	// cuts: the last sequence of each entry proposed and not yet
	// acknowledged, oldest first (how many are in flight). An
	// acknowledgement may cover several (ack, from the log store).
	cuts []uint64
	// flying: the entries cut under this epoch that Raft's state machine
	// has not applied yet, oldest first, with their sizes (guarded by mu;
	// the log's memory, logMem.inflight)
	flying []flyingEntry
	mem    *logMem
	// idle: the submitter waits for a first record or an epoch, so
	// Flush wakes it (a Signal per record otherwise cost 1 % of the CPU
	// at SET P=16); ack and stop wake it for the other conditions.
	// asleep: it waits, whatever for (a cluster of one, see Flush)
	idle, asleep bool
	// turn: an event loop's turn is running (TurnStart): it cuts what
	// its turn executed when the turn ends (TurnEnd), so Flush does not
	// wake the submitter for it
	turn    atomic.Bool
	epoch   uint64 // the epoch records are executed under; 0: not leader
	stopped bool

	seq       atomic.Uint64 // last sequence executed in an ended hold of the engine lock (Flush)
	done      atomic.Uint64 // last sequence committed
	doneIndex atomic.Uint64 // Raft index of the entry holding done
	// counted is the last sequence Raft's state machine has counted: it
	// trails done when the log store acknowledged entries (stored); a
	// snapshot waits for it
	counted atomic.Uint64
	// lost are the ranges (from, to] of sequences executed under an epoch
	// that ended before they were committed (guarded by mu). Sequences are
	// never reused, so done passing them says nothing about them.
	lost    []seqRange
	lostMax atomic.Uint64 // the highest lost sequence: above it, done decides alone

	hdr      []byte        // the entry header being encoded (cut; mu)
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

// flyingEntry is one entry in flight: its last sequence and its size.
type flyingEntry struct {
	last uint64
	size int64
}

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
	p := &proposer{n: n, stopCh: make(chan struct{}), mem: &logMem{}}
	if n != nil {
		p.mem = &n.mem
	}
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
	p.notePend()
	p.pendN += p.stageN
	p.pendNow = p.n.door.E.ClockMs
	p.seq.Add(uint64(p.stageN))
	wake := p.idle
	if p.solo() {
		// a cluster of one: a loop's turn cuts at its end, an
		// acknowledgement cuts what waits (ack), so the submitter is
		// woken only when neither will come: no loop turn running and a
		// slot free
		wake = p.asleep && !p.turn.Load() && len(p.cuts) == 0
	}
	p.mu.Unlock()
	p.stage, p.stageN = p.stage[:0], 0
	if cap(p.stage) > maxEntry {
		p.stage = nil
	}
	if c := int64(cap(p.stage)); c != p.mem.stage.Load() {
		p.mem.stage.Store(c)
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
	p.counted.Store(p.cutSeq)
	p.cuts = p.cuts[:0]
	p.dropFlying()
	p.mu.Unlock()
}

// abort ends the epoch: every record executed and not yet committed is
// lost to its clients (ErrUnknown); the pending ones are dropped. Called
// with the engine lock held, so no unit executes meanwhile.
func (p *proposer) abort() {
	p.mu.Lock()
	p.epoch = 0
	p.cuts = p.cuts[:0]
	p.dropFlying()
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

// run is the submitter: it cuts and proposes entries in execution order
// (cut) when no one else does: with peers always; on a cluster of one
// for the records of goroutine-served clients executed while nothing was
// in flight (the event loop cuts its turn's records at the turn's end,
// an acknowledgement cuts what waited for it: TurnEnd, ack). Commits are
// acknowledged by the state machine (applied) as it counts them, in
// Raft's FSM goroutine, or on a cluster of one by the log store as it
// writes them (stored): waiting on each Apply future in a goroutine of
// its own cost a wake-up per entry on the critical path. A proposal that
// fails without committing ends the leadership, which the monitor sees
// (Raft's state, or no progress for applyTimeout) and turns into abort.
func (p *proposer) run() {
	for {
		p.mu.Lock()
		for !p.stopped && (p.pendN == 0 || len(p.cuts) >= p.inflightLimit() || p.epoch == 0) {
			p.idle = p.pendN == 0 || p.epoch == 0
			p.asleep = true
			p.cutCond.Wait()
			p.idle, p.asleep = false, false
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
		p.cut()
		p.mu.Unlock()
	}
}

// cut proposes everything appended since the last cut as one entry
// when a slot is free (mu held); it reports whether it did. Raft's Apply is called under mu, so that the
// entries reach the log in the order they were cut whoever cuts them
// (the submitter, an event loop's TurnEnd, an acknowledgement). It does
// not wait there: Raft's apply queue holds MaxAppendEntries (BatchApplyCh)
// and at most inflightLimit entries are queued; and no enqueue timeout (a
// timer per entry).
func (p *proposer) cut() bool {
	if p.pendN == 0 || p.epoch == 0 || p.stopped || len(p.cuts) >= p.inflightLimit() {
		return false
	}
	h := entryHeader{epoch: p.epoch, firstSeq: p.cutSeq + 1, now: p.pendNow, ids: p.pendIDs, forget: p.pendGone, nrec: p.pendN}
	p.hdr = appendEntryHeader(p.hdr[:0], &h)
	// the entry is Raft's from here on (the log cache keeps it): a
	// slice of its own, filled with one copy of the records. Handing
	// Raft the gathering buffer itself (the header in room left before
	// the records) and gathering the next entry in a new one cost more
	// than the copy: the new buffers grew while filling (in a SET P=16
	// profile, growing took 4 % of the CPU; the copy takes 1 %)
	data := make([]byte, len(p.hdr)+len(p.pend))
	copy(data[copy(data, p.hdr):], p.pend)
	p.pend = p.pend[:0]
	if cap(p.pend) > maxEntry {
		p.pend = nil
		p.notePend()
	}
	p.cutSeq += uint64(p.pendN)
	p.pendN, p.pendIDs, p.pendGone = 0, p.pendIDs[:0], p.pendGone[:0]
	p.cuts = append(p.cuts, p.cutSeq)
	p.flying = append(p.flying, flyingEntry{p.cutSeq, int64(len(data))})
	p.mem.inflight.Add(int64(len(data)))
	p.progress.Store(time.Now().UnixNano())
	p.n.raft.Apply(data, 0)
	return true
}

// solo reports whether this node has no peers in its configuration (a
// cluster of one): then event loops and acknowledgements cut entries
// themselves (see run). With peers the submitter alone cuts, as before
// (its gathering and 4 entries in flight measured for 3 nodes).
func (p *proposer) solo() bool { return p.n != nil && !p.n.peers.Load() }

// turnStart and turnEnd bracket an event loop's turn (Node.TurnStart).
func (p *proposer) turnStart() {
	if p.solo() {
		p.turn.Store(true)
	}
}

// turnEnd cuts what the turn executed when a slot is free; else the
// acknowledgement of the entry in flight cuts it (ack). The loop's turn
// is the group of the group commit: every connection that was ready ran
// its batch, so no yielding to gather more (the submitter's
// runtime.Gosched rounds) and no wake-up of the submitter.
func (p *proposer) turnEnd() bool {
	return p.turn.Swap(false) && p.cutNow()
}

// cutNow cuts the records appended so far when a slot is free (else the
// acknowledgement of the entry in flight does), and ends the running
// loop turn's hold on them: a snapshot's pause and Close wait for every
// executed record, and a loop that must wait for the engine lock
// mid-turn (a script runs) must not keep its records meanwhile.
func (p *proposer) cutNow() (cut bool) {
	p.turn.Store(false)
	p.mu.Lock()
	cut = p.cut()
	p.mu.Unlock()
	return cut
}

// applied notes that Raft's state machine counted the records up to
// lastSeq, committed in the entry at index (this epoch's entries, in log
// order), and acknowledges them unless the log store did (stored).
func (p *proposer) applied(firstSeq, lastSeq, index uint64) {
	p.counted.Store(lastSeq)
	p.mu.Lock()
	i := 0
	for i < len(p.flying) && p.flying[i].last <= lastSeq {
		p.mem.inflight.Add(-p.flying[i].size)
		i++
	}
	p.flying = append(p.flying[:0], p.flying[i:]...)
	p.mu.Unlock()
	p.ack(firstSeq, lastSeq, index)
}

// notePend updates the log's memory with pend's capacity (mu held).
func (p *proposer) notePend() {
	if c := int64(cap(p.pend)); c != p.mem.pend.Load() {
		p.mem.pend.Store(c)
	}
}

// dropFlying forgets the entries in flight when an epoch begins or ends
// (mu held): Raft applies or drops them, and the state machine counts
// no other epoch's entries as this leader's.
func (p *proposer) dropFlying() {
	for _, f := range p.flying {
		p.mem.inflight.Add(-f.size)
	}
	p.flying = p.flying[:0]
}

// ack settles the records up to lastSeq, committed in the entry at
// index, unless an earlier call did: their entries leave the in-flight
// count, their waiters are answered, and the next entry may be cut — on
// a cluster of one here and now, whatever waited for the slot (a loop
// turn's records that found it taken, goroutines' records), so that the
// log is written again while the loop sends the replies; with peers the
// submitter is woken to gather and cut.
func (p *proposer) ack(firstSeq, lastSeq, index uint64) {
	p.mu.Lock()
	if lastSeq <= p.done.Load() {
		p.mu.Unlock()
		return
	}
	if len(p.cuts) > 0 && p.cuts[0] < firstSeq {
		// an earlier entry of this epoch is not in the log: Raft refused
		// it (ErrLeadershipTransferInProgress refuses without ending the
		// leadership) and no one waits on Apply's future (run says why).
		// Settling past it would tell its clients their writes committed;
		// the epoch ends instead (its clients get ErrUnknown), and every
		// later ack of it stops here, the gap still first in cuts
		epoch := p.epoch
		p.mu.Unlock()
		if p.n != nil {
			go p.n.leadershipLost(epoch, errRefused)
		}
		return
	}
	i := 0
	for i < len(p.cuts) && p.cuts[i] <= lastSeq {
		i++
	}
	p.cuts = append(p.cuts[:0], p.cuts[i:]...)
	p.done.Store(lastSeq)
	p.doneIndex.Store(index)
	p.progress.Store(time.Now().UnixNano())
	p.wake()
	solo := p.solo()
	if solo {
		p.cut()
	}
	p.mu.Unlock()
	if !solo {
		p.cutCond.Signal()
	}
	p.notifySettled()
}

// stored is the log store's report of a batch Raft has just written (in
// Raft's leader loop on the leader; the write succeeded). When this node
// is the only voter of the newest configuration, an entry of this epoch
// is committed once it is in the log — the majority is this node, and
// Raft's commitment advances right after the write (dispatchLogs) — so
// it is acknowledged here rather than when Raft's state machine
// goroutine reaches it: two goroutine hand-offs fewer per entry (leader
// loop → FSM goroutine → waiters). The configuration is exact here: Raft
// makes a configuration the newest (appendConfigurationEntry, in this
// same goroutine) before storing its entry, so from the batch that holds
// a promotion to voter on, nothing is acknowledged here (the state
// machine acknowledges, as with peers), and a non-voter (a RAFT JOIN in
// progress) does not count. The state machine still counts every entry
// (applied).
func (p *proposer) stored(logs []*raft.Log) {
	if p.n == nil || p.n.serving.Load() == 0 {
		return // a follower, or a leader not yet serving
	}
	p.mu.Lock()
	epoch := p.epoch
	p.mu.Unlock()
	if epoch == 0 {
		return
	}
	var first, last, index uint64
	for _, l := range logs {
		if l.Type == raft.LogConfiguration {
			return
		}
		if l.Type != raft.LogCommand {
			continue
		}
		h, _, err := decodeEntryHeader(l.Data)
		if err != nil || h.nrec == 0 {
			continue
		}
		if h.epoch == epoch {
			if last != 0 && h.firstSeq != last+1 {
				first = last + 2 // a gap inside the batch: ack refuses it
			} else if first == 0 {
				first = h.firstSeq
			}
			last, index = h.firstSeq+uint64(h.nrec)-1, l.Index
		}
	}
	if last == 0 || !p.n.soleVoter() {
		return
	}
	p.ack(first, last, index)
}

// stalled reports whether an entry has been in flight without progress
// for longer than d (the monitor then ends the epoch).
func (p *proposer) stalled(d time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.cuts) > 0 && time.Since(time.Unix(0, p.progress.Load())) > d
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

// ackingStore is the log store Raft writes through: every batch written
// is reported to the proposer (stored), which acknowledges a sole
// voter's entries there. It embeds the concrete store, so that Raft still
// sees its optional methods: hidden behind the raft.LogStore interface,
// IsMonotonic was lost, and a follower that installed a snapshot kept its
// old entries and could store nothing after them (raft-wal: non-monotonic
// log entries; TestClusterSnapshotInstall).
type ackingStore struct {
	*logStore
	p *proposer
}

var _ raft.MonotonicLogStore = ackingStore{}

func (s ackingStore) StoreLogs(logs []*raft.Log) error {
	if err := s.logStore.StoreLogs(logs); err != nil {
		return err
	}
	s.p.stored(logs)
	return nil
}

func (s ackingStore) StoreLog(l *raft.Log) error {
	return s.StoreLogs([]*raft.Log{l})
}
