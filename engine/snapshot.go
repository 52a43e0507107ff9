package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"
)

// Snapshots of the whole state (see DESIGN.md "Snapshots"):
//
//	e.WriteSnapshot(w)       with the engine lock held: writes the state as it is now
//	s := e.Capture()         with the engine lock held: a point-in-time copy, cheap
//	s.WriteTo(w)             without the engine lock, while writes go on
//	s.Release()              when done (ends the copy-on-write it costs)
//	e.LoadSnapshot(r)        with the engine lock held: replaces the state
//	e.Reset(r)               LoadSnapshot, or a new engine's state (r nil)
//
// The format is RDB 10 (rdb.go). A snapshot holds the sixteen databases
// (keys in bucket order, with their deadlines), the engine's replicated
// state (ClockMs, Rand, Enc, the policy registry) and, through ScriptsCodec,
// the script cache.

// AuxField is an RDB aux field: a name and a value, which Redis skips when
// it does not know the name.
type AuxField struct{ Key, Value string }

// ScriptsCodec lets the owner of Engine.Scripts (the scripting package,
// which the engine does not import) save it into snapshots as aux fields
// and restore it.
type ScriptsCodec struct {
	// Owns reports whether an aux field name belongs to the scripts state.
	Owns func(key string) bool
	// Save returns the fields describing scripts (Engine.Scripts, maybe
	// nil). It runs with the engine lock held and must copy nothing that changes later.
	Save func(scripts any) []AuxField
	// Functions returns the code of every function library (FUNCTION
	// LOAD's payload, shebang line included), written as Redis 7.0 writes
	// them: one RDB_OPCODE_FUNCTION2 record each, after the aux fields.
	// Engine lock held, as Save.
	Functions func(scripts any) []string
	// Load builds a new Engine.Scripts from the fields a limitdb snapshot
	// held and the libraries any RDB file held (none for a file without
	// scripts or functions). An error fails the load.
	Load func(fields []AuxField, libs []string) (any, error)
}

var scriptsCodec ScriptsCodec

// RegisterScriptsCodec installs the scripts codec (the scripting package
// does it from init).
func RegisterScriptsCodec(c ScriptsCodec) { scriptsCodec = c }

// Snapshot is the state at one instant, written by WriteTo.
type Snapshot struct {
	e        *Engine
	captured bool // a Capture (holds a copy-on-write registration)
	released atomic.Bool
	dbs      [NumDBs]snapDB
	clockMs  int64
	rand     uint64
	enc      EncodingLimits
	policy   Policy
	scripts  []AuxField
	libs     []string // function libraries' code (RDB_OPCODE_FUNCTION2)
	acl      string
	policies []AuxField // the policy registry (policy_rdb.go)
	slots    string     // the owned hash slots (slot_owner.go), "" for none
	migs     []AuxField // the handovers in progress (slot_migration.go)
	dir      string     // the directory and the group's record (cluster_directory.go), "" in no cluster
	notify   int
	noLZF    bool  // Engine.RDBNoCompression when taken
	noCRC    bool  // Engine.RDBNoChecksum when taken
	keyDelay int64 // Engine.RDBKeySaveDelay when taken
	// written counts the keys WriteTo has encoded so far (INFO's
	// current_save_keys_processed), updated once per batch of buckets;
	// total is the key count, set when taken (Release leaves both)
	written atomic.Int64
	total   int64
	arrays  int64 // bytes of its entry and bucket arrays (a Capture's)
}

// snapDB is one database's table: a copy (Capture) or the live one
// (WriteSnapshot).
type snapDB struct {
	buckets []int32
	chunks  [][]entry
	all     []entry // a capture's copy, which chunks slice (nil: the live table)
	count   int
	expires int
}

func (d *snapDB) at(i int32) *entry { return &d.chunks[i>>chunkBits][i&(chunkSize-1)] }

var errSnapshotReleased = errors.New("engine: snapshot already released")

// writeBatch is how many buckets WriteTo gathers before encoding them.
const writeBatch = 256

// snapshotVersion is the limitdb-ver a snapshot is written with: the
// lowest version that holds what it carries.
func (s *Snapshot) snapshotVersion() int64 {
	if s.slots != "" || s.dir != "" || len(s.migs) > 0 {
		return 2
	}
	return 1
}

