package door

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"limitdb/engine"
	_ "limitdb/luavm" // EVAL and SCRIPT
	"limitdb/resp"
)

// sink collects records as readable lines: one string per record, its
// commands joined by " | ".
type sink struct{ recs []string }

func (s *sink) add(rec []byte) {
	h, body, err := engine.ParseRecordHeader(rec)
	if err != nil {
		panic(err)
	}
	if h.DB != 0 { // shown as the SELECT a Redis AOF would have
		body = append([]byte("*2\r\n$6\r\nSELECT\r\n$1\r\n"+strconv.Itoa(h.DB)+"\r\n"), body...)
	}
	r := resp.NewReader(bytes.NewReader(body))
	var cmds []string
	for r.Fill() == nil {
		for {
			argv, err := r.Next()
			if err != nil || argv == nil {
				break
			}
			parts := make([]string, len(argv))
			for i, a := range argv {
				parts[i] = string(a)
			}
			cmds = append(cmds, strings.Join(parts, " "))
		}
	}
	s.recs = append(s.recs, strings.Join(cmds, " | "))
}

func args(s string) [][]byte {
	var argv [][]byte
	for _, f := range strings.Fields(s) {
		argv = append(argv, []byte(f))
	}
	return argv
}

type fixture struct {
	d   *Door
	c   *engine.Ctx
	log *sink
}

func newFixture() *fixture {
	e := engine.New()
	log := &sink{}
	d := New(e, Records(log.add))
	c := &engine.Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1_000_000}
	return &fixture{d, c, log}
}

func (f *fixture) exec(line string) string {
	argv := args(line)
	f.c.W.B = f.c.W.B[:0]
	if cmd := f.c.Resolve(argv); cmd != nil {
		f.d.Exec(f.c, cmd, argv)
	}
	return string(f.c.W.B)
}

func (f *fixture) want(t *testing.T, recs ...string) {
	t.Helper()
	if strings.Join(f.log.recs, "\n") != strings.Join(recs, "\n") {
		t.Fatalf("records\n got %q\nwant %q", f.log.recs, recs)
	}
	f.log.recs = nil
}

// TestUnits: one command is one record, bare; a read records nothing
// unless it deletes an expired key; a transaction of several writes is
// one record wrapped in MULTI/EXEC; a record whose first effect is not in
// database 0 starts with SELECT.
func TestUnits(t *testing.T) {
	f := newFixture()
	f.d.Lock()
	defer f.d.Unlock()
	f.exec("SET a 1")
	f.exec("GET a")
	f.exec("INCR a")
	f.want(t, "SET a 1", "INCR a")

	f.exec("PEXPIREAT a 1000500")
	f.c.Now = 1_000_600
	if got := f.exec("GET a"); got != "$-1\r\n" {
		t.Fatalf("GET of an expired key: %q", got)
	}
	f.want(t, "PEXPIREAT a 1000500", "DEL a")

	var tx Tx
	tx.Active = true
	tx.Enqueue(args("INCR n"))
	tx.Enqueue(args("GET n"))
	tx.Enqueue(args("INCR n"))
	ok := f.d.ExecTx(f.c, &tx, 0, func(q [][]byte) {
		if cmd := f.c.Resolve(q); cmd != nil {
			f.d.Exec(f.c, cmd, q)
		}
	})
	if !ok || tx.Active || len(tx.Queue) != 0 {
		t.Fatalf("ExecTx ok=%v active=%v queue=%d", ok, tx.Active, len(tx.Queue))
	}
	f.want(t, "MULTI | INCR n | INCR n | EXEC")

	f.c.DB = f.d.E.DBs[5]
	f.exec("SET x y")
	f.want(t, "SELECT 5 | SET x y")
}

// TestWatchAborts: EXEC after a watched key changed runs nothing and
// records nothing.
func TestWatchAborts(t *testing.T) {
	f := newFixture()
	f.d.Lock()
	defer f.d.Unlock()
	var tx Tx
	tx.Watch(f.c, f.c.DB, args("w"), 0)
	tx.Active = true
	tx.Enqueue(args("SET z 1"))
	f.exec("SET w changed")
	f.log.recs = nil
	ran := false
	if f.d.ExecTx(f.c, &tx, 0, func([][]byte) { ran = true }) || ran {
		t.Fatal("EXEC ran after a watched key changed")
	}
	if tx.Active || tx.Watching() {
		t.Fatal("transaction not reset")
	}
	f.want(t)
}

