package engine

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"limitdb/resp"
)

// strictState describes everything a reload must give back, in a form
// two engines can be compared by: per database its bucket count and its
// keys in bucket order (KEYS, SCAN, RANDOMKEY depend on both), each key's
// type, encoding, deadline, value digest and, where limitdb's internal
// order reaches replies (hashtable hashes and sets), that order; plus the
// engine's ClockMs, Rand and encoding limits. (A test-only stand-in for
// Engine.StrictDigest, which h/effects adds.)
func strictState(e *Engine) string {
	var b strings.Builder
	fmt.Fprintf(&b, "clock %d rand %d enc %+v\n", e.ClockMs, e.Rand.State(), e.Enc)
	for _, db := range e.DBs {
		if db.dict.len() == 0 {
			continue
		}
		fmt.Fprintf(&b, "db %d keys %d expires %d buckets %d\n", db.ID, db.dict.len(), db.expires, len(db.dict.buckets))
		db.dict.each(func(en *entry) bool {
			var d Digest
			en.digest(&d)
			fmt.Fprintf(&b, "  %q %s %s exp=%d %s", en.keyStr(), en.kind, en.encoding(), en.exp, d.Hex())
			switch en.kind {
			case KindHash:
				for _, p := range en.hash().pairs(&hashView{}) {
					fmt.Fprintf(&b, " %q=%q", p.f, p.v.String())
				}
			case KindSet:
				if s := en.set(); s.ht {
					fmt.Fprintf(&b, " %q", s.members)
				}
			case KindLimiter:
				st := limLoad(en)
				fmt.Fprintf(&b, " %+v %d %d %v", *limParams(en), st.A, st.B, st.Log)
			}
			b.WriteByte('\n')
			return true
		})
	}
	return b.String()
}

func newTestCtx() *Ctx {
	e := New()
	return &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1_700_000_000_000}
}