// header fills the engine-wide part of a snapshot (engine lock held).
func (e *Engine) snapshotHeader() *Snapshot {
	s := &Snapshot{e: e, clockMs: e.ClockMs, rand: e.Rand.State(), enc: e.Enc, policy: e.ev.policy, acl: e.Settings.ACL,
		notify: e.Notify, noLZF: e.RDBNoCompression, noCRC: e.RDBNoChecksum, keyDelay: e.RDBKeySaveDelay}
	if scriptsCodec.Save != nil {
		s.scripts = scriptsCodec.Save(e.Scripts)
	}
	s.policies = e.Policies.aux()
	s.slots = encodeSlotRanges(&e.owned)
	s.dir = encodeDirectory(e.dir)
	s.migs = e.migrationsAux()
	if scriptsCodec.Functions != nil {
		s.libs = scriptsCodec.Functions(e.Scripts)
	}
	return s
}

// Capture returns the state at this instant; the caller holds the engine lock and may
// release it as soon as Capture returns. Write the snapshot with WriteTo
// (without the engine lock, while other goroutines keep executing commands) and then
// call Release.
//
// The cost under the lock is a copy of each database's entry chunks and
// bucket array (40 bytes per key plus 4 per bucket; the key bytes, which
// never change, are shared): 1,000,000 keys take 44 MB and 23–74 ms on
// the shared 2-CPU VM (BenchmarkCapture1M; bench/RESULTS.md).
// Values are not copied: until Release, a write that would change a list,
// hash, set, sorted set or limiter object in place copies it first, once
// per object (cow.go). Strings are never changed in place below their
// length, so they need no copy.
func (e *Engine) Capture() *Snapshot {
	s := e.snapshotHeader()
	s.captured = true
	spare := e.cow.takeSpare()
	var reused int64 // of the spare's arrays (the rest is garbage now)
	for i, db := range e.DBs {
		d := &db.dict
		if d.count == 0 {
			continue
		}
		sd := &s.dbs[i]
		sd.count, sd.expires = d.count, db.expires
		s.total += int64(d.count)
		used := int(d.used)
		var all []entry
		if sp := spare; sp != nil && cap(sp.dbs[i].entries) >= used && cap(sp.dbs[i].buckets) >= len(d.buckets) {
			all = sp.dbs[i].entries[:used]
			sd.buckets = append(sp.dbs[i].buckets[:0], d.buckets...)
			reused += arraysSize(sp.dbs[i].entries, sp.dbs[i].buckets)
		} else {
			all = make([]entry, used)
			sd.buckets = slices.Clone(d.buckets)
		}
		sd.all = all
		sd.chunks = make([][]entry, (used+chunkSize-1)>>chunkBits)
		for c := range sd.chunks {
			lo := c << chunkBits
			hi := min(lo+chunkSize, used)
			copy(all[lo:hi], d.chunks[c])
			sd.chunks[c] = all[lo:hi:hi]
		}
		s.arrays += arraysSize(all, sd.buckets) + int64(len(sd.chunks))*int64(unsafe.Sizeof(sd.chunks[0]))
	}
	if spare != nil {
		e.cow.bytes.Add(-spare.size)
		e.cow.freed.Add(spare.size - reused)
	}
	e.cow.bytes.Add(s.arrays)
	// a new generation: every object that exists now may be shared (a
	// generation is never 0, which objects are created with)
	if e.cow.gen++; e.cow.gen == 0 {
		e.cow.gen = 1
	}
	e.cow.active.Add(1)
	return s
}

// Release ends the snapshot: its copy-on-write stops costing writes
// (once every capture is released) and its memory can go. Call it after
// WriteTo has returned; calling it again does nothing.
func (s *Snapshot) Release() {
	if s.released.Swap(true) {
		return
	}
	if s.captured {
		s.e.cow.active.Add(-1)
		s.e.cow.released(s.arrays, s.e.cow.keepSpare(s))
	}
	s.dbs = [NumDBs]snapDB{}
}

// Keys reports how many keys WriteTo has written so far and how many the
// snapshot holds (a progress figure; safe to call while WriteTo runs).
func (s *Snapshot) Keys() (written, total int64) {
	return s.written.Load(), s.total
}

