package cluster

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"limitdb/door"
)

// The leader serves reads from memory under its lease: hashicorp/raft
// steps a leader down after LeaderLeaseTimeout (250 ms) without a
// quorum's contact, before the others can elect a new one (500 ms+). That
// check runs in Raft's goroutines, so a process that gets no CPU for
// longer — SIGSTOP, a starved or paused host — resumes still leading, and
// a read it serves before Raft's next check can miss writes a new leader
// acknowledged meanwhile: TestClusterLeaderStopped's read on the old
// leader right after SIGCONT returned the value from before the stop in 2
// of 4 runs. So a goroutine ticks every leaseTick; a gap longer than
// leaseGap between ticks, or a last tick older than that when a unit
// comes, means the process did not run, and the next units wait until
// Raft confirms the leadership (VerifyLeader: a round of heartbeats to a
// quorum) — or it turns out lost, and they run as a follower's.
//
// Raft's check also times a follower's contact from its reply's arrival,
// not from the request's sending: a reply held back on its way stretches
// the lease by its delay (TestClusterLeaseDelayedReplies: a leader whose
// followers' bytes to it came 150 ms late, then its own to them stopped,
// answered from memory GETs sent up to 390 ms after the cut; past 250 ms of
// delay that is past the followers' election). What bounds another
// node's election is when the follower received the request, no earlier
// than its sending: a follower that accepted an AppendEntries sent at s
// votes for no one before s + 500 ms (its election timeout, counted from
// the receipt). So the transport (transport.go) notes, per server, the
// send time of the newest AppendEntries it acknowledged — the heartbeats'
// and the replication pipeline's — and the lease holds only while enough
// voters that they and this node are a quorum acknowledged one sent
// within the last leaderLease. Else units wait in ConfirmLease, which
// also waits for a quorum's acknowledgement of something sent after
// it began: VerifyLeader alone can be answered by a heartbeat sent before
// (a reply in flight, or one that waited in a socket through a pause).

const (
	// leaderLease is hashicorp/raft's LeaderLeaseTimeout (node.go): a
	// leader steps down without a quorum's contact for this long, half
	// the followers' election timeout
	leaderLease = 250 * time.Millisecond
	leaseTick   = 10 * time.Millisecond
	// leaseGap: well below the followers' election timeout (500 ms), the
	// time a pause must last before another node can lead
	leaseGap = 100 * time.Millisecond
)

type lease struct {
	last    atomic.Int64  // the ticker's last run (door.Nanotime: monotonic, so a step of the wall clock is no pause)
	gaps    atomic.Uint64 // gaps seen; ConfirmLease clears only its own
	suspect atomic.Bool   // a gap since the last confirmation
	wake    chan struct{} // the monitor's, while Raft says this node leads
}

// leaseTicker notes the gaps in this process's running while this node
// is Raft's leader. A follower serves nothing under the lease, so its
// ticker waits for the monitor to see a leadership (leaseLeading) rather
// than wake 100 times a second: that was 200 of an idle 3-node group's
// ~4,200 context switches a second. It resumes suspect (as after a
// gap): the first units under the new leadership wait in ConfirmLease.
func (n *Node) leaseTicker() {
	t := time.NewTicker(leaseTick)
	defer t.Stop()
	n.lease.last.Store(door.Nanotime())
	for {
		select {
		case <-n.closing:
			return
		case <-t.C:
		}
		if raft.RaftState(n.state.Load()) != raft.Leader {
			t.Stop()
			select {
			case <-n.closing:
				return
			case <-n.lease.wake:
			}
			n.lease.gaps.Add(1)
			n.lease.suspect.Store(true)
			n.lease.last.Store(door.Nanotime())
			t.Reset(leaseTick)
			continue
		}
		now := door.Nanotime()
		if now-n.lease.last.Swap(now) > int64(leaseGap) {
			n.lease.gaps.Add(1)
			n.lease.suspect.Store(true)
		}
	}
}

// leaseLeading wakes a waiting ticker (the monitor, while Raft says
// this node leads).
func (n *Node) leaseLeading() {
	select {
	case n.lease.wake <- struct{}{}:
	default:
	}
}

