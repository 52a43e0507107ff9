package engine

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestEntrySize(t *testing.T) {
	if s := unsafe.Sizeof(entry{}); s != 40 {
		t.Fatalf("entry is %d bytes, want 40", s)
	}
}

// testKey makes a key of length n whose bytes depend on id, so a key whose
// bytes were overwritten or repointed to another key's bytes is caught.
func testKey(id, n int) string {
	var b strings.Builder
	b.Grow(n)
	s := strconv.Itoa(id) + ":"
	for b.Len() < n {
		b.WriteString(s)
	}
	return b.String()[:n]
}

// checkDict verifies that d holds exactly want, with every key readable and
// findable, and that the arena accounting matches the keys.
func checkDict(t *testing.T, d *dict, want map[string]int64) {
	t.Helper()
	if d.len() != len(want) {
		t.Fatalf("len %d want %d", d.len(), len(want))
	}
	live, seen := 0, 0
	d.each(func(e *entry) bool {
		k := e.keyStr()
		v, ok := want[k]
		if !ok || e.n != v {
			t.Fatalf("entry %q (n=%d) not expected (ok=%v want n=%d)", k, e.n, ok, v)
		}
		if n := len(k); n > 0 && n <= arenaMaxKey {
			live += n
		}
		seen++
		return true
	})
	if seen != len(want) {
		t.Fatalf("each saw %d want %d", seen, len(want))
	}
	if live != d.keys.live {
		t.Fatalf("arena live %d, keys hold %d", d.keys.live, live)
	}
	if d.keys.dead > d.keys.live/4+4*slabSize {
		t.Fatalf("arena garbage %d over its bound (live %d)", d.keys.dead, d.keys.live)
	}
	for k, v := range want {
		e := d.find(k)
		if e == nil || e.n != v || e.keyStr() != k {
			t.Fatalf("find %q: %v", k, e)
		}
	}
}

// TestArenaRandom inserts and deletes keys of every storage class (empty,
// arena, own allocation, indirect) at random and checks after each round
// that every key is intact, across many arena compactions.
func TestArenaRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var d dict
	want := map[string]int64{}
	var names []string
	for i := 0; i < 30000; i++ {
		k := "p" + strconv.Itoa(i)
		d.insert(k).n = int64(i)
		want[k] = int64(i)
		names = append(names, k)
	}
	midway := 0
	for round := 0; round < 600; round++ {
		for i := 0; i < 600; i++ {
			if d.keys.moving && i%50 == 0 {
				midway++
				checkDict(t, &d, want)
			}
			if len(names) > 0 && r.IntN(100) < 48 {
				j := r.IntN(len(names))
				k := names[j]
				names[j] = names[len(names)-1]
				names = names[:len(names)-1]
				if !d.remove(k) {
					t.Fatalf("remove %q", k)
				}
				delete(want, k)
				continue
			}
			var n int
			switch x := r.IntN(1000); {
			case x == 0:
				n = 0
			case x == 1:
				n = keyIndirect + r.IntN(3)
			case x < 12:
				n = arenaMaxKey + 1 + r.IntN(2000)
			case x < 30:
				n = 1 + r.IntN(arenaMaxKey)
			default:
				n = 1 + r.IntN(24)
			}
			id := r.IntN(1 << 30)
			k := testKey(id, n)
			if _, ok := want[k]; ok {
				continue
			}
			// insert from a buffer that is then overwritten: the dict must copy
			buf := []byte(k)
			e := d.insert(bstr(buf))
			for i := range buf {
				buf[i] = '#'
			}
			e.n = int64(id)
			want[k] = int64(id)
			names = append(names, k)
		}
		checkDict(t, &d, want)
	}
	if midway == 0 {
		t.Fatal("never checked during a compaction")
	}
	if d.compactions < 3 {
		t.Fatalf("only %d compactions", d.compactions)
	}
	t.Logf("%d compactions, %d checks during one", d.compactions, midway)
	for _, k := range names {
		if !d.remove(k) {
			t.Fatalf("remove %q", k)
		}
	}
	checkDict(t, &d, map[string]int64{})
}

