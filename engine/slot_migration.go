package engine

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"limitdb/resp"
)

// A slot handover (issue 22, part 2) moves hash slots from group A (the
// source) to group B (the target) with one commit point, B's OWN. Each
// group keeps its side as replicated state, changed only by effects of
// LIMITDB.SLOTS that the server logs in that group:
//
//	A: MIGRATE id B ranges   owned → migrating (A still executes them)
//	B: IMPORT id A ranges    free → importing (B holds, never serves)
//	B: LOAD id payload       A's capture (CaptureSlots, StartSlotCapture), in chunks
//	B: APPLY id index rec    each committed A record after the capture
//	A: FREEZE id [floor]     migrating → frozen (A stops executing them)
//	B: OWN id floor digest   importing → owned: THE commit point
//	A: DONE id               frozen → gone (keys dropped: A answers MOVED)
//	A: CANCEL id [ABORTED]   back to owned, until OWN (see cmdSlotsCancel)
//	B: ABORT id              importing → free, the imported keys dropped
//
// OwnsSlot stays one bit test of the owned set, which holds the slots
// this group executes: migrating ones (A until FREEZE) and owned ones;
// a second bitmap, migr, holds every slot in a handover (migrating,
// frozen, importing), and SlotState reads both, and the migration's
// entry only for a slot in migr. So a frozen slot (A) or an importing one
// (B) fails OwnsSlot, and the server, on that miss path only, asks
// SlotState whether to park the request (frozen) or refuse it
// (importing), instead of answering MOVED.

// SlotState is one slot's place in this group (SlotState).
type SlotState uint8

const (
	SlotNone      SlotState = iota // not this group's
	SlotOwned                      // owned, executed here
	SlotMigrating                  // owned and executed here, being copied to another group
	SlotFrozen                     // moving to another group: not executed here any more
	SlotImporting                  // coming from another group: held here, not served
)

var slotStateNames = [...]string{"none", "owned", "migrating", "frozen", "importing"}

func (s SlotState) String() string { return slotStateNames[s] }

// MigrationRole says which end of a handover this group is.
type MigrationRole uint8

const (
	MigrationOut MigrationRole = 1 // the source, A
	MigrationIn  MigrationRole = 2 // the target, B
)

func (r MigrationRole) String() string {
	if r == MigrationOut {
		return "out"
	}
	return "in"
}

// Migration is one handover in progress, as Migrations lists it.
type Migration struct {
	ID     string
	Role   MigrationRole
	Peer   int       // the other group's index in the directory
	State  SlotState // SlotMigrating or SlotFrozen (out), SlotImporting (in)
	Ranges [][2]int  // its slots, sorted disjoint ranges
	// Floor: out, A's time floor (unix ms) that FREEZE recorded, which
	// the server passes to B's OWN; 0 before FREEZE.
	Floor int64
	// Applied: in, the source log index of the last APPLY (0: none), from
	// which a new leader of B resumes forwarding A's records.
	Applied uint64
	// Loaded: in, the keys LOAD installed; Failed: in, A's effects that
	// APPLY could not apply (OWN is refused while it is not 0).
	Loaded, Failed int64
}

// migration is a Migration with its slots as a set.
type migration struct {
	Migration
	slots slotBits
}

// Redis's texts where Redis has the case (cluster.c's CLUSTER SETSLOT
// MIGRATING / IMPORTING, a node with cluster-enabled no), limitdb's own
// for the rest.
const (
	ErrClusterDisabled = "ERR This instance has cluster support disabled"
	errMigID           = "ERR invalid migration id"
	errMigPeer         = "ERR invalid group index"
	errMigIndex        = "ERR invalid source record index"
	errMigFloor        = "ERR invalid time floor"
	errMigDigest       = "ERR invalid digest"
	errMigPayload      = "ERR bad migration LOAD payload"
	errMigRecord       = "ERR bad source record"
)

func errMigUnknown(id []byte) string { return "ERR no migration '" + string(id) + "'" }
func errMigExists(id []byte) string  { return "ERR migration '" + string(id) + "' already exists" }
func errMigRole(id []byte, want MigrationRole) string {
	if want == MigrationOut {
		return "ERR migration '" + string(id) + "' does not move slots out of this group"
	}
	return "ERR migration '" + string(id) + "' does not import slots into this group"
}

// ErrSlotMigrating is the refusal of a slot that is in a handover
// (MIGRATE, IMPORT, LIMITDB.SLOTS ADD/DEL).
func ErrSlotMigrating(slot int) string {
	return "ERR Slot " + strconv.Itoa(slot) + " is already in a migration"
}

