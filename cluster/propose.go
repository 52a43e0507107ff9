package cluster

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
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
	ackCond *sync.Cond // waiters wait for done to pass their ticket

	// guarded by mu
	pend     []byte // records since the last cut, length-prefixed
	pendN    int
	pendIDs  []unitID
	pendGone []unitID // clients to forget
	pendNow  int64
	cutSeq   uint64 // last sequence handed to Raft
	inflight int
	epoch    uint64 // the epoch records are executed under; 0: not leader
	stopped  bool

	seq       atomic.Uint64 // last sequence appended (executed)
	done      atomic.Uint64 // last sequence committed and applied
	doneIndex atomic.Uint64 // Raft index of the entry holding done
	// lost are the ranges (from, to] of sequences executed under an epoch
	// that ended before they were committed (guarded by mu). Sequences are
	// never reused, so done passing them says nothing about them.
	lost    []seqRange
	lostMax atomic.Uint64 // the highest lost sequence: above it, done decides alone

	futures chan proposal
}

type seqRange struct{ from, to uint64 }

// maxLost bounds the lost ranges kept: a waiter gives up after its
// timeout, long before 64 leadership changes.
const maxLost = 64

type proposal struct {
	f       raft.ApplyFuture
	lastSeq uint64
	epoch   uint64
}

// maxInflight entries may be proposed and not yet committed: the leader
// keeps the log pipeline busy while one entry is being written and
// replicated.
const maxInflight = 4

// maxEntry caps an entry's records: a cut stops adding units past it.
// A single unit bigger than that still goes out alone (its effects are
// already applied on the leader), up to Raft's own limits.
const maxEntry = 16 << 20

func newProposer(n *Node) *proposer {
	p := &proposer{n: n, futures: make(chan proposal, maxInflight)}
	p.cutCond = sync.NewCond(&p.mu)
	p.ackCond = sync.NewCond(&p.mu)
	return p
}

// Append implements door.Log: the record of a unit just executed. The
// engine lock is held, so records arrive in execution order.
func (p *proposer) Append(rec []byte) {
	p.mu.Lock()
	p.pend = appendEntryRecord(p.pend, rec)
	p.pendN++
	p.pendNow = p.n.door.E.ClockMs
	p.seq.Add(1)
	p.mu.Unlock()
	p.cutCond.Signal()
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
// executed so far, its own or another's it may have read.
func (p *proposer) Ticket() uint64 { return p.seq.Load() }

// Wait blocks until every record up to ticket is committed, or returns
// ErrUnknown when they were lost with the leadership, or errTimeout.
func (p *proposer) Wait(ticket uint64, timeout time.Duration) error {
	if ticket <= p.done.Load() && ticket > p.lostMax.Load() {
		return nil
	}
	var timer *time.Timer
	expired := false
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		for _, r := range p.lost {
			if ticket > r.from && ticket <= r.to {
				return ErrUnknown
			}
		}
		if ticket <= p.done.Load() {
			return nil
		}
		if expired || p.stopped {
			return ErrUnknown
		}
		if timer == nil && timeout > 0 {
			timer = time.AfterFunc(timeout, func() {
				p.mu.Lock()
				expired = true
				p.mu.Unlock()
				p.ackCond.Broadcast()
			})
			defer timer.Stop()
		}
		p.ackCond.Wait()
	}
}

// begin starts an epoch of leadership: records appended from now on are
// this epoch's. Called with the engine lock held, before the first unit.
func (p *proposer) begin(epoch uint64) {
	p.mu.Lock()
	p.epoch = epoch
	p.pend, p.pendN, p.pendIDs = p.pend[:0], 0, p.pendIDs[:0]
	p.cutSeq = p.seq.Load()
	p.mu.Unlock()
}

// abort ends the epoch: every record executed and not yet committed is
// lost to its clients (ErrUnknown); the pending ones are dropped. Called
// with the engine lock held, so no unit executes meanwhile.
func (p *proposer) abort() {
	p.mu.Lock()
	p.epoch = 0
	p.pend, p.pendN, p.pendIDs = p.pend[:0], 0, p.pendIDs[:0]
	if seq, done := p.seq.Load(), p.done.Load(); seq > done {
		if len(p.lost) == maxLost {
			p.lost = append(p.lost[:0], p.lost[1:]...)
		}
		p.lost = append(p.lost, seqRange{done, seq})
		p.lostMax.Store(seq)
	}
	p.cutSeq = p.seq.Load()
	p.mu.Unlock()
	p.ackCond.Broadcast()
}

// run is the submitter: it cuts and proposes entries in execution order.
func (p *proposer) run() {
	go p.complete()
	var buf []byte
	for {
		p.mu.Lock()
		for !p.stopped && (p.pendN == 0 || p.inflight >= maxInflight || p.epoch == 0) {
			p.cutCond.Wait()
		}
		if p.stopped {
			p.mu.Unlock()
			close(p.futures)
			return
		}
		h := entryHeader{epoch: p.epoch, firstSeq: p.cutSeq + 1, now: p.pendNow, ids: p.pendIDs, forget: p.pendGone, nrec: p.pendN}
		buf = appendEntryHeader(buf[:0], &h)
		buf = append(buf, p.pend...)
		last := p.cutSeq + uint64(p.pendN)
		p.cutSeq = last
		p.pend, p.pendN, p.pendIDs, p.pendGone = p.pend[:0], 0, p.pendIDs[:0], p.pendGone[:0]
		if cap(p.pend) > maxEntry {
			p.pend = nil
		}
		p.inflight++
		epoch := p.epoch
		p.mu.Unlock()
		data := make([]byte, len(buf))
		copy(data, buf)
		f := p.n.raft.Apply(data, p.n.cfg.applyTimeout())
		p.futures <- proposal{f: f, lastSeq: last, epoch: epoch}
		if cap(buf) > maxEntry {
			buf = nil
		}
	}
}

// complete waits for the proposals in order and acknowledges them.
func (p *proposer) complete() {
	for pr := range p.futures {
		err := pr.f.Error()
		p.mu.Lock()
		p.inflight--
		if err == nil {
			if pr.lastSeq > p.done.Load() {
				p.done.Store(pr.lastSeq)
				p.doneIndex.Store(pr.f.Index())
			}
		}
		p.mu.Unlock()
		p.cutCond.Signal()
		p.ackCond.Broadcast()
		if err != nil {
			p.n.leadershipLost(pr.epoch, err)
		}
	}
}

// stop ends the submitter; waiters get ErrUnknown.
func (p *proposer) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	p.cutCond.Broadcast()
	p.ackCond.Broadcast()
}
