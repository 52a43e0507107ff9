package server

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"limitdb/engine"
	"limitdb/procs"
)

// maxmemory: the used_memory figure, eviction before commands, and the
// OOM refusals of Redis 7.0's processCommand (see engine/DESIGN.md,
// "Memory and eviction", for why the figure comes from the Go heap).

// memGauge is used_memory: the Go heap's bytes in objects, sampled from
// runtime/metrics at most once per millisecond of command time (a read
// costs ~270 ns, too much for every command; ReadMemStats would stop the
// world), less the garbage the server knows of, corrected between samples
// by what the engine knows:
//
//	heap = min(objects, live + allocated since the last GC)
//	used = heap − pendingFree − logGarbage + written
//
// objects counts the dead objects the sweeper has not freed yet; live (the
// bytes the last GC marked) plus what was allocated since leaves those
// out, so that a collection takes effect at once. pendingFree is the
// estimated size of the keys evicted since the last completed GC (their
// memory is garbage the heap figure still counts; without it one eviction
// would look ineffective and the next command would evict again, emptying
// the keyspace before the GC ran), logGarbage the bytes of log buffers
// that became garbage since then (cluster.Node.LogMemory: two bytes of
// garbage per byte written, which eviction evicted data for: a quarter of
// maxmemory at 100 MB, issue 18), and written counts the argument bytes of
// deny-oom commands since the last sample (a pipeline can write megabytes
// within one millisecond).
//
// The figure eviction compares with maxmemory is used less
// mem_not_counted_for_evict (notCounted): what the log holds (its buffers,
// the entries in flight and cached) and the snapshot captures' arrays, up
// to logAllowance, and the evicted keys an active capture keeps alive, as
// Redis leaves out its AOF buffer and its replicas' output buffers
// (freeMemoryGetNotCountedMemory). Guarded by the engine lock.
type memGauge struct {
	limit       int64 // maxmemory, bytes; 0 = off
	heap        int64
	gcs         uint64
	sampledAt   int64 // command time (ms) of the sample; -1 = none
	pendingFree int64
	written     int64
	allocsAtGC  uint64 // allocated bytes (a running sum) when the last GC was seen
	// log reports the log's memory (nil without a log); logFreedAtGC is
	// its freed sum when the last GC was seen, logGarbage and logHeld are
	// from the last sample
	log          func() (held, freed int64)
	logFreedAtGC int64
	logGarbage   int64
	logHeld      int64
	// captures reports the memory of snapshot captures (the engine's
	// CaptureMemory); pinned is its evicted keys an active capture keeps
	// alive, at the last sample
	captures func() (arrays, pinned, freed int64)
	pinned   int64
	// limitNotCounted is the bounded part of notCounted (what the log and
	// the captures' arrays hold, within logAllowance) the Go memory limit
	// was set with
	limitNotCounted int64
	// failWait: eviction found nothing to evict while over the limit;
	// OOM waits until the collection count reaches it (0: not waiting)
	failWait   uint64
	samples    [4]metrics.Sample
	collecting atomic.Bool // a collection asked for by performEvictions is running
	// exceededSince is when memory went over the limit and eviction
	// could not bring it under (zero while it can), exceededTotal the
	// time of the spells that ended: INFO's total_ and
	// current_eviction_exceeded_time (Redis's performEvictions metrics)
	exceededSince time.Time
	exceededTotal time.Duration
	// startup is used_memory as the server was made, before it loaded or
	// served anything (used_memory_startup)
	startup int64
}

// noteEviction updates the exceeded time from one eviction's result as
// Redis's performEvictions does: running or failed starts a spell, OK
// ends it.
func (m *memGauge) noteEviction(res engine.EvictResult) {
	switch {
	case res != engine.EvictOK && m.exceededSince.IsZero():
		m.exceededSince = time.Now()
	case res == engine.EvictOK && !m.exceededSince.IsZero():
		m.exceededTotal += time.Since(m.exceededSince)
		m.exceededSince = time.Time{}
	}
}

// exceeded is INFO's total and current eviction-exceeded time.
func (m *memGauge) exceeded() (total, current time.Duration) {
	if !m.exceededSince.IsZero() {
		current = time.Since(m.exceededSince)
	}
	return m.exceededTotal + current, current
}

