package engine

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dirHarness runs LIMITDB.DIRECTORY on an effects harness: every change
// is recorded as the command itself and applied to the follower (whose
// strict digest the harness compares), every refusal records nothing and
// changes nothing (digest and DirGen).
type dirHarness struct{ *effHarness }

func newDirHarness(t *testing.T) dirHarness { return dirHarness{newEffHarness(t)} }

// ok runs args, which must reply want and record itself (changed) or
// nothing.
func (h dirHarness) ok(want string, changed bool, args ...string) {
	h.t.Helper()
	gen, d := h.a.DirGen(), h.a.StrictDigest()
	eff := h.do(1000, args...)
	if got := string(h.c.W.B); got != want {
		h.t.Fatalf("%q: reply %q, want %q", args, got, want)
	}
	wantEff := ""
	if changed {
		wantEff = strings.Join(args, " ")
	}
	if eff != wantEff {
		h.t.Fatalf("%q: effects %q, want %q", args, eff, wantEff)
	}
	if moved := h.a.DirGen() != gen; moved != changed {
		h.t.Fatalf("%q: DirGen moved %v, changed %v", args, moved, changed)
	}
	if !changed && h.a.StrictDigest() != d {
		h.t.Fatalf("%q: the state changed without an effect", args)
	}
}

// refused runs args, which must fail with errText and change nothing.
func (h dirHarness) refused(errText string, args ...string) {
	h.t.Helper()
	h.ok("-"+errText+"\r\n", false, args...)
}

// owners is the directory's owner of each slot of [s, e].
func owners(e *Engine, s, end int) []int {
	var out []int
	for i := s; i <= end; i++ {
		out = append(out, e.DirOwner(i))
	}
	return out
}

