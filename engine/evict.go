package engine

import (
	"math"
	"time"
)

// Eviction (maxmemory): the engine picks and deletes victims; the server
// decides when (it owns the memory figure, see server/maxmemory.go). The
// victims are chosen as Redis 7.0's evict.c does: sampled with
// maxmemory-samples over the dict's buckets, ranked in a 16-slot eviction
// pool (LRU, LFU, TTL) or drawn at random, with Engine.Rand as the only
// random source, so the same state and the same calls pick the same keys.
// The access byte of each entry (entry.lru) carries the LRU clock or the
// LFU counter, depending on the policy (see DESIGN.md).

// ErrOOM is Redis's refusal of a deny-oom command over maxmemory.
const ErrOOM = "OOM command not allowed when used memory > 'maxmemory'."

// Policy is a maxmemory-policy.
type Policy uint8

const (
	PolicyNoEviction Policy = iota
	PolicyAllKeysLRU
	PolicyAllKeysLFU
	PolicyAllKeysRandom
	PolicyVolatileLRU
	PolicyVolatileLFU
	PolicyVolatileRandom
	PolicyVolatileTTL
)

var policyNames = [...]string{"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"}

func (p Policy) String() string { return policyNames[p] }

// ParsePolicy returns the policy named s (lower case).
func ParsePolicy(s string) (Policy, bool) {
	for i, n := range policyNames {
		if n == s {
			return Policy(i), true
		}
	}
	return PolicyNoEviction, false
}

func (p Policy) volatile() bool { return p >= PolicyVolatileLRU }
func (p Policy) lfu() bool      { return p == PolicyAllKeysLFU || p == PolicyVolatileLFU }
func (p Policy) pooled() bool {
	return p != PolicyNoEviction && p != PolicyAllKeysRandom && p != PolicyVolatileRandom
}

// evictState is the node-local eviction state (never replicated: which keys
// a node evicts reaches followers as deletions).
type evictState struct {
	policy  Policy
	lfu     bool // policy.lfu(), read on every key access
	samples int
	pool    [evpoolSize]evictCand
	poolN   int
	nextDB  int // random policies rotate the first database tried
	// access draws the LFU counter's increment probability. It is its own
	// source because reads update the counter: drawing from Rand would
	// make a read change replicated state.
	access Rand
	// the access-data pass over every key (AgeAccess)
	aging   bool
	ageDB   int
	ageCur  uint64
	ageMin  int64 // minute the last pass started
	ageStep int   // buckets per call in this pass
}

// evpoolSize is Redis's EVPOOL_SIZE.
const evpoolSize = 16

type evictCand struct {
	idle uint64 // higher = better victim
	key  string // aliases the key arena (valid after deletion; pins at most 16 slabs)
	db   int
}

// LFU parameters: Redis's defaults for lfu-log-factor and LFU_INIT_VAL.
const (
	lfuLogFactor = 10
	lfuInitVal   = 5
)

// SetEvictPolicy sets maxmemory-policy and maxmemory-samples. Switching
// between LRU and LFU reinterprets every key's access byte, as in Redis
// (its OBJECT error texts warn that the data takes time to adjust).
func (e *Engine) SetEvictPolicy(p Policy, samples int) {
	if p != e.ev.policy {
		e.ev.poolN = 0 // pooled scores mean something else now
	}
	e.ev.policy = p
	e.ev.lfu = p.lfu()
	e.ev.samples = max(1, samples)
}

// EvictPolicy is the current maxmemory-policy.
func (e *Engine) EvictPolicy() Policy { return e.ev.policy }

// newAccess is the access byte of a new key.
func (e *Engine) newAccess(now int64) uint8 {
	if e.ev.lfu {
		return lfuInitVal
	}
	return uint8(now / 1000)
}