// WriteSnapshot writes the state as it is now (the caller holds the engine lock for
// the whole write): the same bytes a Capture taken now would write,
// without the copy.
func (e *Engine) WriteSnapshot(w io.Writer) error {
	s := e.snapshotHeader()
	for i, db := range e.DBs {
		d := &db.dict
		s.dbs[i] = snapDB{buckets: d.buckets, chunks: d.chunks, count: d.count, expires: db.expires}
		s.total += int64(d.count)
	}
	_, err := s.WriteTo(w)
	s.Release()
	return err
}

// WriteTo writes the snapshot in RDB format. It needs no lock: a capture
// shares nothing that writes change in place.
func (s *Snapshot) WriteTo(out io.Writer) (int64, error) {
	if s.released.Load() {
		return 0, errSnapshotReleased
	}
	w := &rdbWriter{w: out, buf: make([]byte, 0, rdbFlushAt+16<<10), noLZF: s.noLZF, noCRC: s.noCRC}
	w.rawStr("REDIS0010")
	w.aux("redis-ver", "7.0.15")
	w.aux("redis-bits", "64")
	w.auxInt("ctime", s.clockMs/1000)
	w.aux("aof-base", "0")
	w.auxInt(auxVersion, s.snapshotVersion())
	w.auxInt(auxClock, s.clockMs)
	w.aux(auxRand, strconv.FormatUint(s.rand, 10))
	l := &s.enc
	w.aux(auxEncoding, fmt.Sprintf("%d %d %d %d %d %d", l.HashMaxListpackEntries, l.HashMaxListpackValue,
		l.SetMaxIntsetEntries, l.ZsetMaxListpackEntries, l.ZsetMaxListpackValue, l.ProtoMaxBulkLen))
	for _, f := range s.scripts {
		w.aux(f.Key, f.Value)
	}
	if s.acl != "" {
		w.aux(auxACL, s.acl)
	}
	w.auxInt(auxNotify, int64(s.notify))
	for _, f := range s.policies {
		w.aux(f.Key, f.Value)
	}
	if s.slots != "" {
		w.aux(auxSlots, s.slots)
	}
	if s.dir != "" {
		w.aux(auxDirectory, s.dir)
	}
	for _, f := range s.migs {
		w.aux(f.Key, f.Value)
	}
	// the function libraries, where Redis 7.0 writes them (rdbSaveFunctions:
	// after the aux fields, before the databases)
	for _, code := range s.libs {
		w.byte1(rdbOpFunction2)
		w.str(code)
	}
	nowSec := s.clockMs / 1000
	lru := s.policy == PolicyAllKeysLRU || s.policy == PolicyVolatileLRU
	lfu := s.policy.lfu()
	var batch []*entry
	var touch byte
	for i := range s.dbs {
		d := &s.dbs[i]
		if d.count == 0 {
			continue
		}
		w.byte1(rdbOpSelectDB)
		w.length(uint64(i))
		w.byte1(rdbOpResizeDB)
		w.length(uint64(d.count))
		w.length(uint64(d.expires))
		w.auxInt(auxBuckets, int64(len(d.buckets)))
		for lo := 0; lo < len(d.buckets); lo += writeBatch {
			// Gather a batch of buckets' entries first, touching each
			// key's first byte: the loads are independent, so their cache
			// misses overlap instead of stalling the encoder one by one
			// (bucket order is random in memory; this halves WriteTo for
			// 1M limiters). Each chain goes tail first: the loader inserts
			// at the head, so chains come back in the same order.
			batch = batch[:0]
			for _, b := range d.buckets[lo:min(lo+writeBatch, len(d.buckets))] {
				n := len(batch)
				for j := b; j != 0; {
					en := d.at(j - 1)
					batch = append(batch, en)
					if en.klen != 0 && en.klen != keyIndirect {
						touch ^= *(*byte)(en.kp)
					}
					j = en.next
				}
				slices.Reverse(batch[n:])
			}
			for _, en := range batch {
				if hint := en.keyEncHint(); hint != "" {
					w.aux(auxKeyEnc, hint)
				}
				if en.exp != 0 {
					w.byte1(rdbOpExpireMs)
					w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(en.exp))
				}
				if lru {
					w.byte1(rdbOpIdle)
					w.length(uint64(uint8(nowSec) - en.lru))
				} else if lfu {
					w.byte1(rdbOpFreq)
					w.byte1(en.lru)
				}
				w.byte1(en.rdbType())
				w.str(en.keyStr())
				w.value(en)
				if s.keyDelay != 0 {
					s.written.Add(1) // progress per key while each is slowed
					keyDelay(s.keyDelay)
				}
			}
			if s.keyDelay == 0 {
				s.written.Add(int64(len(batch)))
			}
		}
	}
	w.touch = touch // keeps the touching loads
	w.byte1(rdbOpEOF)
	w.flush()
	if w.err == nil {
		var sum [8]byte // all zero under rdbchecksum no, as Redis writes it
		binary.LittleEndian.PutUint64(sum[:], w.crc)
		k, err := out.Write(sum[:])
		w.n += int64(k)
		w.err = err
	}
	return w.n, w.err
}