func errNotOwner(slot int) string {
	return "ERR I'm not the owner of hash slot " + strconv.Itoa(slot)
}
func errAlreadyOwner(slot int) string {
	return "ERR I'm already the owner of hash slot " + strconv.Itoa(slot)
}
func errSlotHoldsKeys(slot int) string {
	return "ERR Can't import hash slot " + strconv.Itoa(slot) + " while I still hold keys for it"
}
func errMigFrozen(id []byte) string {
	return "ERR migration '" + string(id) + "' is frozen: cancel it once the target has aborted it (CANCEL id ABORTED)"
}
func errMigNotFrozen(id []byte) string {
	return "ERR migration '" + string(id) + "' is not frozen"
}
func errMigFrozenAlready(id []byte) string {
	return "ERR migration '" + string(id) + "' is frozen already"
}
func errMigApplied(id []byte, n uint64) string {
	return "ERR migration '" + string(id) + "' has applied source record " + strconv.FormatUint(n, 10) + " already"
}
func errMigLoadLate(id []byte) string {
	return "ERR migration '" + string(id) + "' has applied source records: a capture chunk is older than them"
}
func errMigKeySlot(id []byte, key string, slot int) string {
	return "ERR key '" + printable(key) + "' is in slot " + strconv.Itoa(slot) + ", which migration '" + string(id) + "' does not import"
}
func errMigDigestDiffers(id []byte) string {
	return "ERR migration '" + string(id) + "': the slots' digest differs from the source's"
}
func errMigFailed(id []byte, n int64) string {
	return "ERR migration '" + string(id) + "' failed to apply " + strconv.FormatInt(n, 10) + " source effects"
}

// --- state and accessors -------------------------------------------------------

// SlotState is slot's state in this group and, in a handover, the
// migration's id. Caller holds the engine lock.
func (e *Engine) SlotState(slot int) (SlotState, string) {
	if !e.migr.has(slot) {
		if e.owned.has(slot) {
			return SlotOwned, ""
		}
		return SlotNone, ""
	}
	m := e.migrationOf(slot)
	return m.State, m.ID
}

// Migrations lists the handovers in progress, in the order they began.
// Caller holds the engine lock.
func (e *Engine) Migrations() []Migration {
	out := make([]Migration, len(e.migs))
	for i, m := range e.migs {
		out[i] = m.Migration
		out[i].Ranges = m.slots.ranges()
	}
	return out
}

// HandoverFloor is the largest time floor (unix ms) an OWN brought into
// this group (0: none since the process started; node-local, since OWN
// raised ClockMs, which snapshots carry, to it as well). The door's Now
// already keeps units at or above ClockMs; the door must also keep the
// time ReadTime gives out (its readTime) at or above it, so that a read
// served elsewhere never judges the moved keys earlier than A did.
func (e *Engine) HandoverFloor() int64 { return e.handoverFloor }

// MigrationDigest is the digest of the migration's slots here: per slot
// holding keys, in slot order, its number and its SlotDigest mixed in.
// The server on A takes it after FREEZE and sends it in B's OWN, which
// compares it with its own. O(keys in the slots). Caller holds the lock.
func (e *Engine) MigrationDigest(id string) (Digest, bool) {
	for _, m := range e.migs {
		if m.ID == id {
			return e.slotsDigest(&m.slots), true
		}
	}
	return Digest{}, false
}

func (e *Engine) slotsDigest(b *slotBits) Digest {
	var d Digest
	var buf []byte
	for _, r := range b.ranges() {
		for s := r[0]; s <= r[1]; s++ {
			if e.slots == nil || e.slots.slot[s].count == 0 {
				continue
			}
			sd := e.SlotDigest(s)
			buf = strconv.AppendInt(buf[:0], int64(s), 10)
			d.mix(buf)
			d.mix(sd[:])
		}
	}
	return d
}

func (e *Engine) migrationOf(slot int) *migration {
	for _, m := range e.migs {
		if m.slots.has(slot) {
			return m
		}
	}
	return nil
}

// claimedSlots is the slots this group answers for: the owned ones and
// the frozen ones, which it holds until DONE (OwnedSlots: CLUSTER SLOTS
// must not show a hole while a handover is frozen).
func (e *Engine) claimedSlots() slotBits {
	b := e.owned
	for _, m := range e.migs {
		if m.State == SlotFrozen {
			for i := range b {
				b[i] |= m.slots[i]
			}
		}
	}
	return b
}

// heldForMigration reports whether en, a key of db, is in a slot this
// group holds but must not change by itself: frozen (A's state of it is
// final) or importing (B's copy changes only with what A sends). Expiry
// leaves such keys alone; the source's DELs arrive as APPLY. Called only
// on the rare paths that reclaim an expired key.
func (e *Engine) heldForMigration(db *DB, en *entry) bool {
	if len(e.migs) == 0 || db.ID != 0 {
		return false
	}
	s := keySlot(en.keyStr())
	return e.migr.has(s) && !e.owned.has(s)
}

// --- the effects ----------------------------------------------------------------

// migrationCmd starts a migration subcommand: cluster mode on, the id
// parsed; it writes the error and returns false otherwise.
func (c *Ctx) migrationCmd(argv [][]byte) bool {
	if c.E.slots == nil {
		c.W.Error(ErrClusterDisabled)
		return false
	}
	id := argv[2]
	if len(id) == 0 || len(id) > 64 {
		c.W.Error(errMigID)
		return false
	}
	for _, b := range id {
		if b <= ' ' || b >= 0x7f || b == '\'' {
			c.W.Error(errMigID)
			return false
		}
	}
	return true
}

