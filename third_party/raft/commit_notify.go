package raft

import (
	"sync"
	"time"
)

// LIMITDB PATCH (LIMITDB-PATCH.md): how a follower learns the leader's
// commit index. Upstream it learns it from the next AppendEntries with
// entries or from the CommitTimeout tick (50-100 ms). Here the leader
// owes each follower every advance of its commit index: under load the
// next send carries it (each AppendEntries carries the commit index of
// the moment it is set up), and when no send leaves for
// Config.CommitNotifyDelay (1 ms) an empty AppendEntries does. A
// follower that waits for an index (a write it forwarded, a read
// barrier) is told at once: TellCommit.
//
// Why not an empty AppendEntries at every advance (this patch's first
// form): under load that doubled the AppendEntries a follower receives
// and answers. Three groups of three nodes, SET through go-redis's
// ClusterClient at P=1: 39.7 µs of CPU per operation over all nine
// processes with it, 33.3 µs owed (../../bench/RESULTS.md, "Commit
// notices").

// defaultCommitNotifyDelay is Config.CommitNotifyDelay's default: how
// late a follower that waits for nothing learns a commit index once
// sends stop (a READONLY read there sees what it applied).
const defaultCommitNotifyDelay = time.Millisecond

func (r *Raft) commitNotifyDelay() time.Duration {
	if d := r.config().CommitNotifyDelay; d > 0 {
		return d
	}
	return defaultCommitNotifyDelay
}

// commitTold is a follower's account of the commit index it was sent.
type commitTold struct {
	mu      sync.Mutex
	last    uint64 // LeaderCommitIndex of the last AppendEntries set up
	sends   uint64 // AppendEntries set up so far
	owed    bool   // a check is armed
	armedAt uint64 // sends when it was armed
	timer   *time.Timer
}

// sent records an AppendEntries carrying commit (setupAppendEntries).
func (t *commitTold) sent(commit uint64) {
	t.mu.Lock()
	if commit > t.last {
		t.last = commit
	}
	t.sends++
	t.mu.Unlock()
}

// sentCommitBelow reports whether the follower was last sent a commit
// index below c.
func (s *followerReplication) sentCommitBelow(c uint64) bool {
	s.told.mu.Lock()
	defer s.told.mu.Unlock()
	return s.told.last < c
}

// owe is the leader loop's note that the commit index advanced: a check
// is armed unless one is.
func (s *followerReplication) owe(r *Raft) {
	t := &s.told
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.owed {
		return
	}
	t.owed, t.armedAt = true, t.sends
	if t.timer == nil {
		t.timer = time.AfterFunc(r.commitNotifyDelay(), func() { s.owedCheck(r) })
	} else {
		t.timer.Reset(r.commitNotifyDelay())
	}
}

// owedCheck runs Config.CommitNotifyDelay after owe: done when the
// follower was sent the commit index; looked at again when sends left
// meanwhile (the next carries a newer index); else an AppendEntries
// leaves now.
func (s *followerReplication) owedCheck(r *Raft) {
	t := &s.told
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.last >= r.getCommitIndex():
		t.owed = false
	case t.sends != t.armedAt:
		t.armedAt = t.sends
		t.timer.Reset(r.commitNotifyDelay())
	default:
		t.owed = false
		asyncNotifyCh(s.triggerCh)
	}
}

// TellCommit asks the leader to send follower id its commit index now,
// unless it was sent it already: the follower waits for an index it was
// given (a forwarded write's, a read barrier's). Nothing happens on a
// node that does not lead; it never blocks (a request that finds the
// queue full is dropped, and the follower learns the index within
// Config.CommitNotifyDelay).
func (r *Raft) TellCommit(id ServerID) {
	select {
	case r.tellCommitCh <- id:
	default:
	}
}