// keyEncHint is the limitdb-key-enc aux of a string whose encoding the
// loader would not choose by itself (Redis's: int when canonical, else
// embstr up to 44 bytes, else raw): "raw" for a short APPEND/SETRANGE
// result, "embstr" for an INCRBYFLOAT result that reads as an integer.
func (e *entry) keyEncHint() string {
	if e.kind != KindString || e.enc == encInt {
		return ""
	}
	got := e.encoding()
	want := "raw"
	if e.n <= 20 {
		if _, ok := ParseInt(e.str()); ok {
			want = "int"
		}
	}
	if want == "raw" && e.n <= embstrMax {
		want = "embstr"
	}
	if got == want {
		return ""
	}
	return got
}

// Reset replaces the replicated state (the caller holds the engine lock): with the
// snapshot r holds (LoadSnapshot), or, when r is nil, with a new engine's —
// no keys (WATCHes on them are dirtied, as by FLUSHALL), Rand at its
// initial seed, an empty script cache and policy registry, no owned
// hash slots, no directory or cluster record, no handover — so that replaying a log from its
// start gives the state it gave the first time. ClockMs stays (the time
// floor never goes back), and so do the encoding limits (configuration,
// whose changes reach the log as CONFIG SET).
func (e *Engine) Reset(r io.Reader) error {
	if r != nil {
		return e.LoadSnapshot(r)
	}
	var scripts any
	if scriptsCodec.Load != nil {
		var err error
		if scripts, err = scriptsCodec.Load(nil, nil); err != nil {
			return err
		}
	}
	for _, db := range e.DBs {
		touchWatched(db, nil, 0)
		db.dict.clear()
		db.expires = 0
		db.expCur = 0
	}
	e.Scripts = scripts
	e.Policies = Policies{}
	e.owned = slotBits{}
	e.installMigrations(nil)
	e.slotsGen++
	e.dir = nil
	e.dirGen++
	e.Rand.Seed(initialRandSeed)
	return nil
}

// LoadSnapshot replaces the state with the snapshot r holds (the caller
// holds the engine lock): a limitdb snapshot exactly as written, or a dump.rdb of
// redis-server (up to RDB 10), whose values get the encodings Redis would
// give them under the current limits. All or nothing: on error the
// state is unchanged. WATCHes on keys present before are dirtied, as a
// flush does. Keys past their deadline are kept (reads treat them as
// absent and expiry reclaims them), so a follower's state equals its
// leader's.
func (e *Engine) LoadSnapshot(src io.Reader) error { return e.loadSnapshot(src, false) }

// ReloadSnapshot is LoadSnapshot for DEBUG RELOAD: the values of a
// limitdb snapshot get the encodings Redis's load would give them (a
// sorted set or hash that shrank below the listpack limits is a listpack
// again, a small all-integer set an intset, a short APPEND result
// embstr), as Redis's DEBUG RELOAD converts them; everything else is
// restored exactly.
func (e *Engine) ReloadSnapshot(src io.Reader) error { return e.loadSnapshot(src, true) }