// lfuIncr is Redis's LFULogIncr for an access byte under an LFU policy:
// +1 with probability 1/((c-5)*10+1), saturating at 255.
func (e *Engine) lfuIncr(b uint8) uint8 {
	if b == 255 {
		return b
	}
	base := float64(b) - lfuInitVal
	if base < 0 {
		base = 0
	}
	if e.ev.access.Float64() < 1/(base*lfuLogFactor+1) {
		b++
	}
	return b
}

// EvictResult is what Evict achieved (Redis's EVICT_OK/RUNNING/FAIL).
type EvictResult int

const (
	EvictOK      EvictResult = iota // freed what was asked
	EvictRunning                    // stopped at maxKeys; call again
	EvictFail                       // nothing (more) can be evicted
)

// Evict deletes keys chosen by the policy until the estimated size of the
// deleted keys reaches toFree, or maxKeys keys were deleted, or (checked
// every 16 keys, as Redis's performEvictions) Engine.EvictTimeLimit has
// passed. Each deletion
// goes through the ordinary delete path: WATCH is signalled, the key is
// appended to Deleted when set, and Stats.EvictedKeys counts it. It returns
// the estimated bytes freed; while a capture is active the victims count
// as the capture's memory instead (it shares their values until it is
// released, CaptureMemory), and are left out of what it returns. With
// effects on it is a unit of its own (as Redis evicts before the command
// that needs the memory, apart from it): its DELs go out bare
// (Effects.NoMulti).
func (c *Ctx) Evict(toFree int64, maxKeys int) (int64, EvictResult) {
	if c.E.ev.policy == PolicyNoEviction {
		return 0, EvictFail
	}
	if c.Eff != nil {
		c.Eff.NoMulti = true
	}
	var freed, pinned int64
	defer func() { c.E.cow.pin(pinned) }()
	limit := c.E.EvictTimeLimit
	var start time.Time
	if limit > 0 {
		start = time.Now()
	}
	captured := c.E.cow.active.Load() > 0
	for n := 0; freed+pinned < toFree; n++ {
		if n == maxKeys || limit > 0 && n > 0 && n%16 == 0 && time.Since(start) > limit {
			return freed, EvictRunning
		}
		db, e := c.victim()
		if e == nil {
			return freed, EvictFail
		}
		if captured {
			pinned += e.memUsage()
		} else {
			freed += e.memUsage()
		}
		key := e.keyStr()
		db.removeEntry(e)
		c.E.Stats.EvictedKeys++
		c.signal(db, key)
		c.notifyKey(db, NotifyEvicted, "evicted", key)
		c.propagateDel(db, key)
		if c.Deleted != nil {
			*c.Deleted = append(*c.Deleted, key)
		}
	}
	return freed, EvictOK
}

// victim picks the next key to evict (nil when none is eligible).
func (c *Ctx) victim() (*DB, *entry) {
	ev := &c.E.ev
	vol := ev.policy.volatile()
	if !ev.policy.pooled() {
		// Redis: the first non-empty database from a rotating start,
		// then a random key of it.
		for i := 0; i < NumDBs; i++ {
			ev.nextDB = (ev.nextDB + 1) % NumDBs
			db := c.E.DBs[ev.nextDB]
			if db.dict.len() == 0 || (vol && db.expires == 0) {
				continue
			}
			if !vol {
				return db, db.dict.random(&c.E.Rand)
			}
			var pick *entry
			db.dict.sample(&c.E.Rand, 1, true, func(e *entry) { pick = e })
			if pick != nil {
				return db, pick
			}
		}
		return nil, nil
	}
	for {
		any := false
		for _, db := range c.E.DBs {
			if db.dict.len() == 0 || (vol && db.expires == 0) {
				continue
			}
			any = true
			db.dict.sample(&c.E.Rand, ev.samples, vol, func(e *entry) {
				ev.add(c.idleScore(e), e.keyStr(), db.ID)
			})
		}
		if !any {
			return nil, nil
		}
		// best candidate last; a pooled key may have been deleted since
		for ev.poolN > 0 {
			cand := ev.pool[ev.poolN-1]
			ev.poolN--
			db := c.E.DBs[cand.db]
			if e := db.dict.find(cand.key); e != nil && (!vol || e.exp != 0) {
				return db, e
			}
		}
	}
}