// migration finds the migration argv[2] names, of role; it writes the
// error and returns nil otherwise.
func (c *Ctx) migration(argv [][]byte, role MigrationRole) *migration {
	if !c.migrationCmd(argv) {
		return nil
	}
	for _, m := range c.E.migs {
		if m.ID == string(argv[2]) {
			if m.Role != role {
				c.W.Error(errMigRole(argv[2], role))
				return nil
			}
			return m
		}
	}
	c.W.Error(errMigUnknown(argv[2]))
	return nil
}

// changedMigrations counts a change of a handover's state (not of its
// progress, LOAD and APPLY): the effect is recorded (Dirty), the
// server's derived state recomputed (slotsGen).
func (c *Ctx) changedMigrations() {
	c.E.Stats.Dirty++
	c.E.slotsGen++
}

func (e *Engine) dropMigration(m *migration) {
	for i := range e.migr {
		e.migr[i] &^= m.slots[i]
	}
	for i, x := range e.migs {
		if x == m {
			e.migs = append(e.migs[:i], e.migs[i+1:]...)
			break
		}
	}
}

// beginMigration is MIGRATE and IMPORT: LIMITDB.SLOTS MIGRATE|IMPORT id
// peer start end [start end …]. Every slot must be in no handover, and
// owned (MIGRATE: Redis's SETSLOT MIGRATING text otherwise) or free
// (IMPORT: SETSLOT IMPORTING's text for an owned one) and without keys;
// the first slot in argument order that is not is refused, and nothing
// changes. Recorded with the merged ranges. +OK.
func (c *Ctx) beginMigration(argv [][]byte, role MigrationRole) {
	if !c.migrationCmd(argv) {
		return
	}
	peer, ok := ParseIntB(argv[3])
	if !ok || peer < 0 || peer >= 1<<20 {
		c.W.Error(errMigPeer)
		return
	}
	ranges, ok := c.parseSlotRanges(argv[4:])
	if !ok {
		return
	}
	e := c.E
	for _, m := range e.migs {
		if m.ID == string(argv[2]) {
			c.W.Error(errMigExists(argv[2]))
			return
		}
	}
	for _, r := range ranges {
		for s := r[0]; s <= r[1]; s++ {
			switch {
			case e.migr.has(s):
				c.W.Error(ErrSlotMigrating(s))
				return
			case role == MigrationOut && !e.owned.has(s):
				c.W.Error(errNotOwner(s))
				return
			case role == MigrationIn && e.owned.has(s):
				c.W.Error(errAlreadyOwner(s))
				return
			case role == MigrationIn && e.slots.slot[s].count != 0:
				// keys left from an earlier ownership (DELSLOTS keeps
				// them) would make B's digest differ from A's
				c.W.Error(errSlotHoldsKeys(s))
				return
			}
		}
	}
	m := &migration{Migration: Migration{ID: string(argv[2]), Role: role, Peer: int(peer), State: SlotMigrating}}
	if role == MigrationIn {
		m.State = SlotImporting
	}
	for _, r := range ranges {
		m.slots.setRange(r[0], r[1], true)
		e.migr.setRange(r[0], r[1], true)
	}
	e.migs = append(e.migs, m)
	c.changedMigrations()
	a := Args("LIMITDB.SLOTS").S(map[MigrationRole]string{MigrationOut: "MIGRATE", MigrationIn: "IMPORT"}[role]).B(argv[2]).I(peer)
	for _, r := range m.slots.ranges() {
		a = a.I(int64(r[0])).I(int64(r[1]))
	}
	c.Rewrite(a)
	c.W.OK()
}

func cmdSlotsMigrate(c *Ctx, argv [][]byte) { c.beginMigration(argv, MigrationOut) }
func cmdSlotsImport(c *Ctx, argv [][]byte)  { c.beginMigration(argv, MigrationIn) }

// cmdSlotsFreeze: LIMITDB.SLOTS FREEZE id [floor] — the source stops
// executing the slots (they leave the owned set; OwnedSlots still lists
// them until DONE). floor is A's time floor, recorded for OWN: on the
// executing node it is ClockMs (no unit A executed, in these slots or
// any, ran later), and the effect always carries it, so the followers
// record the same. +OK.
func cmdSlotsFreeze(c *Ctx, argv [][]byte) {
	m := c.migration(argv, MigrationOut)
	if m == nil {
		return
	}
	if len(argv) > 4 {
		c.W.Error(ErrSyntax)
		return
	}
	floor := max(c.E.ClockMs, c.Now)
	if len(argv) == 4 {
		f, ok := ParseIntB(argv[3])
		if !ok || f < 0 {
			c.W.Error(errMigFloor)
			return
		}
		floor = f
	}
	if m.State == SlotFrozen {
		c.W.Error(errMigFrozenAlready(argv[2]))
		return
	}
	m.State, m.Floor = SlotFrozen, max(floor, 0)
	for i := range c.E.owned {
		c.E.owned[i] &^= m.slots[i]
	}
	c.changedMigrations()
	c.Rewrite(Args("LIMITDB.SLOTS").S("FREEZE").B(argv[2]).I(m.Floor))
	c.W.OK()
}

