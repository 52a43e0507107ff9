package engine

import (
	"bytes"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"limitdb/resp"
)

// checkSlotIndex compares db 0's slot index with a full scan: every
// slot's count, and its list (walked both ways) holding exactly the
// slot's keys.
func checkSlotIndex(t *testing.T, e *Engine, step string) {
	t.Helper()
	for i, db := range e.DBs {
		if (db.dict.slots != nil) != (i == 0) {
			t.Fatalf("%s: db %d has slot index %v", step, i, db.dict.slots != nil)
		}
	}
	want := map[int][]string{}
	e.DBs[0].dict.each(func(x *entry) bool {
		k := x.keyStr()
		want[keySlot(k)] = append(want[keySlot(k)], k)
		return true
	})
	s := e.slots
	total := 0
	for slot := range NumSlots {
		n := int(e.CountKeysInSlot(slot))
		total += n
		if n != len(want[slot]) {
			t.Fatalf("%s: slot %d counts %d keys, scan finds %d", step, slot, n, len(want[slot]))
		}
		if n == 0 {
			if s.slot[slot].head != 0 {
				t.Fatalf("%s: empty slot %d has a head", step, slot)
			}
			continue
		}
		var got []string
		prev := int32(0)
		for i := s.slot[slot].head; i != 0; i = s.link(i - 1).next {
			if s.link(i-1).prev != prev {
				t.Fatalf("%s: slot %d: broken prev link", step, slot)
			}
			prev = i
			got = append(got, e.DBs[0].dict.at(i-1).keyStr())
		}
		slices.Sort(got)
		w := slices.Clone(want[slot])
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Fatalf("%s: slot %d lists %q, scan finds %q", step, slot, got, w)
		}
		if ks := e.KeysInSlot(slot, 1); len(ks) != 1 || keySlot(string(ks[0])) != slot {
			t.Fatalf("%s: KeysInSlot(%d, 1) = %q", step, slot, ks)
		}
	}
	if total != e.DBs[0].Len() {
		t.Fatalf("%s: index counts %d keys, db 0 has %d", step, total, e.DBs[0].Len())
	}
}

// TestSlotIndexRandom runs random commands over a small keyspace (tagged
// keys, so slots hold several keys) through every path by which db 0
// gains or loses a key in cluster mode — SET, DEL/UNLINK/GETDEL, RENAME,
// COPY, RESTORE, SMOVE/LMOVE, RL.ALLOW, a collection losing its last
// element, EXPIRE in the past, lazy and active expiry (a limiter's
// included), eviction, FLUSHDB/FLUSHALL, a snapshot load, DEBUG RELOAD's
// reload and NOFLUSH merge, Reset — and checks the index against a full
// scan after each. (MOVE and SWAPDB are refused in cluster mode:
// TestClusterModeRefusals.)
func TestSlotIndexRandom(t *testing.T) {
	e := New()
	e.EnableSlots()
	deleted := []string{}
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1_700_000_000_000, Deleted: &deleted}
	r := rand.New(rand.NewSource(22))
	key := func() string {
		if r.Intn(3) == 0 {
			return fmt.Sprintf("{t%d}.%d", r.Intn(4), r.Intn(10))
		}
		return fmt.Sprintf("k%d", r.Intn(60))
	}
	snap := func() []byte {
		var b bytes.Buffer
		if err := e.WriteSnapshot(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	for step := range 3000 {
		c.Now += int64(r.Intn(5))
		var op []string
		switch n := r.Intn(100); {
		case n < 25:
			op = []string{"SET", key(), "v"}
		case n < 30:
			op = []string{"SET", key(), "v", "PX", fmt.Sprint(1 + r.Intn(10))}
		case n < 40:
			op = []string{"DEL", key(), key()}
		case n < 43:
			op = []string{"UNLINK", key()}
		case n < 48:
			op = []string{"RENAME", key(), key()}
		case n < 50:
			op = []string{"RENAMENX", key(), key()}
		case n < 52:
			op = []string{"GETDEL", key()}
		case n < 54:
			op = []string{"SMOVE", key(), key(), "m"}
		case n < 56:
			op = []string{"LMOVE", key(), key(), "LEFT", "RIGHT"}
		case n < 59:
			op = []string{"COPY", key(), key(), "REPLACE"}
		case n < 62:
			op = []string{"LPUSH", key(), "a"}
		case n < 65:
			op = []string{"LPOP", key()}
		case n < 67:
			op = []string{"SADD", key(), "m"}
		case n < 69:
			op = []string{"SREM", key(), "m"}
		case n < 71:
			op = []string{"EXPIRE", key(), "-1"}
		case n < 74:
			op = []string{"GET", key()} // lazy expiry
		case n < 76:
			c.ActiveExpire(c.DB, 8)
		case n < 78:
			e.SetEvictPolicy(PolicyAllKeysRandom, 5)
			c.Evict(1, 1)
			e.SetEvictPolicy(PolicyNoEviction, 5)
		case n < 80:
			k := key()
			run(c, "SET", k, "dumped")
			d := run(c, "DUMP", k)
			_, payload, _ := bytes.Cut([]byte(d), []byte("\r\n"))
			payload = payload[:len(payload)-2]
			op = []string{"RESTORE", key(), "0", string(payload), "REPLACE"}
		case n < 81:
			op = []string{"FLUSHDB"}
		case n < 82:
			op = []string{"FLUSHALL"}
		case n < 84:
			op = []string{"RL.ALLOW", key(), "LIMIT", "2", "PERIOD", "5"}
		case n < 86:
			op = []string{"HSET", key(), "f", "v"}
		case n < 88:
			if err := e.LoadSnapshot(bytes.NewReader(snap())); err != nil {
				t.Fatal(err)
			}
		case n < 90:
			if err := e.ReloadSnapshot(bytes.NewReader(snap())); err != nil {
				t.Fatal(err)
			}
		case n < 92:
			b := snap()
			run(c, "SET", key(), "extra")
			if err := e.MergeSnapshot(bytes.NewReader(b), true); err != nil {
				t.Fatal(err)
			}
		case n < 93:
			if err := e.Reset(nil); err != nil {
				t.Fatal(err)
			}
		default:
			op = []string{"SET", fmt.Sprintf("new%d", step), "v"}
		}
		what := fmt.Sprint(step, " ", n2s(op))
		if op != nil {
			run(c, op...)
		}
		checkSlotIndex(t, e, what)
	}
}

func n2s(op []string) string {
	if op == nil {
		return "(engine call)"
	}
	return fmt.Sprint(op)
}

// TestSlotIndexEnableLate: EnableSlots on an engine that already holds
// keys indexes them, and a database other than 0 is never indexed.
func TestSlotIndexEnableLate(t *testing.T) {
	e := New()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1}
	for i := range 100 {
		run(c, "SET", fmt.Sprint("{x}", i), "v")
	}
	if e.SlotsEnabled() || e.CountKeysInSlot(keySlot("x")) != 0 {
		t.Fatal("index before EnableSlots")
	}
	e.EnableSlots()
	if n := e.CountKeysInSlot(keySlot("x")); n != 100 {
		t.Fatalf("%d keys in {x}'s slot", n)
	}
	if ks := e.KeysInSlot(keySlot("x"), 7); len(ks) != 7 {
		t.Fatalf("KeysInSlot gave %d keys", len(ks))
	}
	checkSlotIndex(t, e, "late")
}

