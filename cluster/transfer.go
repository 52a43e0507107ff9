package cluster

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// Handing leadership over for planned maintenance (RAFT TRANSFER, and a
// leader's Close): the leader stops executing first — admission pauses
// until every unit already executed is committed, so their clients get
// their replies — and only then asks Raft to transfer (TimeoutNow to the
// target, which stands at once instead of after an election timeout).
// Raft refuses proposals while a transfer runs
// (ErrLeadershipTransferInProgress), and the proposer does not look at
// Apply's outcome: an entry refused while the node kept serving would be
// covered by the acknowledgement of a later one, so nothing may be
// executed once the transfer starts.

// frameTransfer asks the leader, over the forwarding link, to hand
// leadership over (body: the target's ID, empty for Raft's pick).
const frameTransfer = 'T'

// transferWait bounds RAFT TRANSFER's tries, after the handover (every
// executed unit committed, at most pauseWait): Raft's transfer, retried
// while it fails (each try is bounded by Raft's election timeout). The
// node serves no client meanwhile, so a target that cannot be reached
// costs that long.
const transferWait = 2 * time.Second

// closeTransferWait bounds the handover of a leader that shuts down;
// past it the node shuts down anyway (its followers then elect a leader
// after their election timeout, as after a crash).
const closeTransferWait = 3 * time.Second

// errSoleVoter answers RAFT TRANSFER on a cluster with a single voter.
var errSoleVoter = errors.New("ERR this node is the only voter of the cluster: there is no other node to hand leadership to")

// errTransferring answers a second RAFT TRANSFER while one runs.
var errTransferring = errors.New("ERR a leadership transfer is already in progress")

// transferLeadership does Transfer (api.go).
func (n *Node) transferLeadership(id string) error {
	_, from := n.raft.LeaderWithID()
	err := n.onLeader(func() error { return n.transfer(id, transferWait, true) }, frameTransfer, appendBytes(nil, []byte(id)))
	if !errors.Is(err, errConnLost) || from == "" {
		return err
	}
	for deadline := time.Now().Add(transferWait); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if addr, lid := n.raft.LeaderWithID(); addr != "" && lid != from && (id == "" || string(lid) == id) {
			return nil
		}
	}
	return err
}

// transfer runs on the leader: it checks the target, stops executing
// (stepAside, rebuild as there) and asks Raft for the transfer until
// another node leads or wait passes. On failure this node stays the
// leader and, the flag cleared, the monitor starts a new epoch: clients
// are served again.
func (n *Node) transfer(id string, wait time.Duration, rebuild bool) error {
	servers, err := n.leaderServers()
	if err != nil {
		return err
	}
	var target *raft.Server
	others := 0
	for _, s := range servers {
		if s.ID != n.rid && s.Suffrage == raft.Voter {
			others++
		}
	}
	if id != "" {
		if s, ok := findMember(servers, id); ok {
			target = &s
		}
	}
	switch {
	case target != nil && target.ID == n.rid:
		return nil // it leads already
	case id != "" && target == nil:
		return fmt.Errorf("ERR no such node: %s", id)
	case id != "" && target.Suffrage != raft.Voter:
		return fmt.Errorf("ERR node %s is not a voter (a joining node becomes one once it has caught up)", id)
	case others == 0:
		return errSoleVoter
	}
	if !n.transferring.CompareAndSwap(false, true) {
		return errTransferring
	}
	defer n.transferring.Store(false)
	start := time.Now()
	n.stepAside(rebuild)
	deadline := time.Now().Add(wait)
	// Raft's future returns nil when this node leaves its leader loop;
	// the reply waits until it knows who leads now. A failed try is
	// retried while this node leads; one that left it a follower anyway
	// (no quorum: the voters it would hand to are gone) waits a second
	// at most for another leader, not the whole wait
	var last error
	for time.Now().Before(deadline) {
		if addr, lid := n.raft.LeaderWithID(); addr != "" && lid != n.rid {
			n.log.Info("cluster: leadership handed over", "from", n.cfg.NodeID, "to", string(lid), "ms", time.Since(start).Milliseconds())
			return nil
		}
		if n.raft.State() != raft.Leader {
			if last != nil && deadline.Sub(time.Now()) > time.Second {
				deadline = time.Now().Add(time.Second)
			}
			time.Sleep(5 * time.Millisecond)
			continue
		}
		var f raft.Future
		if target != nil {
			f = n.raft.LeadershipTransferToServer(target.ID, target.Address)
		} else {
			f = n.raft.LeadershipTransfer()
		}
		if last = f.Error(); last != nil {
			n.log.Warn("cluster: leadership transfer failed; retrying", "err", last.Error())
			time.Sleep(50 * time.Millisecond)
		}
	}
	if last == nil {
		last = errors.New("no other node leads yet")
	}
	return fmt.Errorf("ERR leadership transfer failed: %v", last)
}

