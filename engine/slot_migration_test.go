package engine

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"limitdb/resp"
)

// migGroup is one Raft group as the handover tests see it: a leader
// engine executing units with effects on, a follower applying each
// record, whose StrictDigest must equal the leader's after every unit,
// and the group's log (record i+1 is log[i]).
type migGroup struct {
	t        *testing.T
	name     string
	lead     *Engine
	fol      *Engine
	eff      *Effects
	c        *Ctx
	log      [][]byte
	lastRply string
}

func newMigGroup(t *testing.T, name string) *migGroup {
	g := &migGroup{t: t, name: name, lead: New(), fol: New(), eff: NewEffects()}
	g.lead.EnableSlots()
	g.fol.EnableSlots()
	g.fol.NoLazyDelete = true
	g.c = &Ctx{E: g.lead, DB: g.lead.DBs[0], W: resp.NewWriter(), Eff: g.eff}
	return g
}

// do runs one unit at now on the leader and returns its reply; a unit
// that recorded effects goes to the log and the follower.
func (g *migGroup) do(now int64, args ...string) string {
	g.t.Helper()
	argv := toArgv(args)
	g.eff.Reset()
	g.c.Now, g.lead.ClockMs = now, max(g.lead.ClockMs, now)
	g.c.W.Reset()
	g.c.Exec(argv)
	g.commit()
	g.lastRply = string(g.c.W.B)
	return g.lastRply
}

// expire runs one active expiry pass over db 0 as the server's cron.
func (g *migGroup) expire(now int64) {
	g.t.Helper()
	g.eff.Reset()
	g.c.Now, g.lead.ClockMs = now, max(g.lead.ClockMs, now)
	g.c.ActiveExpire(g.lead.DBs[0], 1<<20)
	g.commit()
}

func (g *migGroup) commit() {
	g.t.Helper()
	if g.eff.N == 0 {
		return
	}
	rec := AppendRecord(nil, g.eff, g.lead.ClockMs)
	if err := g.fol.Apply(rec); err != nil {
		g.t.Fatalf("%s: follower: %v", g.name, err)
	}
	if g.lead.StrictDigest() != g.fol.StrictDigest() {
		g.t.Fatalf("%s: follower's strict digest differs", g.name)
	}
	g.log = append(g.log, rec)
}

// must runs a unit that has to answer want.
func (g *migGroup) must(now int64, want string, args ...string) {
	g.t.Helper()
	if got := g.do(now, args...); got != want {
		g.t.Fatalf("%s %q: %q, want %q", g.name, args, got, want)
	}
}

// refused runs a unit that has to fail with want (an error text, without
// the '-') and change nothing, recording nothing.
func (g *migGroup) refused(now int64, want string, args ...string) {
	g.t.Helper()
	d, n, gen := g.lead.StrictDigest(), len(g.log), g.lead.SlotsGen()
	if got := g.do(now, args...); got != "-"+want+"\r\n" {
		g.t.Fatalf("%s %q: %q, want -%s", g.name, args, got, want)
	}
	if g.lead.StrictDigest() != d || len(g.log) != n || g.lead.SlotsGen() != gen {
		g.t.Fatalf("%s %q: a refusal changed something", g.name, args)
	}
}

// migSlot is the slot of the hash tag the handover tests move.
var migSlot = KeySlot([]byte("m"))

const otherTag = "o" // a key slot A keeps

// forward sends B, as APPLY, every record of A's log from index from on
// (0-based) that touches one of slots, and returns A's log length.
func forward(t *testing.T, a, b *migGroup, now int64, id string, from int, slots ...int) int {
	t.Helper()
	for i := from; i < len(a.log); i++ {
		touched, err := RecordSlots(a.log[i])
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(touched, func(s int) bool { return s == AllSlots || slices.Contains(slots, s) }) {
			if r := b.do(now, "LIMITDB.SLOTS", "APPLY", id, strconv.Itoa(i+1), string(a.log[i])); r[0] != ':' {
				t.Fatalf("APPLY of A's record %d: %q", i+1, r)
			}
		}
	}
	return len(a.log)
}

func slotRange(s int) [][2]int { return [][2]int{{s, s}} }

