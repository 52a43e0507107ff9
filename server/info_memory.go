package server

import (
	"runtime"

	"limitdb/luavm"
)

// INFO's figures beyond used_memory (maxmemory.go): its breakdown, the
// allocator's own figures, and the counters of socket reads and writes
// and of the cron's active expiry.

// memParts is used_memory's breakdown in Redis's terms.
type memParts struct {
	startup, clients, replicas, log, scripts int64
	overhead, dataset                        int64
	datasetPerc                              float64
}

// memBreakdown splits used (used_memory) as Redis's getMemoryOverheadData
// does: the overhead is the memory at start-up (used_memory_startup), the
// replies not yet written to clients (mem_clients_normal), what is queued
// for SYNC readers (mem_clients_slaves), the Raft log's entries held in
// memory (mem_aof_buffer: the log is limitdb's append-only file) and the
// script and function caches; the dataset is the rest. The engine lock is
// held (the log's figure is the last sample's: usedNow).
func (s *Server) memBreakdown(used uint64) memParts {
	lm := luavm.Memory(s.eng)
	p := memParts{
		startup:  s.mem.startup,
		clients:  s.outTotal.Load(),
		replicas: s.stats.replQueued.Load(),
		log:      s.mem.logHeld,
		scripts:  lm.ScriptsEval + lm.FunctionsMem,
	}
	p.overhead = p.startup + p.clients + p.replicas + p.log + p.scripts
	p.dataset = max(int64(used)-p.overhead, 0)
	if net := int64(used) - p.startup; net > 0 {
		p.datasetPerc = float64(p.dataset) * 100 / float64(net)
	}
	return p
}

// allocator is the Go heap in the terms of Redis's jemalloc fields:
// allocated is the bytes in live and not yet swept objects
// (HeapAlloc), active the bytes of the spans that hold them (HeapInuse),
// resident the heap memory obtained from the system and not returned to
// it (HeapSys − HeapReleased).
type allocator struct{ allocated, active, resident uint64 }

func allocatorOf(ms *runtime.MemStats) allocator {
	return allocator{ms.HeapAlloc, ms.HeapInuse, ms.HeapSys - ms.HeapReleased}
}

func ratio(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// noteRead counts a read of a client socket that took n bytes.
func (s *Server) noteRead(n int) {
	if n > 0 {
		s.stats.netInput.Add(int64(n))
		s.stats.reads.Add(1)
	}
}

// noteWrite counts a write to a client socket that took n bytes.
func (s *Server) noteWrite(n int) {
	if n > 0 {
		s.stats.netOutput.Add(int64(n))
		s.stats.writes.Add(1)
	}
}

// noteExpireRun accounts for one run of the cron's active expiry: d ns,
// expired of the checked keys with a TTL deleted. The stale share is
// Redis's running estimate (activeExpireCycle: 5% of each run's share,
// 95% of the previous estimate). The engine lock is held.
func (s *Server) noteExpireRun(d int64, expired int, checked int64) {
	s.stats.expireNs += d
	if checked > 0 {
		cur := float64(expired) * 100 / float64(checked)
		s.stats.expireStale = cur*0.05 + s.stats.expireStale*0.95
	}
}