// TestClusterModeRefusals: with EnableSlots (cluster mode, db 0 only)
// MOVE, SWAPDB and COPY … DB n answer Redis 7.0.15's errors and change
// nothing; COPY … DB 0 still copies.
func TestClusterModeRefusals(t *testing.T) {
	e := New()
	e.EnableSlots()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1}
	run(c, "SET", "a", "1")
	for _, tc := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"MOVE", "a", "1"}, "-ERR MOVE is not allowed in cluster mode\r\n"},
		{[]string{"MOVE", "a", "x"}, "-ERR MOVE is not allowed in cluster mode\r\n"},
		{[]string{"SWAPDB", "0", "1"}, "-ERR SWAPDB is not allowed in cluster mode\r\n"},
		{[]string{"SWAPDB", "x", "0"}, "-ERR SWAPDB is not allowed in cluster mode\r\n"},
		{[]string{"COPY", "a", "{a}b", "DB", "1"}, "-ERR Copying to another database is not allowed in cluster mode\r\n"},
		{[]string{"COPY", "a", "{a}b", "DB", "99"}, "-ERR DB index is out of range\r\n"},
		{[]string{"COPY", "a", "{a}b", "DB", "0"}, ":1\r\n"},
	} {
		if got := run(c, tc.cmd...); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.cmd, got, tc.want)
		}
	}
	if e.DBs[0].Len() != 2 || e.DBs[1].Len() != 0 {
		t.Fatalf("db 0 has %d keys, db 1 %d", e.DBs[0].Len(), e.DBs[1].Len())
	}
	checkSlotIndex(t, e, "refusals")
}

// TestSlotDigest: a slot's digest depends on its keys, values and
// deadlines, not on their order or on other slots' keys, and survives a
// snapshot round trip.
func TestSlotDigest(t *testing.T) {
	mk := func(order []string, extra bool) *Engine {
		e := New()
		e.EnableSlots()
		c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1000}
		for _, k := range order {
			run(c, "SET", k, "v"+k)
		}
		run(c, "PEXPIREAT", "{s}b", "99999")
		if extra {
			run(c, "SET", "other", "x")
			run(c, "LPUSH", "{s}d", "x")
			run(c, "DEL", "{s}d")
		}
		return e
	}
	slot := keySlot("s")
	a, b := mk([]string{"{s}a", "{s}b", "{s}c"}, false), mk([]string{"{s}c", "{s}a", "{s}b"}, true)
	if a.SlotDigest(slot) != b.SlotDigest(slot) || a.SlotDigest(slot) == (Digest{}) {
		t.Fatal("slot digest depends on order or on other keys")
	}
	if a.SlotDigest(keySlot("nothing-here-xyz")) != (Digest{}) {
		t.Fatal("an empty slot's digest is not zero")
	}
	c := &Ctx{E: b, DB: b.DBs[0], W: resp.NewWriter(), Now: 1000}
	run(c, "PEXPIREAT", "{s}b", "99998")
	if a.SlotDigest(slot) == b.SlotDigest(slot) {
		t.Fatal("a deadline change does not change the slot digest")
	}
	run(c, "PEXPIREAT", "{s}b", "99999")
	run(c, "APPEND", "{s}a", "!")
	if a.SlotDigest(slot) == b.SlotDigest(slot) {
		t.Fatal("a value change does not change the slot digest")
	}
	e2 := New()
	e2.EnableSlots()
	if snapshotInto(t, a, e2); e2.SlotDigest(slot) != a.SlotDigest(slot) {
		t.Fatal("slot digest after a snapshot round trip")
	}
}