// TestSlotHandover: a whole handover of one slot from A to B, each group
// with a follower, keys of every kind, writes between MIGRATE and FREEZE
// reaching B as records, the commit point on equal digests, A's DONE.
func TestSlotHandover(t *testing.T) {
	a, b := newMigGroup(t, "A"), newMigGroup(t, "B")
	s, o := strconv.Itoa(migSlot), strconv.Itoa(KeySlot([]byte(otherTag)))
	now := int64(1_700_000_000_000)
	a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "ADD", s, s, o, o)
	for i := range 300 {
		a.do(now, "SET", "{m}s"+strconv.Itoa(i), strings.Repeat("v", i%50))
	}
	a.do(now, "SET", "{m}ttl", "x", "PX", "500")
	a.do(now, "SET", "{m}gone", "x", "PX", "50")
	a.do(now, "HSET", "{m}h", "f", "1", "g", "2")
	a.do(now, "RPUSH", "{m}l", "a", "b", "c")
	a.do(now, "SADD", "{m}set", "1", "2", "x")
	a.do(now, "ZADD", "{m}z", "1", "a", "2", "b")
	a.do(now, "INCR", "{m}n")
	a.do(now, "APPEND", "{m}raw", "a")
	a.do(now, "APPEND", "{m}raw", "b") // raw now, where a load would make it embstr
	a.do(now, "RL.ALLOW", "{m}rl", "5", "1000")
	a.do(now, "SET", "{o}keep", "1")

	a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "MIGRATE", "m1", "1", s, s)
	if st, id := a.lead.SlotState(migSlot); st != SlotMigrating || id != "m1" || !a.lead.OwnsSlot(migSlot) {
		t.Fatalf("A's slot after MIGRATE: %v %q", st, id)
	}
	b.must(now, "+OK\r\n", "LIMITDB.SLOTS", "IMPORT", "m1", "0", s, s)
	if st, _ := b.lead.SlotState(migSlot); st != SlotImporting || b.lead.OwnsSlot(migSlot) {
		t.Fatalf("B's slot after IMPORT: %v", st)
	}

	// the capture, in chunks of 1 KB, at A's log position capAt
	chunks := a.lead.CaptureSlots(slotRange(migSlot), 1024)
	capAt := len(a.log)
	if len(chunks) < 5 {
		t.Fatalf("%d chunks", len(chunks))
	}
	total := 0
	for _, ch := range chunks {
		if len(ch) > 1024+200 {
			t.Fatalf("a chunk of %d bytes", len(ch))
		}
		r := b.do(now, "LIMITDB.SLOTS", "LOAD", "m1", string(ch))
		n, _ := strconv.Atoi(strings.TrimSpace(r[1:]))
		total += n
	}
	if total != int(a.lead.CountKeysInSlot(migSlot)) || b.lead.CountKeysInSlot(migSlot) != a.lead.CountKeysInSlot(migSlot) {
		t.Fatalf("loaded %d keys, A has %d", total, a.lead.CountKeysInSlot(migSlot))
	}
	if b.lead.SlotDigest(migSlot) != a.lead.SlotDigest(migSlot) {
		t.Fatal("the capture's digest differs")
	}
	// B holds A's encodings: the APPEND result stays raw
	if en := b.lead.DBs[0].dict.find("{m}raw"); en == nil || en.encoding() != "raw" {
		t.Fatal("the raw string lost its encoding")
	}

	// writes between MIGRATE and FREEZE, and A's expiry of a key; B's own
	// expiry leaves the importing keys alone
	now += 100
	a.do(now, "SET", "{m}s1", "changed")
	a.do(now, "DEL", "{m}s2")
	a.do(now, "INCR", "{m}n")
	a.do(now, "APPEND", "{m}raw", "cd")
	a.do(now, "RL.ALLOW", "{m}rl", "5", "1000")
	a.do(now, "HSET", "{m}h", "f", "9")
	a.do(now, "SET", "{m}new", "1", "PX", "100000")
	a.do(now, "SET", "{o}keep", "2")
	b.expire(now + 10_000)
	n := len(b.log)
	b.must(now+10_000, "$-1\r\n", "GET", "{m}ttl") // hidden, not deleted
	if b.lead.CountKeysInSlot(migSlot) != int64(total) || len(b.log) != n {
		t.Fatal("B expired an importing key")
	}
	a.expire(now) // "{m}gone" is past its deadline
	if a.lead.DBs[0].dict.find("{m}gone") != nil {
		t.Fatal("A did not expire {m}gone")
	}
	next := forward(t, a, b, now, "m1", capAt, migSlot)
	// a record forwarded twice is refused
	b.refused(now, errMigApplied([]byte("m1"), uint64(next)), "LIMITDB.SLOTS", "APPLY", "m1", strconv.Itoa(next), string(a.log[next-1]))

	now += 100
	a.do(now, "SET", "{m}last", "before freeze")
	a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "FREEZE", "m1")
	if st, _ := a.lead.SlotState(migSlot); st != SlotFrozen || a.lead.OwnsSlot(migSlot) || !slices.Contains(a.lead.OwnedSlots(), [2]int{migSlot, migSlot}) {
		t.Fatalf("A's slot after FREEZE: %v, owned %v", st, a.lead.OwnedSlots())
	}
	migs := a.lead.Migrations()
	if len(migs) != 1 || migs[0].Floor != now || migs[0].State != SlotFrozen {
		t.Fatalf("A's migrations %+v", migs)
	}
	// A's expiry leaves a frozen slot alone too
	a.expire(now + 1_000_000)
	if a.lead.DBs[0].dict.find("{m}ttl") == nil {
		t.Fatal("A expired a frozen key")
	}
	// an OWN before the last records refuses (digests differ)
	dig, _ := a.lead.MigrationDigest("m1")
	b.refused(now, errMigDigestDiffers([]byte("m1")), "LIMITDB.SLOTS", "OWN", "m1", strconv.FormatInt(migs[0].Floor, 10), dig.Hex())
	forward(t, a, b, now, "m1", next, migSlot)
	if bm := b.lead.Migrations(); len(bm) != 1 || bm[0].Applied == 0 || bm[0].Failed != 0 {
		t.Fatalf("B's migrations %+v", bm)
	}
	if b.lead.SlotDigest(migSlot) != a.lead.SlotDigest(migSlot) {
		t.Fatal("slot digests differ at OWN")
	}

	// the commit point: B owns the slot and its clock is at A's floor
	b.lead.ClockMs = 0 // as if B's clock were far behind A's
	bnow := int64(1)
	b.must(bnow, "+OK\r\n", "LIMITDB.SLOTS", "OWN", "m1", strconv.FormatInt(migs[0].Floor, 10), dig.Hex())
	if !b.lead.OwnsSlot(migSlot) || b.lead.ClockMs < migs[0].Floor || b.fol.ClockMs < migs[0].Floor || b.lead.HandoverFloor() != migs[0].Floor || len(b.lead.Migrations()) != 0 {
		t.Fatalf("B after OWN: owns %v clock %d floor %d", b.lead.OwnsSlot(migSlot), b.lead.ClockMs, b.lead.HandoverFloor())
	}
	peek := a.do(now, "RL.PEEK", "{m}rl", "5", "1000")
	a.must(now, ":"+strconv.Itoa(int(a.lead.CountKeysInSlot(migSlot)))+"\r\n", "LIMITDB.SLOTS", "DONE", "m1")
	if st, _ := a.lead.SlotState(migSlot); st != SlotNone || a.lead.CountKeysInSlot(migSlot) != 0 || a.fol.CountKeysInSlot(migSlot) != 0 || len(a.lead.Migrations()) != 0 {
		t.Fatalf("A after DONE: %v, %d keys", st, a.lead.CountKeysInSlot(migSlot))
	}
	if a.lead.DBs[0].dict.find("{o}keep") == nil || !slices.Equal(a.lead.OwnedSlots(), slotRange(KeySlot([]byte(otherTag)))) {
		t.Fatal("DONE touched another slot")
	}
	for k, want := range map[string]string{"{m}s1": "$7\r\nchanged\r\n", "{m}s2": "$-1\r\n", "{m}n": "$1\r\n2\r\n", "{m}raw": "$4\r\nabcd\r\n", "{m}last": "$13\r\nbefore freeze\r\n"} {
		b.must(now, want, "GET", k)
	}
	b.must(now, "*2\r\n$1\r\n9\r\n$1\r\n2\r\n", "HMGET", "{m}h", "f", "g")
	// the limiter moved with its state
	b.must(now, peek, "RL.PEEK", "{m}rl", "5", "1000")
}