// idleScore ranks a candidate: higher is evicted first.
func (c *Ctx) idleScore(e *entry) uint64 {
	switch p := c.E.ev.policy; {
	case p == PolicyVolatileTTL:
		return math.MaxUint64 - uint64(e.exp)
	case p.lfu():
		return 255 - uint64(e.lru)
	}
	return uint64(uint8(c.Now/1000) - e.lru)
}

// add inserts a candidate into the pool, kept sorted by idle ascending, as
// evictionPoolPopulate does: into a free slot, or over the worst candidate
// when the new one is better; a key already pooled is not added twice.
func (ev *evictState) add(idle uint64, key string, db int) {
	for i := 0; i < ev.poolN; i++ {
		if ev.pool[i].db == db && ev.pool[i].key == key {
			return
		}
	}
	k := 0
	for k < ev.poolN && ev.pool[k].idle < idle {
		k++
	}
	switch {
	case k == 0 && ev.poolN == evpoolSize:
		return // worse than every pooled candidate
	case ev.poolN < evpoolSize:
		copy(ev.pool[k+1:ev.poolN+1], ev.pool[k:ev.poolN])
		ev.poolN++
	default:
		// full: drop the worst (slot 0) and insert at k-1
		k--
		copy(ev.pool[:k], ev.pool[1:k+1])
	}
	ev.pool[k] = evictCand{idle, key, db}
}

// sample calls fn for up to n entries found by walking consecutive buckets
// from a random one, jumping elsewhere after a run of empty buckets: Redis's
// dictGetSomeKeys, at most n*10 buckets. With volatile only keys with a
// deadline count; if none was found in those steps the walk goes on (at
// most once round the table) so that a database whose few volatile keys
// were missed is not taken for one without any.
func (d *dict) sample(r *Rand, n int, volatile bool, fn func(*entry)) {
	if d.count == 0 {
		return
	}
	mask := len(d.buckets) - 1
	i := r.Intn(mask + 1)
	found, empty := 0, 0
	for steps := 0; found < n && steps <= mask; steps++ {
		if steps >= n*10 && found > 0 {
			break
		}
		b := d.buckets[i]
		if b == 0 {
			empty++
			if empty >= 5 && empty > n && !volatile {
				i, empty = r.Intn(mask+1), 0
				continue
			}
		} else {
			empty = 0
			for j := b; j != 0 && found < n; {
				e := d.at(j - 1)
				j = e.next
				if !volatile || e.exp != 0 {
					fn(e)
					found++
				}
			}
		}
		i = (i + 1) & mask
	}
}

// memUsage estimates the bytes a key holds, for eviction's bookkeeping
// (see server/maxmemory.go: it is what the heap figure is credited until the
// collector reclaims the key): the entry and its bucket slot, the key, the
// value's structure and its element strings rounded up to 16 bytes (Go's
// size classes). Collections are walked: O(n), like freeing them, and only
// for the victims. Calibrated against the heap (1, 10 and 100 elements per
// key of every type): within -30%..+35% (TestMemUsageCalibrated).
func (e *entry) memUsage() int64 {
	n := int64(48)
	if e.klen == keyIndirect {
		n += 16 + allocLen(len(*(*string)(e.kp)))
	} else {
		n += int64(e.klen)
	}
	switch e.kind {
	case KindString:
		if e.enc != encInt {
			n += allocLen(int(e.n))
		}
	case KindList:
		n += e.list().memUsage()
	case KindHash:
		h := e.hash()
		if h.isLP() {
			n += int64(uint32(h.n)) // the listpack's allocation
			break
		}
		t := h.table()
		n += 64 + 32*int64(cap(t.kv))
		for i := range t.kv {
			n += allocLen(len(t.kv[i].f)) + elemAlloc(t.kv[i].v)
		}
		if t.idx != nil {
			n += 48 * int64(len(t.kv))
		}
	case KindSet:
		st := (*Set)(e.p)
		n += 64 + 8*int64(cap(st.ints)) + 16*int64(cap(st.members))
		for _, m := range st.members {
			n += allocLen(len(m))
		}
		if st.idx != nil {
			n += 48 * int64(len(st.members))
		}
	case KindZSet:
		z := e.zset()
		if z.isLP() {
			n += int64(uint32(z.n)) // the listpack's allocation
			break
		}
		sk := z.sk()
		n += 192 + 8*int64(len(sk.dict.buckets)) + 80*int64(sk.len())
		for x := sk.zsl.first(); x != nil; x = x.lv(0).forward {
			n += allocLen(len(x.member))
		}
	}
	return n
}

