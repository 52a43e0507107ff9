package cluster

import (
	"math/bits"
	"sync/atomic"
)

// logMem is what the log costs in memory, for the server's maxmemory
// figure (server/maxmemory.go), which must not count it as data: Redis
// leaves its AOF buffer and its replicas' output buffers out of the
// figure eviction compares with maxmemory (mem_not_counted_for_evict).
//
// Two numbers:
//
//   - held: the bytes the log holds now — the proposer's gathering buffers
//     (stage and pend, kept between entries up to maxEntry), the entries
//     this leader cut that its state machine has not applied yet, the
//     entries in the log cache (peerLogCache), and raft-wal's commit
//     buffer (a power of two at least the largest batch its segment took).
//   - freed: the bytes of log buffers that have become garbage, summed
//     since the node started: raft-wal's encoded copy of every entry
//     written (a new buffer per entry, garbage when StoreLogs returns), and
//     each entry's own buffer once the state machine has applied it and the
//     log cache no longer holds it. Under a write load this is twice the
//     data written (a 1 KB SET leaves 2 KB of log garbage), and the heap
//     counts it until the next collection: counted as data, it made eviction
//     evict a quarter of maxmemory too many at 100 MB (issue 18).
//
// Every byte counted in freed is garbage (each buffer is counted once, by
// the later of its apply and its leaving the cache, under the cache's
// lock; see peerLogCache.applied); buffers the accounting cannot follow
// (a follower's entry the cache dropped before the state machine read it,
// the store's decoded copies read for replication or a replay) are left
// out of it, so that the figure errs towards counting garbage, never
// towards forgetting data.
type logMem struct {
	freed    atomic.Int64
	inflight atomic.Int64 // entries cut by this leader, not yet applied
	cached   atomic.Int64 // entries in the log cache
	walBuf   atomic.Int64 // raft-wal's commit buffer (estimate)
	walSeg   atomic.Int64 // bytes written since walBuf was last reset
	stage    atomic.Int64 // cap of proposer.stage
	pend     atomic.Int64 // cap of proposer.pend
}

// held is the bytes the log holds now.
func (m *logMem) held() int64 {
	return max(0, m.inflight.Load()) + m.cached.Load() + m.walBuf.Load() + m.stage.Load() + m.pend.Load()
}

// stored notes a batch raft-wal has written: its encoded copies are
// garbage now, and its commit buffer is at least the batch's size
// (doubled from 64 KB until it holds it, as raft-wal grows it). Each
// segment's writer starts a buffer of its own, so the estimate starts
// again after a segment's worth of bytes (walSegmentSize): one big batch
// does not count for ever.
func (m *logMem) stored(n int64) {
	m.freed.Add(n)
	c := int64(64 << 10)
	if n > c {
		c = int64(1) << bits.Len64(uint64(n-1))
	}
	if m.walSeg.Add(n) >= walSegmentSize {
		m.walSeg.Store(0)
		m.walBuf.Store(c)
	} else if c > m.walBuf.Load() {
		m.walBuf.Store(c)
	}
}
