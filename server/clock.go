package server

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

// wallOffset is wall-clock ns minus nanotime, resynchronised with the wall
// clock at most every clockResync, so that a batch of commands needs one
// monotonic read to know its time. It belongs to the machine's clocks, not
// to one Server, so it is shared.
var (
	wallOffset atomic.Int64
	wallSynced atomic.Int64 // nanotime of the last resync; 0 = never
)

const clockResync = int64(10 * time.Millisecond)

// batchClock returns the time of the commands about to run under a fresh
// acquisition of the engine lock (unix ms, never lower than the previous
// batch's, as now() guarantees) and the monotonic ns at which the batch
// started.
func (s *Server) batchClock() (ms, mono int64) {
	mono = nanotime()
	if last := wallSynced.Load(); last == 0 || mono-last > clockResync {
		wall := time.Now().UnixNano()
		mono = nanotime()
		wallOffset.Store(wall - mono)
		wallSynced.Store(mono)
	}
	t := (mono + wallOffset.Load()) / 1e6
	for {
		prev := s.lastNow.Load()
		if t <= prev {
			return prev, mono
		}
		if s.lastNow.CompareAndSwap(prev, t) {
			return t, mono
		}
	}
}
