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

// wallNs is the wall clock in ns from one monotonic read (mono), the
// offset resynchronised at most every clockResync.
func wallNs() (wall, mono int64) {
	mono = nanotime()
	if last := wallSynced.Load(); last == 0 || mono-last > clockResync {
		w := time.Now().UnixNano()
		mono = nanotime()
		wallOffset.Store(w - mono)
		wallSynced.Store(mono)
	}
	return mono + wallOffset.Load(), mono
}

// SetSkew sets the test-only offset added to this node's clock
// (debug-clock-offset-ms; CONFIG SET steps it on a running node, as an
// NTP step would).
func (d *Door) SetSkew(ms int64) { d.skew.Store(ms) }

// SkewMs is the offset SetSkew set.
func (d *Door) SkewMs() int64 { return d.skew.Load() }

// WallNs is this node's clock in unix ns, its test offset included, with
// no floor: what it says the time is (the cluster compares it with the
// other nodes'). Safe without the engine lock.
func (d *Door) WallNs() int64 {
	w, _ := wallNs()
	return w + d.skew.Load()*1e6
}

// SetMaxLead bounds how far the time Now and ReadTime give may run ahead
// of this node's clock (ms; 0: unbounded): the cluster sets
// max-clock-skew-ms (cluster/DESIGN.md, "Time").
func (d *Door) SetMaxLead(ms int64) { d.maxLead.Store(ms) }

// bound is t kept within the max lead of own, this node's clock.
func (d *Door) bound(t, own int64) int64 {
	if lead := d.maxLead.Load(); lead > 0 && t > own+lead {
		return own + lead
	}
	return t
}

// Now returns the time of the units about to run under the lock the caller
// holds (unix ms) and the monotonic ns it was read at. It is not lower
// than the time of any unit executed before, by this process or by the
// ones whose state it restored (the floor, Engine.ClockMs, is replicated
// state that snapshots carry), nor than a time ReadTime gave out; but it
// is never more than the max lead (SetMaxLead) ahead of this node's
// clock. So a floor from a clock that ran ahead (a former leader's, or
// this node's before its clock stepped back) holds time still here for
// at most the max lead, and then time goes back by the rest: a floor from
// a clock an hour ahead would otherwise hold every deadline and limiter
// still for an hour.
func (d *Door) Now() (ms, mono int64) {
	w, mono := wallNs()
	own := w/1e6 + d.skew.Load()
	t := max(own, d.readTime.Load(), d.E.ClockMs)
	t = d.bound(t, own)
	if !d.E.NoLazyDelete || t < d.E.ClockMs {
		// the floor is the executing node's: a follower's reads use its
		// own clock, its floor moves only with what it applies; but a
		// floor past the max lead is cut on every node, so that it holds
		// time no longer than that from now on
		d.E.ClockMs = t
	}
	return t, mono
}

// ReadTime is the time (unix ms) a linearizable read served elsewhere
// judges deadlines by (the leader's answer to a follower's read barrier),
// without the engine lock: this node's clock, not below a time it gave
// out before, within the max lead; and Now does not go below it. So a read
// judged at it and a read here right after never disagree: expiry and
// limiters only move forward.
func (d *Door) ReadTime() int64 {
	own := d.WallNs() / 1e6
	for {
		r := d.readTime.Load()
		t := d.bound(max(own, r), own)
		if t == r || d.readTime.CompareAndSwap(r, t) {
			return t
		}
	}
}

// RaiseReadTime keeps the time ReadTime gives out at or above ms from
// now on (a slot handover's time floor, engine.HandoverFloor: the
// receiving group's reads never judge the moved keys earlier than the
// source did). Now already keeps units at or above the engine's ClockMs,
// which the handover raised; ReadTime reads no engine state, so it is
// raised here. The max lead still bounds it. Safe without the lock.
func (d *Door) RaiseReadTime(ms int64) {
	for {
		r := d.readTime.Load()
		if r >= ms || d.readTime.CompareAndSwap(r, ms) {
			return
		}
	}
}