// leaseHeld does LeaseHeld (api.go).
func (n *Node) leaseHeld() bool {
	if !n.peers.Load() {
		return true // a cluster of one: no other node can lead
	}
	if n.lease.suspect.Load() {
		return false
	}
	now := door.Nanotime()
	if now-n.lease.last.Load() > int64(leaseGap) {
		// the ticker has not run yet since the pause
		n.lease.gaps.Add(1)
		n.lease.suspect.Store(true)
		return false
	}
	if w := n.store.writing.Load(); w != 0 && now-w > int64(leaseGap) {
		// a log write stalls Raft's leader loop, which checks the lease
		// (and steps down) only between writes: as good as a pause
		return false
	}
	v := n.acks.view.Load()
	return v != nil && v.since(now-int64(leaderLease))
}

// confirmLease does ConfirmLease (api.go). It confirms once a quorum
// acknowledged an AppendEntries sent after it began (VerifyLeader nudges
// the heartbeats; one whose reply was in flight when it began can answer
// it, hence the loop); a leader whose replies take longer than
// leader-wait-ms is not confirmed (the caller answers CLUSTERDOWN while it
// still serves).
func (n *Node) confirmLease() bool {
	n.stats.LeaseChecks.Add(1)
	gaps := n.lease.gaps.Load()
	from := door.Nanotime()
	deadline := time.Now().Add(n.cfg.leaderWait())
	for n.raft.VerifyLeader().Error() == nil {
		v := n.acks.view.Load()
		if v == nil {
			n.refreshAckView()
			v = n.acks.view.Load()
		}
		if v != nil && v.since(from) {
			if n.lease.gaps.Load() == gaps {
				n.lease.suspect.Store(false)
			}
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	for n.Serving() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// peerAcks: per server, the send time (door.Nanotime) of the newest
// AppendEntries it acknowledged, written by the transport; and the view
// LeaseHeld reads: the slots of the other voters and how many of them
// must be fresh.
type peerAcks struct {
	mu    sync.Mutex // inserts into slots
	slots atomic.Pointer[map[raft.ServerID]*atomic.Int64]
	view  atomic.Pointer[ackView]
}

type ackView struct {
	ids   []raft.ServerID
	peers []*atomic.Int64 // the other voters' slots, in ids' order
	need  int             // how many of them make a quorum with this node
}

// slot returns id's slot (copy on write: a new server's first reply).
func (a *peerAcks) slot(id raft.ServerID) *atomic.Int64 {
	if m := a.slots.Load(); m != nil {
		if s := (*m)[id]; s != nil {
			return s
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	m := map[raft.ServerID]*atomic.Int64{}
	if old := a.slots.Load(); old != nil {
		if s := (*old)[id]; s != nil {
			return s
		}
		for k, v := range *old {
			m[k] = v
		}
	}
	s := new(atomic.Int64)
	m[id] = s
	a.slots.Store(&m)
	return s
}

// acked notes that id acknowledged an AppendEntries sent at sent.
func (a *peerAcks) acked(id raft.ServerID, sent int64) {
	s := a.slot(id)
	for {
		old := s.Load()
		if sent <= old || s.CompareAndSwap(old, sent) {
			return
		}
	}
}

// since reports whether enough voters acknowledged something sent at t
// or later.
func (v *ackView) since(t int64) bool {
	n := 0
	for _, p := range v.peers {
		if n >= v.need {
			break
		}
		if p.Load() >= t {
			n++
		}
	}
	return n >= v.need
}

// setVoters makes the view for the configuration's voters (a view equal
// to the current one is kept: the monitor calls this every tick).
func (a *peerAcks) setVoters(self raft.ServerID, servers []raft.Server) {
	var ids []raft.ServerID
	voters, selfVotes := 0, false
	for _, s := range servers {
		if s.Suffrage != raft.Voter {
			continue
		}
		voters++
		if s.ID == self {
			selfVotes = true
		} else {
			ids = append(ids, s.ID)
		}
	}
	need := voters/2 + 1
	if selfVotes {
		need--
	}
	if v := a.view.Load(); v != nil && v.need == need && len(v.ids) == len(ids) {
		same := true
		for i := range ids {
			same = same && v.ids[i] == ids[i]
		}
		if same {
			return
		}
	}
	v := &ackView{ids: ids, need: need}
	for _, id := range ids {
		v.peers = append(v.peers, a.slot(id))
	}
	a.view.Store(v)
}

// refreshAckView takes the voters from Raft's latest configuration (the
// monitor, every tick while this node leads; hashicorp/raft changes one
// server at a time, and the majorities of two configurations one server
// apart intersect, so a view one change behind for a tick still needs a
// voter that would not elect another leader).
func (n *Node) refreshAckView() {
	if cf := n.raft.GetConfiguration(); cf.Error() == nil {
		n.acks.setVoters(n.rid, cf.Configuration().Servers)
	}
}