// cmdSlotsCancel: LIMITDB.SLOTS CANCEL id [ABORTED] — the source keeps
// its slots (migrating or frozen → owned). Before FREEZE it is always
// safe: B logs OWN only with the digest A gives once frozen, so a
// migration A never froze can never be owned by B. After FREEZE, B may
// log OWN at any moment, and A taking the slots back then would make two
// owners: so a frozen migration is cancelled only with ABORTED, which the
// server sends once B's ABORT of it is committed (or B answers it has no
// such import and owns none of the slots). The slots' keys stay. +OK.
func cmdSlotsCancel(c *Ctx, argv [][]byte) {
	m := c.migration(argv, MigrationOut)
	if m == nil {
		return
	}
	aborted := false
	if len(argv) == 4 {
		if !EqualFold(argv[3], "aborted") {
			c.W.Error(ErrSyntax)
			return
		}
		aborted = true
	} else if len(argv) > 4 {
		c.W.Error(ErrSyntax)
		return
	}
	if m.State == SlotFrozen && !aborted {
		c.W.Error(errMigFrozen(argv[2]))
		return
	}
	for i := range c.E.owned {
		c.E.owned[i] |= m.slots[i]
	}
	c.E.dropMigration(m)
	c.changedMigrations()
	c.W.OK()
}

// cmdSlotsDone: LIMITDB.SLOTS DONE id — after B's OWN committed, the
// source drops the frozen slots' keys and the migration; from now on the
// slots are not this group's (MOVED). Reply: the number of keys deleted.
func cmdSlotsDone(c *Ctx, argv [][]byte) {
	m := c.migration(argv, MigrationOut)
	if m == nil {
		return
	}
	if m.State != SlotFrozen {
		c.W.Error(errMigNotFrozen(argv[2]))
		return
	}
	n := c.dropSlotKeys(&m.slots)
	c.E.dropMigration(m)
	c.changedMigrations()
	c.W.Int(n)
}

// cmdSlotsAbort: LIMITDB.SLOTS ABORT id — the target gives the import up:
// the keys it holds in the slots are dropped and the slots are free
// again. Always safe before OWN (B never owned them; A still does).
// Reply: the number of keys deleted.
func cmdSlotsAbort(c *Ctx, argv [][]byte) {
	m := c.migration(argv, MigrationIn)
	if m == nil {
		return
	}
	n := c.dropSlotKeys(&m.slots)
	c.E.dropMigration(m)
	c.changedMigrations()
	c.W.Int(n)
}

// dropSlotKeys deletes every key of db 0 in the slots of b through the
// dict (so the slot index follows), dirtying WATCHes on them, expired
// ones included. It raises no keyspace event and records no DEL: it is
// Redis's delKeysInSlot, which tells only modules (limitdb has none) and
// whose keys a client never sees leave one by one; followers apply the
// DONE or ABORT itself and delete the same keys. O(keys in the slots).
func (c *Ctx) dropSlotKeys(b *slotBits) int64 {
	db := c.E.DBs[0]
	var keys []string
	for _, r := range b.ranges() {
		for s := r[0]; s <= r[1]; s++ {
			for i := c.E.slots.slot[s].head; i != 0; i = c.E.slots.link(i - 1).next {
				keys = append(keys, db.dict.at(i-1).keyStr())
			}
		}
	}
	for _, k := range keys {
		db.removeEntry(db.dict.find(k))
		c.signal(db, k)
	}
	return int64(len(keys))
}

// --- LOAD: the capture --------------------------------------------------------

// loadPayloadVersion is the first byte of a LOAD payload. Then per key:
// uvarint length and the name, uvarint length and the value as DUMP
// writes it, the absolute deadline (varint ms, 0: none) and a string
// encoding hint (0: none, 1: raw, 2: embstr: snapshot.go's keyEncHint),
// so that B holds the value in A's encoding and answers as A would.
const loadPayloadVersion = 1

var loadHints = [...]string{"", "raw", "embstr"}

// CaptureSlots is the source's capture of the slots of ranges ([start,
// end] inclusive, checked by the caller): every key of db 0 in them,
// expired or not (B stores them as data and gets A's DELs as records),
// as LOAD payloads of at most maxBytes each (a key bigger than that is a
// chunk alone). It is consistent at the point it runs: the caller holds
// the engine lock throughout and forwards to B exactly the records A
// commits after it. The cost under the lock is a DUMP of each key plus a
// copy into the chunk: with 100,000 small strings in one slot
// BenchmarkCaptureSlots measures 6–14 ms (60–140 ns and 44 bytes of
// payload a key) on the shared 2-CPU VM, and a collection costs what its
// DUMP costs (O(its size): 1,000 hashes of 1,000 fields, 24–42 ms).
// StartSlotCapture takes the same capture with only a copy of the
// entries under the lock. Nil without cluster mode.
func (e *Engine) CaptureSlots(ranges [][2]int, maxBytes int) [][]byte {
	if e.slots == nil {
		return nil
	}
	var b slotBits
	for _, r := range ranges {
		b.setRange(r[0], r[1], true)
	}
	d := &e.DBs[0].dict
	chunks := loadChunks(e.dumpWriter(), e.RDBNoCompression, maxBytes, func(yield func(*entry) bool) {
		for _, r := range b.ranges() {
			for s := r[0]; s <= r[1]; s++ {
				for i := e.slots.slot[s].head; i != 0; i = e.slots.link(i - 1).next {
					if !yield(d.at(i - 1)) {
						return
					}
				}
			}
		}
	})
	if cap(e.dumpW.buf) > 1<<20 {
		e.dumpW.buf = nil // do not keep a big value's buffer
	}
	return chunks
}