// fillEveryEncoding gives c's engine a key of every type in every
// encoding limitdb tracks, in several databases, with deadlines, limiters
// mid-window and a table that shrank.
func fillEveryEncoding(t testing.TB, c *Ctx) {
	do := func(args ...string) {
		if out := run(c, args...); strings.HasPrefix(out, "-") {
			t.Fatalf("%v: %s", args, out)
		}
	}
	long := strings.Repeat("abcdefghij", 30)
	do("SET", "int", "12345")
	do("SET", "bigint", "-9223372036854775808")
	do("SET", "embstr", "hello")
	do("SET", "empty", "")
	do("SET", "raw", long)
	do("SET", "bin", "\x00\xff\r\n\x01")
	do("SET", "lzf", strings.Repeat("x", 5000))
	do("SET", "leading0", "007")
	do("APPEND", "appended", "ab")
	do("APPEND", "appended", "cd")
	do("APPEND", "appendnum", "12")
	do("SETRANGE", "ranged", "2", "xy")
	do("INCRBYFLOAT", "float", "3")
	do("INCRBYFLOAT", "float2", "1.5")
	do("SET", "expiring", "v", "PX", "100000")
	do("SET", "expired", "v", "PX", "1") // past its deadline once the clock moves
	do("RPUSH", "list", "a", "1", "-300", "70000", "9000000000", long, "")
	for i := 0; i < 3000; i++ {
		do("RPUSH", "biglist", strconv.Itoa(i), "element-"+strconv.Itoa(i))
	}
	do("LPUSH", "biglist", strings.Repeat("y", 20000))
	do("HSET", "hash", "f1", "v1", "n", "42", "neg", "-7", "e", "")
	hargs := []string{"HSET", "bighash"}
	for i := 0; i < 600; i++ {
		hargs = append(hargs, "field"+strconv.Itoa(i), "value"+strconv.Itoa(i))
	}
	do(hargs...)
	do("HDEL", "bighash", "field3", "field10") // moves the last pairs
	do("HSET", "longval", "f", long)
	do("HDEL", "longval", "f")
	do("HSET", "longval", "g", "short") // hashtable with one small pair
	do("SADD", "intset", "1", "2", "-3", "70000", "5000000000")
	do("SADD", "strset", "a", "b", "c", "1")
	sargs := []string{"SADD", "bigintset"}
	for i := 0; i < 700; i++ {
		sargs = append(sargs, strconv.Itoa(i*7))
	}
	do(sargs...)
	do("SREM", "bigintset", "0", "14")
	do("SADD", "shrunk", "x", "y")
	do("SREM", "shrunk", "x")
	do("SADD", "shrunk", "5")
	do("ZADD", "zset", "1", "a", "2.5", "b", "-3", "c", "inf", "d", "-inf", "e", "0.1", "f")
	zargs := []string{"ZADD", "bigzset"}
	for i := 0; i < 300; i++ {
		zargs = append(zargs, strconv.Itoa(i%17)+".25", "m"+strconv.Itoa(i))
	}
	do(zargs...)
	do("ZADD", "zneg0", "-0", "a", "1", strings.Repeat("m", 100))
	do("ZREM", "zneg0", strings.Repeat("m", 100)) // stays a skiplist, keeps -0
	do("RL.ALLOW", "gcra", "10", "1000")
	do("RL.ALLOW", "gcra", "10", "1000", "COST", "3")
	do("RL.ALLOW", "tb", "10", "1000", "ALGO", "token-bucket", "BURST", "5")
	do("RL.ALLOW", "lb", "10", "1000", "ALGO", "leaky-bucket")
	do("RL.ALLOW", "fw", "10", "1000", "ALGO", "fixed-window", "COST", "4")
	do("RL.ALLOW", "sw", "10", "1000", "ALGO", "sliding-window")
	do("RL.ALLOW", "sl", "5", "1000", "ALGO", "sliding-log", "COST", "2")
	do("RL.ALLOW", "sl", "3", "1000", "ALGO", "sliding-log")
	do("CL.THROTTLE", "cell", "15", "30", "60", "1")
	c.Now += 10
	c.DB = c.E.DBs[3]
	for i := 0; i < 2000; i++ {
		do("SET", "k"+strconv.Itoa(i), strconv.Itoa(i), "EX", strconv.Itoa(100+i))
	}
	for i := 0; i < 1900; i++ {
		do("DEL", "k"+strconv.Itoa(i*1))
	}
	c.DB = c.E.DBs[15]
	do("SET", "only", "x")
	c.DB = c.E.DBs[0]
	c.E.ClockMs = c.Now
	c.E.Enc.HashMaxListpackEntries = 3 // after the hashes above: "hash" stays a listpack
	c.E.Rand.Uint64()
}

// TestSnapshotRoundTrip: every type and encoding, deadlines, limiters
// mid-window, a shrunk table → WriteSnapshot → LoadSnapshot into a fresh
// engine → the same strict state, the same replies, and the same bytes
// when written again. A Capture writes the same bytes as WriteSnapshot.
func TestSnapshotRoundTrip(t *testing.T) {
	c := newTestCtx()
	fillEveryEncoding(t, c)
	want := strictState(c.E)
	var buf bytes.Buffer
	if err := c.E.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	s := c.E.Capture()
	var cbuf bytes.Buffer
	if _, err := s.WriteTo(&cbuf); err != nil {
		t.Fatal(err)
	}
	s.Release()
	if !bytes.Equal(buf.Bytes(), cbuf.Bytes()) {
		t.Fatal("Capture wrote other bytes than WriteSnapshot")
	}
	c2 := newTestCtx()
	c2.Now = c.Now
	if err := c2.E.LoadSnapshot(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if got := strictState(c2.E); got != want {
		t.Fatalf("state differs after reload:\n%s", firstDiff(want, got))
	}
	if a, b := c.E.DatasetDigest(), c2.E.DatasetDigest(); a != b {
		t.Fatalf("digest %s != %s", a.Hex(), b.Hex())
	}
	var again bytes.Buffer
	if err := c2.E.WriteSnapshot(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Fatal("second write differs")
	}
	for _, cmd := range [][]string{
		{"KEYS", "*"}, {"SCAN", "0", "COUNT", "5"}, {"HGETALL", "bighash"}, {"SMEMBERS", "strset"},
		{"ZRANGE", "zneg0", "0", "-1", "WITHSCORES"}, {"OBJECT", "ENCODING", "appended"},
		{"OBJECT", "ENCODING", "float"}, {"OBJECT", "ENCODING", "longval"}, {"OBJECT", "ENCODING", "shrunk"},
		{"OBJECT", "ENCODING", "hash"}, {"RL.INFO", "sl"}, {"RL.ALLOW", "sl", "3", "1000", "ALGO", "sliding-log"},
		{"RL.ALLOW", "gcra", "10", "1000"}, {"LRANGE", "biglist", "0", "3"}, {"PTTL", "expiring"},
		{"SELECT", "3"}, {"KEYS", "*"}, {"RANDOMKEY"}, {"SCAN", "0"},
	} {
		if cmd[0] == "SELECT" {
			n, _ := strconv.Atoi(cmd[1])
			c.DB, c2.DB = c.E.DBs[n], c2.E.DBs[n]
			continue
		}
		if a, b := run(c, cmd...), run(c2, cmd...); a != b {
			t.Errorf("%v: %q != %q", cmd, a, b)
		}
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\nwant %s\ngot  %s", i, al[i], bl[i])
		}
	}
	return fmt.Sprintf("lengths %d, %d", len(al), len(bl))
}

