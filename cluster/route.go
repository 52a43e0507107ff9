package cluster

import (
	"encoding/binary"
	"errors"
	"sync"
	"time"
)

// What the server asks of its node, per unit and per batch of replies.

// Serving reports whether this node executes units (it is the leader and
// has applied everything before its term). The engine lock is held, so
// the answer holds until it is released.
func (n *Node) Serving() bool { return n.serving.Load() != 0 }

// Epoch names the leadership this node serves under: no other stint of
// leadership, on this node or another, has the same; 0 while it does
// not serve. The engine lock is held. While it stays the same, every
// write goes through this node's engine (the WATCH rule: a WATCH belongs
// to the epoch it was taken in, and EXEC under another aborts).
func (n *Node) Epoch() uint64 { return n.serving.Load() }

// Ticket is what a client's replies wait for (engine lock held): the last
// record executed on this node so far.
func (n *Node) Ticket() uint64 { return n.prop.Ticket() }

// Wait blocks until ticket is committed; ErrUnknown when its epoch ended
// first (the replies must not be sent: the engine was rebuilt).
func (n *Node) Wait(ticket uint64) error {
	err := n.prop.Wait(ticket, 0)
	if err != nil {
		n.stats.Unknown.Add(1)
	}
	return err
}

// Settled is Wait without waiting: ticket's outcome (nil: committed;
// ErrUnknown: lost with its epoch) and whether it is known yet.
func (n *Node) Settled(ticket uint64) (error, bool) {
	err, ok := n.prop.poll(ticket)
	if err != nil {
		n.stats.Unknown.Add(1)
	}
	return err, ok
}

// TurnStart and TurnEnd bracket a turn of a server's event loop: the
// records its batches executed are proposed as one entry when the turn
// ends (on a cluster of one; with peers the submitter gathers them). A
// loop that has to wait for the engine lock mid-turn calls TurnEnd
// first. (proposer.turnEnd)
func (n *Node) TurnStart() { n.prop.turnStart() }

// TurnEnd: see TurnStart. True when it proposed an entry.
func (n *Node) TurnEnd() bool { return n.prop.turnEnd() }

// OnSettled registers f, called (in the goroutine that learnt it) each
// time outcomes of tickets become known: once per advance of the
// committed sequence, and when an epoch's records are lost or the node
// stops. f must not block; the server's event loops use it to wake up.
func (n *Node) OnSettled(f func()) { n.prop.settledHook.Store(&f) }

// ErrLocal tells the server to execute the unit itself: this node became
// the leader while it was waiting to forward.
var ErrLocal = errors.New("cluster: execute locally")

// Forward runs a unit of this follower's client on the leader and waits
// until this node has applied its effects. While there is no leader it
// retries for LeaderWait, then gives ErrClusterDown. A unit that may have
// reached the leader is never sent twice: its outcome is then ErrUnknown.
// Blocking commands go through ForwardBlocking; both are forwardUnit.
func (n *Node) Forward(u *Unit) ([]byte, error) { return n.forwardUnit(u, nil) }

// DropClient tells the leader that a client of this follower is gone, or
// holds no WATCH any more: its WATCHes there are released, and its row of
// the table of executed units is forgotten (a unit of a client that
// left is never sent again). A drop that finds no connection waits for
// the next one (forwarder.drop).
func (n *Node) DropClient(client uint64) {
	if n.Serving() || n.fwd == nil {
		return
	}
	n.fwd.drop(binary.AppendUvarint(nil, client))
}

// ReadBarrier makes a follower's next reads linearizable: it asks the
// leader for the index every acknowledged write is at (ReadIndex) and
// waits until this node has applied it. It returns the leader's time
// (unix ms) when it answered, which those reads judge deadlines by
// (expiry, limiters): the follower's own clock may be off the leader's by
// up to max-clock-skew-ms, and a read here must not find expired what the
// leader, asked right after, still holds (Door.ReadTime). On the leader it
// returns at once with 0 (its reads wait for their ticket instead; they
// use its own clock). Without a leader it waits up to LeaderWait, then
// ErrClusterDown.
func (n *Node) ReadBarrier() (int64, error) {
	deadline := time.Now().Add(n.cfg.leaderWait())
	for {
		if n.Serving() {
			return 0, nil
		}
		a, err := n.fwd.call(frameRead, nil, n.cfg.leaderWait())
		if err == nil && a.ok {
			n.stats.ReadBarriers.Add(1)
			if !n.waitApplied(a.index, n.cfg.applyTimeout()) {
				return 0, ErrClusterDown
			}
			ms, k := binary.Varint(a.data)
			if k <= 0 {
				ms = 0 // a leader that does not send its time: this node's
			}
			return ms, nil
		}
		if time.Now().After(deadline) {
			n.stats.ClusterDown.Add(1)
			return 0, ErrClusterDown
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-n.closing:
			return 0, ErrClusterDown
		}
	}
}

// WaitServing waits up to LeaderWait for a leader to exist (this node or
// another): a command arriving during an election waits instead of
// failing. It reports whether one exists.
func (n *Node) WaitServing() bool {
	deadline := time.Now().Add(n.cfg.leaderWait())
	for {
		if n.Serving() {
			return true
		}
		if addr, _ := n.raft.LeaderWithID(); addr != "" && n.mux != nil {
			return true
		}
		if time.Now().After(deadline) {
			n.stats.ClusterDown.Add(1)
			return false
		}
		n.stats.LeaderWaits.Add(1)
		select {
		case <-time.After(20 * time.Millisecond):
		case <-n.closing:
			return false
		}
	}
}

// applied tracks the FSM's progress for waiters (waitApplied).
type appliedWaiter struct {
	mu    sync.Mutex
	cond  *sync.Cond
	index uint64
}

func (n *Node) notifyApplied(index uint64) {
	w := &n.appliedW
	w.mu.Lock()
	if index > w.index {
		w.index = index
	}
	w.mu.Unlock()
	w.cond.Broadcast()
}

// appliedIndex is the index of the last entry the FSM applied: what the
// engine holds. Raft's AppliedIndex runs ahead of it: hashicorp/raft
// advances it when it hands a batch to the FSM's goroutine, and a node
// catching up after a restart showed Raft's applied index at the commit
// index (328) while the FSM was at 321 for about a third of INFO polls; a
// DEBUG DIGEST taken then misses those entries.
func (n *Node) appliedIndex() uint64 {
	w := &n.appliedW
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.index
}

// waitApplied waits until the FSM has applied index, at most timeout.
func (n *Node) waitApplied(index uint64, timeout time.Duration) bool {
	w := &n.appliedW
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.index >= index {
		return true
	}
	expired := false
	t := time.AfterFunc(timeout, func() {
		w.mu.Lock()
		expired = true
		w.mu.Unlock()
		w.cond.Broadcast()
	})
	defer t.Stop()
	for w.index < index && !expired {
		w.cond.Wait()
	}
	return w.index >= index
}

// Counters are the slow path's counters, for INFO.
type Counters struct {
	Forwarded, ForwardErrors, ReadBarriers, LeaseChecks, LeaderWaits, ClusterDown, Unknown int64
}

// Counters reads them.
func (n *Node) Counters() Counters {
	s := &n.stats
	return Counters{s.Forwarded.Load(), s.ForwardErrors.Load(), s.ReadBarriers.Load(), s.LeaseChecks.Load(), s.LeaderWaits.Load(), s.ClusterDown.Load(), s.Unknown.Load()}
}