// evictionTimeLimit is Redis's evictionTimeLimitUs for
// maxmemory-eviction-tenacity: 50 µs a step up to 10 (500 µs, the
// default), then 15% more a step (~2 min at 99), none at 100 (0). What one
// command (or cron tick) leaves is evicted by the next ones (EvictRunning
// is not an OOM). Tenacity 0 is Redis's 0 µs: a stop at the first check,
// after 16 keys (1 ns here, as 0 means no bound).
func evictionTimeLimit(tenacity int64) time.Duration {
	switch {
	case tenacity == 0:
		return 1
	case tenacity <= 10:
		return time.Duration(50*tenacity) * time.Microsecond
	case tenacity < 100:
		return time.Duration(500*math.Pow(1.15, float64(tenacity-10))) * time.Microsecond
	}
	return 0
}

// logAllowance is how much of what the log holds is left out of the figure
// eviction compares with maxmemory (mem_not_counted_for_evict): its
// gathering buffers, the entries in flight, the log cache and raft-wal's
// commit buffer, and the arrays of the snapshot captures (Raft snapshots
// and BGSAVE: 40 bytes a key and 4 a bucket; no spare is kept while
// maxmemory is set), which like a Redis fork's copied pages are not data.
// Under 300,000 pipelined 1 KB SETs at maxmemory 100mb on a cluster of one
// the log holds 0.3–1 MB, a capture's arrays 4 MB while it lasts; with
// peers the cache's 16 entries add to it. Beyond
// the allowance they count, so they cannot grow outside maxmemory without
// bound (an entry may be 16 MB, maxEntry; a capture of 10M keys 400 MB).
const logAllowance = 16 << 20

func (m *memGauge) init() {
	m.samples[0].Name = "/memory/classes/heap/objects:bytes"
	m.samples[1].Name = "/gc/cycles/total:gc-cycles"
	m.samples[2].Name = "/gc/heap/live:bytes"
	m.samples[3].Name = "/gc/heap/allocs:bytes"
	m.sampledAt = -1
}

// refresh takes a new heap sample unless one was taken at command time now.
func (m *memGauge) refresh(now int64) {
	if now == m.sampledAt {
		return
	}
	m.sample()
	m.sampledAt = now
}

func (m *memGauge) sample() {
	metrics.Read(m.samples[:])
	var held, freed int64
	if m.log != nil {
		held, freed = m.log()
	}
	m.pinned = 0
	if m.captures != nil {
		a, p, f := m.captures()
		held, freed, m.pinned = held+a, freed+f, p
	}
	objects := m.samples[0].Value.Uint64()
	allocs := m.samples[3].Value.Uint64()
	if gcs := m.samples[1].Value.Uint64(); gcs != m.gcs {
		m.gcs, m.pendingFree = gcs, 0
		m.allocsAtGC, m.logFreedAtGC = allocs, freed
	}
	// what was allocated between the GC's end and this sample counts in
	// neither term (the errors of both go towards counting garbage, never
	// towards missing data, except that one): a sample per millisecond
	m.heap = int64(min(objects, m.samples[2].Value.Uint64()+allocs-m.allocsAtGC))
	m.logGarbage, m.logHeld = max(0, freed-m.logFreedAtGC), held
	m.written = 0
}

// collect starts a garbage collection unless one it started is running.
func (m *memGauge) collect() {
	if m.collecting.CompareAndSwap(false, true) {
		go func() {
			end := procs.Background() // its marking beside the loop
			runtime.GC()
			end()
			m.collecting.Store(false)
		}()
	}
}

// used is the current used_memory figure.
func (m *memGauge) used() int64 { return max(0, m.heap-m.pendingFree-m.logGarbage+m.written) }

// notCounted is mem_not_counted_for_evict: what the log and the
// snapshot captures' arrays hold, up to logAllowance, and the evicted keys
// an active capture keeps alive. Those are not bounded by the allowance:
// evicting more cannot free them (each eviction during a capture pins
// one more value), so counting them past it would evict the whole
// keyspace during a long snapshot; they go when it ends, as a Redis
// fork's copied pages do.
func (m *memGauge) notCounted() int64 { return min(m.logHeld, logAllowance) + m.pinned }

// over refreshes the figure at now and returns how far used_memory less
// mem_not_counted_for_evict is above maxmemory (≤ 0: under it).
func (m *memGauge) over(now int64) int64 {
	m.refresh(now)
	return m.used() - m.notCounted() - m.limit
}

// usedNow is used_memory from a fresh sample (INFO).
func (s *Server) usedNow() int64 {
	s.mem.sample()
	return s.mem.used()
}

