package server

import (
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// Go collects only when the program allocates, and returns freed heap
// memory to the system gradually (its background scavenger paces itself to
// about 1% of a CPU). Two cases need the server's help:
//
//   - A burst that went away: after four clients each queued 300 MB in
//     MULTI and disconnected, RSS stayed at 1.49 GB for 100 s. Past
//     scavengeFree of free-but-held heap the cron returns it all.
//   - A server that went quiet after writing: with Raft on, each write
//     leaves about as much garbage as the data it adds (log entries,
//     encodings), so the heap stands at GOGC's twice-the-live-data when the
//     load stops and stays there, since nothing allocates to trigger a
//     collection. 1 s after 1M RL.ALLOW the process held 128.5 B per
//     limiter against 54.6 with appendonly no. When no command ran for
//     idleQuiet and the unreclaimed garbage is past idleGarbage (and a
//     quarter of the live heap), the cron collects and returns it.
//
// Both use debug.FreeOSMemory (a collection, then every free page), off
// the engine lock, one at a time.
const (
	scavengeFree  = 128 << 20
	scavengeEvery = 5 * time.Second
	idleQuiet     = 200 * time.Millisecond
	idleWaste     = 4 << 20
)

var scavenging atomic.Bool

type scavenger struct {
	last      time.Time // last burst return
	commands  int64     // s.stats.commands when it last changed
	quietFrom time.Time
	samples   []metrics.Sample
}

func (s *Server) scavenge(sc *scavenger) {
	now := time.Now()
	if n := s.stats.commands.Load(); n != sc.commands || sc.quietFrom.IsZero() {
		sc.commands, sc.quietFrom = n, now
	}
	if scavenging.Load() {
		return
	}
	if sc.samples == nil {
		sc.samples = []metrics.Sample{
			{Name: "/memory/classes/heap/free:bytes"},
			{Name: "/memory/classes/heap/objects:bytes"},
			{Name: "/gc/heap/live:bytes"},
		}
	}
	metrics.Read(sc.samples)
	for _, m := range sc.samples {
		if m.Value.Kind() != metrics.KindUint64 {
			return
		}
	}
	free, objects, live := sc.samples[0].Value.Uint64(), sc.samples[1].Value.Uint64(), sc.samples[2].Value.Uint64()
	if live != 0 {
		goMem.Lock()
		paceGC(live)
		goMem.Unlock()
	}
	burst := free >= scavengeFree && now.Sub(sc.last) >= scavengeEvery
	var garbage uint64
	if objects > live {
		garbage = objects - live
	}
	waste := garbage + free // both count in RSS
	idle := now.Sub(sc.quietFrom) >= idleQuiet && waste >= idleWaste && waste >= live/4
	if !burst && !idle {
		return
	}
	if burst {
		sc.last = now
	}
	if idle {
		// a Raft snapshot's capture leaves arrays the size of the key
		// table for the next one (engine/cow.go); an idle server has no
		// use for them: 35–40 MB of 1M keys' RSS
		s.eng.DropCaptureSpare()
	}
	scavenging.Store(true)
	go func() {
		defer scavenging.Store(false)
		debug.FreeOSMemory()
	}()
}