// loader reads an RDB stream into a state beside e's, with e's settings
// (encoding limits, clock, checksum rule, key-load-delay).
func (e *Engine) loader(src io.Reader, reencode bool) *rdbLoader {
	return &rdbLoader{e: e, r: newRDBStream(src), lim: e.Enc, clock: e.ClockMs, rand: e.Rand.State(), noVerify: e.RDBNoChecksum, reencode: reencode, keyDelay: e.KeyLoadDelay}
}

func (e *Engine) loadSnapshot(src io.Reader, reencode bool) error {
	l := e.loader(src, reencode)
	if err := l.load(); err != nil {
		return err
	}
	var scripts any
	if scriptsCodec.Load != nil {
		var err error
		if scripts, err = scriptsCodec.Load(l.scripts, l.libs); err != nil {
			return err
		}
	}
	// the cluster-wide settings go to their owner first: an ACL it
	// refuses leaves everything as it was
	if l.acl != "" && e.Settings.OnACL != nil {
		if err := e.Settings.OnACL(l.acl); err != nil {
			return fmt.Errorf("the snapshot's users: %w", err)
		}
	}
	if l.acl != "" {
		e.Settings.ACL = l.acl
	}
	for i, db := range e.DBs {
		touchWatched(db, nil, 0)
		db.dict = l.dbs[i]
		db.expires = l.expires[i]
		db.expCur = 0
		e.scanReady(db) // as Redis's swapMainDbWithTempDb
	}
	e.attachSlots() // the loaded dicts come without db 0's slot index
	if scriptsCodec.Load != nil {
		e.Scripts = scripts
	}
	l.policies.adoptStats(&e.Policies)
	e.Policies = l.policies
	e.owned = l.owned
	e.installMigrations(l.migs)
	e.slotsGen++
	e.dir = l.dir
	e.dirGen++
	e.ClockMs = max(e.ClockMs, l.clock)
	e.Rand.Seed(l.rand)
	e.Enc = l.lim
	if f := e.Settings.OnConfig; f != nil {
		f("hash-max-listpack-entries", strconv.FormatInt(l.lim.HashMaxListpackEntries, 10))
		f("hash-max-listpack-value", strconv.FormatInt(l.lim.HashMaxListpackValue, 10))
		f("set-max-intset-entries", strconv.FormatInt(l.lim.SetMaxIntsetEntries, 10))
		f("zset-max-listpack-entries", strconv.FormatInt(l.lim.ZsetMaxListpackEntries, 10))
		f("zset-max-listpack-value", strconv.FormatInt(l.lim.ZsetMaxListpackValue, 10))
		f("proto-max-bulk-len", strconv.FormatInt(l.lim.ProtoMaxBulkLen, 10))
	}
	if l.notify != nil {
		e.Notify = int(*l.notify)
		if f := e.Settings.OnConfig; f != nil {
			f("notify-keyspace-events", strconv.FormatInt(*l.notify, 10))
		}
	}
	return nil
}

// rdbLoader is one LoadSnapshot in progress: the databases are built
// aside and installed only when the whole file checked out.
type rdbLoader struct {
	e       *Engine
	r       *rdbReader
	dbs     [NumDBs]dict
	expires [NumDBs]int
	buckets [NumDBs]uint64
	strict  bool
	lim     EncodingLimits
	clock   int64
	rand    uint64
	scripts []AuxField
	libs    []string // function libraries (RDB_OPCODE_FUNCTION2), in file order
	// policies is the policy registry a limitdb file held
	policies Policies
	owned    slotBits     // the owned hash slots (none in a file without limitdb-slots)
	dir      *directory   // the directory and the group's record (nil without limitdb-directory)
	acl      string       // Settings.ACL
	notify   *int64       // Notify (absent from snapshots older than it, and from Redis's files)
	migs     []*migration // the handovers in progress (limitdb-migration)
	// noVerify: rdbchecksum no, under which Redis does not check the
	// trailer of the files it loads
	noVerify bool
	// reencode: a limitdb snapshot's values are not strict (ReloadSnapshot)
	reencode bool
	keyDelay int64 // Engine.KeyLoadDelay (loadSnapshot)
}