// performEvictions evicts keys while used_memory is over maxmemory, as
// Redis's performEvictions: EvictOK when under the limit, EvictRunning when
// the batch ran out (not an OOM: the next command or the cron goes on),
// EvictFail when the policy has nothing (left) to evict. Its results time
// the spells over the limit (noteEviction).
func (s *Server) performEvictions(ctx *engine.Ctx) engine.EvictResult {
	if !s.executes() {
		return s.followerEvictions(ctx)
	}
	res := s.evictions(ctx)
	s.mem.noteEviction(res)
	return res
}

// evictions is performEvictions on the node that executes.
func (s *Server) evictions(ctx *engine.Ctx) engine.EvictResult {
	over := s.mem.over(ctx.Now)
	m := &s.mem
	if over <= 0 {
		m.failWait = 0
		return engine.EvictOK
	}
	if m.pendingFree > m.limit/4 {
		// A quarter of maxmemory was evicted since the last collection
		// and the heap still counts it, minus estimates. Evicting more on
		// that figure could empty the keyspace: eviction allocates
		// nothing, so the collector would not run to correct it (seen
		// with small sorted sets before memUsage walked their members).
		// Collect instead, and count as running (writes go on meanwhile).
		m.collect()
		return engine.EvictRunning
	}
	freed, res := s.door.Evict(ctx, over, math.MaxInt)
	m.pendingFree += freed
	if res == engine.EvictFail && s.eng.EvictPolicy() != engine.PolicyNoEviction {
		// Nothing (left) to evict. Before refusing writes, one collection:
		// part of the figure may be garbage the server does not know of
		// (replaced values, clients' buffers), and evicting everything for
		// it and then answering OOM with an empty keyspace is what a log
		// counted as data did (issue 18). Meanwhile writes go on, as while
		// eviction runs; if memory is still over after it, it is not
		// garbage, and writes are refused as in Redis.
		if m.failWait == 0 {
			m.failWait = m.gcs + 1
		}
		if m.gcs < m.failWait {
			m.collect()
			return engine.EvictRunning
		}
	}
	return res
}

// followerEvictions: a follower evicts nothing (the leader's evictions
// reach it as effects). Under noeviction nothing will free its memory
// either, so it refuses as Redis does; under an eviction policy the
// leader, over its own limit first with the same data, evicts.
func (s *Server) followerEvictions(ctx *engine.Ctx) engine.EvictResult {
	if s.mem.over(ctx.Now) > 0 && s.eng.EvictPolicy() == engine.PolicyNoEviction {
		return engine.EvictFail
	}
	return engine.EvictOK
}

// rejectOOM runs before every command while maxmemory is set (Redis's
// processCommand): it evicts if needed and, when memory stays over the
// limit, refuses deny-oom commands, every command queued in MULTI but
// EXEC/DISCARD/QUIT/RESET, and an EXEC whose queue holds a deny-oom
// command (which also discards the transaction). It records the OOM
// state for scripts (Ctx.OOM) and reports whether it answered.
func (s *Server) rejectOOM(cl *client, cmd *engine.Command, argv [][]byte) bool {
	oom := s.performEvictions(&cl.ctx) == engine.EvictFail
	cl.ctx.OOM = oom
	if !oom {
		if cmd.Has(engine.FlagDenyOOM) {
			for _, a := range argv {
				s.mem.written += int64(len(a))
			}
		}
		return false
	}
	// a script's declared flags decide (getCommandFlags)
	reject := cl.ctx.CallFlags(cmd, argv)&engine.FlagDenyOOM != 0
	control := isTxnControl(cmd.Name) && cmd.Name != "multi" && cmd.Name != "watch"
	if cl.tx.Active && !control {
		reject = true
	}
	if cl.tx.Active && cmd.Name == "exec" && queueHas(&cl.ctx, cl.tx.Queue, engine.FlagDenyOOM) {
		s.statOf(cmd).rejected++
		msg := "EXECABORT Transaction discarded because of: " + engine.ErrOOM
		cl.w.Error(msg)
		s.countError([]byte(msg))
		cl.tx.Reset()
		return true
	}
	if !reject {
		return false
	}
	if cl.tx.Active {
		cl.tx.Failed = true
	}
	s.statOf(cmd).rejected++
	cl.w.Error(engine.ErrOOM)
	s.countError([]byte(engine.ErrOOM))
	return true
}

