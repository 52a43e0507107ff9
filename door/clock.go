package door

import (
	"sync/atomic"
	"time"
	_ "unsafe" // go:linkname
)

// nanotime is the runtime's monotonic clock: one vDSO read, where
// time.Now reads the wall clock and the monotonic clock (on this kind of
// virtual machine, kvm-clock, each read costs tens of nanoseconds and
// showed up as a third of the per-command CPU in profiles).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Nanotime is the monotonic clock in ns, for callers timing commands.
func Nanotime() int64 { return nanotime() }

// wallOffset is wall-clock ns minus nanotime, resynchronised with the wall
// clock at most every clockResync, so that a batch of commands needs one
// monotonic read to know its time. It belongs to the machine's clocks, not
// to one Door, so it is shared.
var (
	wallOffset atomic.Int64
	wallSynced atomic.Int64 // nanotime of the last resync; 0 = never
)

const clockResync = int64(10 * time.Millisecond)

// Now returns the time of the units about to run under the lock the caller
// holds (unix ms) and the monotonic ns it was read at. It is never lower
// than the time of any unit executed before, by this process or by the
// ones whose state it restored: the floor, Engine.ClockMs, is replicated
// state that snapshots carry.
func (d *Door) Now() (ms, mono int64) {
	mono = nanotime()
	if last := wallSynced.Load(); last == 0 || mono-last > clockResync {
		wall := time.Now().UnixNano()
		mono = nanotime()
		wallOffset.Store(wall - mono)
		wallSynced.Store(mono)
	}
	t := (mono+wallOffset.Load())/1e6 + d.Skew
	if t <= d.E.ClockMs {
		return d.E.ClockMs, mono
	}
	if !d.E.NoLazyDelete {
		// the floor is the executing node's: a follower's reads use its
		// own clock, its floor moves only with what it applies
		d.E.ClockMs = t
	}
	return t, mono
}
