package engine

import (
	"bytes"
	"math/rand"
	"slices"
	"testing"
)

// TestSlotsOwnership: LIMITDB.SLOTS ADD/DEL change the owned set all or
// nothing, with Redis's errors, replicate as their merged ranges (the
// harness applies each record to a second engine and compares strict
// digests), and OwnedSlots gives CLUSTER SLOTS' ranges.
func TestSlotsOwnership(t *testing.T) {
	h := newEffHarness(t)
	do := func(want, eff string, args ...string) {
		t.Helper()
		got := h.do(1000, args...)
		if string(h.c.W.B) != want || got != eff {
			t.Fatalf("%q: reply %q effects %q, want %q %q", args, h.c.W.B, got, want, eff)
		}
	}
	do("+OK\r\n", "LIMITDB.SLOTS ADD 0 5 7 9", "LIMITDB.SLOTS", "ADD", "7", "9", "0", "3", "2", "5")
	if !h.a.OwnsSlot(0) || !h.a.OwnsSlot(5) || h.a.OwnsSlot(6) || !h.b.OwnsSlot(9) || h.b.OwnsSlot(10) {
		t.Fatal("owned set")
	}
	if got := h.a.OwnedSlots(); !slices.Equal(got, [][2]int{{0, 5}, {7, 9}}) || h.a.OwnedSlotCount() != 9 {
		t.Fatalf("OwnedSlots %v", got)
	}
	do("-ERR Slot 8 is already busy\r\n", "", "LIMITDB.SLOTS", "ADD", "6", "6", "8", "8")
	if h.a.OwnsSlot(6) {
		t.Fatal("a refused ADD changed the set")
	}
	do("-ERR Invalid or out of range slot\r\n", "", "LIMITDB.SLOTS", "ADD", "16384", "16384")
	do("-ERR Invalid or out of range slot\r\n", "", "LIMITDB.SLOTS", "ADD", "-1", "3")
	do("-ERR Invalid or out of range slot\r\n", "", "LIMITDB.SLOTS", "ADD", "x", "3")
	do("-ERR start slot number 9 is greater than end slot number 8\r\n", "", "LIMITDB.SLOTS", "ADD", "9", "8")
	do("-ERR syntax error\r\n", "", "LIMITDB.SLOTS", "ADD", "1", "2", "3")
	do("-ERR Slot 6 is already unassigned\r\n", "", "LIMITDB.SLOTS", "DEL", "5", "6")
	do("+OK\r\n", "LIMITDB.SLOTS DEL 3 5", "LIMITDB.SLOTS", "DEL", "3", "5")
	do("+OK\r\n", "LIMITDB.SLOTS ADD 16383 16383", "LIMITDB.SLOTS", "ADD", "16383", "16383")
	if got := h.b.OwnedSlots(); !slices.Equal(got, [][2]int{{0, 2}, {7, 9}, {16383, 16383}}) {
		t.Fatalf("follower's OwnedSlots %v", got)
	}
	if h.a.OwnsSlot(-1) || h.a.OwnsSlot(NumSlots) {
		t.Fatal("out-of-range slots are never owned")
	}

	// AddSlots, the server's entry point, refuses with the first busy
	// slot in argument order and records the merged ranges
	h.eff.Reset()
	h.c.W.Reset()
	if busy, ok := h.c.AddSlots([][2]int{{100, 200}, {9, 9}, {1, 1}}); ok || busy != 9 {
		t.Fatalf("AddSlots over owned slots: %d %v", busy, ok)
	}
	if unassigned, ok := h.c.DelSlots([][2]int{{0, 0}, {50, 50}}); ok || unassigned != 50 {
		t.Fatalf("DelSlots over free slots: %d %v", unassigned, ok)
	}
	if h.a.OwnsSlot(100) || !h.a.OwnsSlot(0) || len(h.c.W.B) != 0 {
		t.Fatal("a refused AddSlots/DelSlots changed something or replied")
	}

	// snapshots carry the set; Reset drops it; a file without the field
	// owns nothing
	e2 := New()
	file := snapshotInto(t, h.a, e2)
	if !bytes.Contains(file, []byte("0-2 7-9 16383-16383")) {
		t.Fatal("snapshot without its limitdb-slots field")
	}
	if e2.StrictDigest() != h.a.StrictDigest() || !slices.Equal(e2.OwnedSlots(), h.a.OwnedSlots()) {
		t.Fatal("owned slots lost in a snapshot round trip")
	}
	d := h.a.StrictDigest()
	if err := e2.Reset(nil); err != nil {
		t.Fatal(err)
	}
	if len(e2.OwnedSlots()) != 0 || e2.StrictDigest() != New().StrictDigest() || e2.StrictDigest() == d {
		t.Fatal("Reset kept owned slots")
	}
	empty := emptySnapshot(t)
	if bytes.Contains(empty, []byte(auxSlots)) {
		t.Fatal("a group owning nothing writes limitdb-slots")
	}
	// a file with owned slots says format version 2, so that a binary
	// that would skip limitdb-slots refuses it; one without still says 1
	if v1, v2 := snapshotVer(empty), snapshotVer(file); v1 != "\xc0\x01" || v2 != "\xc0\x02" {
		t.Fatalf("limitdb-ver: %q without slots, %q with", v1, v2)
	}
	if err := h.a.LoadSnapshot(bytes.NewReader(empty)); err != nil || len(h.a.OwnedSlots()) != 0 {
		t.Fatalf("loading a file without limitdb-slots: %v %v", err, h.a.OwnedSlots())
	}
}