// SlotCapture is the keys of some slots at one instant, taken under the
// engine lock (StartSlotCapture) and encoded without it (Chunks), as a
// snapshot's Capture and WriteTo.
type SlotCapture struct {
	e        *Engine
	entries  []entry // copies: keys and values shared with the live ones
	noLZF    bool
	released atomic.Bool
}

// StartSlotCapture copies the entries of the keys of db 0 in the slots
// of ranges (40 bytes a key; key bytes and values are shared) and starts
// a copy-on-write generation, as Capture does (cow.go): until Release, a
// write that would change a shared collection or limiter in place copies
// it first, so Chunks encodes the state of this instant while writes go
// on. The caller holds the engine lock, and forwards to B exactly the
// records A commits after this call. Cost under the lock: the walk of the
// slots' lists and the copy, whatever the values' sizes: 2.4–6 ms for
// 100,000 keys in one slot (BenchmarkCaptureSlots/start, against 6–14 ms
// for CaptureSlots), 11–25 µs for 1,000 hashes of 1,000 fields (against
// 24–42 ms: BenchmarkCaptureSlotsHashes). Writes to the slots' collections
// pay one copy of each until Release, as under a snapshot's Capture.
func (e *Engine) StartSlotCapture(ranges [][2]int) *SlotCapture {
	s := &SlotCapture{e: e, noLZF: e.RDBNoCompression}
	if e.slots == nil {
		s.released.Store(true)
		return s
	}
	var b slotBits
	for _, r := range ranges {
		b.setRange(r[0], r[1], true)
	}
	n := 0
	for _, r := range b.ranges() {
		for sl := r[0]; sl <= r[1]; sl++ {
			n += e.slots.slot[sl].count
		}
	}
	s.entries = make([]entry, 0, n)
	d := &e.DBs[0].dict
	for _, r := range b.ranges() {
		for sl := r[0]; sl <= r[1]; sl++ {
			for i := e.slots.slot[sl].head; i != 0; i = e.slots.link(i - 1).next {
				s.entries = append(s.entries, *d.at(i - 1))
			}
		}
	}
	e.cow.bytes.Add(s.arrays())
	if e.cow.gen++; e.cow.gen == 0 {
		e.cow.gen = 1
	}
	e.cow.active.Add(1)
	return s
}

func (s *SlotCapture) arrays() int64 { return arraysSize(s.entries, nil) }

// Keys is the number of keys the capture holds.
func (s *SlotCapture) Keys() int { return len(s.entries) }

// Chunks encodes the capture as LOAD payloads of at most maxBytes each
// (a key bigger than that is a chunk alone), without the engine lock.
// Call it before Release, from one goroutine at a time.
func (s *SlotCapture) Chunks(maxBytes int) [][]byte {
	if s.released.Load() {
		return nil
	}
	var w rdbWriter
	return loadChunks(&w, s.noLZF, maxBytes, func(yield func(*entry) bool) {
		for i := range s.entries {
			if !yield(&s.entries[i]) {
				return
			}
		}
	})
}

// loadChunks encodes the entries of each as LOAD payloads of at most
// maxBytes (loadPayloadVersion's form), DUMPing each with w.
func loadChunks(w *rdbWriter, noLZF bool, maxBytes int, each func(yield func(*entry) bool)) [][]byte {
	var chunks [][]byte
	var cur []byte
	for en := range each {
		k := en.keyStr()
		p := dumpInto(w, en, noLZF)
		if n := len(k) + len(p) + 22; len(cur) > 1 && len(cur)+n > maxBytes {
			chunks = append(chunks, cur)
			cur = nil
		}
		if cur == nil {
			cur = append(make([]byte, 0, min(maxBytes, 1<<20)+len(k)+len(p)+22), loadPayloadVersion)
		}
		cur = binary.AppendUvarint(cur, uint64(len(k)))
		cur = append(cur, k...)
		cur = binary.AppendUvarint(cur, uint64(len(p)))
		cur = append(cur, p...)
		cur = binary.AppendVarint(cur, en.exp)
		var hint byte
		switch en.keyEncHint() {
		case "raw":
			hint = 1
		case "embstr":
			hint = 2
		}
		cur = append(cur, hint)
	}
	if len(cur) > 1 {
		chunks = append(chunks, cur)
	}
	return chunks
}