// TestSlotHandoverRefusals: every refused handover effect answers its
// error and changes nothing (state, log, SlotsGen).
func TestSlotHandoverRefusals(t *testing.T) {
	a, b := newMigGroup(t, "A"), newMigGroup(t, "B")
	s := strconv.Itoa(migSlot)
	s1 := strconv.Itoa(migSlot + 1)
	now := int64(1_700_000_000_000)
	a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "ADD", s, s1)
	a.do(now, "SET", "{m}k", "v")
	b.do(now, "SET", "{m}stale", "v") // left from an earlier ownership
	id := []byte("m1")

	off := New()
	h := &Ctx{E: off, DB: off.DBs[0], W: resp.NewWriter()}
	h.Exec([][]byte{[]byte("LIMITDB.SLOTS"), []byte("MIGRATE"), id, []byte("1"), []byte(s), []byte(s)})
	if string(h.W.B) != "-"+ErrClusterDisabled+"\r\n" {
		t.Fatalf("without cluster mode: %q", h.W.B)
	}
	a.refused(now, errMigID, "LIMITDB.SLOTS", "MIGRATE", "a b", "1", s, s)
	a.refused(now, errMigID, "LIMITDB.SLOTS", "MIGRATE", strings.Repeat("x", 65), "1", s, s)
	a.refused(now, errMigPeer, "LIMITDB.SLOTS", "MIGRATE", "m1", "-1", s, s)
	a.refused(now, ErrSlotInvalid, "LIMITDB.SLOTS", "MIGRATE", "m1", "1", s, "16384")
	a.refused(now, ErrSyntax, "LIMITDB.SLOTS", "MIGRATE", "m1", "1", s, s, s)
	a.refused(now, errNotOwner(migSlot+2), "LIMITDB.SLOTS", "MIGRATE", "m1", "1", s, strconv.Itoa(migSlot+2))
	a.refused(now, errMigUnknown(id), "LIMITDB.SLOTS", "FREEZE", "m1")
	a.refused(now, errMigUnknown(id), "LIMITDB.SLOTS", "DONE", "m1")
	a.refused(now, errMigUnknown(id), "LIMITDB.SLOTS", "CANCEL", "m1")
	a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "MIGRATE", "m1", "1", s, s)
	a.refused(now, errMigExists(id), "LIMITDB.SLOTS", "MIGRATE", "m1", "1", s1, s1)
	a.refused(now, ErrSlotMigrating(migSlot), "LIMITDB.SLOTS", "MIGRATE", "m2", "1", s1, s1, s, s)
	a.refused(now, ErrSlotMigrating(migSlot), "LIMITDB.SLOTS", "IMPORT", "m2", "1", s, s)
	a.refused(now, errAlreadyOwner(migSlot+1), "LIMITDB.SLOTS", "IMPORT", "m2", "1", s1, s1)
	a.refused(now, ErrSlotMigrating(migSlot), "LIMITDB.SLOTS", "DEL", s, s)
	a.refused(now, errMigRole(id, MigrationIn), "LIMITDB.SLOTS", "ABORT", "m1")
	a.refused(now, errMigRole(id, MigrationIn), "LIMITDB.SLOTS", "OWN", "m1", "0", strings.Repeat("0", 40))
	a.refused(now, errMigNotFrozen(id), "LIMITDB.SLOTS", "DONE", "m1")
	a.refused(now, ErrSyntax, "LIMITDB.SLOTS", "CANCEL", "m1", "NOW")
	a.refused(now, errMigFloor, "LIMITDB.SLOTS", "FREEZE", "m1", "-5")
	a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "FREEZE", "m1")
	a.refused(now, errMigFrozenAlready(id), "LIMITDB.SLOTS", "FREEZE", "m1")
	a.refused(now, errMigFrozen(id), "LIMITDB.SLOTS", "CANCEL", "m1")
	a.refused(now, ErrSlotBusy(migSlot), "LIMITDB.SLOTS", "ADD", s, s)

	b.refused(now, errSlotHoldsKeys(migSlot), "LIMITDB.SLOTS", "IMPORT", "m1", "0", s, s)
	b.do(now, "DEL", "{m}stale")
	b.must(now, "+OK\r\n", "LIMITDB.SLOTS", "IMPORT", "m1", "0", s, s)
	b.refused(now, ErrSlotBusy(migSlot), "LIMITDB.SLOTS", "ADD", s, s)
	b.refused(now, errMigRole(id, MigrationOut), "LIMITDB.SLOTS", "FREEZE", "m1")
	b.refused(now, errMigPayload, "LIMITDB.SLOTS", "LOAD", "m1", "junk")
	chunk := a.lead.CaptureSlots(slotRange(migSlot), 1<<20)[0]
	bad := bytes.Clone(chunk)
	bad[len(bad)-3] ^= 1 // the value's checksum
	b.refused(now, errMigPayload, "LIMITDB.SLOTS", "LOAD", "m1", string(bad))
	b.refused(now, errMigPayload, "LIMITDB.SLOTS", "LOAD", "m1", string(chunk[:len(chunk)-1]))
	a.do(now, "SET", "{o}x", "v")
	a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "ADD", strconv.Itoa(KeySlot([]byte("{o}x"))), strconv.Itoa(KeySlot([]byte("{o}x"))))
	other := a.lead.CaptureSlots(slotRange(KeySlot([]byte("{o}x"))), 1<<20)[0]
	b.refused(now, errMigKeySlot(id, "{o}x", KeySlot([]byte("{o}x"))), "LIMITDB.SLOTS", "LOAD", "m1", string(other))
	b.refused(now, errMigIndex, "LIMITDB.SLOTS", "APPLY", "m1", "0", string(a.log[0]))
	b.refused(now, errMigRecord, "LIMITDB.SLOTS", "APPLY", "m1", "1", "junk")
	b.refused(now, errMigDigest, "LIMITDB.SLOTS", "OWN", "m1", "0", "xyz")
	b.refused(now, errMigFloor, "LIMITDB.SLOTS", "OWN", "m1", "x", strings.Repeat("0", 40))
	dig, _ := a.lead.MigrationDigest("m1")
	b.refused(now, errMigDigestDiffers(id), "LIMITDB.SLOTS", "OWN", "m1", "0", dig.Hex())
	b.must(now, ":1\r\n", "LIMITDB.SLOTS", "LOAD", "m1", string(chunk))
	b.must(now, ":1\r\n", "LIMITDB.SLOTS", "APPLY", "m1", "5", string(a.log[1])) // A's SET {m}k
	b.refused(now, errMigLoadLate(id), "LIMITDB.SLOTS", "LOAD", "m1", string(chunk))
	b.refused(now, errMigApplied(id, 5), "LIMITDB.SLOTS", "APPLY", "m1", "5", string(a.log[1]))
	// an effect B cannot apply counts, and OWN is then refused
	bad2 := newMigGroup(t, "X")
	bad2.do(now, "RPUSH", "{m}k", "x") // a list where B holds a string
	b.must(now, ":0\r\n", "LIMITDB.SLOTS", "APPLY", "m1", "6", string(bad2.log[0]))
	b.refused(now, errMigFailed(id, 1), "LIMITDB.SLOTS", "OWN", "m1", "0", dig.Hex())
}

