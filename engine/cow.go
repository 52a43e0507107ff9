package engine

import (
	"sync/atomic"
	"unsafe"
)

// Copy-on-write for point-in-time captures (Capture): a capture copies
// the entries but shares the values, so while one is active a value that
// a write would change in place must be copied first, and the live entry
// repointed to the copy; the capture keeps the original, which nothing
// changes any more.
//
// Every in-place change of a list, hash, set, sorted set or limiter
// object is made through an entry found by a write lookup (lookupWrite,
// and lookupKind with read false, which calls it): that is the single
// place the decision is made. With no capture active it costs one atomic
// load and a branch (BenchmarkRLAllow/HIncrBy unchanged, 0 allocs).
//
// Each object carries the generation it was copied in (gen); a capture
// starts a new generation, so an object whose gen is not the newest may
// be shared with an active capture and is copied on its first write —
// at most once per object per capture; objects created since carry 0 and
// are copied once too (cheap: they are new). Strings need no copy:
// their bytes below the length never change (APPEND grows in place only
// past it), and every other string write stores new bytes. A gcra or
// cell limiter's state is the entry's n word, copied with the entries;
// its parameters are interned and immutable.

// cowState is the engine's capture bookkeeping.
type cowState struct {
	// active counts captures not yet released; read without the engine lock on every
	// write lookup, decremented by Release from any goroutine.
	active atomic.Int32
	gen    uint32 // the newest capture's generation (under the engine lock)
	// spare holds the zeroed entry and bucket arrays of the last released
	// capture for the next Capture to copy into: no allocation under the
	// lock, so no zeroing and no GC assist there (1M keys: 36 → 8 ms,
	// BenchmarkCapture1M/again; the first capture in a live server took
	// 28–150 ms). AgeCaptureSpare drops it once unused.
	spare atomic.Pointer[captureSpare]
	// bytes counts the arrays of the captures not yet released and of the
	// spare (CaptureMemory)
	bytes atomic.Int64
	// noSpare: keep no spare (SetCaptureSpare)
	noSpare atomic.Bool
	// pinned is the estimated size of the keys evicted while a capture
	// was active (its values stay alive until the last capture is
	// released); freed sums the bytes releases let go of: the pinned
	// victims and the arrays not kept as the spare (CaptureMemory)
	pinned, freed atomic.Int64
}

// pin counts evicted victims an active capture keeps alive (engine lock).
// A release that ended the last capture meanwhile may have missed them:
// then they are garbage already (the Swap gives them to one of the two).
func (c *cowState) pin(n int64) {
	if n != 0 {
		c.pinned.Add(n)
		if c.active.Load() == 0 {
			c.freed.Add(c.pinned.Swap(0))
		}
	}
}

// released is Release's accounting: the arrays (unless kept as the spare)
// and, once no capture is active, the pinned victims become garbage.
func (c *cowState) released(arrays int64, kept bool) {
	c.bytes.Add(-arrays)
	if !kept {
		c.freed.Add(arrays)
	}
	if c.active.Load() == 0 {
		c.freed.Add(c.pinned.Swap(0))
	}
}

// SetCaptureSpare says whether a released capture's arrays are kept for the
// next one (any goroutine; the default is yes). The server keeps none while
// maxmemory is set: the spare is 40 bytes a key and 4 a bucket of memory
// that is not data (3.6 MB of 100 MB of 1 KB values), and the collector's
// room above maxmemory is what paces it (server/maxmemory.go); a capture
// then allocates its arrays (BenchmarkCapture1M: 36 ms for 1M keys
// against 8 with a spare).
func (e *Engine) SetCaptureSpare(keep bool) {
	e.cow.noSpare.Store(!keep)
	if !keep {
		e.DropCaptureSpare()
	}
}

