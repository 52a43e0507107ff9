package cluster

import (
	"encoding/binary"
	"sync"
	"time"
)

// A follower's read barrier (ReadBarrier, api.go) and the applied index
// it waits for; the server's other calls are in api.go.

// readBarrier does ReadBarrier (api.go).
func (n *Node) readBarrier() (int64, error) {
	deadline := time.Now().Add(n.cfg.leaderWait())
	for {
		if n.Serving() {
			return 0, nil
		}
		a, err := n.fwd.call(frameRead, nil, n.cfg.leaderWait())
		if err == nil && a.ok() {
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

// WaitLeaderClient waits up to LeaderWait for a leader whose client
// address this node knows, for cluster mode's MOVED: the address, or
// serving when this node leads meanwhile, or neither when no leader
// appeared (CLUSTERDOWN). A new leader's address comes from the former
// leader's last pong (the members' client addresses by Raft ID) as soon
// as Raft names it, without waiting for its first pong (up to a second).
func (n *Node) WaitLeaderClient() (addr string, serving bool) {
	deadline := time.Now().Add(n.cfg.leaderWait())
	for {
		if n.Serving() {
			return "", true
		}
		if addr := n.knownLeaderClient(); addr != "" {
			return addr, false
		}
		if time.Now().After(deadline) {
			n.stats.ClusterDown.Add(1)
			return "", false
		}
		n.stats.LeaderWaits.Add(1)
		select {
		case <-time.After(20 * time.Millisecond):
		case <-n.closing:
			return "", false
		}
	}
}

// knownLeaderClient is LeaderClient, or else the client address the
// members' list gives for the leader Raft names ("" when none, and when
// it is this node, not serving yet: the caller waits until it serves,
// rather than send the client to itself).
func (n *Node) knownLeaderClient() string {
	if addr := n.LeaderClient(); addr != "" {
		return addr
	}
	_, id := n.raft.LeaderWithID()
	if id == "" || id == n.rid {
		return ""
	}
	return n.otherClients.Load().(map[string]string)[string(id)]
}