// TestWatchGeneration: a WATCH belongs to the generation it was taken in
// (a cluster node's leadership epoch): EXEC in another aborts although no
// key changed here, and a WATCH added in a later generation leaves the
// earlier ones changed. In the same generation nothing aborts. WATCHes
// lost (taken elsewhere) abort EXEC until UNWATCH.
func TestWatchGeneration(t *testing.T) {
	f := newFixture()
	f.d.Lock()
	defer f.d.Unlock()
	exec := func(tx *Tx, gen uint64) bool {
		tx.Active = true
		tx.Enqueue(args("SET z 1"))
		return f.d.ExecTx(f.c, tx, gen, func([][]byte) {})
	}
	var tx Tx
	tx.Watch(f.c, f.c.DB, args("w"), 7)
	if !exec(&tx, 7) {
		t.Fatal("EXEC aborted in the WATCH's generation, nothing changed")
	}
	tx.Watch(f.c, f.c.DB, args("w"), 7)
	if exec(&tx, 8) {
		t.Fatal("EXEC ran in another generation than its WATCH's")
	}
	if tx.Active || tx.Watching() {
		t.Fatal("transaction not reset")
	}
	tx.Watch(f.c, f.c.DB, args("w"), 7)
	tx.Watch(f.c, f.c.DB, args("v"), 8)
	if exec(&tx, 8) {
		t.Fatal("EXEC ran with a WATCH of an earlier generation")
	}
	tx.Watch(f.c, f.c.DB, args("w"), 8)
	if !exec(&tx, 8) {
		t.Fatal("EXEC aborted: its only WATCH is of its generation")
	}
	// WATCHes taken elsewhere (Lose): EXEC aborts until UNWATCH
	tx.Lose()
	tx.Watch(f.c, f.c.DB, args("w"), 8)
	if !tx.Watching() || exec(&tx, 8) {
		t.Fatal("EXEC ran with WATCHes lost")
	}
	tx.Lose()
	tx.Unwatch()
	if tx.Watching() || !exec(&tx, 8) {
		t.Fatal("EXEC aborted after UNWATCH dropped the lost WATCHes")
	}
}

// TestActiveExpireRecords: the active cycle's deletions are DEL effects.
func TestActiveExpireRecords(t *testing.T) {
	f := newFixture()
	f.d.Lock()
	defer f.d.Unlock()
	f.exec("SET k v PX 10")
	f.log.recs = nil
	f.c.Now += 20
	if n := f.d.ActiveExpire(f.c, 64); n != 1 {
		t.Fatalf("expired %d keys", n)
	}
	f.want(t, "DEL k")
}

// TestUnwind: a panic inside a transaction, contained by the caller,
// still hands the unit's record (the effects before the panic) to the
// log when the containment unwinds the door.
func TestUnwind(t *testing.T) {
	f := newFixture()
	f.d.Lock()
	defer f.d.Unlock()
	var tx Tx
	tx.Active = true
	tx.Enqueue(args("SET p 1"))
	tx.Enqueue(args("SET q 2"))
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("no panic")
			}
			f.d.Unwind(0)
		}()
		f.d.ExecTx(f.c, &tx, 0, func(q [][]byte) {
			if string(q[1]) == "q" {
				panic("boom")
			}
			f.d.Exec(f.c, f.c.Resolve(q), q)
		})
	}()
	if f.d.Depth() != 0 {
		t.Fatalf("depth %d after Unwind", f.d.Depth())
	}
	f.want(t, "SET p 1")
}

// TestClockFloor: the time never goes below the engine's floor, which a
// restored snapshot sets.
func TestClockFloor(t *testing.T) {
	f := newFixture()
	f.d.Lock()
	defer f.d.Unlock()
	now, _ := f.d.Now()
	f.d.E.ClockMs = now + 3_600_000 // a snapshot from a clock an hour ahead
	if got, _ := f.d.Now(); got != now+3_600_000 {
		t.Fatalf("Now %d below the floor %d", got, now+3_600_000)
	}
	f.d.E.ClockMs = 0
	a, _ := f.d.Now()
	b, _ := f.d.Now()
	if b < a || a < now {
		t.Fatalf("clock went back: %d then %d (first %d)", a, b, now)
	}
}

// TestScriptCacheEffects: a body new to the cache is a SCRIPT LOAD effect
// before the script's own; a cached one adds nothing; SCRIPT FLUSH is
// recorded.
func TestScriptCacheEffects(t *testing.T) {
	f := newFixture()
	f.d.Lock()
	defer f.d.Unlock()
	exec := func(argv ...string) {
		b := make([][]byte, len(argv))
		for i, a := range argv {
			b[i] = []byte(a)
		}
		f.d.Exec(f.c, f.c.Resolve(b), b)
	}
	body := "return redis.call('incr', KEYS[1])"
	exec("EVAL", body, "1", "k")
	exec("EVAL", body, "1", "k")
	exec("SCRIPT", "LOAD", "return 1")
	exec("SCRIPT", "LOAD", "return 1")
	exec("SCRIPT", "FLUSH")
	f.want(t,
		"MULTI | SCRIPT LOAD "+body+" | incr k | EXEC",
		"incr k", // as the script spelled it, like Redis's AOF
		"SCRIPT LOAD return 1",
		"SCRIPT FLUSH")
}