// stepAside ends this leader's epoch before a transfer. Admission pauses
// (the engine lock) until every executed unit is counted by the state
// machine (at most pauseWait, as a snapshot's pause), so those clients
// get their replies; then the node stops serving under the same hold, so
// nothing more executes here (clients wait for the next leader, or are
// forwarded to it). Whatever was not committed by then is answered
// ErrUnknown, and with rebuild the engine is rebuilt from the log, as on
// a leadership loss, before any read can see it; a node that shuts down
// skips the rebuild.
func (n *Node) stepAside(rebuild bool) {
	epoch := n.serving.Load()
	if epoch == 0 {
		return
	}
	d := n.door
	d.Lock()
	deadline := time.Now().Add(pauseWait)
	n.prop.cutNow()
	for n.prop.counted.Load() < n.prop.seq.Load() && n.serving.Load() == epoch && time.Now().Before(deadline) {
		select {
		case <-n.prop.stopCh: // halted: what remains never reaches the log
			deadline = time.Time{}
		default:
			time.Sleep(100 * time.Microsecond)
		}
	}
	if n.serving.Load() != epoch {
		d.Unlock()
		return // the leadership was lost meanwhile; leadershipLost ended it
	}
	// drained: every unit executed here is committed (counted by the
	// state machine), so the engine holds nothing uncommitted and the
	// node can stop serving under this hold: no unit executes after it.
	// Otherwise it serves on until it holds both locks in leadershipLost's
	// order (the state machine's, then the engine's): stopping here would
	// let a READONLY or follower read run, between the two holds, on an
	// engine that still holds the effects of units whose commit is
	// unknown; the rebuild runs under the engine lock for the same reason.
	drained := n.prop.counted.Load() >= n.prop.seq.Load()
	if drained {
		n.serving.Store(0)
	}
	d.Unlock()
	f := n.fsm
	f.mu.Lock()
	defer f.mu.Unlock()
	d.Lock()
	if !drained {
		if n.serving.Load() != epoch {
			d.Unlock()
			return // leadershipLost ended it meanwhile, rebuild included
		}
		n.serving.Store(0)
	}
	n.door.E.NoLazyDelete = true
	f.ownEpoch = 0
	n.prop.abort()
	n.exec.StopServing()
	var err error
	if !drained && rebuild {
		err = f.reset()
	}
	d.Unlock()
	if !drained {
		n.log.Warn("cluster: units executed before the handover were not committed in time: their outcome is unknown", "node", n.cfg.NodeID)
		if err != nil {
			n.fatal(err)
		}
	}
	n.log.Info("cluster: stopped serving to hand leadership over", "node", n.cfg.NodeID)
	n.exec.DropSession(0, 0)
}

// otherVoters reports whether the configuration has a voter besides
// this node.
func (n *Node) otherVoters() bool {
	cf := n.raft.GetConfiguration()
	if cf.Error() != nil {
		return false
	}
	for _, s := range cf.Configuration().Servers {
		if s.Suffrage == raft.Voter && s.ID != n.rid {
			return true
		}
	}
	return false
}

// handOverOnClose is Close's first step on a leader with other voters:
// a planned stop costs the cluster no election timeout. Failing that
// within closeTransferWait, the node shuts down anyway.
func (n *Node) handOverOnClose() {
	err := n.transfer("", closeTransferWait, false)
	if errors.Is(err, errTransferring) {
		// a RAFT TRANSFER runs: let it finish (bounded like ours)
		for deadline := time.Now().Add(closeTransferWait); n.transferring.Load() && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		return
	}
	if err != nil {
		n.log.Warn("cluster: could not hand leadership over before shutting down; shutting down anyway", "err", err.Error())
	}
}
