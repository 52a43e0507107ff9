// Package engine is limitdb's keyspace: 16 databases of typed values with
// millisecond expiry, the data commands that operate on them, and the one
// command table. It is deterministic: the time of a command (Ctx.Now) and
// all randomness (Engine.Rand, engine state) are given, not read; nothing
// here reads the clock or iterates a Go map where the order could reach a
// reply or the state (Evict's time bound and rdb-key-save-delay's sleeps
// read the clock, node-local, reaching neither).
package engine

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"limitdb/resp"
)

// Kind is the type of a key's value, as TYPE names it.
type Kind uint8

const (
	KindNone Kind = iota
	KindString
	KindList
	KindHash
	KindSet
	KindZSet
	KindLimiter
)

var kindNames = [...]string{"none", "string", "list", "hash", "set", "zset", "ratelimit"}

func (k Kind) String() string { return kindNames[k] }

// String encodings.
const (
	encRaw uint8 = iota
	encInt
)

// NumDBs is the number of databases (SELECT 0..15).
const NumDBs = 16

// Engine holds the databases and the state that replicas share. It is not
// safe for concurrent use: its caller serializes access (a server's door
// holds the engine lock for a command, a MULTI/EXEC block or a script, so
// nothing observes it half done).
type Engine struct {
	DBs  [NumDBs]*DB
	Rand Rand
	// ReadRand serves randomness to standalone reads (RANDOMKEY,
	// SRANDMEMBER…). A follower serves reads without the log, so drawing
	// them from Rand would make replicas' Rand drift apart.
	ReadRand Rand

	// Scripts is owned by the scripting package (cache, Lua RNG state);
	// it lives here because it is replicated state.
	Scripts any

	// NoLazyDelete makes reads treat an expired key as absent without
	// deleting it (followers never delete on their own).
	NoLazyDelete bool

	Stats Stats

	// ClockMs is the time (unix ms) of the last unit executed. The door
	// never gives a unit an earlier time, and snapshots carry it, so time
	// does not go back across restarts either.
	ClockMs int64

	// Enc holds the encoding thresholds (CONFIG SET hash-max-listpack-…).
	Enc EncodingLimits
	// Settings are the cluster-wide settings that are not keys (settings.go).
	Settings Settings
	// Policies is the registry of named rate-limit policies (policy.go).
	Policies Policies
	// rlInline counts the RL.* decisions with inline numbers (rl_stats.go;
	// node-local, as every policy's counters).
	rlInline rlStats

	// Guard tracks the running script for the connection layer, which reads
	// it without the engine lock (BUSY replies, SCRIPT KILL).
	Guard ScriptGuard

	// Log receives what scripts write with redis.log, at Redis's levels
	// 0 (debug) … 3 (warning); nil discards. Node-local: the server sets
	// it to its logger, and nothing logged reaches a reply or the state.
	Log func(level int, msg string)

	// RDB writing options (rdbcompression no, rdbchecksum no), node-local
	// configuration set by the server under the engine lock; the zero value is Redis's
	// default. NoCompression writes strings verbatim (snapshots and DUMP,
	// as Redis's rdb_compression); NoChecksum writes a zero CRC64 trailer
	// and skips checking the trailer when loading a snapshot.
	RDBNoCompression, RDBNoChecksum bool
	// RDBKeySaveDelay and KeyLoadDelay (µs, rdb-key-save-delay and
	// key-load-delay, node-local, set under the engine lock) slow every
	// key an RDB save writes or a load reads, as Redis's debugDelay
	// (snapshot.go keyDelay); 0 is none
	RDBKeySaveDelay, KeyLoadDelay int64

	// EvictTimeLimit bounds the time one Evict call spends (Redis's
	// evictionTimeLimitUs, from maxmemory-eviction-tenacity; node-local,
	// set under the engine lock); 0 is no bound.
	EvictTimeLimit time.Duration

	// WriteDenied, when set (node-local, under the engine lock), is the error a script's
	// first write command gets: Redis's MISCONF while the last background
	// save failed (the server refuses write commands themselves).
	WriteDenied string
	// NoReplicas, when set (node-local, under the engine lock), is Redis's
	// NOREPLICAS, which a script that may write gets (after WriteDenied):
	// min-replicas-to-write is set and fewer good replicas are left (set
	// per command by the server).
	NoReplicas string

	ev  evictState // maxmemory-policy, eviction pool (evict.go); node-local
	blk blockState // clients blocked on keys, ready keys (blocking.go); node-local

	// Notify is notify-keyspace-events (Notify* bits, notify.go), a
	// cluster-wide setting: the executing node raises the events.
	Notify    int
	notifyBuf []byte // channel names being built (notify.go)

	// slots is db 0's per-slot index, set by EnableSlots (node-local:
	// derived from the keys); owned is the set of hash slots this group
	// owns (replicated state, changed by LIMITDB.SLOTS). cluster_slots.go.
	slots *slotIndex
	owned slotBits
	// slotsGen counts changes of owned and of the handovers (SlotsGen)
	slotsGen uint64
	// dir is the group's place in a cluster of groups and, in the group
	// that holds it, the directory (replicated state, changed by
	// LIMITDB.DIRECTORY); nil while the group is in no cluster. dirGen
	// counts its changes (DirGen). cluster_directory.go.
	dir    *directory
	dirGen uint64
	// migr is the slots in a handover, migs the handovers in progress
	// (replicated state, slot_migration.go); handoverFloor the largest
	// time floor an OWN brought (node-local)
	migr          slotBits
	migs          []*migration
	handoverFloor int64

	cow   cowState    // active captures (cow.go)
	dumpW *rdbWriter  // DUMP's encoder, kept for its LZF table (rdb.go)
	apply applyState  // Apply's reused context and buffers (apply.go)
	sort  sortScratch // SORT's reused vectors and buffers (sort.go)
	zv    zskip       // a command's view of a listpack sorted set (zset_listpack.go)
	hv    hashView    // a command's view of a listpack hash (hash_listpack.go)
}