// TestCaptureConcurrentWrites: snapshots written without the lock while
// another goroutine keeps changing every kind of value in place (and
// deleting, renaming, flushing, swapping databases) hold exactly the
// state of their capture instant. Two captures overlap. Run with -race.
func TestCaptureConcurrentWrites(t *testing.T) {
	c := newTestCtx()
	fillEveryEncoding(t, c)
	e := c.E
	var mu sync.Mutex // the engine lock (a server's door holds one)
	stop := make(chan struct{})
	done := make(chan struct{})
	var iters atomic.Int64
	go func() {
		defer close(done)
		w := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: c.Now}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			n := strconv.Itoa(i)
			mu.Lock()
			w.Now++
			for _, cmd := range [][]string{
				{"RPUSH", "list", n}, {"LPOP", "biglist"}, {"LSET", "list", "0", n},
				{"HSET", "bighash", "field" + strconv.Itoa(i%700), n}, {"HDEL", "bighash", "field" + strconv.Itoa(i%500)},
				{"HSET", "hash", "n", n}, {"HINCRBY", "hash", "neg", "1"},
				{"SADD", "strset", n}, {"SREM", "bigintset", strconv.Itoa(i % 5000)}, {"SADD", "intset", n}, {"SPOP", "shrunk"},
				{"ZADD", "zset", n, "f"}, {"ZINCRBY", "bigzset", "1", "m" + strconv.Itoa(i%300)}, {"ZREM", "zneg0", "a"},
				{"RL.ALLOW", "sl", "3", "1000", "ALGO", "sliding-log"}, {"RL.ALLOW", "tb", "10", "1000", "ALGO", "token-bucket", "BURST", "5"},
				{"RL.ALLOW", "gcra", "10", "1000"}, {"RL.ALLOW", "fw", "10", "1000", "ALGO", "fixed-window"},
				{"APPEND", "appended", "z"}, {"SETRANGE", "ranged", "1", n}, {"INCR", "int"}, {"SET", "embstr", n},
				{"RENAME", "strset", "strset2"}, {"RENAME", "strset2", "strset"}, {"COPY", "bighash", "hcopy", "REPLACE"},
				{"HSET", "hcopy", "x", n}, {"DEL", "raw"}, {"SET", "raw", n + strings.Repeat("r", 100)},
				// reads of shared values must not change them either
				{"SRANDMEMBER", "bigintset", "-5"}, {"HRANDFIELD", "bighash", "3", "WITHVALUES"}, {"ZRANDMEMBER", "bigzset", "-3"},
				{"LRANGE", "biglist", "0", "5"}, {"ZRANGEBYSCORE", "bigzset", "1", "3"}, {"HSCAN", "bighash", "0"},
				{"SSCAN", "bigintset", "0"}, {"ZSCAN", "zset", "0"}, {"SINTER", "strset", "intset"}, {"LPOS", "list", "a"},
				{"ZRANGESTORE", "zdst", "bigzset", "0", "10"}, {"SUNIONSTORE", "sdst", "strset", "bigintset"}, {"RL.INFO", "sl"},
				{"COPY", "list", "lcopy", "REPLACE"}, {"COPY", "sl", "slcopy", "REPLACE"}, {"DUMP", "bigzset"}, {"GET", "appended"},
			} {
				run(w, cmd...)
			}
			if i%50 == 0 {
				w.DB = e.DBs[15]
				run(w, "FLUSHDB")
				run(w, "SET", "only", n)
				w.DB = e.DBs[0]
				run(w, "SWAPDB", "3", "4")
			}
			mu.Unlock()
			iters.Add(1)
		}
	}()
	type capt struct {
		s    *Snapshot
		want string
		out  bytes.Buffer
	}
	var caps []*capt
	for round := 0; round < 4; round++ {
		mu.Lock()
		cp := &capt{want: strictState(e), s: e.Capture()}
		mu.Unlock()
		caps = append(caps, cp)
		if round%2 == 1 { // two captures active at once
			before := iters.Load()
			for _, x := range caps[len(caps)-2:] {
				if _, err := x.s.WriteTo(slowWriter{&x.out}); err != nil {
					t.Fatal(err)
				}
				x.s.Release()
			}
			t.Logf("round %d: %d write batches while writing", round, iters.Load()-before)
		}
	}
	close(stop)
	<-done
	for i, cp := range caps {
		f := New()
		if err := f.LoadSnapshot(bytes.NewReader(cp.out.Bytes())); err != nil {
			t.Fatal(err)
		}
		if got := strictState(f); got != cp.want {
			t.Fatalf("capture %d: %s", i, firstDiff(cp.want, got))
		}
	}
	if n := e.cow.active.Load(); n != 0 {
		t.Fatalf("%d captures still active", n)
	}
}

