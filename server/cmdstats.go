package server

import (
	"limitdb/door"
	"limitdb/engine"
)

// chargeBatch shares the time since t0 evenly among the commands of a
// batch (INFO commandstats usec). The engine lock is held.
func (s *Server) chargeBatch(pend []*cmdStat, t0 int64) {
	if len(pend) == 0 {
		return
	}
	share := (door.Nanotime() - t0) / int64(len(pend))
	tracking, threshold := s.latencyTracking, s.latencyMs
	for _, st := range pend {
		st.ns += share
		if st.ns >= 1000 {
			st.usec += st.ns / 1000
			st.ns %= 1000
		}
		if tracking {
			st.hist[latencyBucket(share)]++
		}
		if threshold > 0 && share/1e6 >= threshold {
			if st.fast {
				s.latencyAdd("fast-command", share/1e6)
			} else {
				s.latencyAdd("command", share/1e6)
			}
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
		st = &cmdStat{fast: cmd.Has(engine.FlagFast)}
		s.stats.cmdStats[cmd.Name] = st
	}
	if cmd.ID >= len(s.stats.byID) {
		n := max(engine.NumCommandIDs(), cmd.ID+1)
		s.stats.byID = append(s.stats.byID, make([]*cmdStat, n-len(s.stats.byID))...)
	}
	s.stats.byID[cmd.ID] = st
	return st
}