func (l *rdbLoader) load() error {
	r := l.r
	hdr, err := r.view(9)
	if err != nil {
		return errors.New("Wrong signature trying to load DB from file")
	}
	if string(hdr[:5]) != "REDIS" {
		return errors.New("Wrong signature trying to load DB from file")
	}
	ver, perr := strconv.Atoi(string(hdr[5:]))
	if perr != nil || ver < 1 || ver > rdbVersion {
		return fmt.Errorf("Can't handle RDB format version %s", hdr[5:])
	}
	db := 0
	var exp int64
	hasExp := false
	idle, freq := int64(-1), int64(-1)
	o := loadOpts{lim: &l.lim}
	for {
		typ, err := r.byte1()
		if err != nil {
			return err
		}
		switch typ {
		case rdbOpExpire:
			b, err := r.view(4)
			if err != nil {
				return err
			}
			exp, hasExp = int64(int32(binary.LittleEndian.Uint32(b)))*1000, true
			continue
		case rdbOpExpireMs:
			b, err := r.view(8)
			if err != nil {
				return err
			}
			exp, hasExp = int64(binary.LittleEndian.Uint64(b)), true
			continue
		case rdbOpFreq:
			b, err := r.byte1()
			if err != nil {
				return err
			}
			freq = int64(b)
			continue
		case rdbOpIdle:
			n, err := r.length()
			if err != nil {
				return err
			}
			idle = int64(min(n, 255))
			continue
		case rdbOpEOF:
			return l.finish(ver)
		case rdbOpSelectDB:
			n, err := r.length()
			if err != nil {
				return err
			}
			if n >= NumDBs {
				return fmt.Errorf("the RDB file has database %d; limitdb has %d", n, NumDBs)
			}
			db = int(n)
			continue
		case rdbOpResizeDB:
			if _, err := r.length(); err != nil {
				return err
			}
			if _, err := r.length(); err != nil {
				return err
			}
			continue
		case rdbOpAux:
			if err := l.aux(&o, db); err != nil {
				return err
			}
			continue
		case rdbOpModuleAux:
			id, _ := r.length()
			return fmt.Errorf("the RDB file contains module aux data limitdb can't load: module '%s'", moduleTypeName(id))
		case rdbOpFunction, rdbOpFunction2:
			code, err := r.functionCode(typ)
			if err != nil {
				return fmt.Errorf("Failed loading library, %s", err)
			}
			l.libs = append(l.libs, code)
			continue
		}
		key, err := r.strString()
		if err != nil {
			return err
		}
		v, err := r.loadValue(typ, &o)
		if err != nil && err != errEmptyKey {
			return fmt.Errorf("key '%s' in database %d: %w", printable(key), db, err)
		}
		if l.keyDelay != 0 {
			keyDelay(l.keyDelay)
		}
		if err == nil {
			d := &l.dbs[db]
			if d.find(key) != nil {
				return fmt.Errorf("duplicate key '%s' in database %d", printable(key), db)
			}
			en := d.insert(key)
			v.install(en)
			if hasExp && exp != 0 {
				en.exp = exp
				l.expires[db]++
			}
			en.lru = l.access(idle, freq)
		}
		hasExp, idle, freq, o.keyEnc = false, -1, -1, ""
	}
}

// access is a loaded key's access byte (Redis's objectSetLRUOrLFU): the
// FREQ under an LFU policy, else the IDLE time before the clock.
func (l *rdbLoader) access(idle, freq int64) uint8 {
	if l.e.ev.lfu {
		if freq >= 0 {
			return uint8(freq)
		}
		return lfuInitVal
	}
	if idle >= 0 {
		return uint8(l.clock/1000 - idle)
	}
	return uint8(l.clock / 1000)
}