// TestArenaEscapedKeys keeps key strings taken from entries (as replies,
// WATCH records and the deleted-keys list do), then deletes those keys and
// churns the dict through compactions: the kept strings must not change.
func TestArenaEscapedKeys(t *testing.T) {
	var d dict
	var kept, copies []string
	for i := 0; i < 20000; i++ {
		d.insert(testKey(i, 5+i%40))
	}
	d.each(func(e *entry) bool {
		k := e.keyStr()
		kept = append(kept, k)
		copies = append(copies, strings.Clone(k))
		return true
	})
	for _, k := range copies {
		d.remove(k)
	}
	for i := 0; i < 200000; i++ {
		k := testKey(1_000_000+i, 5+i%40)
		d.insert(k)
		if i%2 == 0 {
			d.remove(k)
		}
	}
	if d.compactions == 0 {
		t.Fatal("no compaction")
	}
	for i := range kept {
		if kept[i] != copies[i] {
			t.Fatalf("escaped key %d changed: %q want %q", i, kept[i], copies[i])
		}
	}
}

// TestDictOrderIndependentOfArena builds the same key set through two
// histories (one with many compactions) and requires identical bucket order,
// which KEYS, SCAN and RANDOMKEY expose: order depends on hashes, never on
// where key bytes live.
func TestDictOrderIndependentOfArena(t *testing.T) {
	var a, b dict
	for i := 0; i < 5000; i++ {
		a.insert(testKey(i, 12))
	}
	for i := 0; i < 5000; i++ {
		b.insert(testKey(i, 12))
		for j := 0; j < 30; j++ {
			k := testKey(-1-i*100-j, 900)
			b.insert(k)
			b.remove(k)
		}
	}
	var oa, ob []string
	a.each(func(e *entry) bool { oa = append(oa, e.keyStr()); return true })
	b.each(func(e *entry) bool { ob = append(ob, e.keyStr()); return true })
	if strings.Join(oa, ",") != strings.Join(ob, ",") {
		t.Fatal("bucket order depends on the arena history")
	}
}

// TestLongKeys stores keys of every storage class through the commands.
func TestLongKeys(t *testing.T) {
	h := newRL(2)
	for _, n := range []int{0, 1, arenaMaxKey, keyIndirect, 1 << 10, 1 << 16, 1 << 20} {
		k := testKey(n, n)
		if got := h.do(t0, "SET", k, "v"+strconv.Itoa(n)); got != "+OK\r\n" {
			t.Fatalf("SET %d: %q", n, got)
		}
		if got, want := h.do(t0, "GET", k), "$"+strconv.Itoa(len(strconv.Itoa(n))+1)+"\r\nv"+strconv.Itoa(n)+"\r\n"; got != want {
			t.Fatalf("GET %d: %q want %q", n, got, want)
		}
		if got := h.do(t0, "EXISTS", k); got != ":1\r\n" {
			t.Fatalf("EXISTS %d: %q", n, got)
		}
	}
	if got := h.do(t0, "DBSIZE"); got != ":7\r\n" {
		t.Fatal(got)
	}
	k := testKey(keyIndirect, keyIndirect)
	if got := h.do(t0, "RENAME", k, k+"x"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if got, want := h.do(t0, "STRLEN", k+"x"), ":"+strconv.Itoa(len("v"+strconv.Itoa(keyIndirect)))+"\r\n"; got != want {
		t.Fatal(got)
	}
	if got := h.do(t0, "DEL", k+"x"); got != ":1\r\n" {
		t.Fatal(got)
	}
}

// BenchmarkCompact measures one arena compaction of a 1,000,000-key dict
// (10-byte keys): the pause a delete that triggers it adds.
func BenchmarkCompact(b *testing.B) {
	var d dict
	for i := 0; i < 1_000_000; i++ {
		d.insert("rl:" + strconv.Itoa(1_000_000 + i)[1:] + "x")
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.compact()
	}
}