// TestSlotHandoverCancelAbort: a cancel before FREEZE, an abort on B,
// then a cancel after FREEZE once B aborted; keys stay on A, B's go.
func TestSlotHandoverCancelAbort(t *testing.T) {
	a, b := newMigGroup(t, "A"), newMigGroup(t, "B")
	s := strconv.Itoa(migSlot)
	now := int64(1_700_000_000_000)
	a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "ADD", s, s)
	for i := range 20 {
		a.do(now, "SET", "{m}"+strconv.Itoa(i), "v")
	}
	before := a.lead.StrictDigest()
	for _, frozen := range []bool{false, true} {
		a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "MIGRATE", "m1", "1", s, s)
		b.must(now, "+OK\r\n", "LIMITDB.SLOTS", "IMPORT", "m1", "0", s, s)
		for _, ch := range a.lead.CaptureSlots(slotRange(migSlot), 100) {
			b.do(now, "LIMITDB.SLOTS", "LOAD", "m1", string(ch))
		}
		if frozen {
			a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "FREEZE", "m1")
		}
		b.must(now, ":20\r\n", "LIMITDB.SLOTS", "ABORT", "m1")
		if st, _ := b.lead.SlotState(migSlot); st != SlotNone || b.lead.CountKeysInSlot(migSlot) != 0 || len(b.lead.Migrations()) != 0 {
			t.Fatal("B after ABORT")
		}
		if frozen {
			a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "CANCEL", "m1", "ABORTED")
		} else {
			a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "CANCEL", "m1")
		}
		if st, _ := a.lead.SlotState(migSlot); st != SlotOwned || !a.lead.OwnsSlot(migSlot) || a.lead.StrictDigest() != before {
			t.Fatalf("A after CANCEL (frozen %v): %v", frozen, st)
		}
	}
}