// allocLen is what a heap allocation of n bytes costs, roughly (Go rounds
// small objects up to size classes 16 bytes apart).
func allocLen(n int) int64 {
	if n == 0 {
		return 0
	}
	return int64((n + 15) &^ 15)
}

// elemAlloc is the heap cost of a list or hash element beyond its 16-byte
// slot (integers are inline).
func elemAlloc(x lelem) int64 {
	if x.p == nil {
		return 0
	}
	return allocLen(int(x.n))
}

// lruHorizon is the idle time (seconds) at which AgeAccess stops the LRU
// clock of a key: past it, every key looks equally old to LRU.
const lruHorizon = 128

// AgeAccess advances the pass over every key that keeps the one-byte access
// data meaningful, walking enough buckets that a pass ends within `calls`
// calls (the server calls it from its 100 ms cron with 300: 30 s). A pass
// starts once per minute, and only under an LRU or LFU policy:
//
//   - LFU: every counter loses one (lfu-decay-time 1), which Redis does
//     lazily from a 16-bit timestamp the entry has no room for;
//   - LRU: a key idle for lruHorizon seconds or more gets its clock set to
//     exactly lruHorizon ago, so idle times saturate (below 128 + 60 + 30 s)
//     instead of wrapping at 256 s and making a cold key look recent.
//
// Access data is node-local, so the pass needs no replication.
func (c *Ctx) AgeAccess(calls int) {
	ev := &c.E.ev
	p := ev.policy
	minute := c.Now / 60000
	if !ev.lfu && p != PolicyAllKeysLRU && p != PolicyVolatileLRU {
		// The minute is tracked under every policy, so that switching to
		// LFU mid-minute does not start a pass at once: a counter read
		// a second ago would lose one although no minute was crossed
		// (a scenario's OBJECT FREQ saw 5 where Redis answered 6).
		ev.aging, ev.ageMin = false, minute
		return
	}
	if ev.ageMin == 0 {
		ev.ageMin = minute // the first call: no minute crossed yet
	}
	if !ev.aging {
		if minute == ev.ageMin {
			return
		}
		total := 0
		for _, db := range c.E.DBs {
			total += len(db.dict.buckets)
		}
		ev.aging, ev.ageMin, ev.ageDB, ev.ageCur = true, minute, 0, 0
		ev.ageStep = max(64, total/max(1, calls))
	}
	clock := uint8(c.Now / 1000)
	visit := func(e *entry) {
		switch {
		case ev.lfu:
			if e.lru > 0 {
				e.lru--
			}
		case clock-e.lru >= lruHorizon:
			e.lru = clock - lruHorizon
		}
	}
	for n := ev.ageStep; n > 0 && ev.ageDB < NumDBs; n-- {
		db := c.E.DBs[ev.ageDB]
		if db.dict.len() == 0 {
			ev.ageDB, ev.ageCur = ev.ageDB+1, 0
			continue
		}
		ev.ageCur = db.dict.scanBucket(ev.ageCur, visit)
		if ev.ageCur == 0 {
			ev.ageDB++
		}
	}
	if ev.ageDB >= NumDBs {
		ev.aging = false
	}
}