// snapshotVer is the limitdb-ver of a snapshot file, as written: an
// 8-bit integer, 0xc0 then the value.
func snapshotVer(b []byte) string {
	i := bytes.Index(b, []byte(auxVersion))
	return string(b[i+len(auxVersion) : i+len(auxVersion)+2])
}

// TestSlotRangesCodec: the aux value's form round-trips and refuses what
// no writer produces.
func TestSlotRangesCodec(t *testing.T) {
	var b slotBits
	for _, s := range []int{0, 1, 2, 63, 64, 65, 127, 128, 1000, 16383} {
		b.set(s)
	}
	enc := encodeSlotRanges(&b)
	if enc != "0-2 63-65 127-128 1000-1000 16383-16383" {
		t.Fatalf("encoded %q", enc)
	}
	if got, err := decodeSlotRanges(enc); err != nil || got != b || got.count() != 10 {
		t.Fatalf("decoded %v %v", got.ranges(), err)
	}
	for _, bad := range []string{"1", "2-1", "0-16384", "-1-2", "a-b", "1-2-3"} {
		if _, err := decodeSlotRanges(bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

// TestSlotBitsRanges checks the word-at-a-time range operations against
// slot-by-slot ones on random sets and ranges.
func TestSlotBitsRanges(t *testing.T) {
	r := rand.New(rand.NewSource(22))
	for range 2000 {
		var b slotBits
		for range r.Intn(4) {
			s := r.Intn(NumSlots)
			b.setRange(s, min(NumSlots-1, s+r.Intn(300)), true)
		}
		for range r.Intn(200) {
			b.set(r.Intn(NumSlots))
		}
		s := r.Intn(NumSlots)
		e := min(NumSlots-1, s+r.Intn(1+r.Intn(NumSlots)))
		for _, in := range []bool{true, false} {
			want := -1
			for i := s; i <= e; i++ {
				if b.has(i) == in {
					want = i
					break
				}
			}
			if got := b.first(s, e, in); got != want {
				t.Fatalf("first(%d, %d, %v) = %d, want %d", s, e, in, got, want)
			}
		}
		on := r.Intn(2) == 0
		x := b
		x.setRange(s, e, on)
		for i := range NumSlots {
			want := b.has(i)
			if i >= s && i <= e {
				want = on
			}
			if x.has(i) != want {
				t.Fatalf("setRange(%d, %d, %v): slot %d is %v", s, e, on, i, x.has(i))
			}
		}
	}
}