// Release ends the capture: its copy-on-write stops costing writes (once
// no capture is active) and its copies can go. Any goroutine; calling it
// again does nothing.
func (s *SlotCapture) Release() {
	if s.released.Swap(true) {
		return
	}
	s.e.cow.active.Add(-1)
	s.e.cow.released(s.arrays(), false)
	s.entries = nil
}

// loadKey is one key of a LOAD payload, decoded.
type loadKey struct {
	key string
	v   rdbValue
	exp int64
}

// parseLoadPayload decodes a whole payload, every value checked (CRC)
// and loaded; nil and false on any fault.
func parseLoadPayload(p []byte, lim *EncodingLimits) ([]loadKey, bool) {
	if len(p) == 0 || p[0] != loadPayloadVersion {
		return nil, false
	}
	p = p[1:]
	var out []loadKey
	field := func() ([]byte, bool) {
		n, k := binary.Uvarint(p)
		if k <= 0 || n > uint64(len(p)-k) {
			return nil, false
		}
		f := p[k : k+int(n)]
		p = p[k+int(n):]
		return f, true
	}
	for len(p) > 0 {
		name, ok1 := field()
		val, ok2 := field()
		if !ok1 || !ok2 {
			return nil, false
		}
		exp, k := binary.Varint(p)
		if k <= 0 || exp < 0 || len(p) < k+1 || int(p[k]) >= len(loadHints) {
			return nil, false
		}
		hint := loadHints[p[k]]
		p = p[k+1:]
		if !verifyDumpPayload(val) {
			return nil, false
		}
		r := newRDBBytes(val)
		typ, err := r.byte1()
		if err != nil {
			return nil, false
		}
		v, err := r.loadValue(typ, &loadOpts{lim: lim, strict: true, keyEnc: hint})
		if err != nil {
			return nil, false
		}
		out = append(out, loadKey{key: string(name), v: v, exp: exp})
	}
	return out, true
}

// cmdSlotsLoad: LIMITDB.SLOTS LOAD id payload — the target installs a
// chunk of the source's capture (CaptureSlots' form), all or nothing:
// every key must be in a slot the migration imports, and a key of the
// same name is replaced. Refused once the migration has applied a source
// record (a capture is older than every record forwarded after it).
// Installing raises no event (the keys are not visible to clients yet).
// Reply: the number of keys installed.
func cmdSlotsLoad(c *Ctx, argv [][]byte) {
	m := c.migration(argv, MigrationIn)
	if m == nil {
		return
	}
	if m.Applied != 0 {
		c.W.Error(errMigLoadLate(argv[2]))
		return
	}
	keys, ok := parseLoadPayload(argv[3], &c.E.Enc)
	if !ok {
		c.W.Error(errMigPayload)
		return
	}
	for _, k := range keys {
		if s := keySlot(k.key); !m.slots.has(s) {
			c.W.Error(errMigKeySlot(argv[2], k.key, s))
			return
		}
	}
	db := c.E.DBs[0]
	for _, k := range keys {
		if old := db.dict.find(k.key); old != nil {
			db.removeEntry(old)
		}
		en := db.dict.insert(k.key)
		en.lru = c.E.newAccess(c.accessNow())
		k.v.install(en)
		if k.exp != 0 {
			db.setExpire(en, k.exp)
		}
		c.signal(db, k.key)
	}
	m.Loaded += int64(len(keys))
	c.W.Int(int64(len(keys)))
}

// --- APPLY: the source's records ---------------------------------------------

// AllSlots is EffectSlots' slot for an effect that touches every slot
// (FLUSHALL, FLUSHDB).
const AllSlots = -1

// EffectSlots is the slot the keys of an effect (a command of a record,
// as Apply takes it) hash to, so that the server on the source forwards
// to B the records that touch a migrating slot: ok false for an effect
// without keys (LIMITDB.POLICY, SCRIPT LOAD, MULTI …), AllSlots for
// FLUSHALL and FLUSHDB, and AllSlots too for keys in several slots
// (which cluster mode's CROSSSLOT rule leaves to the active expiry's bare
// DELs, one record each).
func EffectSlots(argv [][]byte) (slot int, ok bool) {
	if len(argv) == 0 {
		return 0, false
	}
	if EqualFold(argv[0], "flushall") || EqualFold(argv[0], "flushdb") {
		return AllSlots, true
	}
	cmd := Lookup(argv[0])
	if cmd != nil && len(cmd.Subs) > 0 && len(argv) >= 2 {
		cmd = cmd.Sub(argv[1])
	}
	if cmd == nil {
		return 0, false
	}
	slot = -2
	it := cmd.Keys(argv)
	for {
		pos, _, more := it.Next()
		if !more {
			break
		}
		if pos >= len(argv) {
			continue
		}
		s := KeySlot(argv[pos])
		if slot == -2 {
			slot = s
		} else if s != slot {
			return AllSlots, true
		}
	}
	if slot == -2 {
		return 0, false
	}
	return slot, true
}