// TestCaptureCopiesOnce: under a capture, the first write to an object
// copies it and later writes do not; with no capture nothing is copied.
func TestCaptureCopiesOnce(t *testing.T) {
	c := newTestCtx()
	fillEveryEncoding(t, c)
	// "hash" and "zset" are listpacks held in their entries' words: the
	// copy repoints the entry (ZADD of an existing member, HINCRBY 42 →
	// 43: same size, so only a copy moves them)
	keys := []string{"list", "bighash", "hash", "strset", "zset", "sl"}
	cmds := map[string][]string{
		"list": {"RPUSH", "list", "x"}, "bighash": {"HSET", "bighash", "f", "v"}, "hash": {"HINCRBY", "hash", "n", "1"},
		"strset": {"SADD", "strset", "q"}, "zset": {"ZADD", "zset", "5", "b"},
		"sl": {"RL.ALLOW", "sl", "3", "1000", "ALGO", "sliding-log"},
	}
	ptr := func(k string) any { return c.DB.dict.find(k).p }
	for _, k := range keys {
		p0 := ptr(k)
		run(c, cmds[k]...)
		if ptr(k) != p0 {
			t.Fatalf("%s copied with no capture", k)
		}
	}
	s := c.E.Capture()
	for _, k := range keys {
		p0 := ptr(k)
		run(c, cmds[k]...)
		p1 := ptr(k)
		if p1 == p0 {
			t.Fatalf("%s not copied under a capture", k)
		}
		run(c, cmds[k]...)
		if ptr(k) != p1 {
			t.Fatalf("%s copied twice under one capture", k)
		}
	}
	s.Release()
	for _, k := range keys {
		p0 := ptr(k)
		run(c, cmds[k]...)
		if ptr(k) != p0 {
			t.Fatalf("%s copied after release", k)
		}
	}
}