// aux handles an aux field: limitdb's own, the script codec's, or one to
// skip (Redis's informational fields, unknown names).
func (l *rdbLoader) aux(o *loadOpts, db int) error {
	k, err := l.r.strString()
	if err != nil {
		return err
	}
	v, err := l.r.strString()
	if err != nil {
		return err
	}
	bad := func() error { return fmt.Errorf("bad %s aux field '%s'", k, printable(v)) }
	switch k {
	case auxVersion:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return bad()
		}
		if n > SnapshotVersion {
			return fmt.Errorf("the snapshot's limitdb format version %d is newer than this binary supports (%d)", n, SnapshotVersion)
		}
		l.strict = true
		o.strict = !l.reencode
		return nil
	}
	if !l.strict {
		return nil // Redis's fields; limitdb's only count in a limitdb file
	}
	switch {
	case k == auxClock:
		if l.clock, err = strconv.ParseInt(v, 10, 64); err != nil {
			return bad()
		}
	case k == auxRand:
		if l.rand, err = strconv.ParseUint(v, 10, 64); err != nil {
			return bad()
		}
	case k == auxEncoding:
		f := strings.Fields(v)
		var n [6]int64
		if len(f) != len(n) {
			return bad()
		}
		for i := range f {
			if n[i], err = strconv.ParseInt(f[i], 10, 64); err != nil {
				return bad()
			}
		}
		l.lim = EncodingLimits{n[0], n[1], n[2], n[3], n[4], n[5]}
	case k == auxBuckets:
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 || n&(n-1) != 0 || n > 1<<31 {
			return bad()
		}
		l.buckets[db] = n
	case k == auxKeyEnc:
		if v != "raw" && v != "embstr" {
			return bad()
		}
		if !l.reencode {
			o.keyEnc = v
		}
	case k == auxACL:
		l.acl = v
	case k == auxNotify:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return bad()
		}
		l.notify = &n
	case k == auxSlots:
		if l.owned, err = decodeSlotRanges(v); err != nil {
			return bad()
		}
	case k == auxDirectory:
		if l.dir, err = decodeDirectory(v); err != nil {
			return bad()
		}
	case k == auxMigration:
		m, ok := decodeMigration(v)
		if !ok {
			return bad()
		}
		l.migs = append(l.migs, m)
	case k == auxPolicy || k == auxPolicyVer:
		if _, err := l.policies.loadAux(k, v); err != nil {
			return bad()
		}
	case scriptsCodec.Owns != nil && scriptsCodec.Owns(k):
		l.scripts = append(l.scripts, AuxField{k, v})
	}
	return nil
}

// finish checks the checksum and gives each database of a limitdb
// snapshot its bucket array and chain order back.
func (l *rdbLoader) finish(ver int) error {
	if !checkMigrations(l.migs, &l.owned) {
		return fmt.Errorf("bad %s aux fields: the handovers overlap or disagree with %s", auxMigration, auxSlots)
	}
	if ver >= 5 {
		want := l.r.sum()
		b, err := l.r.view(8)
		if err != nil {
			return err
		}
		if got := binary.LittleEndian.Uint64(b); got != 0 && got != want && !l.noVerify {
			return fmt.Errorf("Wrong RDB checksum expected: (%x) but got (%x)", want, got)
		}
	}
	for i := range l.dbs {
		d := &l.dbs[i]
		if n := l.buckets[i]; n != 0 && d.count > 0 {
			// the live table had n buckets; a table holds at least one
			// per key and shrinks below an eighth full (16 × for slack)
			if n < uint64(d.count) || n > uint64(max(64, 16*d.count)) {
				return fmt.Errorf("bad %s aux field '%d' for %d keys", auxBuckets, n, d.count)
			}
			d.rebuild(int(n))
		}
	}
	return nil
}

// rebuild gives a freshly loaded dict (no deletions: slot order is load
// order) n buckets, each chain in the order sequential head insertions
// into a table of n buckets would give.
func (d *dict) rebuild(n int) {
	nb := make([]int32, n)
	mask := uint64(n - 1)
	for i := int32(0); i < d.used; i++ {
		e := d.at(i)
		h := hashKey(e.keyStr()) & mask
		e.next = nb[h]
		nb[h] = i + 1
	}
	d.buckets = nb
}

// printable quotes a key for an error message (at most 64 bytes).
func printable(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// keyDelay is Redis's debugDelay, run after each key an RDB save writes
// (rdb-key-save-delay) or a load reads (key-load-delay): us > 0 sleeps us
// microseconds; us < 0 sleeps 1 µs once in -us keys on average (Redis's
// "statistically sleeping less often").
func keyDelay(us int64) {
	if us < 0 {
		if rand.Int64N(-us) != 0 {
			return
		}
		us = 1
	}
	time.Sleep(time.Duration(us) * time.Microsecond)
}
