package server

import (
	"sync/atomic"
	"time"
	_ "unsafe" // go:linkname

	"limitdb/engine"
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

// chargeBatch shares the time since t0 evenly among the commands of a
// batch (INFO commandstats usec). The engine lock is held.
func (s *Server) chargeBatch(pend []*cmdStat, t0 int64) {
	if len(pend) == 0 {
		return
	}
	share := (nanotime() - t0) / int64(len(pend))
	for _, st := range pend {
		st.ns += share
		if st.ns >= 1000 {
			st.usec += st.ns / 1000
			st.ns %= 1000
		}
	}
}

// statOf returns cmd's stats entry, indexed by cmd.ID; the map cmdStats
// (what INFO reads) holds the same entries. Whoever resets the statistics
// must zero the entries in place or clear byID too. The engine lock is held.
func (s *Server) statOf(cmd *engine.Command) *cmdStat {
	if cmd.ID < len(s.stats.byID) {
		if st := s.stats.byID[cmd.ID]; st != nil {
			return st
		}
	}
	st := s.stats.cmdStats[cmd.Name]
	if st == nil {
		st = &cmdStat{}
		s.stats.cmdStats[cmd.Name] = st
	}
	if cmd.ID >= len(s.stats.byID) {
		n := max(engine.NumCommandIDs(), cmd.ID+1)
		s.stats.byID = append(s.stats.byID, make([]*cmdStat, n-len(s.stats.byID))...)
	}
	s.stats.byID[cmd.ID] = st
	return st
}