// cmdSlotsApply: LIMITDB.SLOTS APPLY id index record — the target
// applies one committed record of the source (AppendRecord's form, as
// A's log holds it; index is its position in A's log, larger than the
// last one applied, so a record forwarded twice, after a leader change
// on either side, is refused: Migrations' Applied says where to resume).
// Each effect runs as Apply runs it (Now = math.MinInt64: nothing
// expires, nothing is recorded) when its keys are in the migration's
// slots, and is skipped otherwise (another slot's, keyless, another
// database's); FLUSHALL and FLUSHDB drop the migration's keys. An effect
// that fails (a state that is not A's) does not stop the rest: it counts
// in Failed, the same on every member of B, and OWN is refused. The
// record's time raises ClockMs, as Apply's does. Reply: the number of
// effects applied.
func cmdSlotsApply(c *Ctx, argv [][]byte) {
	m := c.migration(argv, MigrationIn)
	if m == nil {
		return
	}
	idx, err := strconv.ParseUint(string(argv[3]), 10, 64)
	if err != nil || idx == 0 {
		c.W.Error(errMigIndex)
		return
	}
	if idx <= m.Applied {
		c.W.Error(errMigApplied(argv[2], m.Applied))
		return
	}
	h, body, err := ParseRecordHeader(argv[4])
	if err != nil {
		c.W.Error(errMigRecord)
		return
	}
	// parse the whole record first: a malformed one changes nothing
	var effects [][][]byte
	for rest := body; len(rest) > 0; {
		var a [][]byte
		if a, rest, err = parseEffect(rest, nil); err != nil {
			c.W.Error(errMigRecord)
			return
		}
		effects = append(effects, a)
	}
	e := c.E
	var w resp.Writer
	w.Proto = 2
	sub := Ctx{E: e, W: &w, Now: math.MinInt64, Applying: true, AccessMs: h.ClockMs}
	if h.DB >= 0 && h.DB < NumDBs {
		sub.DB = e.DBs[h.DB]
	}
	applied := int64(0)
	for _, a := range effects {
		if EqualFold(a[0], "select") && len(a) == 2 {
			id, ok := ParseIntB(a[1])
			sub.DB = nil
			if ok && id >= 0 && id < NumDBs {
				sub.DB = e.DBs[id]
			}
			continue
		}
		if (EqualFold(a[0], "multi") || EqualFold(a[0], "exec")) && len(a) == 1 {
			continue
		}
		if sub.DB == nil || sub.DB.ID != 0 {
			continue // cluster mode has database 0 only
		}
		slot, ok := EffectSlots(a)
		switch {
		case !ok || slot >= 0 && !m.slots.has(slot):
			continue
		case EqualFold(a[0], "flushall") || EqualFold(a[0], "flushdb"):
			c.dropSlotKeys(&m.slots)
			applied++
			continue
		case slot == AllSlots:
			if c.E.effectTouches(a, &m.slots) {
				m.Failed++ // keys in several slots, some of them ours
			}
			continue
		}
		cmd := Lookup(a[0])
		if cmd != nil && len(cmd.Subs) > 0 && len(a) >= 2 {
			cmd = cmd.Sub(a[1])
		}
		if cmd == nil || cmd.Run == nil || !cmd.IsWrite() || cmd.F&(FlagNoEffect|FlagConn) != 0 || !ArityOK(cmd.Arity, len(a)) {
			m.Failed++
			continue
		}
		w.Reset()
		sub.Call(cmd, a)
		if len(w.B) > 0 && w.B[0] == '-' {
			m.Failed++
			continue
		}
		applied++
	}
	m.Applied = idx
	e.ClockMs = max(e.ClockMs, h.ClockMs)
	e.Stats.Dirty++ // recorded even when nothing applied: Applied moved
	c.W.Int(applied)
}

// effectTouches reports whether some key of a (an effect whose keys span
// several slots) is in b.
func (e *Engine) effectTouches(a [][]byte, b *slotBits) bool {
	cmd := Lookup(a[0])
	if cmd == nil {
		return false
	}
	if len(cmd.Subs) > 0 && len(a) >= 2 {
		if cmd = cmd.Sub(a[1]); cmd == nil {
			return false
		}
	}
	it := cmd.Keys(a)
	for {
		pos, _, more := it.Next()
		if !more {
			return false
		}
		if pos < len(a) && b.has(KeySlot(a[pos])) {
			return true
		}
	}
}

// --- OWN: the commit point -----------------------------------------------------