// slowWriter gives the writing goroutines time to run between the
// snapshot's buffers.
type slowWriter struct{ w *bytes.Buffer }

func (s slowWriter) Write(p []byte) (int, error) {
	time.Sleep(2 * time.Millisecond)
	return s.w.Write(p)
}

// TestResetNil: Reset(nil) gives a new engine's replicated state (so a
// log replayed from its start draws the same numbers), keeping ClockMs
// and the encoding limits.
func TestResetNil(t *testing.T) {
	c := newTestCtx()
	fillEveryEncoding(t, c)
	clock, enc := c.E.ClockMs, c.E.Enc
	if err := c.E.Reset(nil); err != nil {
		t.Fatal(err)
	}
	f := New()
	f.ClockMs, f.Enc = clock, enc
	if a, b := strictState(c.E), strictState(f); a != b {
		t.Fatalf("after Reset(nil): %s", firstDiff(b, a))
	}
}

// TestCaptureSpare: a capture after a released one copies into that one's
// arrays (cleared on release, so no value stays reachable through them),
// and writes the same bytes as WriteSnapshot; AgeCaptureSpare lets the
// arrays go after two calls without a capture in between.
func TestCaptureSpare(t *testing.T) {
	c := newTestCtx()
	fillEveryEncoding(t, c)
	s := c.E.Capture()
	s.WriteTo(io.Discard)
	s.Release()
	sp := c.E.cow.spare.Load()
	if sp == nil || len(sp.dbs[0].entries) == 0 {
		t.Fatal("no spare kept")
	}
	for _, en := range sp.dbs[0].entries {
		if en != (entry{}) {
			t.Fatal("the spare holds an entry")
		}
	}
	// change the data set, then capture into the spare
	run(c, "DEL", "int")
	run(c, "SET", "new", "value")
	run(c, "HSET", "bighash", "added", "1")
	s = c.E.Capture()
	if c.E.cow.spare.Load() != nil {
		t.Fatal("the capture did not take the spare")
	}
	if &s.dbs[0].all[0] != &sp.dbs[0].entries[0] {
		t.Fatal("the capture did not copy into the spare")
	}
	var got, want bytes.Buffer
	s.WriteTo(&got)
	s.Release()
	c.E.WriteSnapshot(&want)
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatal("a capture into the spare wrote other bytes than WriteSnapshot")
	}
	c.E.AgeCaptureSpare()
	if c.E.cow.spare.Load() == nil {
		t.Fatal("dropped after one call")
	}
	c.E.AgeCaptureSpare()
	if c.E.cow.spare.Load() != nil {
		t.Fatal("kept after two calls")
	}
}

// TestCaptureSkipsNewValues: a listpack value created while a capture is
// active is not the capture's, so writing it again copies nothing.
func TestCaptureSkipsNewValues(t *testing.T) {
	c := newTestCtx()
	s := c.E.Capture()
	defer s.Release()
	for _, cmds := range [][][]string{
		{{"ZADD", "z", "1", "a", "2", "b"}, {"PEXPIRE", "z", "100000"}, {"ZADD", "z", "3", "b"}},
		{{"HSET", "h", "tokens", "9", "ts", "1700000000123"}, {"PEXPIRE", "h", "100000"}, {"HINCRBY", "h", "tokens", "-1"}},
		{{"RPUSH", "l", "1", "2"}, {"PEXPIRE", "l", "100000"}, {"LSET", "l", "0", "3"}},
	} {
		run(c, cmds[0]...)
		en := c.DB.dict.find(cmds[0][1])
		p0 := en.p
		for _, cmd := range cmds[1:] {
			run(c, cmd...)
			if en.p != p0 {
				t.Fatalf("%v copied a value created under the capture", cmd)
			}
		}
	}
}

// snapshotInto writes from's snapshot, loads it into to (a New engine,
// perhaps with EnableSlots) and returns the file's bytes.
func snapshotInto(t *testing.T, from, to *Engine) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := from.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	if err := to.LoadSnapshot(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatalf("loading the snapshot: %v", err)
	}
	return buf.Bytes()
}