// ScriptGuard is the runaway-script state shared between the scripting
// package (which runs the script under the engine lock) and the server (which must answer
// other clients without waiting for the engine lock). It is local, never replicated.
type ScriptGuard struct {
	StartMs atomic.Int64 // wall-clock ms the running script started; 0 when idle
	Wrote   atomic.Bool  // the running script has called a write command
	LimitMs atomic.Int64 // busy-reply-threshold (lua-time-limit) in ms (CONFIG SET)
	// MemLimit is lua-memory-limit in bytes (CONFIG SET): the most a script
	// may hold; 0 means no limit.
	MemLimit atomic.Int64
	kill     atomic.Value // func(): stop the running script
	// started, when a client waits for the engine lock with no script
	// running, is closed when the next script starts (Started)
	started atomic.Pointer[chan struct{}]

	// IsFunc: the running script is an FCALL (FUNCTION KILL stops it,
	// SCRIPT KILL does not, and its BUSY text names FUNCTION KILL).
	IsFunc atomic.Bool
	// Libraries and Functions are FUNCTION STATS's counts, kept here so
	// that a server busy with a script can answer it without the engine lock.
	Libraries, Functions atomic.Int64
	fnMu                 sync.Mutex
	fnName               string   // the running function (FUNCTION STATS)
	fnArgv               [][]byte // its caller's command, while it runs
}

// SetFunction records the function an FCALL runs and its command. argv is
// the caller's (its connection reads nothing while the call runs):
// ClearFunction drops it when the call ends, and Function copies it under
// the same lock, so no reader sees a buffer the connection reuses.
func (g *ScriptGuard) SetFunction(name string, argv [][]byte) {
	g.fnMu.Lock()
	g.fnName, g.fnArgv = name, argv
	g.fnMu.Unlock()
}

// ClearFunction ends what SetFunction recorded.
func (g *ScriptGuard) ClearFunction() {
	g.fnMu.Lock()
	g.fnName, g.fnArgv = "", nil
	g.fnMu.Unlock()
}

// Function returns a copy of the running function's name and command.
func (g *ScriptGuard) Function() (string, [][]byte) {
	g.fnMu.Lock()
	defer g.fnMu.Unlock()
	argv := make([][]byte, len(g.fnArgv))
	for i, a := range g.fnArgv {
		argv[i] = append([]byte(nil), a...)
	}
	return g.fnName, argv
}