// cmdSlotsOwn: LIMITDB.SLOTS OWN id floor digest — the target owns the
// slots from this entry on (importing → owned). digest is A's
// MigrationDigest once frozen (40 hex digits); the entry is refused
// unless the slots here digest the same and every source effect applied,
// so the commit point cannot be logged over a copy that is not A's (every
// member of B decides alike: they hold the same state). floor is A's time
// floor (FREEZE's): ClockMs rises to it here, so no unit on B runs before
// A's last one and no limiter refills for time A already counted
// (HandoverFloor). +OK.
func cmdSlotsOwn(c *Ctx, argv [][]byte) {
	m := c.migration(argv, MigrationIn)
	if m == nil {
		return
	}
	floor, ok := ParseIntB(argv[3])
	if !ok || floor < 0 {
		c.W.Error(errMigFloor)
		return
	}
	var want Digest
	if len(argv[4]) != 2*len(want) {
		c.W.Error(errMigDigest)
		return
	}
	if _, err := hex.Decode(want[:], argv[4]); err != nil {
		c.W.Error(errMigDigest)
		return
	}
	if m.Failed != 0 {
		c.W.Error(errMigFailed(argv[2], m.Failed))
		return
	}
	if c.E.slotsDigest(&m.slots) != want {
		c.W.Error(errMigDigestDiffers(argv[2]))
		return
	}
	for i := range c.E.owned {
		c.E.owned[i] |= m.slots[i]
	}
	c.E.dropMigration(m)
	c.E.ClockMs = max(c.E.ClockMs, floor)
	c.E.handoverFloor = max(c.E.handoverFloor, floor)
	c.changedMigrations()
	c.W.OK()
}

// --- snapshots ----------------------------------------------------------------

// auxMigration is one handover in a snapshot, one field each (absent
// when none): "id role peer state floor applied loaded failed ranges…",
// ranges as limitdb-slots writes them.
const auxMigration = "limitdb-migration"

func (m *migration) aux() string {
	var sb strings.Builder
	sb.WriteString(m.ID)
	for _, f := range []string{m.Role.String(), strconv.Itoa(m.Peer), m.State.String(),
		strconv.FormatInt(m.Floor, 10), strconv.FormatUint(m.Applied, 10),
		strconv.FormatInt(m.Loaded, 10), strconv.FormatInt(m.Failed, 10), encodeSlotRanges(&m.slots)} {
		sb.WriteByte(' ')
		sb.WriteString(f)
	}
	return sb.String()
}

// migrationsAux is the snapshot fields of the handovers in progress.
func (e *Engine) migrationsAux() []AuxField {
	var out []AuxField
	for _, m := range e.migs {
		out = append(out, AuxField{auxMigration, m.aux()})
	}
	return out
}

// decodeMigration reads one auxMigration value.
func decodeMigration(v string) (*migration, bool) {
	f := strings.Fields(v)
	if len(f) < 9 {
		return nil, false
	}
	m := &migration{Migration: Migration{ID: f[0]}}
	switch f[1] {
	case "out":
		m.Role = MigrationOut
	case "in":
		m.Role = MigrationIn
	default:
		return nil, false
	}
	var err [5]error
	m.Peer, err[0] = strconv.Atoi(f[2])
	m.Floor, err[1] = strconv.ParseInt(f[4], 10, 64)
	m.Applied, err[2] = strconv.ParseUint(f[5], 10, 64)
	m.Loaded, err[3] = strconv.ParseInt(f[6], 10, 64)
	m.Failed, err[4] = strconv.ParseInt(f[7], 10, 64)
	for _, e := range err {
		if e != nil {
			return nil, false
		}
	}
	switch {
	case f[3] == "migrating" && m.Role == MigrationOut:
		m.State = SlotMigrating
	case f[3] == "frozen" && m.Role == MigrationOut:
		m.State = SlotFrozen
	case f[3] == "importing" && m.Role == MigrationIn:
		m.State = SlotImporting
	default:
		return nil, false
	}
	s, e := decodeSlotRanges(strings.Join(f[8:], " "))
	if e != nil || s.count() == 0 || m.Peer < 0 {
		return nil, false
	}
	m.slots = s
	return m, true
}

// checkMigrations checks loaded handovers against each other and the
// owned set: disjoint slots, unique ids, migrating slots owned, frozen
// and importing ones not.
func checkMigrations(migs []*migration, owned *slotBits) bool {
	var all slotBits
	for i, m := range migs {
		for j := range i {
			if migs[j].ID == m.ID {
				return false
			}
		}
		for w := range all {
			if all[w]&m.slots[w] != 0 {
				return false
			}
			o := owned[w] & m.slots[w]
			if m.State == SlotMigrating && o != m.slots[w] || m.State != SlotMigrating && o != 0 {
				return false
			}
			all[w] |= m.slots[w]
		}
	}
	return true
}

// installMigrations replaces the handover state (a snapshot load, Reset).
func (e *Engine) installMigrations(migs []*migration) {
	e.migs = migs
	e.migr = slotBits{}
	for _, m := range migs {
		for w := range e.migr {
			e.migr[w] |= m.slots[w]
		}
	}
}

// RecordSlots lists the slots the effects of rec (a record of this
// group's log, AppendRecord's form) touch, each once, in the order met
// (AllSlots for a flush or for keys in several slots): what the server
// on the source reads to choose the records it forwards as APPLY.
func RecordSlots(rec []byte) ([]int, error) {
	_, body, err := ParseRecordHeader(rec)
	if err != nil {
		return nil, err
	}
	var out []int
	var argv [][]byte
	for len(body) > 0 {
		if argv, body, err = parseEffect(body, argv[:0]); err != nil {
			return nil, err
		}
		if s, ok := EffectSlots(argv); ok && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}
