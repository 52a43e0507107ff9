package engine

import (
	"strings"
	"testing"
	"unsafe"

	"limitdb/resp"
)

func run(c *Ctx, args ...string) string {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	c.W.Reset()
	c.Exec(argv)
	return string(c.W.B)
}

// TestLazyExpiry: with no active expiry at all, every command sees a key
// past its deadline as absent (and the reads reclaim it).
func TestLazyExpiry(t *testing.T) {
	cases := []struct {
		cmd  []string
		want string
		left int // keys left afterwards
	}{
		{[]string{"GET", "k"}, "$-1\r\n", 0},
		{[]string{"EXISTS", "k"}, ":0\r\n", 0},
		{[]string{"TYPE", "k"}, "+none\r\n", 0},
		{[]string{"TTL", "k"}, ":-2\r\n", 0},
		{[]string{"STRLEN", "k"}, ":0\r\n", 0},
		{[]string{"APPEND", "k", "x"}, ":1\r\n", 1},
		{[]string{"INCR", "k"}, ":1\r\n", 1},
		{[]string{"SETNX", "k", "x"}, ":1\r\n", 1},
		{[]string{"DEL", "k"}, ":0\r\n", 0},
		{[]string{"RENAME", "k", "j"}, "-ERR no such key\r\n", 0},
		{[]string{"COPY", "k", "j"}, ":0\r\n", 0},
		{[]string{"PERSIST", "k"}, ":0\r\n", 0},
		{[]string{"EXPIRE", "k", "100"}, ":0\r\n", 0},
		{[]string{"KEYS", "*"}, "*0\r\n", 1}, // KEYS skips, does not delete
		{[]string{"SCAN", "0"}, "*2\r\n$1\r\n0\r\n*0\r\n", 0},
		{[]string{"RANDOMKEY"}, "$-1\r\n", 0},
		{[]string{"DBSIZE"}, ":1\r\n", 1},
		{[]string{"SET", "k", "v", "XX"}, "$-1\r\n", 0},
		{[]string{"GETEX", "k", "PERSIST"}, "$-1\r\n", 0},
		{[]string{"INCRBYFLOAT", "k", "1.5"}, "$3\r\n1.5\r\n", 1},
	}
	for _, tc := range cases {
		e := New()
		c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1_000_000}
		run(c, "SET", "k", "v", "PX", "10")
		c.Now += 20
		if got := run(c, tc.cmd...); got != tc.want {
			t.Errorf("%v: got %q want %q", tc.cmd, got, tc.want)
		}
		if n := c.DB.Len(); n != tc.left {
			t.Errorf("%v: %d keys left, want %d", tc.cmd, n, tc.left)
		}
		if x := c.DB.Expires(); x != 0 && tc.left == 0 {
			t.Errorf("%v: expires count %d", tc.cmd, x)
		}
	}
}

// TestRandomKeyFollower: a follower (NoLazyDelete) never deletes and still
// finds the live key among many expired ones.
func TestRandomKeyFollower(t *testing.T) {
	e := New()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1_000_000}
	for i := 0; i < 500; i++ {
		run(c, "SET", "e"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26)), "v", "PX", "10")
	}
	run(c, "SET", "live", "v")
	c.Now += 20
	e.NoLazyDelete = true
	n := c.DB.Len()
	for i := 0; i < 20; i++ {
		if got := run(c, "RANDOMKEY"); got != "$4\r\nlive\r\n" {
			t.Fatalf("RANDOMKEY = %q", got)
		}
	}
	if c.DB.Len() != n {
		t.Fatal("follower deleted keys")
	}
	run(c, "DEL", "live")
	// DEL on a follower engine: nothing else deleted; RANDOMKEY finds none
	e.NoLazyDelete = true
	if got := run(c, "RANDOMKEY"); got != "$-1\r\n" {
		t.Fatalf("RANDOMKEY = %q", got)
	}
}

// TestSwapDBWatch: SWAPDB moves keyspaces, not the DB structs, and dirties
// watches of keys that exist in either database.
func TestSwapDBWatch(t *testing.T) {
	e := New()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1_000_000}
	run(c, "SET", "a", "0")
	c.DB = e.DBs[1]
	run(c, "SET", "b", "1")
	c.DB = e.DBs[0]
	wa := c.AddWatch(e.DBs[0], "a")
	wb := c.AddWatch(e.DBs[0], "b")
	wn := c.AddWatch(e.DBs[0], "none")
	wo := c.AddWatch(e.DBs[5], "a")
	if got := run(c, "SWAPDB", "0", "1"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if !wa.Dirty || !wb.Dirty || wn.Dirty || wo.Dirty {
		t.Fatalf("dirty: a=%v b=%v none=%v other=%v", wa.Dirty, wb.Dirty, wn.Dirty, wo.Dirty)
	}
	if e.DBs[0].ID != 0 || e.DBs[1].ID != 1 {
		t.Fatal("DB ids moved")
	}
	if got := run(c, "GET", "b"); got != "$1\r\n1\r\n" {
		t.Fatalf("GET b in db0 after swap = %q", got)
	}
}

