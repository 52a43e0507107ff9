// Package door is the one place where limitdb's state changes.
//
// Every unit of work that may change the engine — one command, a
// MULTI/EXEC block with its WATCH check, a script call (a command whose
// handler runs Lua), an active-expiry pass, an eviction, a change of a
// replicated setting — runs through a Door method, under the Door's lock,
// at a time the Door fixes (never decreasing, also across restarts, since
// the floor is engine state that snapshots carry). While it runs, the
// engine records the unit's effects as Redis 7.0 propagates them
// (engine/effects.go); when it ends, the Door turns them into one record
// and hands it to its Log in execution order. Followers and recovery never
// execute: they Apply records, which is deterministic and reads no clock.
//
// Reads go through the same door (Exec): a read may find a key past its
// deadline and delete it, which is a DEL effect like any other.
package door

import (
	"sync/atomic"
	"time"

	"limitdb/engine"
)

// Log receives each unit's effects, in execution order, with the door's
// lock held, and encodes the unit's record (engine.AppendRecord) where it
// keeps it: the cluster's proposer encodes it straight into the records
// of the running hold of the lock. f is only valid during the call. Flush
// ends that hold (Unlock, after at least one Record): the proposer then
// moves the hold's records to the entry it gathers under its own lock,
// once per hold instead of once per record (16 records a hold at P=16).
// A single node without persistence has no Log.
type Log interface {
	Record(f *engine.Effects, clockMs int64)
	Flush()
}

// Records is a Log that hands each record, encoded, to a function (tests,
// tools); the record is only valid during the call.
type Records func(rec []byte)

// Record implements Log.
func (r Records) Record(f *engine.Effects, clockMs int64) {
	r(engine.AppendRecord(nil, f, clockMs))
}

// Flush implements Log.
func (r Records) Flush() {}

// Door serializes access to one engine and records what changes it.
type Door struct {
	E *engine.Engine

	eff engine.Effects // the running unit's effects
	log Log
	// depth counts nested units (a unit started inside another joins it:
	// EXEC running a queued EVAL, a script calling a command).
	depth int
	// Records counts records handed to the log (INFO, tests).
	Records int64
	// skew is added to the wall clock (ms): a test-only clock offset
	// (SetSkew), changed while running (CONFIG SET), read without the lock
	skew atomic.Int64
	// readTime is the latest time ReadTime gave out (unix ms): Now never
	// goes below it
	readTime atomic.Int64
	// maxLead bounds how far ahead of this node's clock Now may run (ms,
	// 0: unbounded; SetMaxLead)
	maxLead atomic.Int64

	// sem is the engine lock: a one-slot semaphore rather than a mutex,
	// so that a client waiting for it can stop waiting (LockOr) when a
	// script starts that may run past busy-reply-threshold (it must then
	// get BUSY; a goroutine blocked in Mutex.Lock behind a runaway script
	// waited for ever). Measured against sync.Mutex: no difference in
	// BenchmarkServeLoopback (one acquisition per 16 pipelined PINGs).
	sem chan struct{}
	// holds counts acquisitions of the lock (Holds).
	holds uint64
	// recorded: a record went to the log during this hold (Unlock
	// flushes it)
	recorded bool
}

// New returns the door of e. log may be nil (effects are then dropped).
func New(e *engine.Engine, log Log) *Door {
	d := &Door{E: e, log: log, sem: make(chan struct{}, 1)}
	d.eff.Reset()
	return d
}

// SetLog replaces the log (start-up, tests). The lock must be held or the
// door not yet in use.
func (d *Door) SetLog(log Log) { d.log = log }

// Log returns the log (nil: none), for a caller that wraps it (SYNC).
func (d *Door) Log() Log { return d.log }

// Lock takes the engine lock. Everything that reads or changes the engine
// holds it; only Door methods change it.
func (d *Door) Lock() {
	d.sem <- struct{}{}
	d.holds++
}

// Holds numbers the current hold of the lock: two readings under the
// lock are equal when it was not released in between (the server's
// slowlog timing chains commands run under one hold).
func (d *Door) Holds() uint64 { return d.holds }

// TryLock is Lock when the lock is free.
func (d *Door) TryLock() bool {
	select {
	case d.sem <- struct{}{}:
		d.holds++
		return true
	default:
		return false
	}
}

// LockOr waits for the lock or for stop, and reports whether it took it.
func (d *Door) LockOr(stop <-chan struct{}) bool {
	select {
	case d.sem <- struct{}{}:
		d.holds++
		return true
	case <-stop:
		return false
	}
}

// LockOrTimer is LockOr with a timer's channel.
func (d *Door) LockOrTimer(stop <-chan time.Time) bool {
	select {
	case d.sem <- struct{}{}:
		d.holds++
		return true
	case <-stop:
		return false
	}
}

// Unlock releases the engine lock, after handing the log the hold's
// records (Log.Flush).
func (d *Door) Unlock() {
	if d.recorded {
		d.recorded = false
		d.log.Flush()
	}
	<-d.sem
}

// begin starts a unit on c: its commands record into the door's effects.
// Without a log nothing would read them, so nothing is recorded: a script
// of 3,000,000 INCRs would otherwise hold 250 MB of effects for nothing.
func (d *Door) begin(c *engine.Ctx) {
	if d.log == nil {
		c.Eff = nil
		d.depth++
		return
	}
	if d.depth == 0 {
		d.eff.Reset()
	}
	d.depth++
	c.Eff = &d.eff
}

// end finishes a unit: its effects become one record for the log.
func (d *Door) end() {
	d.depth--
	if d.depth > 0 || d.eff.N == 0 {
		return
	}
	d.Records++
	d.log.Record(&d.eff, d.E.ClockMs)
	d.recorded = true
	// one huge unit must not pin its buffer
	if cap(d.eff.B) > 1<<20 {
		d.eff.B = nil
	}
}

// Exec runs one command as a unit (or as part of the unit already running
// on this door, for a command an EXEC replays). The caller holds the lock,
// has resolved cmd and checked its arity, and set c.DB and c.Now. A panic
// in the handler leaves the unit's effects recorded so far, and the engine
// has resynchronised the keys the command could have touched
// (engine.Ctx.Call), before it unwinds to the caller's containment: the
// unit's record is still handed to the log (Unwind).
func (d *Door) Exec(c *engine.Ctx, cmd *engine.Command, argv [][]byte) {
	d.begin(c)
	c.Call(cmd, argv)
	d.end()
}

// Together runs f, whose Execs become one unit: their effects are one
// record, so the log holds all of them or none (a slot handover's
// directory move, RELEASE from one group and CLAIM by another, which a
// crash between two records would leave with the slots free). The
// caller holds the lock.
func (d *Door) Together(f func()) {
	var c engine.Ctx
	d.begin(&c)
	f()
	d.end()
}

// Depth is the nesting of the running units (0: none), for Unwind.
func (d *Door) Depth() int { return d.depth }

// Unwind ends the units a panic interrupted, down to depth to (0 for a
// connection's containment, the EXEC's own depth for a queued command's):
// what they recorded, including the engine's resynchronisation of the
// failing command's keys, goes to the log when the outermost unit ends, so
// that followers keep the executor's state. The lock is held.
func (d *Door) Unwind(to int) {
	for d.depth > to {
		d.end()
	}
}