// TestSlotHandoverSnapshot: the handover state travels in snapshots
// (one aux field per migration, limitdb-ver 2), counts in StrictDigest,
// goes with Reset, and a file whose migrations contradict its owned
// slots is refused.
func TestSlotHandoverSnapshot(t *testing.T) {
	a, b := newMigGroup(t, "A"), newMigGroup(t, "B")
	s, s1 := strconv.Itoa(migSlot), strconv.Itoa(migSlot+1)
	now := int64(1_700_000_000_000)
	a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "ADD", s, s1)
	a.do(now, "SET", "{m}k", "v")
	d0 := a.lead.StrictDigest()
	a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "MIGRATE", "m1", "1", s, s)
	d1 := a.lead.StrictDigest()
	a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "FREEZE", "m1")
	if d0 == d1 || d1 == a.lead.StrictDigest() {
		t.Fatal("StrictDigest misses the handover state")
	}
	b.must(now, "+OK\r\n", "LIMITDB.SLOTS", "IMPORT", "m9", "0", s, s)
	b.do(now, "LIMITDB.SLOTS", "LOAD", "m9", string(a.lead.CaptureSlots(slotRange(migSlot), 1<<20)[0]))
	b.do(now, "LIMITDB.SLOTS", "APPLY", "m9", "7", string(a.log[0]))
	for _, g := range []*migGroup{a, b} {
		e2 := New()
		e2.EnableSlots()
		file := snapshotInto(t, g.lead, e2)
		if !bytes.Contains(file, []byte(auxMigration)) || e2.StrictDigest() != g.lead.StrictDigest() {
			t.Fatalf("%s: the snapshot lost the handover", g.name)
		}
		if !slices.EqualFunc(e2.Migrations(), g.lead.Migrations(), func(x, y Migration) bool {
			return x.ID == y.ID && x.State == y.State && x.Floor == y.Floor && x.Applied == y.Applied && x.Loaded == y.Loaded && slices.Equal(x.Ranges, y.Ranges)
		}) {
			t.Fatalf("%s: migrations %+v, want %+v", g.name, e2.Migrations(), g.lead.Migrations())
		}
		st, id := e2.SlotState(migSlot)
		want, _ := g.lead.SlotState(migSlot)
		if st != want || id == "" || e2.OwnsSlot(migSlot) {
			t.Fatalf("%s: slot state after load %v", g.name, st)
		}
		if err := e2.Reset(nil); err != nil || len(e2.Migrations()) != 0 || e2.migr != (slotBits{}) {
			t.Fatal("Reset kept the handover")
		}
	}
	// what a loader refuses: a field no writer produces, handovers that
	// overlap, share an id, or disagree with the owned slots
	for _, v := range []string{"m", "m up 1 frozen 0 0 0 0 1-2", "m out 1 importing 0 0 0 0 1-2", "m in x importing 0 0 0 0 1-2",
		"m in 1 importing 0 0 0 0", "m in 1 importing 0 0 0 0 2-1", "m out -1 frozen 0 0 0 0 1-2"} {
		if _, ok := decodeMigration(v); ok {
			t.Errorf("%q decoded", v)
		}
	}
	mig := func(v string) *migration {
		m, ok := decodeMigration(v)
		if !ok {
			t.Fatalf("%q", v)
		}
		return m
	}
	var owned slotBits
	owned.setRange(1, 2, true)
	for _, c := range []struct {
		migs []string
		ok   bool
	}{
		{[]string{"m out 1 migrating 0 0 0 0 1-2", "n in 1 importing 0 0 0 0 5-6"}, true},
		{[]string{"m out 1 migrating 0 0 0 0 1-3"}, false},                                // 3 not owned
		{[]string{"m out 1 frozen 0 0 0 0 1-2"}, false},                                   // frozen yet owned
		{[]string{"m in 1 importing 0 0 0 0 2-2"}, false},                                 // importing an owned slot
		{[]string{"m in 1 importing 0 0 0 0 5-5", "n in 1 importing 0 0 0 0 5-6"}, false}, // overlap
		{[]string{"m in 1 importing 0 0 0 0 5-5", "m in 1 importing 0 0 0 0 7-7"}, false}, // one id twice
	} {
		var ms []*migration
		for _, v := range c.migs {
			ms = append(ms, mig(v))
		}
		if checkMigrations(ms, &owned) != c.ok {
			t.Errorf("%q: check %v", c.migs, !c.ok)
		}
	}
	if v := a.lead.Migrations()[0]; v.Floor != now || v.Peer != 1 || v.Role != MigrationOut {
		t.Fatalf("%+v", v)
	}
}