// TestAppendBuffer: APPEND grows in place; COPY and earlier views are not
// affected by later appends.
func TestAppendBuffer(t *testing.T) {
	e := New()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1_000_000}
	want := ""
	for i := 0; i < 3000; i++ {
		s := strings.Repeat(string(rune('a'+i%26)), i%5)
		run(c, "APPEND", "k", s)
		want += s
		if i == 1000 {
			run(c, "COPY", "k", "k2")
			run(c, "APPEND", "k2", "XYZ")
		}
	}
	ent := c.DB.dict.find("k")
	if ent.str() != want {
		t.Fatal("APPEND lost bytes")
	}
	view := ent.str()
	run(c, "APPEND", "k", "tail")
	if view != want {
		t.Fatal("append changed an earlier view")
	}
	k2 := c.DB.dict.find("k2").str()
	if !strings.HasSuffix(k2, "XYZ") || len(k2) > len(want) {
		t.Fatalf("COPY shares the append buffer: %d", len(k2))
	}
	for _, n := range []int{0, 1, 15, 16, 17, 1000, 1 << 20, 1<<20 + 1, 5<<20 - 1} {
		if cp := bufCap(n); cp < n || bufCap(cp) != cp {
			t.Fatalf("bufCap(%d) = %d", n, cp)
		}
	}
	argv := [][]byte{[]byte("append"), []byte("k3"), []byte("x")}
	cmd := c.Resolve(argv)
	if allocs := testing.AllocsPerRun(1000, func() { c.W.Reset(); c.Call(cmd, argv) }); allocs > 0.1 {
		t.Fatalf("APPEND allocates %.2f per call", allocs)
	}
}

// TestCopyClone: COPY deep-copies other kinds through KindOps.Clone and
// keeps the TTL; a kind without Clone is refused.
func TestCopyClone(t *testing.T) {
	saved := kindOps[KindZSet]
	defer func() { kindOps[KindZSet] = saved }()
	e := New()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1_000_000}
	type obj struct{ v []int }
	src := &obj{v: []int{1, 2, 3}}
	ent := c.create([]byte("z"))
	ent.setObj(KindZSet, unsafe.Pointer(src))
	ent.n = 42
	c.DB.setExpire(ent, c.Now+5000)

	kindOps[KindZSet] = KindOps{}
	if got := run(c, "COPY", "z", "z2"); got != "-"+errCopyUnsupported+"zset\r\n" {
		t.Fatalf("COPY without Clone = %q", got)
	}
	RegisterKind(KindZSet, KindOps{Clone: func(p unsafe.Pointer, n int64) (unsafe.Pointer, int64) {
		o := (*obj)(p)
		return unsafe.Pointer(&obj{v: append([]int(nil), o.v...)}), n
	}})
	if got := run(c, "COPY", "z", "z2", "DB", "3"); got != ":1\r\n" {
		t.Fatalf("COPY = %q", got)
	}
	d := e.DBs[3].dict.find("z2")
	if d == nil || d.kind != KindZSet || d.n != 42 || d.exp != c.Now+5000 || e.DBs[3].Expires() != 1 {
		t.Fatalf("copied entry %+v", d)
	}
	cp := (*obj)(d.p)
	if cp == src || len(cp.v) != 3 {
		t.Fatal("COPY did not deep-copy")
	}
	if got := run(c, "TYPE", "z"); got != "+zset\r\n" {
		t.Fatal(got)
	}
}

// TestTimeAndFlush: TIME is the command's time; FLUSH*/SWAPDB keep the
// expires counters right.
func TestTimeAndFlush(t *testing.T) {
	e := New()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1_700_000_000_123}
	if got := run(c, "TIME"); got != "*2\r\n$10\r\n1700000000\r\n$6\r\n123000\r\n" {
		t.Fatalf("TIME = %q", got)
	}
	run(c, "SET", "a", "1", "EX", "100")
	run(c, "SET", "b", "1")
	if got := run(c, "SWAPDB", "0", "7"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if e.DBs[0].Expires() != 0 || e.DBs[7].Expires() != 1 || e.DBs[7].Len() != 2 || e.DBs[0].Len() != 0 {
		t.Fatal("SWAPDB counters")
	}
	c.DB = e.DBs[7]
	if got := run(c, "FLUSHDB"); got != "+OK\r\n" || e.DBs[7].Expires() != 0 || e.DBs[7].Len() != 0 {
		t.Fatal("FLUSHDB counters")
	}
	run(c, "SET", "a", "1", "EX", "100")
	c.DB = e.DBs[2]
	run(c, "SET", "a", "1", "EX", "100")
	run(c, "FLUSHALL")
	for _, db := range e.DBs {
		if db.Len() != 0 || db.Expires() != 0 {
			t.Fatal("FLUSHALL left keys")
		}
	}
}

// TestWatchExpiredAtWatchTime: reclaiming a key that was already past its
// deadline when WATCH was taken is no change (Redis 7.0's touchWatchedKey);
// reclaiming one that was alive at WATCH time is.
func TestWatchExpiredAtWatchTime(t *testing.T) {
	e := New()
	c := &Ctx{E: e, DB: e.DBs[0], W: &resp.Writer{Proto: 2}, Now: 1000}
	run(c, "SET", "dead", "v", "PX", "10")
	run(c, "SET", "alive", "v", "PX", "100")
	c.Now = 1050
	dead, alive := c.AddWatch(c.DB, "dead"), c.AddWatch(c.DB, "alive")
	c.Now = 1200
	for c.ActiveExpire(c.DB, 64) > 0 {
	}
	if c.DB.Len() != 0 {
		t.Fatalf("%d keys left", c.DB.Len())
	}
	if c.WatchChanged(dead) {
		t.Error("key expired before WATCH: EXEC would abort")
	}
	if !c.WatchChanged(alive) {
		t.Error("key alive at WATCH then expired: EXEC would run")
	}
}