func rep(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestDirectoryFound: FOUND makes the group the directory's group 0 with
// its owned slots; a second FOUND, bad seeds and arity are refused.
func TestDirectoryFound(t *testing.T) {
	h := newDirHarness(t)
	if r := h.a.Shard(); r.Index != -1 || r.Directory || r.DirSeeds != nil || h.a.DirGroups() != nil || h.a.DirOwner(0) != -1 || h.a.DirGen() != 0 {
		t.Fatalf("a new engine's record %+v, groups %v", r, h.a.DirGroups())
	}
	h.do(1000, "LIMITDB.SLOTS", "ADD", "0", "99", "16383", "16383")
	for _, bad := range []string{"", ",", "a:1,", ",a:1", "a:1,,b:1", "a :1", "a:1\n"} {
		h.refused(ErrDirSeeds, "LIMITDB.DIRECTORY", "FOUND", bad)
	}
	h.refused("ERR wrong number of arguments for 'limitdb.directory|found' command", "LIMITDB.DIRECTORY", "FOUND")
	h.refused("ERR wrong number of arguments for 'limitdb.directory|found' command", "LIMITDB.DIRECTORY", "FOUND", "a:1", "b:1")
	h.ok("+OK\r\n", true, "LIMITDB.DIRECTORY", "FOUND", "10.0.0.1:17000,10.0.0.2:17000")
	if r := h.a.Shard(); r.Index != 0 || !r.Directory || r.DirSeeds != nil {
		t.Fatalf("the founder's record %+v", r)
	}
	want := []DirGroup{{0, []string{"10.0.0.1:17000", "10.0.0.2:17000"}}}
	for _, e := range []*Engine{h.a, h.b} {
		if g := e.DirGroups(); len(g) != 1 || g[0].Index != 0 || !slices.Equal(g[0].Seeds, want[0].Seeds) {
			t.Fatalf("groups %v", g)
		}
		if !slices.Equal(owners(e, 0, 100), append(rep(0, 100), -1)) || e.DirOwner(16383) != 0 || e.DirOwner(16382) != -1 {
			t.Fatal("the founder's owned slots are not group 0's")
		}
		if e.DirOwner(-1) != -1 || e.DirOwner(NumSlots) != -1 {
			t.Fatal("a slot out of range has an owner")
		}
	}
	// the accessors hand out copies
	h.a.DirGroups()[0].Seeds[0] = "x"
	if h.a.DirGroups()[0].Seeds[0] != "10.0.0.1:17000" {
		t.Fatal("DirGroups shares its seeds")
	}
	h.refused(ErrDirInCluster, "LIMITDB.DIRECTORY", "FOUND", "10.0.0.1:17000")
	h.refused(ErrDirInCluster, "LIMITDB.DIRECTORY", "JOINED", "1", "10.0.0.9:17000")
	h.refused(ErrDirIndex, "LIMITDB.DIRECTORY", "JOINED", "0", "10.0.0.9:17000")
	// the directory's owner table is the directory's, not the group's
	// bitmap: LIMITDB.SLOTS leaves it
	h.do(1000, "LIMITDB.SLOTS", "ADD", "200", "200")
	if h.a.DirOwner(200) != -1 {
		t.Fatal("LIMITDB.SLOTS ADD assigned a slot in the directory")
	}
}

// TestDirectoryAddGroup: ADDGROUP gives a new group the next index, a
// group sharing a seed its index back (a retried MEET: nothing recorded
// when nothing changes), and claims its ranges all or nothing.
func TestDirectoryAddGroup(t *testing.T) {
	h := newDirHarness(t)
	h.refused(ErrDirNone, "LIMITDB.DIRECTORY", "ADDGROUP", "b:1")
	h.do(1000, "LIMITDB.SLOTS", "ADD", "0", "99")
	h.ok("+OK\r\n", true, "LIMITDB.DIRECTORY", "FOUND", "a:1,a:2,a:3")
	h.ok(":1\r\n", true, "LIMITDB.DIRECTORY", "ADDGROUP", "b:1", "100", "199")
	h.ok(":2\r\n", true, "LIMITDB.DIRECTORY", "ADDGROUP", "c:1,c:2")
	h.ok(":1\r\n", true, "LIMITDB.DIRECTORY", "ADDGROUP", "b:2,b:1", "150", "299", "100", "120")
	h.ok(":1\r\n", false, "LIMITDB.DIRECTORY", "ADDGROUP", "b:2,b:1", "200", "299")
	h.ok(":0\r\n", false, "LIMITDB.DIRECTORY", "ADDGROUP", "a:1,a:2,a:3", "0", "9")
	h.ok(":2\r\n", true, "LIMITDB.DIRECTORY", "ADDGROUP", "c:2", "300", "300")
	h.refused(ErrSlotBusy(150), "LIMITDB.DIRECTORY", "ADDGROUP", "d:1", "5000", "5000", "150", "150", "10", "10")
	h.refused(ErrSlotBusy(50), "LIMITDB.DIRECTORY", "ADDGROUP", "c:1", "50", "60", "10", "10")
	h.refused(ErrSlotInvalid, "LIMITDB.DIRECTORY", "ADDGROUP", "d:1", "1", "16384")
	h.refused(ErrSlotOrder(5, 4), "LIMITDB.DIRECTORY", "ADDGROUP", "d:1", "5", "4")
	h.refused(ErrSyntax, "LIMITDB.DIRECTORY", "ADDGROUP", "d:1", "5")
	h.refused(ErrDirSeeds, "LIMITDB.DIRECTORY", "ADDGROUP", "d:1,", "5000", "5000")
	want := []DirGroup{{0, []string{"a:1", "a:2", "a:3"}}, {1, []string{"b:2", "b:1"}}, {2, []string{"c:2"}}}
	for _, e := range []*Engine{h.a, h.b} {
		g := e.DirGroups()
		if !slices.EqualFunc(g, want, func(x, y DirGroup) bool { return x.Index == y.Index && slices.Equal(x.Seeds, y.Seeds) }) {
			t.Fatalf("groups %v, want %v", g, want)
		}
		if !slices.Equal(owners(e, 99, 301), slices.Concat([]int{0}, rep(1, 200), []int{2, -1})) || e.DirOwner(5000) != -1 {
			t.Fatal("owners after ADDGROUP")
		}
	}
	// past maxDirGroups a new group is refused; a known one still found
	for len(h.a.dir.groups) < maxDirGroups {
		h.a.dir.groups = append(h.a.dir.groups, DirGroup{Index: len(h.a.dir.groups), Seeds: []string{"z" + strconv.Itoa(len(h.a.dir.groups))}})
	}
	h.refused(ErrDirFull, "LIMITDB.DIRECTORY", "ADDGROUP", "new:1")
	h.ok(":16383\r\n", false, "LIMITDB.DIRECTORY", "ADDGROUP", "z16383")
	// a member group holds no directory
	m := newDirHarness(t)
	m.ok("+OK\r\n", true, "LIMITDB.DIRECTORY", "JOINED", "1", "a:1")
	m.refused(ErrDirNone, "LIMITDB.DIRECTORY", "ADDGROUP", "b:1")
}

// TestDirectoryClaimRelease: CLAIM and RELEASE all or nothing, with
// Redis's texts for another group's slot; SEEDS replaces a group's seeds.
func TestDirectoryClaimRelease(t *testing.T) {
	h := newDirHarness(t)
	for _, sub := range []string{"CLAIM", "RELEASE"} {
		h.refused(ErrDirNone, "LIMITDB.DIRECTORY", sub, "0", "1", "2")
	}
	h.refused(ErrDirNone, "LIMITDB.DIRECTORY", "SEEDS", "0", "a:1")
	h.ok("+OK\r\n", true, "LIMITDB.DIRECTORY", "FOUND", "a:1")
	h.ok(":1\r\n", true, "LIMITDB.DIRECTORY", "ADDGROUP", "b:1")
	h.ok(":2\r\n", true, "LIMITDB.DIRECTORY", "ADDGROUP", "c:1")
	h.ok("+OK\r\n", true, "LIMITDB.DIRECTORY", "CLAIM", "1", "300", "399", "0", "0")
	h.ok("+OK\r\n", false, "LIMITDB.DIRECTORY", "CLAIM", "1", "300", "399")
	h.ok("+OK\r\n", true, "LIMITDB.DIRECTORY", "CLAIM", "0", "1", "10", "5", "20")
	h.refused(ErrSlotBusy(350), "LIMITDB.DIRECTORY", "CLAIM", "2", "400", "400", "350", "360", "0", "0")
	h.refused(ErrDirNoGroup(3), "LIMITDB.DIRECTORY", "CLAIM", "3", "500", "500")
	for _, bad := range []string{"x", "-1", "16384", "1.0"} {
		h.refused(ErrDirIndex, "LIMITDB.DIRECTORY", "CLAIM", bad, "500", "500")
		h.refused(ErrDirIndex, "LIMITDB.DIRECTORY", "RELEASE", bad, "500", "500")
		h.refused(ErrDirIndex, "LIMITDB.DIRECTORY", "SEEDS", bad, "z:1")
	}
	h.refused(ErrSlotInvalid, "LIMITDB.DIRECTORY", "CLAIM", "2", "400", "x")
	h.refused(ErrSyntax, "LIMITDB.DIRECTORY", "CLAIM", "2", "400", "401", "402")
	h.refused("ERR wrong number of arguments for 'limitdb.directory|claim' command", "LIMITDB.DIRECTORY", "CLAIM", "2", "400")
	if !slices.Equal(owners(h.a, 0, 21), slices.Concat([]int{1}, rep(0, 20), []int{-1})) ||
		!slices.Equal(owners(h.a, 299, 400), slices.Concat([]int{-1}, rep(1, 100), []int{-1})) {
		t.Fatal("owners after CLAIM")
	}
	h.ok("+OK\r\n", true, "LIMITDB.DIRECTORY", "RELEASE", "1", "290", "310")
	h.ok("+OK\r\n", false, "LIMITDB.DIRECTORY", "RELEASE", "1", "300", "310", "5000", "5000")
	h.ok("+OK\r\n", false, "LIMITDB.DIRECTORY", "RELEASE", "2", "300", "300")
	h.refused(ErrSlotUnassigned(390), "LIMITDB.DIRECTORY", "RELEASE", "2", "305", "305", "390", "390")
	h.refused(ErrSlotUnassigned(1), "LIMITDB.DIRECTORY", "RELEASE", "1", "0", "10")
	h.refused(ErrDirNoGroup(7), "LIMITDB.DIRECTORY", "RELEASE", "7", "0", "0")
	if !slices.Equal(owners(h.a, 309, 400), slices.Concat(rep(-1, 2), rep(1, 89), []int{-1})) || h.a.DirOwner(0) != 1 {
		t.Fatal("owners after RELEASE")
	}
	h.ok("+OK\r\n", true, "LIMITDB.DIRECTORY", "SEEDS", "2", "c:2,c:3")
	h.ok("+OK\r\n", false, "LIMITDB.DIRECTORY", "SEEDS", "2", "c:2,c:3")
	h.refused(ErrDirSeeds, "LIMITDB.DIRECTORY", "SEEDS", "2", "c 2")
	h.refused(ErrDirNoGroup(3), "LIMITDB.DIRECTORY", "SEEDS", "3", "c:2")
	if g := h.b.DirGroups(); len(g) != 3 || !slices.Equal(g[2].Seeds, []string{"c:2", "c:3"}) {
		t.Fatalf("groups after SEEDS %v", g)
	}
}

// TestDirectoryJoined: JOINED records a member group's index and the
// directory's seeds; again with the same index it replaces the seeds,
// with another it is refused.
func TestDirectoryJoined(t *testing.T) {
	h := newDirHarness(t)
	h.refused(ErrDirIndex, "LIMITDB.DIRECTORY", "JOINED", "0", "a:1")
	h.refused(ErrDirIndex, "LIMITDB.DIRECTORY", "JOINED", "x", "a:1")
	h.refused(ErrDirSeeds, "LIMITDB.DIRECTORY", "JOINED", "3", "")
	h.ok("+OK\r\n", true, "LIMITDB.DIRECTORY", "JOINED", "3", "a:1")
	h.ok("+OK\r\n", true, "LIMITDB.DIRECTORY", "JOINED", "3", "a:1,a:2")
	h.ok("+OK\r\n", false, "LIMITDB.DIRECTORY", "JOINED", "3", "a:1,a:2")
	h.refused(ErrDirInCluster, "LIMITDB.DIRECTORY", "JOINED", "4", "a:1")
	h.refused(ErrDirInCluster, "LIMITDB.DIRECTORY", "FOUND", "m:1")
	for _, e := range []*Engine{h.a, h.b} {
		if r := e.Shard(); r.Index != 3 || r.Directory || !slices.Equal(r.DirSeeds, []string{"a:1", "a:2"}) {
			t.Fatalf("record %+v", r)
		}
		if e.DirGroups() != nil || e.DirOwner(0) != -1 {
			t.Fatal("a member group has a directory")
		}
	}
	h.a.Shard().DirSeeds[0] = "x"
	if h.a.Shard().DirSeeds[0] != "a:1" {
		t.Fatal("Shard shares its seeds")
	}
}

// TestDirectorySnapshot: the aux field carries a directory and a
// member's record through a snapshot (limitdb-ver 2), is absent in no
// cluster; Reset and loads move DirGen and replace the state.
func TestDirectorySnapshot(t *testing.T) {
	h := newDirHarness(t)
	h.do(1000, "LIMITDB.DIRECTORY", "FOUND", "a:1,a:2")
	h.do(1000, "LIMITDB.DIRECTORY", "ADDGROUP", "b:1", "0", "5460", "16000", "16383")
	h.do(1000, "LIMITDB.DIRECTORY", "ADDGROUP", "c:1", "5461", "5461", "6000", "6001")
	e2 := New()
	gen := e2.DirGen()
	h.a.RDBNoCompression = true // the field's text stays readable in the file
	file := snapshotInto(t, h.a, e2)
	if !bytes.Contains(file, []byte("directory\ngroup 0 a:1,a:2\ngroup 1 b:1 0-5460 16000-16383\ngroup 2 c:1 5461-5461 6000-6001")) {
		t.Fatal("snapshot without its limitdb-directory field")
	}
	if snapshotVer(file) != "\xc0\x02" || bytes.Contains(file, []byte(auxSlots)) {
		t.Fatalf("limitdb-ver %q of a file with a directory and no owned slots", snapshotVer(file))
	}
	if e2.DirGen() == gen || e2.StrictDigest() != h.a.StrictDigest() || !slices.Equal(owners(e2, 0, NumSlots-1), owners(h.a, 0, NumSlots-1)) ||
		len(e2.DirGroups()) != 3 || e2.Shard().Index != 0 || !e2.Shard().Directory {
		t.Fatal("the directory changed in a snapshot round trip")
	}
	// a member's record
	m := New()
	mc := &Ctx{E: m, DB: m.DBs[0], W: h.c.W, Eff: NewEffects()}
	mc.Exec([][]byte{[]byte("LIMITDB.DIRECTORY"), []byte("JOINED"), []byte("2"), []byte("a:1,a:2")})
	m.RDBNoCompression = true
	file = snapshotInto(t, m, e2)
	if !bytes.Contains(file, []byte("member 2 a:1,a:2")) || snapshotVer(file) != "\xc0\x02" {
		t.Fatal("a member's snapshot")
	}
	if r := e2.Shard(); r.Index != 2 || r.Directory || !slices.Equal(r.DirSeeds, []string{"a:1", "a:2"}) || e2.DirGroups() != nil || e2.StrictDigest() != m.StrictDigest() {
		t.Fatalf("a member's record after loading: %+v", r)
	}
	// the digest sees the directory; Reset and a file without the field
	// leave the group in no cluster
	if New().StrictDigest() == m.StrictDigest() {
		t.Fatal("StrictDigest leaves the directory out")
	}
	gen = e2.DirGen()
	if err := e2.Reset(nil); err != nil {
		t.Fatal(err)
	}
	if e2.Shard().Index != -1 || e2.DirGen() == gen || e2.StrictDigest() != New().StrictDigest() {
		t.Fatal("Reset kept the directory")
	}
	empty := emptySnapshot(t)
	if bytes.Contains(empty, []byte(auxDirectory)) {
		t.Fatal("a group in no cluster writes limitdb-directory")
	}
	gen = h.a.DirGen()
	if err := h.a.LoadSnapshot(bytes.NewReader(empty)); err != nil || h.a.Shard().Index != -1 || h.a.DirGroups() != nil || h.a.DirGen() == gen {
		t.Fatalf("loading a file without limitdb-directory: %v %+v", err, h.a.Shard())
	}
}

// emptySnapshot is a new engine's snapshot.
func emptySnapshot(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := New().WriteSnapshot(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDirectoryCodec: the aux value refuses what no writer produces.
func TestDirectoryCodec(t *testing.T) {
	for _, good := range []string{"member 1 a:1", "member 16383 a:1,b:2", "directory\ngroup 0 a:1", "directory\ngroup 0 a:1 0-1\ngroup 1 b:1 2-2 16383-16383"} {
		d, err := decodeDirectory(good)
		if err != nil || encodeDirectory(d) != good {
			t.Errorf("%q: %v, encodes back as %q", good, err, encodeDirectory(d))
		}
	}
	for _, bad := range []string{"", "member", "member 0 a:1", "member 1", "member 1 a:1 x", "member x a:1", "member 1 a:1\ngroup 0 a:1",
		"directory", "directory\ngroup 1 a:1", "directory\ngroup 0", "directory\ngroup 0 a:1,", "directory\ngroup 0 a:1 0-16384",
		"directory\ngroup 0 a:1 5-3", "directory\ngroup 0 a:1 0-5\ngroup 1 b:1 5-6", "directory\ngroup 0 a:1\ngroup 2 b:1", "directory\ngrp 0 a:1", "dir\ngroup 0 a:1"} {
		if _, err := decodeDirectory(bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

// TestDirectoryDeterministic: a random sequence of LIMITDB.DIRECTORY
// effects on one engine, each applied from its record to a second (the
// harness compares strict digests after each), leaves both with the same
// directory, which also matches a plain model of the subcommands, and
// survives a snapshot.
func TestDirectoryDeterministic(t *testing.T) {
	h := newEffHarness(t)
	rng := rand.New(rand.NewPCG(22, 2))
	seed := func() string { return "10.0.0." + strconv.Itoa(rng.IntN(12)) + ":17000" }
	seeds := func() string {
		s := []string{seed()}
		for rng.IntN(2) == 0 {
			s = append(s, seed())
		}
		return strings.Join(s, ",")
	}
	ranges := func() ([]string, [][2]int) {
		var args []string
		var rs [][2]int
		for range rng.IntN(3) {
			s := rng.IntN(NumSlots)
			e := min(NumSlots-1, s+rng.IntN(400))
			args = append(args, strconv.Itoa(s), strconv.Itoa(e))
			rs = append(rs, [2]int{s, e})
		}
		return args, rs
	}
	// the model: owner per slot (-1 free), groups' seeds by index
	owner := rep(-1, NumSlots)
	var groups [][]string
	busy := func(rs [][2]int, idx int) int {
		for _, r := range rs {
			for s := r[0]; s <= r[1]; s++ {
				if owner[s] >= 0 && owner[s] != idx {
					return s
				}
			}
		}
		return -1
	}
	h.do(1000, "LIMITDB.SLOTS", "ADD", "0", "999")
	h.do(1000, "LIMITDB.DIRECTORY", "FOUND", "10.0.0.0:17000")
	groups = append(groups, []string{"10.0.0.0:17000"})
	for s := range 1000 {
		owner[s] = 0
	}
	refusals := 0
	for i := range 600 {
		var args []string
		var want string
		switch op := rng.IntN(4); op {
		case 0:
			sd := seeds()
			ra, rs := ranges()
			args = append([]string{"LIMITDB.DIRECTORY", "ADDGROUP", sd}, ra...)
			ss := strings.Split(sd, ",")
			idx := len(groups)
			for gi, g := range groups {
				if slices.ContainsFunc(ss, func(s string) bool { return slices.Contains(g, s) }) {
					idx = gi
					break
				}
			}
			if b := busy(rs, idx); b >= 0 {
				want = "-" + ErrSlotBusy(b) + "\r\n"
				break
			}
			if idx == len(groups) {
				groups = append(groups, nil)
			}
			groups[idx] = ss
			for _, r := range rs {
				for s := r[0]; s <= r[1]; s++ {
					owner[s] = idx
				}
			}
			want = ":" + strconv.Itoa(idx) + "\r\n"
		case 1, 2:
			idx := rng.IntN(len(groups) + 1)
			ra, rs := ranges()
			if len(rs) == 0 {
				ra, rs = []string{"7", "7"}, [][2]int{{7, 7}}
			}
			sub := "CLAIM"
			if op == 2 {
				sub = "RELEASE"
			}
			args = append([]string{"LIMITDB.DIRECTORY", sub, strconv.Itoa(idx)}, ra...)
			switch b := busy(rs, idx); {
			case idx == len(groups):
				want = "-" + ErrDirNoGroup(idx) + "\r\n"
			case b >= 0 && op == 1:
				want = "-" + ErrSlotBusy(b) + "\r\n"
			case b >= 0:
				want = "-" + ErrSlotUnassigned(b) + "\r\n"
			default:
				v := idx
				if op == 2 {
					v = -1
				}
				for _, r := range rs {
					for s := r[0]; s <= r[1]; s++ {
						owner[s] = v
					}
				}
				want = "+OK\r\n"
			}
		case 3:
			idx := rng.IntN(len(groups))
			sd := seeds()
			args = []string{"LIMITDB.DIRECTORY", "SEEDS", strconv.Itoa(idx), sd}
			groups[idx] = strings.Split(sd, ",")
			want = "+OK\r\n"
		}
		h.do(1000, args...)
		if got := string(h.c.W.B); got != want {
			t.Fatalf("step %d %q: reply %q, model %q", i, args, got, want)
		}
		if want[0] == '-' {
			refusals++
		}
	}
	t.Logf("%d groups, %d refusals of 600", len(groups), refusals)
	if len(groups) < 5 || refusals < 100 || refusals > 500 {
		t.Fatalf("%d groups, %d refusals of 600: the sequence exercises too little", len(groups), refusals)
	}
	e3 := New()
	snapshotInto(t, h.a, e3)
	for _, e := range []*Engine{h.a, h.b, e3} {
		if !slices.Equal(owners(e, 0, NumSlots-1), owner) {
			t.Fatal("owners differ from the model")
		}
		g := e.DirGroups()
		if len(g) != len(groups) {
			t.Fatalf("%d groups, model %d", len(g), len(groups))
		}
		for i := range g {
			if g[i].Index != i || !slices.Equal(g[i].Seeds, groups[i]) {
				t.Fatalf("group %d: %v, model %v", i, g[i], groups[i])
			}
		}
		if e.StrictDigest() != h.a.StrictDigest() {
			t.Fatal("strict digests differ")
		}
	}
}