// TestEffectSlots: the slot an effect's keys hash to.
func TestEffectSlots(t *testing.T) {
	for _, c := range []struct {
		args string
		slot int
		ok   bool
	}{
		{"SET {m}a 1", migSlot, true},
		{"DEL {m}a {m}b", migSlot, true},
		{"DEL {m}a {o}b", AllSlots, true},
		{"FLUSHALL", AllSlots, true},
		{"LIMITDB.POLICY DEL p", 0, false},
		{"RL.SET {m}r gcra 1 1 0 0 0 5", migSlot, true},
		{"MULTI", 0, false},
		{"NOSUCH x", 0, false},
	} {
		var argv [][]byte
		for _, f := range strings.Fields(c.args) {
			argv = append(argv, []byte(f))
		}
		if s, ok := EffectSlots(argv); s != c.slot || ok != c.ok {
			t.Errorf("%q: %d %v, want %d %v", c.args, s, ok, c.slot, c.ok)
		}
	}
}

// TestSlotHandoverRandom runs 500 handovers of two slots with random
// interleavings of client writes (executed by whichever group owns the
// key's slot then; parked, so dropped, while none does), captures,
// loads, forwarded records, expiry, FREEZE, OWN, DONE, CANCEL and ABORT.
// After every step: never two groups executing a slot, never a hole in
// the claimed slots; at the end the owner's keys equal a reference
// engine's that ran the same accepted writes, and the other holds none.
func TestSlotHandoverRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 2))
	s0, s1 := migSlot, KeySlot([]byte("n"))
	tags := []string{"{m}", "{n}", "{o}"}
	ss0, ss1 := strconv.Itoa(s0), strconv.Itoa(s1)
	outcomes, records := map[string]int{}, 0
	defer func() { t.Logf("%v, %d records", outcomes, records) }()
	for iter := range 500 {
		a, b := newMigGroup(t, "A"), newMigGroup(t, "B")
		ref := New()
		ref.EnableSlots()
		rc := &Ctx{E: ref, DB: ref.DBs[0], W: resp.NewWriter()}
		now := int64(1_700_000_000_000)
		o := strconv.Itoa(KeySlot([]byte("o")))
		a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "ADD", ss0, ss0, ss1, ss1, o, o)
		write := func() {
			k := tags[rng.IntN(3)] + strconv.Itoa(rng.IntN(6))
			var args []string
			switch rng.IntN(8) {
			case 0:
				args = []string{"SET", k, strconv.Itoa(rng.IntN(100)), "PX", strconv.Itoa(1 + rng.IntN(400))}
			case 1:
				args = []string{"DEL", k}
			case 2:
				args = []string{"APPEND", k + "s", "x"}
			case 3:
				args = []string{"INCR", k + "n"}
			case 4:
				args = []string{"HSET", k + "h", strconv.Itoa(rng.IntN(3)), "v"}
			case 5:
				args = []string{"RL.ALLOW", k + "r", "3", "500"}
			case 6:
				args = []string{"PEXPIRE", k + "n", strconv.Itoa(rng.IntN(300))}
			default:
				args = []string{"SET", k, "v"}
			}
			slot := KeySlot([]byte(args[1]))
			var g *migGroup
			switch {
			case a.lead.OwnsSlot(slot):
				g = a
			case b.lead.OwnsSlot(slot):
				g = b
			default:
				return // parked (frozen or between DONE and the map): not executed
			}
			g.do(now, args...)
			if slot != KeySlot([]byte("o")) {
				argv := toArgv(args)
				rc.Now, ref.ClockMs = now, max(ref.ClockMs, now)
				rc.W.Reset()
				rc.Exec(argv)
				if got := g.lastRply; got != string(rc.W.B) {
					t.Fatalf("iter %d: %q: %s answered %q, the reference %q", iter, args, g.name, got, rc.W.B)
				}
			}
		}
		check := func() {
			for _, s := range []int{s0, s1} {
				if a.lead.OwnsSlot(s) && b.lead.OwnsSlot(s) {
					t.Fatalf("iter %d: slot %d executed by both groups", iter, s)
				}
				claimed := func(e *Engine) bool {
					for _, r := range e.OwnedSlots() {
						if s >= r[0] && s <= r[1] {
							return true
						}
					}
					return false
				}
				if !claimed(a.lead) && !claimed(b.lead) {
					t.Fatalf("iter %d: slot %d claimed by nobody", iter, s)
				}
			}
		}
		// the driver: the protocol's steps in order, any of them maybe
		// skipped by a cancel or an abort, with writes and expiry between
		const (
			begun = iota
			imported
			loaded
			frozen
			owned
			finished
		)
		phase, capAt, next, cancelAt := -1, 0, 0, 0
		aborted, cancelled := false, false
		var freezeDig Digest
		var floor int64
		for step := 0; phase < finished && step < 200; step++ {
			now += int64(rng.IntN(120))
			switch r := rng.IntN(20); {
			case r < 12:
				write()
			case r < 14:
				(map[bool]*migGroup{true: a, false: b})[rng.IntN(2) == 0].expire(now)
			case r < 15 && rng.IntN(4) == 0:
				// a follower restarts from its leader's snapshot
				g := (map[bool]*migGroup{true: a, false: b})[rng.IntN(2) == 0]
				g.fol = New()
				g.fol.EnableSlots()
				g.fol.NoLazyDelete = true
				snapshotInto(t, g.lead, g.fol)
				if g.fol.StrictDigest() != g.lead.StrictDigest() || len(g.fol.Migrations()) != len(g.lead.Migrations()) {
					t.Fatalf("iter %d: %s's snapshot lost the handover", iter, g.name)
				}
			case r < 17 && phase >= loaded && phase < owned && !aborted:
				next = forward(t, a, b, now, "m", next, s0, s1)
			default:
				switch {
				case phase == -1:
					a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "MIGRATE", "m", "1", ss0, ss0, ss1, ss1)
					phase = begun
				case phase == begun:
					b.must(now, "+OK\r\n", "LIMITDB.SLOTS", "IMPORT", "m", "0", ss0, ss0, ss1, ss1)
					phase = imported
				case phase == imported:
					// the capture's point is StartSlotCapture; writes made
					// before its encoding reach B as records
					sc := a.lead.StartSlotCapture([][2]int{{s0, s0}, {s1, s1}})
					capAt, next = len(a.log), len(a.log)
					for range rng.IntN(5) {
						write()
					}
					for _, ch := range sc.Chunks(64 + rng.IntN(200)) {
						b.do(now, "LIMITDB.SLOTS", "LOAD", "m", string(ch))
					}
					sc.Release()
					phase = loaded
				case (phase == loaded || phase == frozen) && !aborted && !cancelled && rng.IntN(6) == 0:
					b.do(now, "LIMITDB.SLOTS", "ABORT", "m")
					aborted = true
				case phase == loaded && aborted || phase == loaded && rng.IntN(8) == 0:
					a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "CANCEL", "m")
					cancelled, cancelAt = true, phase
					if !aborted {
						b.do(now, "LIMITDB.SLOTS", "ABORT", "m")
					}
					phase = finished
				case phase == frozen && aborted:
					a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "CANCEL", "m", "ABORTED")
					cancelled, cancelAt = true, phase
					phase = finished
				case phase == loaded:
					a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "FREEZE", "m")
					floor = a.lead.Migrations()[0].Floor
					freezeDig, _ = a.lead.MigrationDigest("m")
					phase = frozen
				case phase == frozen:
					next = forward(t, a, b, now, "m", next, s0, s1)
					b.must(now, "+OK\r\n", "LIMITDB.SLOTS", "OWN", "m", strconv.FormatInt(floor, 10), freezeDig.Hex())
					phase = owned
				case phase == owned:
					a.do(now, "LIMITDB.SLOTS", "DONE", "m")
					phase = finished
				}
			}
			check()
		}
		_ = capAt
		outcome := "owned"
		if cancelled {
			outcome = "cancelled " + [...]string{"begun", "imported", "loaded", "frozen"}[cancelAt]
		}
		outcomes[outcome]++
		records += len(a.log) + len(b.log)
		// finish what the steps left: cancel (and abort) before OWN
		switch {
		case phase == owned:
			a.do(now, "LIMITDB.SLOTS", "DONE", "m")
		case phase >= imported && phase < owned && !cancelled:
			if !aborted {
				b.do(now, "LIMITDB.SLOTS", "ABORT", "m")
			}
			a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "CANCEL", "m", "ABORTED")
			cancelled, cancelAt = true, phase
		case phase == begun:
			a.must(now, "+OK\r\n", "LIMITDB.SLOTS", "CANCEL", "m")
			cancelled, cancelAt = true, phase
		}
		check()
		if len(a.lead.Migrations()) != 0 || len(b.lead.Migrations()) != 0 {
			t.Fatalf("iter %d: migrations left: %+v %+v", iter, a.lead.Migrations(), b.lead.Migrations())
		}
		// the owner equals the reference once both reclaimed what expired
		owner, other := a, b
		if b.lead.OwnsSlot(s0) {
			owner, other = b, a
		}
		now += 1000
		owner.expire(now)
		rc.Now, ref.ClockMs = now, now
		rc.ActiveExpire(ref.DBs[0], 1<<20)
		for _, s := range []int{s0, s1} {
			if !owner.lead.OwnsSlot(s) || other.lead.OwnsSlot(s) || other.lead.CountKeysInSlot(s) != 0 {
				t.Fatalf("iter %d: slot %d: owners A %v B %v, %d keys left on %s", iter, s, a.lead.OwnsSlot(s), b.lead.OwnsSlot(s), other.lead.CountKeysInSlot(s), other.name)
			}
			if owner.lead.SlotDigest(s) != ref.SlotDigest(s) {
				t.Fatalf("iter %d (phase %d, aborted %v): slot %d on %s differs from the reference", iter, phase, aborted, s, owner.name)
			}
		}
	}
}