// Started returns a channel closed when the next script starts: a client
// waiting for the engine lock stops waiting then, since that script may
// run past busy-reply-threshold and the client must get BUSY.
func (g *ScriptGuard) Started() <-chan struct{} {
	for {
		if p := g.started.Load(); p != nil {
			return *p
		}
		ch := make(chan struct{})
		if g.started.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}

// NoteStart wakes the waiters of Started (a script starts; the caller has
// set StartMs). One atomic swap when nobody waits.
func (g *ScriptGuard) NoteStart() {
	if p := g.started.Swap(nil); p != nil {
		close(*p)
	}
}

// SetKill installs the function that stops the running script.
func (g *ScriptGuard) SetKill(f func()) { g.kill.Store(f) }

// Kill asks the running script to stop.
func (g *ScriptGuard) Kill() {
	if f, ok := g.kill.Load().(func()); ok {
		f()
	}
}

// Limit is the effective lua-time-limit in ms (0: busy at once, as Redis).
func (g *ScriptGuard) Limit() int64 { return g.LimitMs.Load() }

// Defaults of the script limits (CONFIG busy-reply-threshold and
// lua-memory-limit).
const (
	DefaultBusyMs      = 5000
	DefaultLuaMemLimit = 256 << 20
)

// Stats are the counters INFO reports.
type Stats struct {
	KeyspaceHits   int64
	KeyspaceMisses int64
	ExpiredKeys    int64
	Dirty          int64 // changes since start (rdb_changes_since_last_save)
	EvictedKeys    int64 // keys deleted by maxmemory eviction
	// ExpireChecked counts the keys with a TTL the active expiry looked
	// at (of which ExpiredKeys counts those it deleted, with the lazy
	// expiries): INFO's expired_stale_perc is their ratio, per cron run
	ExpireChecked int64
}

// initialRandSeed is Rand's state in a new engine.
const initialRandSeed = 0x6c696d6974646200

// New returns an engine with 16 empty databases.
func New() *Engine {
	e := &Engine{Enc: defaultLimits}
	e.Guard.LimitMs.Store(DefaultBusyMs)
	e.Guard.MemLimit.Store(DefaultLuaMemLimit)
	for i := range e.DBs {
		e.DBs[i] = &DB{ID: i}
	}
	e.Rand.Seed(initialRandSeed)
	e.ReadRand.Seed(0x7265616472616e64)
	e.ev.access.Seed(0x6c6675636f756e74)
	e.ev.samples = 5
	return e
}

// DB is one database.
type DB struct {
	ID      int
	dict    dict
	expires int // keys with a deadline
	watched map[string][]*Watch
	expCur  uint64 // active-expiry cursor
	// blocking holds the queues of clients blocked on keys of this
	// database (blocking.go); node-local, like watched
	blocking map[string]*waitQueue
}

// Len is the number of keys, expired ones not yet deleted included (DBSIZE).
func (db *DB) Len() int { return db.dict.len() }

// Expires is the number of keys with a deadline.
func (db *DB) Expires() int { return db.expires }

// CountExpired counts the keys alive at now and those past their deadline
// (a snapshot loads both; the server reports them after loading one).
func (db *DB) CountExpired(now int64) (alive, expired int64) {
	db.dict.each(func(e *entry) bool {
		if e.expired(now) {
			expired++
		} else {
			alive++
		}
		return true
	})
	return alive, expired
}

// Ctx is one command's execution context.
type Ctx struct {
	E   *Engine
	DB  *DB
	W   *resp.Writer
	Now int64 // the command's time, unix ms

	Cmd      *Command
	InScript bool // called from Lua (redis.call)
	InMulti  bool // executed by EXEC
	ReadOnly bool // writes refused (EVAL_RO, read-only replica)
	// OOM: used memory was over maxmemory when the command started (a
	// script's first deny-oom write is then refused, as in Redis).
	OOM bool
	// Applying: the command is an effect being applied (Engine.Apply), not
	// a client's: Now is math.MinInt64, so nothing counts as expired, and
	// node-local limits (lua-memory-limit) do not refuse what the
	// executing node accepted.
	Applying bool
	// AccessMs is the clock of the record being applied (its executor's
	// Now): what an applied effect stamps as a key's last access, so that
	// OBJECT IDLETIME on a follower counts from the write as on the leader.
	AccessMs int64

	// Deleted collects the keys the active expiry removed, when set.
	Deleted *[]string
	// ACL checks the commands a script calls against the caller's user,
	// and SORT's patterns (set by the server; nil: everything allowed).
	ACL ScriptACL
	// Calls counts the commands a script calls in the server's statistics
	// (INFO commandstats and errorstats; nil: not counted).
	Calls ScriptCalls
	// NoErrorStats: the error reply the command just wrote was counted in
	// the error statistics already (a script's error from a command it
	// called: Redis's ERR_REPLY_FLAG_NO_STATS_UPDATE). The server resets
	// it before each command.
	NoErrorStats bool

	// Block is set by a blocking command that found nothing to pop
	// (blocking.go): the connection layer blocks the client on it and
	// resets it. The command wrote no reply.
	Block *Waiter

	// Eff receives the effects of what runs with this Ctx (effects.go);
	// nil records nothing.
	Eff *Effects
	// Pub receives PUBLISH's messages and the keyspace events of what runs
	// with this Ctx (notify.go); nil publishes nothing.
	Pub  Publisher
	prop propState
}

// ScriptCalls counts what a script calls as Redis's scriptCall and call()
// count it: a command that ran (an error reply counts as a failed call
// and in the error statistics), or one refused before running (a rejected
// call, cmd nil when unknown, its error counted).
type ScriptCalls interface {
	ScriptCalled(cmd *Command, errReply string)
	ScriptRejected(cmd *Command, errReply string)
}

// ScriptACL is the caller's permission check for commands run by a
// script: it returns "" when allowed, else the error to raise.
type ScriptACL interface {
	ScriptCheck(cmd *Command, argv [][]byte) string
	// ScriptAllowed answers redis.acl_check_cmd (no log entry).
	ScriptAllowed(cmd *Command, argv [][]byte) bool
	// UnrestrictedKeyAccess: the user may run cmd and read every key;
	// SORT refuses BY and GET patterns otherwise (their keys come from
	// the data, so no key check sees them).
	UnrestrictedKeyAccess(cmd *Command, argv [][]byte) bool
}

// bstr views b as a string without copying, for lookups only: the result
// must not be stored.
func bstr(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// --- values ---------------------------------------------------------------

// str returns a string value's bytes as a string (copy-free for raw).
func (e *entry) str() string {
	if e.enc == encInt {
		return strconv.FormatInt(e.n, 10)
	}
	return unsafe.String((*byte)(e.p), int(e.n))
}

// appendStr appends a string value to b.
func (e *entry) appendStr(b []byte) []byte {
	if e.enc == encInt {
		return strconv.AppendInt(b, e.n, 10)
	}
	return append(b, unsafe.String((*byte)(e.p), int(e.n))...)
}

// strLen is STRLEN of a string value.
func (e *entry) strLen() int {
	if e.enc == encInt {
		var tmp [24]byte
		return len(strconv.AppendInt(tmp[:0], e.n, 10))
	}
	return int(e.n)
}

// setInt stores an integer string value.
func (e *entry) setInt(n int64) {
	e.kind = KindString
	e.enc = encInt
	e.p = nil
	e.n = n
}

// setObj stores an object value of kind k.
func (e *entry) setObj(k Kind, p unsafe.Pointer) {
	e.kind = k
	e.enc = 0
	e.p = p
	e.n = 0
}

// --- lookups ----------------------------------------------------------------

func (e *entry) expired(now int64) bool { return e.exp != 0 && e.exp <= now }

// find returns the live entry of key: an expired key is deleted (unless the
// engine is a follower) and reported absent.
func (c *Ctx) find(db *DB, key string) *entry {
	e := db.dict.find(key)
	if e == nil {
		return nil
	}
	if e.expired(c.Now) {
		if !c.E.NoLazyDelete && !c.E.heldForMigration(db, e) {
			c.expireKey(db, e)
		}
		return nil
	}
	return e
}

// lookupRead returns the live entry of key in the current DB and counts a
// keyspace hit or miss.
func (c *Ctx) lookupRead(key []byte) *entry {
	e := c.find(c.DB, bstr(key))
	if e == nil {
		c.E.Stats.KeyspaceMisses++
		c.notify(NotifyKeyMiss, "keymiss", key)
	} else {
		c.E.Stats.KeyspaceHits++
		c.touchLRU(e)
	}
	return e
}

// touchLRU records an access to e (OBJECT IDLETIME, or the LFU counter
// under an LFU policy) unless the command is flagged notouch.
func (c *Ctx) touchLRU(e *entry) {
	if c.Cmd == nil || c.Cmd.F&FlagNoTouch == 0 {
		if c.E.ev.lfu {
			e.lru = c.E.lfuIncr(e.lru)
		} else {
			e.lru = uint8(c.accessNow() / 1000)
		}
	}
}

// accessNow is the time an access is stamped with: Now, or the applied
// record's clock (Now is math.MinInt64 then).
func (c *Ctx) accessNow() int64 {
	if c.Applying {
		return c.AccessMs
	}
	return c.Now
}

// lookupWrite returns the live entry of key in the current DB (no
// stats), for a command that may change its value in place: while a
// capture is active the value is copied first if the capture shares it
// (cow.go).
func (c *Ctx) lookupWrite(key []byte) *entry {
	e := c.find(c.DB, bstr(key))
	if e != nil {
		c.touchLRU(e)
		if c.E.cow.active.Load() != 0 {
			c.E.cowEntry(e)
		}
	}
	return e
}

// lookupKind returns the live entry of key if it holds kind k. When the key
// holds another kind it writes WRONGTYPE and returns ok=false; a missing key
// is (nil, true).
func (c *Ctx) lookupKind(key []byte, k Kind, read bool) (e *entry, ok bool) {
	if read {
		e = c.lookupRead(key)
	} else {
		e = c.lookupWrite(key)
	}
	if e != nil && e.kind != k {
		c.W.Error(ErrWrongType)
		return nil, false
	}
	return e, true
}

// create adds key (absent or expired) to the current DB and returns its
// entry; the caller sets the value.
func (c *Ctx) create(key []byte) *entry {
	return c.createIn(c.DB, bstr(key))
}

// overwrite returns the entry that is to take a new value for key: e, the
// key's live entry, with its TTL cleared, or a new one when e is nil. It is
// Redis's setKey (dbOverwrite keeps the key, so no "new" event).
func (c *Ctx) overwrite(e *entry, key []byte) *entry {
	if e == nil {
		return c.create(key)
	}
	c.DB.setExpire(e, 0)
	return e
}

func (c *Ctx) createIn(db *DB, key string) *entry {
	if old := db.dict.find(key); old != nil {
		// expired and not yet deleted
		db.removeEntry(old)
	}
	e := db.dict.insert(key)
	e.lru = c.E.newAccess(c.accessNow())
	c.notifyKey(db, NotifyNew, "new", key) // Redis's dbAdd
	if len(db.blocking) != 0 {
		c.E.keyCreated(db, key) // Redis's dbAdd → signalKeyAsReady
	}
	return e
}

// removeEntry deletes e's key from db.
func (db *DB) removeEntry(e *entry) {
	if e.exp != 0 {
		db.expires--
	}
	db.dict.remove(e.keyStr())
}

// delete removes key from db if present (expired or not) and signals the
// change. It reports whether a live key was deleted.
func (c *Ctx) delete(db *DB, key string) bool {
	e := db.dict.find(key)
	if e == nil {
		return false
	}
	live := !e.expired(c.Now)
	if !live {
		c.expireKey(db, e)
		return false
	}
	db.removeEntry(e)
	c.signal(db, key)
	return true
}

// expireKey deletes an expired entry and counts it.
func (c *Ctx) expireKey(db *DB, e *entry) {
	key := e.keyStr()
	db.removeEntry(e)
	// Not a change of the command's (Redis's lazy expiry leaves
	// server.dirty alone): the DEL is its own effect, and a read that
	// reclaims a key must not propagate itself.
	c.E.Stats.ExpiredKeys++
	c.notifyKey(db, NotifyExpired, "expired", key)
	c.propagateDel(db, key)
	// A WATCH taken while the key was already past its deadline sees no
	// change when the key is reclaimed (Redis 7.0's touchWatchedKey skips
	// watches flagged expired); one taken while it was alive does.
	for _, w := range db.watched[key] {
		if w.WasAlive {
			w.Dirty = true
		}
	}
	if c.Deleted != nil {
		*c.Deleted = append(*c.Deleted, key)
	}
}

// setExpire sets (ms > 0) or clears (ms == 0) the deadline of e.
func (db *DB) setExpire(e *entry, ms int64) {
	if e.exp == 0 && ms != 0 {
		db.expires++
	} else if e.exp != 0 && ms == 0 {
		db.expires--
	}
	e.exp = ms
}

// signal records that key changed: it dirties WATCHes on it and counts a
// change. Every write must call it once per key it modifies.
func (c *Ctx) signal(db *DB, key string) {
	c.E.Stats.Dirty++
	c.touchWatches(db, key)
}

// touchWatches dirties the WATCHes on key without counting a change:
// Redis's signalModifiedKey for a command that changed nothing (LTRIM
// keeping every element), so no effect is recorded.
func (c *Ctx) touchWatches(db *DB, key string) {
	if len(db.watched) != 0 {
		for _, w := range db.watched[key] {
			w.Dirty = true
		}
	}
}

// touched is signal for the current DB with a []byte key.
func (c *Ctx) touched(key []byte) { c.signal(c.DB, bstr(key)) }

// --- active expiry ------------------------------------------------------------

// ActiveExpire walks up to maxBuckets buckets of db from its persistent
// cursor and deletes the keys whose deadline has passed, like Redis's
// active expire cycle walks its expires table. It returns the number of
// keys deleted. Because the cursor covers the whole table over successive
// calls, every expired key is reclaimed within one sweep. With effects on
// it is a unit of its own (Effects.NoMulti).
func (c *Ctx) ActiveExpire(db *DB, maxBuckets int) int {
	if db.expires == 0 {
		return 0
	}
	if c.Eff != nil {
		c.Eff.NoMulti = true // its DELs go out bare, as Redis's cycle's
	}
	n := 0
	for i := 0; i < maxBuckets; i++ {
		db.expCur = db.dict.scanBucket(db.expCur, func(e *entry) {
			if e.exp != 0 {
				c.E.Stats.ExpireChecked++
			}
			if e.expired(c.Now) && !c.E.heldForMigration(db, e) {
				c.expireKey(db, e)
				n++
			}
		})
		if db.expCur == 0 {
			break
		}
	}
	return n
}

// --- WATCH ----------------------------------------------------------------------

// Watch is one client's WATCH on one key.
type Watch struct {
	DB    *DB
	Key   string
	Dirty bool
	// alive/deadline at WATCH time: a key that was alive then and has
	// expired by EXEC counts as changed, as in Redis 7.
	WasAlive bool
}

// AddWatch registers a WATCH on key in db.
func (c *Ctx) AddWatch(db *DB, key string) *Watch {
	e := db.dict.find(key)
	w := &Watch{DB: db, Key: key, WasAlive: e != nil && !e.expired(c.Now)}
	if db.watched == nil {
		db.watched = make(map[string][]*Watch)
	}
	db.watched[key] = append(db.watched[key], w)
	return w
}

// RemoveWatch unregisters w.
func RemoveWatch(w *Watch) {
	db := w.DB
	ws := db.watched[w.Key]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(db.watched, w.Key)
	} else {
		db.watched[w.Key] = ws
	}
}

// Changed reports whether the watched key changed or expired since WATCH.
func (c *Ctx) WatchChanged(w *Watch) bool {
	if w.Dirty {
		return true
	}
	if w.WasAlive {
		e := w.DB.dict.find(w.Key)
		if e == nil || e.expired(c.Now) {
			return true
		}
	}
	return false
}

// KindOps are the per-type operations that generic key commands need
// (COPY, memory accounting). Each type's file fills its slot from init.
type KindOps struct {
	// Clone returns a deep copy of the object behind p (and the n word).
	Clone func(p unsafe.Pointer, n int64) (unsafe.Pointer, int64)
}

var kindOps [KindLimiter + 1]KindOps

// RegisterKind installs the operations of kind k.
func RegisterKind(k Kind, ops KindOps) { kindOps[k] = ops }

// rng is the random source for the running command: the replicated Rand
// for writes and for anything inside a script or a transaction (those run
// through the write path as one unit), ReadRand for a standalone read.
func (c *Ctx) rng() *Rand {
	if c.Cmd != nil && !c.Cmd.IsWrite() && !c.InScript && !c.InMulti {
		return &c.E.ReadRand
	}
	return &c.E.Rand
}
