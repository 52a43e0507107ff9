package cluster

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// logCacheSize is how many of the newest entries peerLogCache keeps.
const logCacheSize = 16

// peerLogCache is raft.LogCache (the newest logCacheSize entries kept in a
// ring, so that replication and a follower's state machine read them
// without going to the log) that caches only while the configuration has
// other servers (Node.peers, refreshed every second by the monitor).
//
// Why: a cluster of one never reads a fresh entry back (its leader
// applies its own entries from their futures), yet raft.LogCache held the
// last 16 of them, each up to maxEntry: after 1,000,000 pipelined
// RL.ALLOW (bench memory mode, ~34 KB entries) 0.5 MB, 0.5 B of RSS per
// limiter, and up to 16 × 16 MB with big batches.
//
// It also counts the entries' memory for logMem: what the ring holds
// (cached), and each entry's buffer as freed once the state machine has
// applied it and the ring no longer holds it — counted by whichever of
// the two comes last (applied, or the ring's dropping it), both under mu,
// so every buffer exactly once.
type peerLogCache struct {
	raft.LogStore
	peers *atomic.Bool
	mem   *logMem

	mu      sync.RWMutex
	ring    []*raft.Log // nil while alone
	applied uint64      // the last index the state machine applied (mu)
}

func newPeerLogCache(store raft.LogStore, peers *atomic.Bool, mem *logMem) *peerLogCache {
	return &peerLogCache{LogStore: store, peers: peers, mem: mem}
}

// noteApplied is the state machine's report that it applied l: its
// buffer is garbage now, unless the ring still holds it (then it is when
// the ring drops it).
func (c *peerLogCache) noteApplied(l *raft.Log) {
	c.mu.Lock()
	c.applied = max(c.applied, l.Index)
	if c.ring == nil || c.ring[l.Index%logCacheSize] == nil || c.ring[l.Index%logCacheSize].Index != l.Index {
		c.mem.freed.Add(int64(len(l.Data)))
	}
	c.mu.Unlock()
}

// drop notes that the ring no longer holds old (mu held): its buffer is
// garbage if the state machine applied it (else noteApplied counts it).
func (c *peerLogCache) drop(old *raft.Log) {
	if old == nil {
		return
	}
	c.mem.cached.Add(-int64(len(old.Data)))
	if old.Index <= c.applied {
		c.mem.freed.Add(int64(len(old.Data)))
	}
}

// dropAll empties the ring (mu held).
func (c *peerLogCache) dropAll() {
	for _, l := range c.ring {
		c.drop(l)
	}
	c.ring = nil
}

// IsMonotonic passes the store's raft.MonotonicLogStore answer on.
func (c *peerLogCache) IsMonotonic() bool {
	m, ok := c.LogStore.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}

func (c *peerLogCache) GetLog(idx uint64, log *raft.Log) error {
	c.mu.RLock()
	var cached *raft.Log
	if c.ring != nil {
		cached = c.ring[idx%logCacheSize]
	}
	c.mu.RUnlock()
	if cached != nil && cached.Index == idx {
		*log = *cached
		return nil
	}
	return c.LogStore.GetLog(idx, log)
}

func (c *peerLogCache) StoreLog(log *raft.Log) error {
	return c.StoreLogs([]*raft.Log{log})
}

func (c *peerLogCache) StoreLogs(logs []*raft.Log) error {
	if err := c.LogStore.StoreLogs(logs); err != nil {
		return fmt.Errorf("unable to store logs within log store, err: %q", err)
	}
	c.mu.Lock()
	switch {
	case !c.peers.Load():
		c.dropAll()
	case c.ring == nil:
		c.ring = make([]*raft.Log, logCacheSize)
		fallthrough
	default:
		for _, l := range logs {
			c.drop(c.ring[l.Index%logCacheSize])
			c.ring[l.Index%logCacheSize] = l
			c.mem.cached.Add(int64(len(l.Data)))
		}
	}
	c.mu.Unlock()
	return nil
}

func (c *peerLogCache) DeleteRange(min, max uint64) error {
	c.mu.Lock()
	c.dropAll()
	c.mu.Unlock()
	return c.LogStore.DeleteRange(min, max)
}
