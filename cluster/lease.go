package cluster

import (
	"sync/atomic"
	"time"
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

const (
	leaseTick = 10 * time.Millisecond
	// leaseGap: well below the followers' election timeout (500 ms), the
	// time a pause must last before another node can lead
	leaseGap = 100 * time.Millisecond
)

type lease struct {
	last    atomic.Int64  // the ticker's last run (unix ns)
	gaps    atomic.Uint64 // gaps seen; ConfirmLease clears only its own
	suspect atomic.Bool   // a gap since the last confirmation
}

// leaseTicker notes the gaps in this process's running.
func (n *Node) leaseTicker() {
	t := time.NewTicker(leaseTick)
	defer t.Stop()
	n.lease.last.Store(time.Now().UnixNano())
	for {
		select {
		case <-n.closing:
			return
		case <-t.C:
		}
		now := time.Now().UnixNano()
		if now-n.lease.last.Swap(now) > int64(leaseGap) {
			n.lease.gaps.Add(1)
			n.lease.suspect.Store(true)
		}
	}
}

// LeaseHeld reports whether this leader may serve from memory: its
// process ran without a gap since its leadership was last confirmed.
// When not, the caller releases the engine lock and calls ConfirmLease.
func (n *Node) LeaseHeld() bool {
	if !n.peers.Load() {
		return true // a cluster of one: no other node can lead
	}
	if n.lease.suspect.Load() {
		return false
	}
	if time.Now().UnixNano()-n.lease.last.Load() > int64(leaseGap) {
		// the ticker has not run yet since the pause
		n.lease.gaps.Add(1)
		n.lease.suspect.Store(true)
		return false
	}
	return true
}

// ConfirmLease asks Raft to confirm this node's leadership after a gap
// (the engine lock is not held). It reports whether it did; if not, it
// waits up to leader-wait-ms for the node to stop serving (the monitor
// ends the epoch under the engine lock), so that the caller then runs the
// unit as a follower's.
func (n *Node) ConfirmLease() bool {
	n.stats.LeaseChecks.Add(1)
	gaps := n.lease.gaps.Load()
	if n.raft.VerifyLeader().Error() == nil {
		if n.lease.gaps.Load() == gaps {
			n.lease.suspect.Store(false)
		}
		return true
	}
	for deadline := time.Now().Add(n.cfg.leaderWait()); n.Serving() && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	return false
}