// captureSpare is a released capture's arrays, cleared (they must keep no
// value alive).
type captureSpare struct {
	dbs  [NumDBs]spareDB
	aged atomic.Bool // AgeCaptureSpare saw it once
	size int64       // bytes of its arrays
}

// arraysSize is the memory of a capture's entry and bucket arrays.
func arraysSize(entries []entry, buckets []int32) int64 {
	return int64(cap(entries))*int64(unsafe.Sizeof(entry{})) + int64(cap(buckets))*4
}

// CaptureMemory is the memory snapshot captures take beside the data:
// arrays, the entry and bucket arrays of the captures not yet released
// and of the spare kept for the next; pinned, the estimated size of the
// keys evicted while a capture was active, whose values it still shares;
// freed, the bytes releases have let go of since the engine started
// (garbage until the next collection). Like the pages a Redis fork copies
// on write, it is not data: maxmemory leaves it out of the figure
// eviction compares with it (server/maxmemory.go). Any goroutine.
func (e *Engine) CaptureMemory() (arrays, pinned, freed int64) {
	return max(0, e.cow.bytes.Load()), e.cow.pinned.Load(), e.cow.freed.Load()
}

type spareDB struct {
	entries []entry
	buckets []int32
}

// takeSpare returns the spare arrays, if any (engine lock held).
func (c *cowState) takeSpare() *captureSpare { return c.spare.Swap(nil) }

// keepSpare makes a released capture's arrays the spare (any goroutine).
func (c *cowState) keepSpare(s *Snapshot) bool {
	if c.noSpare.Load() {
		return false
	}
	sp := &captureSpare{}
	kept := false
	for i := range s.dbs {
		d := &s.dbs[i]
		if d.all == nil {
			continue
		}
		clear(d.all)
		sp.dbs[i] = spareDB{entries: d.all, buckets: d.buckets}
		sp.size += arraysSize(d.all, d.buckets)
		kept = true
	}
	if kept {
		c.bytes.Add(sp.size)
		if old := c.spare.Swap(sp); old != nil {
			c.bytes.Add(-old.size)
			c.freed.Add(old.size)
		}
	}
	return kept
}

// AgeCaptureSpare lets go of the arrays kept for the next capture when no
// capture has used or renewed them since the previous call (any
// goroutine; the server calls it every few seconds), so that memory the
// size of the key table is held only while captures are frequent.
func (e *Engine) AgeCaptureSpare() {
	if sp := e.cow.spare.Load(); sp != nil && sp.aged.Swap(true) {
		if e.cow.spare.CompareAndSwap(sp, nil) {
			e.cow.bytes.Add(-sp.size)
			e.cow.freed.Add(sp.size)
		}
	}
}

// DropCaptureSpare lets go of the arrays kept for the next capture now
// (any goroutine): the server does when it has gone idle and returns its
// memory.
func (e *Engine) DropCaptureSpare() {
	if sp := e.cow.spare.Swap(nil); sp != nil {
		e.cow.bytes.Add(-sp.size)
		e.cow.freed.Add(sp.size)
	}
}

// cowEntry copies en's value if an active capture may share it.
func (e *Engine) cowEntry(en *entry) {
	g := e.cow.gen
	switch en.kind {
	case KindList:
		if l := en.list(); l.cowGen() != g {
			*l = l.clone(g)
		}
	case KindHash:
		if h := en.hash(); h.cowGen() != g {
			*h = h.clone(g)
		}
	case KindSet:
		if s := en.set(); s.gen != g {
			c := s.clone()
			c.gen = g
			en.p = unsafe.Pointer(c)
		}
	case KindZSet:
		if z := en.zset(); z.cowGen() != g {
			*z = z.clone(g)
		}
	case KindLimiter:
		if !sharedAlgo(limParams(en).Algo) {
			if o := (*limObj)(en.p); o.gen != g {
				p, _ := cloneLimiter(en.p, en.n)
				(*limObj)(p).gen = g
				en.p = p
			}
		}
	}
}