// applyMaxmemory pushes maxmemory, maxmemory-policy and maxmemory-samples
// to the gauge and the engine, and evicts at once when the new limit is
// below the current usage (Redis starts its eviction timer there). The
// engine lock is held (or the server is not serving yet).
func (s *Server) applyMaxmemory() {
	limit, _ := strconv.ParseUint(s.conf.params["maxmemory"], 10, 64)
	s.mem.limit = int64(min(limit, math.MaxInt64))
	pol, _ := engine.ParsePolicy(s.conf.params["maxmemory-policy"])
	samples, _ := strconv.Atoi(s.conf.params["maxmemory-samples"])
	s.eng.SetEvictPolicy(pol, samples)
	tenacity, _ := strconv.ParseInt(s.conf.params["maxmemory-eviction-tenacity"], 10, 64)
	s.eng.EvictTimeLimit = evictionTimeLimit(tenacity)
	s.eng.SetCaptureSpare(s.mem.limit == 0)
	s.setGoMemoryLimit()
	if s.mem.limit != 0 {
		now, _ := s.door.Now()
		ctx := engine.Ctx{E: s.eng, Now: now, Pub: nodePub{s}} // evicted keys' events
		s.mem.sampledAt = -1
		s.performEvictions(&ctx)
	}
}

// goHeadroom is what the Go memory limit allows over maxmemory at least:
// the runtime's own memory (stacks, GC metadata, idle spans: ~8 MB for an
// idle limitdb) is not in used_memory.
const goHeadroom = 16 << 20

// setGoMemoryLimit makes the Go collector keep the heap near maxmemory:
// eviction keeps used_memory (live data plus uncollected garbage) under
// maxmemory, but with the default GOGC the heap may grow to twice the live
// data before a collection, and garbage that used_memory counts would be
// evicted for. With a soft limit of max(1.25 × maxmemory, maxmemory + 16
// MB) the collector runs as the heap approaches it (measured: peak RSS
// 1.33 × maxmemory while 10 × maxmemory is written, TestMaxmemoryRSS).
// The limit is process-wide: with several servers in one process (tests)
// the largest wins, and the limit found before is restored when no server
// has maxmemory set.
func (s *Server) setGoMemoryLimit() {
	goMem.Lock()
	defer goMem.Unlock()
	if s.mem.limit != 0 {
		if len(goMem.users) == 0 {
			goMem.orig = debug.SetMemoryLimit(-1)
		}
		// what eviction leaves out lies beyond maxmemory too: without it
		// the collector's room shrank by that much, down to a collection
		// every few MB (at 100mb with a 3.6 MB capture spare: 146 in
		// 300,000 SETs, 35 % more CPU)
		s.mem.limitNotCounted = min(s.mem.logHeld, logAllowance)
		goMem.users[s] = max(s.mem.limit+s.mem.limit/4, s.mem.limit+goHeadroom) + s.mem.limitNotCounted
	} else {
		if _, ok := goMem.users[s]; !ok {
			return
		}
		delete(goMem.users, s)
		if len(goMem.users) == 0 {
			debug.SetMemoryLimit(goMem.orig)
			paceGC(0)
			return
		}
	}
	paceGC(0) // maxmemory: no floor (gcpace.go)
	var lim int64
	for _, l := range goMem.users { // the max: order does not matter
		lim = max(lim, l)
	}
	debug.SetMemoryLimit(lim)
}

// goMem is the process's Go memory limit as the servers in it want it.
var goMem = struct {
	sync.Mutex
	orig  int64             // the limit before any server set one
	users map[*Server]int64 // servers with maxmemory set → their limit
	// GOGC's pacing (gcpace.go)
	live      uint64 // live heap after the last collection, as the cron last read it
	gcPercent int    // the GOGC set; 0: not set yet
	envGOGC   *bool  // the environment sets GOGC (read once)
}{users: map[*Server]int64{}}

// memCron continues an eviction the command batches left running, and
// advances the access-data pass (LFU decay, LRU saturation) so that a
// pass over the keyspace ends within 30 s of cron ticks (the engine lock
// is held).
func (s *Server) memCron(ctx *engine.Ctx) {
	if s.mem.limit != 0 {
		s.performEvictions(ctx)
		if d := min(s.mem.logHeld, logAllowance) - s.mem.limitNotCounted; d > 1<<20 || d < -1<<20 {
			s.setGoMemoryLimit()
		}
	}
	ctx.AgeAccess(300)
}
