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
}

// captureSpare is a released capture's arrays, cleared (they must keep no
// value alive).
type captureSpare struct {
	dbs  [NumDBs]spareDB
	aged atomic.Bool // AgeCaptureSpare saw it once
}

type spareDB struct {
	entries []entry
	buckets []int32
}

// takeSpare returns the spare arrays, if any (engine lock held).
func (c *cowState) takeSpare() *captureSpare { return c.spare.Swap(nil) }

// keepSpare makes a released capture's arrays the spare (any goroutine).
func (c *cowState) keepSpare(s *Snapshot) {
	sp := &captureSpare{}
	kept := false
	for i := range s.dbs {
		d := &s.dbs[i]
		if d.all == nil {
			continue
		}
		clear(d.all)
		sp.dbs[i] = spareDB{entries: d.all, buckets: d.buckets}
		kept = true
	}
	if kept {
		c.spare.Store(sp)
	}
}

// AgeCaptureSpare lets go of the arrays kept for the next capture when no
// capture has used or renewed them since the previous call (any
// goroutine; the server calls it every few seconds), so that memory the
// size of the key table is held only while captures are frequent.
func (e *Engine) AgeCaptureSpare() {
	if sp := e.cow.spare.Load(); sp != nil && sp.aged.Swap(true) {
		e.cow.spare.CompareAndSwap(sp, nil)
	}
}

// DropCaptureSpare lets go of the arrays kept for the next capture now
// (any goroutine): the server does when it has gone idle and returns its
// memory.
func (e *Engine) DropCaptureSpare() { e.cow.spare.Store(nil) }

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