// TestSlotCaptureWhileWriting: a capture started under the lock and
// encoded after writes changed, grew, deleted and replaced its keys in
// place gives the bytes a capture encoded at once would have, also with
// the writes running concurrently with the encoding (go test -race).
func TestSlotCaptureWhileWriting(t *testing.T) {
	e := New()
	e.EnableSlots()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1_700_000_000_000}
	run := func(args ...string) {
		c.W.Reset()
		c.Exec(toArgv(args))
	}
	setup := func() {
		for i := range 40 {
			k := "{m}" + strconv.Itoa(i)
			run("SET", k+"s", strings.Repeat("x", i))
			run("APPEND", k+"a", "ab")
			run("APPEND", k+"a", "cd")
			run("HSET", k+"h", "f", "1")
			run("RPUSH", k+"l", "a", "b")
			run("SADD", k+"i", "1", "2")
			run("SADD", k+"t", "x", "y")
			run("ZADD", k+"z", "1", "a")
			run("RL.ALLOW", k+"r", "5", "1000", "ALGO", "sliding-log")
			run("RL.ALLOW", k+"g", "5", "1000")
		}
		for i := range 200 {
			run("HSET", "{m}bigh", "f"+strconv.Itoa(i), "v")
			run("ZADD", "{m}bigz", strconv.Itoa(i), "m"+strconv.Itoa(i))
		}
	}
	mutate := func(i int) {
		k := "{m}" + strconv.Itoa(i%40)
		switch i % 12 {
		case 0:
			run("APPEND", k+"a", "more")
		case 1:
			run("HSET", k+"h", "f", "2", "g", "3")
		case 2:
			run("RPUSH", k+"l", "c")
		case 3:
			run("SADD", k+"i", "3")
		case 4:
			run("SADD", k+"t", "z")
		case 5:
			run("ZADD", k+"z", "5", "a", "6", "b")
		case 6:
			run("RL.ALLOW", k+"r", "5", "1000", "ALGO", "sliding-log")
		case 7:
			run("RL.ALLOW", k+"g", "5", "1000")
		case 8:
			run("DEL", k+"s")
		case 9:
			run("SETRANGE", k+"a", "0", "ZZ")
		case 10:
			run("HSET", "{m}bigh", "f1", "changed", "new"+strconv.Itoa(i), "v")
		default:
			run("ZINCRBY", "{m}bigz", "3", "m7")
		}
	}
	setup()
	want := e.CaptureSlots(slotRange(migSlot), 4096)
	s := e.StartSlotCapture(slotRange(migSlot))
	for i := range 480 {
		mutate(i)
	}
	got := s.Chunks(4096)
	s.Release()
	if !slices.EqualFunc(got, want, bytes.Equal) {
		t.Fatal("the capture changed with the writes after it")
	}
	if e.cow.active.Load() != 0 {
		t.Fatal("a capture still active after Release")
	}

	// concurrently: writes under a lock, the encoding without it
	e = New()
	e.EnableSlots()
	c = &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1_700_000_000_000}
	setup()
	want = e.CaptureSlots(slotRange(migSlot), 4096)
	s = e.StartSlotCapture(slotRange(migSlot))
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 480 {
			mu.Lock()
			mutate(i)
			mu.Unlock()
		}
	}()
	got = s.Chunks(4096)
	<-done
	s.Release()
	if !slices.EqualFunc(got, want, bytes.Equal) {
		t.Fatal("the capture changed with concurrent writes")
	}
}
