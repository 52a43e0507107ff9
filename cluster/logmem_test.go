package cluster

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/raft"
)

// memStore is a raft.LogStore that keeps nothing (peerLogCache's tests).
type memStore struct{ raft.LogStore }

func (memStore) StoreLogs([]*raft.Log) error   { return nil }
func (memStore) DeleteRange(_, _ uint64) error { return nil }

// TestLogCacheMemory: every entry's buffer is counted as freed exactly
// once, by the later of its apply and its leaving the ring, in any order
// of the two; the ring's bytes are counted while it holds them; and a
// cluster of one (no ring) frees at apply.
func TestLogCacheMemory(t *testing.T) {
	for _, withPeers := range []bool{true, false} {
		var peers atomic.Bool
		peers.Store(withPeers)
		var mem logMem
		c := newPeerLogCache(memStore{}, &peers, &mem)
		rng := rand.New(rand.NewPCG(1, 2))
		var logs []*raft.Log
		var total int64
		for i := 1; i <= 200; i++ {
			l := &raft.Log{Index: uint64(i), Data: make([]byte, 1+rng.IntN(100))}
			total += int64(len(l.Data))
			logs = append(logs, l)
		}
		// stored in batches, applied lagging behind by 0..30 entries
		applied := 0
		for i := 0; i < len(logs); {
			n := min(1+rng.IntN(5), len(logs)-i)
			if err := c.StoreLogs(logs[i : i+n]); err != nil {
				t.Fatal(err)
			}
			i += n
			for applied < i-rng.IntN(30) {
				c.noteApplied(logs[applied])
				applied++
			}
		}
		for ; applied < len(logs); applied++ {
			c.noteApplied(logs[applied])
		}
		var inRing int64
		for _, l := range logs[len(logs)-logCacheSize:] {
			inRing += int64(len(l.Data))
		}
		if !withPeers {
			inRing = 0
		}
		if got := mem.cached.Load(); got != inRing {
			t.Errorf("peers %v: cached %d, want %d (the ring's entries)", withPeers, got, inRing)
		}
		if got := mem.freed.Load(); got != total-inRing {
			t.Errorf("peers %v: freed %d, want %d", withPeers, got, total-inRing)
		}
		c.DeleteRange(1, 200)
		if got := mem.freed.Load(); got != total || mem.cached.Load() != 0 {
			t.Errorf("peers %v: after emptying the ring freed %d, cached %d, want %d, 0", withPeers, got, mem.cached.Load(), total)
		}
	}
}
