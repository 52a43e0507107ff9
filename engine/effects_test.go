package engine

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"limitdb/resp"
)

// TestEffectsCore: the propagation rule itself (a changed state records
// argv, no change records nothing, a lazy expiry's DEL comes first, SELECT
// appears when the database changes). Per-command forms are compared with
// redis-server's AOF in the tests package.
func TestEffectsCore(t *testing.T) {
	e := New()
	eff := NewEffects()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1000, Eff: eff}
	run := func(args ...string) {
		argv := make([][]byte, len(args))
		for i, a := range args {
			argv[i] = []byte(a)
		}
		c.Exec(argv)
	}
	run("SET", "a", "1")
	run("GET", "a")
	run("SET", "b", "1", "NX")
	run("SET", "b", "2", "NX")
	run("PEXPIREAT", "b", "1500")
	c.Now = 2000
	run("INCR", "b")
	c.DB = e.DBs[3]
	run("INCR", "b")
	var got []string
	for _, cmd := range eff.Commands() {
		var parts []string
		for _, a := range cmd {
			parts = append(parts, string(a))
		}
		got = append(got, strings.Join(parts, " "))
	}
	want := []string{"SET a 1", "SET b 1 NX", "PEXPIREAT b 1500", "DEL b", "INCR b", "SELECT 3", "INCR b"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("effects\n got %q\nwant %q", got, want)
	}
	if eff.N != 6 || eff.DB != 0 {
		t.Fatalf("N=%d DB=%d", eff.N, eff.DB)
	}
}

// effHarness runs commands on engine A with effects on and applies each
// command's record to engine B.
type effHarness struct {
	t    *testing.T
	a, b *Engine
	c    *Ctx
	eff  *Effects
	rec  []byte
}

func newEffHarness(t *testing.T) *effHarness {
	h := &effHarness{t: t, a: New(), b: New(), eff: NewEffects()}
	h.c = &Ctx{E: h.a, DB: h.a.DBs[0], W: resp.NewWriter(), Eff: h.eff}
	return h
}

// do runs one command at now as a unit and returns its effects as text
// ("CMD a b|CMD c"); the record goes to B, whose StrictDigest must then
// equal A's.
func (h *effHarness) do(now int64, args ...string) string {
	h.t.Helper()
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	h.eff.Reset()
	h.c.Now, h.a.ClockMs = now, max(h.a.ClockMs, now) // the door's clock floor
	h.c.W.Reset()
	h.c.Exec(argv)
	var got []string
	for _, cmd := range h.eff.Commands() {
		var parts []string
		for _, a := range cmd {
			parts = append(parts, string(a))
		}
		got = append(got, strings.Join(parts, " "))
	}
	if h.eff.N > 0 {
		h.rec = AppendRecord(h.rec[:0], h.eff, h.a.ClockMs)
		if err := h.b.Apply(h.rec); err != nil {
			h.t.Fatalf("%v: apply: %v", args, err)
		}
		if a, b := h.a.StrictDigest(), h.b.StrictDigest(); a != b {
			h.t.Fatalf("%v: strict digests differ after apply", args)
		}
	}
	return strings.Join(got, "|")
}

// The native limiters' effect forms: RL.SET with the whole state and the
// absolute deadline, DEL when the limiter is gone, nothing when refused.
func TestEffectsRateLimit(t *testing.T) {
	h := newEffHarness(t)
	for _, c := range []struct {
		now  int64
		args []string
		want string
	}{
		{t0, []string{"RL.ALLOW", "k", "10", "1000"}, "RL.SET k gcra 10 1000 0 " + strconv.FormatInt((t0+100)*1e6, 10) + " 0 " + strconv.FormatInt(t0+100, 10)},
		{t0, []string{"RL.PEEK", "k", "10", "1000"}, ""},
		{t0, []string{"RL.ALLOW", "k", "10", "1000", "COST", "20"}, ""}, // error: above capacity
		{t0, []string{"RL.ALLOW", "k", "10", "1000", "COST", "9"}, "RL.SET k gcra 10 1000 0 " + strconv.FormatInt((t0+1000)*1e6, 10) + " 0 " + strconv.FormatInt(t0+1000, 10)},
		{t0, []string{"RL.ALLOW", "k", "10", "1000"}, ""}, // refused
		{t0, []string{"RL.REFUND", "k", "2"}, "RL.SET k gcra 10 1000 0 " + strconv.FormatInt((t0+800)*1e6, 10) + " 0 " + strconv.FormatInt(t0+800, 10)},
		{t0, []string{"RL.REFUND", "k", "100"}, "DEL k"},
		{t0, []string{"RL.RESET", "k"}, ""},
		{t0, []string{"RL.ALLOW", "w", "5", "1000", "ALGO", "fixed-window"}, "RL.SET w fixed-window 5 1000 0 1 " + strconv.FormatInt(t0, 10) + " " + strconv.FormatInt(t0+1000, 10)},
		{t0, []string{"RL.RESET", "w"}, "DEL w"},
		{t0 + 5, []string{"RL.ALLOW", "s", "3", "100", "ALGO", "sliding-log"}, "RL.SET s sliding-log 3 100 0 0 1 " + strconv.FormatInt(t0+105, 10) + " LOG 3 " + strconv.FormatInt(t0+5, 10)},
		{t0 + 7, []string{"RL.ALLOW", "s", "3", "100", "ALGO", "sliding-log", "COST", "2"}, "RL.SET s sliding-log 3 100 0 0 3 " + strconv.FormatInt(t0+107, 10) + " LOG 3 " + strconv.FormatInt(t0+5, 10) + " " + strconv.FormatInt(t0+7, 10) + " " + strconv.FormatInt(t0+7, 10)},
		{t0 + 106, []string{"RL.ALLOW", "s", "3", "100", "ALGO", "sliding-log"}, "RL.SET s sliding-log 3 100 0 1 3 " + strconv.FormatInt(t0+206, 10) + " LOG 3 " + strconv.FormatInt(t0+7, 10) + " " + strconv.FormatInt(t0+7, 10) + " " + strconv.FormatInt(t0+106, 10)},
		{t0 + 106, []string{"RL.REFUND", "s", "1"}, "RL.SET s sliding-log 3 100 0 1 2 " + strconv.FormatInt(t0+107, 10) + " LOG 3 " + strconv.FormatInt(t0+7, 10) + " " + strconv.FormatInt(t0+7, 10)},
		{t0, []string{"CL.THROTTLE", "c", "4", "10", "1"}, "RL.SET c cell 10 1 4 " + strconv.FormatInt(t0*1e6+100e6, 10) + " 0 " + strconv.FormatInt(t0+100, 10)},
		{t0, []string{"CL.THROTTLE", "c", "4", "10", "1", "0"}, ""},
		{t0, []string{"RL.ALLOWALL", "2", "x", "5", "1000", "y", "3", "1000"}, "RL.SET x gcra 5 1000 0 " + strconv.FormatInt((t0+200)*1e6, 10) + " 0 " + strconv.FormatInt(t0+200, 10) + "|RL.SET y gcra 3 1000 0 " + strconv.FormatInt(t0*1e6+333333334, 10) + " 0 " + strconv.FormatInt(t0+334, 10)},
	} {
		if got := h.do(c.now, c.args...); got != c.want {
			t.Errorf("%v\n got %q\nwant %q", c.args, got, c.want)
		}
	}
	// a sliding log's slots outside its live window are zero, so that
	// RL.SET's live entries rebuild the same ring
	e := h.a.DBs[0].dict.find("s")
	if st := limLoad(e); st.A != 1 || st.B != 2 || st.Log[0] != 0 {
		t.Fatalf("ring %+v", st)
	}
}

// Random allow/refund/reset sequences of every algorithm, each effect
// applied to a second engine: same strict digest after every command.
func TestRLSetReplay(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, algo := range []string{"gcra", "token-bucket", "leaky-bucket", "fixed-window", "sliding-window", "sliding-log"} {
		h := newEffHarness(t)
		now := t0
		for i := 0; i < 3000; i++ {
			now += int64(rng.IntN(25))
			switch r := rng.IntN(10); {
			case r < 6:
				h.do(now, "RL.ALLOW", "k", strconv.Itoa(3+rng.IntN(3)), "200", "ALGO", algo, "COST", strconv.Itoa(1+rng.IntN(2)))
			case r < 8:
				h.do(now, "RL.REFUND", "k", strconv.Itoa(1+rng.IntN(2)))
			case r < 9:
				h.do(now, "CL.THROTTLE", "c", "2", "10", "1", strconv.Itoa(rng.IntN(3)))
			default:
				h.do(now, "GET", "k") // a read that may find the limiter expired
			}
		}
	}
}

// RL.SET's own checks, its deadline rule and its overwrite of any value.
func TestRLSetCommand(t *testing.T) {
	h := newRL(2)
	d := strconv.FormatInt(t0+1000, 10)
	for _, c := range []struct{ args, want string }{
		{"RL.SET k nope 1 1 0 0 0 " + d, "-" + errRLSetAlgo + "\r\n"},
		{"RL.SET k gcra x 1 0 0 0 " + d, "-" + ErrNotInt + "\r\n"},
		{"RL.SET k gcra 0 1 0 0 0 " + d, "-ERR limit must be a positive integer\r\n"},
		{"RL.SET k fixed-window 1 1 3 0 0 " + d, "-ERR BURST is only supported by gcra, token-bucket and leaky-bucket\r\n"},
		{"RL.SET k cell 0 1 0 0 0 " + d, "-" + errCellZero + "\r\n"},
		{"RL.SET k gcra 1 1 0 -1 0 " + d, "-" + errRLSetState + "\r\n"},
		{"RL.SET k gcra 1 1 0 0 0 0", "-ERR invalid expire time in 'rl.set' command\r\n"},
		{"RL.SET k gcra 1 1 0 0 0 " + d + " LOG 1", "-" + errRLSetLog + "\r\n"},
		{"RL.SET k sliding-log 2 1 0 0 0 " + d, "-" + errRLSetLog + "\r\n"},
		{"RL.SET k sliding-log 2 1 0 0 2 " + d + " LOG 2 5", "-" + errRLSetState + "\r\n"},
		{"RL.SET k sliding-log 2 1 0 2 1 " + d + " LOG 2 5", "-" + errRLSetState + "\r\n"},
		{"SET k v", "+OK\r\n"},
		{"RL.SET k sliding-log 2 100 0 1 1 " + d + " LOG 2 " + strconv.FormatInt(t0, 10), "+OK\r\n"},
		{"TYPE k", "+ratelimit\r\n"},
		{"PEXPIRETIME k", ":" + d + "\r\n"},
		{"RL.SET k gcra 2 100 0 0 0 " + d, "+OK\r\n"},
		{"RL.SET k gcra 2 100 0 0 0 " + strconv.FormatInt(t0, 10), "+OK\r\n"},
		{"EXISTS k", ":0\r\n"},
	} {
		if got := h.do(t0, strings.Fields(c.args)...); got != c.want {
			t.Errorf("%s\n got %q\nwant %q", c.args, got, c.want)
		}
	}
	// the effect of a past deadline is DEL, and only when a key was there
	e := newEffHarness(t)
	if got := e.do(t0, "RL.SET", "k", "gcra", "2", "100", "0", "0", "0", "5"); got != "" {
		t.Fatalf("past deadline, no key: %q", got)
	}
	e.do(t0, "SET", "k", "1")
	if got := e.do(t0, "RL.SET", "k", "gcra", "2", "100", "0", "0", "0", "5"); got != "DEL k" {
		t.Fatalf("past deadline: %q", got)
	}
	if cmd := Lookup([]byte("rl.set")); cmd.Cats&CatDangerous == 0 || cmd.Cats&CatRateLimit == 0 || cmd.Cats&CatWrite == 0 {
		t.Fatalf("rl.set categories %v", cmd.CategoryList())
	}
}

// Apply's record checks: header, version, count, effect forms, errors.
func TestApply(t *testing.T) {
	e := New()
	eff := NewEffects()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: t0, Eff: eff}
	for _, args := range [][]string{{"SET", "a", "1", "PX", "10"}, {"SELECT", "3"}, {"LPUSH", "l", "x"}} {
		if args[0] == "SELECT" {
			c.DB = e.DBs[3]
			continue
		}
		argv := make([][]byte, len(args))
		for i, a := range args {
			argv[i] = []byte(a)
		}
		c.Exec(argv)
	}
	rec := AppendRecord(nil, eff, t0)
	if RecordLen(eff, t0) != len(rec) {
		t.Fatalf("RecordLen %d, record %d bytes", RecordLen(eff, t0), len(rec))
	}
	h, body, err := ParseRecordHeader(rec)
	if err != nil || h != (RecordHeader{Version: EffectsVersion, DB: 0, Count: 2, ClockMs: t0}) {
		t.Fatalf("header %+v %v", h, err)
	}
	if !strings.HasPrefix(string(body), "*1\r\n$5\r\nMULTI\r\n*5\r\n$3\r\nSET\r\n") || !strings.HasSuffix(string(body), "*1\r\n$4\r\nEXEC\r\n") {
		t.Fatalf("body %q", body)
	}
	b := New()
	// applied much later: the deadline is past, the key is kept as data
	if err := b.Apply(rec); err != nil {
		t.Fatal(err)
	}
	if b.DBs[0].dict.find("a") == nil || b.DBs[3].dict.find("l") == nil || b.ClockMs != t0 || b.StrictDigest() != func() Digest { e.ClockMs = t0; return e.StrictDigest() }() {
		t.Fatal("state after apply")
	}
	// a single effect goes out bare
	eff.Reset()
	c.Exec([][]byte{[]byte("INCR"), []byte("n")})
	if rec := AppendRecord(nil, eff, t0); !strings.HasSuffix(string(rec), "*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n") || strings.Contains(string(rec), "MULTI") || RecordLen(eff, t0) != len(rec) {
		t.Fatalf("single effect %q", rec)
	}
	one := func(db, count int, body string) []byte {
		r := []byte{recordMagic, EffectsVersion, byte(db), byte(count), 1}
		return append(r, body...)
	}
	for _, c := range []struct {
		rec  []byte
		want string
	}{
		{[]byte("*1\r\n$4\r\nPING\r\n"), "effects record: bad header"},
		{[]byte{recordMagic, EffectsVersion + 1, 0, 0, 0}, "effects record version 2 is newer than this node's 1: upgrade it to apply the log"},
		{[]byte{recordMagic, EffectsVersion, 16, 0, 0}, "effects record: bad header (version 1, db 16, count 0)"},
		{[]byte{recordMagic, EffectsVersion, 0}, "effects record: truncated header"},
		{one(0, 1, "*2\r\n$3\r\nGET\r\n$1\r\na\r\n"), `apply: GET "a" is not an effect`},
		{one(0, 1, "*3\r\n$6\r\nEXPIRE\r\n$1\r\na\r\n$1\r\n5\r\n"), `apply: EXPIRE "a" is not an effect`},
		{one(0, 1, "*3\r\n$4\r\nEVAL\r\n$1\r\nx\r\n$1\r\n0\r\n"), `apply: EVAL "x" is not an effect`},
		{one(0, 1, "*1\r\n$6\r\nNOSUCH\r\n"), `apply: NOSUCH is not an effect`},
		{one(3, 1, "*2\r\n$4\r\nINCR\r\n$1\r\nl\r\n"), `apply: INCR "l": WRONGTYPE Operation against a key holding the wrong kind of value`},
		{one(0, 1, "*2\r\n$6\r\nSELECT\r\n$2\r\n16\r\n"), `apply: SELECT "16": ERR DB index is out of range`},
		{one(0, 2, "*2\r\n$4\r\nINCR\r\n$1\r\nz\r\n"), "effects record: 1 effects, header says 2"},
		{one(0, 1, "*2\r\n$4\r\nINCR\r\n$5\r\nz\r\n"), "effects record: malformed command"},
		{one(0, 1, "*2\r\n$3\r\nDEL\r\n"), "effects record: malformed command"},
		{one(0, 1, "*1\r\n$3\r\nDEL\r\n"), `apply: DEL: ERR wrong number of arguments for 'del' command`},
	} {
		// state from above: l is a list in db 3
		err := b.Apply(c.rec)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: got %v, want %s", c.rec, err, c.want)
		}
	}
}

// Recording costs no allocation for the hot commands once the buffer has
// grown: INCR and plain SET go out as sent, SET … EX, EXPIRE and RL.ALLOW
// are rewritten in place.
func TestEffectsHotPathAllocs(t *testing.T) {
	e := New()
	eff := NewEffects()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: t0, Eff: eff}
	for _, args := range [][]string{
		{"incr", "n"},
		{"set", "k", "12345"},
		{"set", "k", "12345", "EX", "100"},
		{"pexpire", "k", "1000"},
		{"rl.allow", "r", "1000000", "1000"},
		{"rl.allow", "s", "100000", "1000", "ALGO", "sliding-window"},
		{"cl.throttle", "c", "1000000", "1000000", "1"},
	} {
		argv := make([][]byte, len(args))
		for i, a := range args {
			argv[i] = []byte(a)
		}
		cmd := c.Resolve(argv)
		run := func() {
			eff.Reset()
			c.W.Reset()
			c.Call(cmd, argv)
		}
		run()
		if eff.N != 1 {
			t.Fatalf("%v: %d effects", args, eff.N)
		}
		if n := testing.AllocsPerRun(100, run); n != 0 {
			t.Errorf("%v allocates %.1f times per call with effects on", args, n)
		}
	}
}

func BenchmarkEffectsIncr(b *testing.B) {
	benchEffects(b, "INCR", "n")
}

func BenchmarkEffectsSetEX(b *testing.B) {
	benchEffects(b, "SET", "k", "123", "EX", "100")
}

func BenchmarkEffectsRLAllow(b *testing.B) {
	benchEffects(b, "RL.ALLOW", "r", "1000000000", "1000")
}

// benchEffects runs one command with effects off, then on with its record
// built, as the door does for a unit of one command.
func benchEffects(b *testing.B, args ...string) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			e := New()
			c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: t0}
			eff := NewEffects()
			if on {
				c.Eff = eff
			}
			argv := make([][]byte, len(args))
			for i, a := range args {
				argv[i] = []byte(a)
			}
			cmd := c.Resolve(argv)
			var rec []byte
			b.ReportAllocs()
			for b.Loop() {
				c.W.Reset()
				if on {
					eff.Reset()
					c.Call(cmd, argv)
					rec = AppendRecord(rec[:0], eff, t0)
				} else {
					c.Call(cmd, argv)
				}
			}
		})
	}
}

// Applying a one-command record (a follower's cost per effect).
func BenchmarkApplyIncr(b *testing.B) {
	e := New()
	eff := NewEffects()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: t0, Eff: eff}
	c.Exec([][]byte{[]byte("INCR"), []byte("n")})
	rec := AppendRecord(nil, eff, t0)
	f := New()
	b.ReportAllocs()
	for b.Loop() {
		if err := f.Apply(rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEffectsSet records a SET's effect (the hot path of a durable
// node's writes).
func BenchmarkEffectsSet(b *testing.B) {
	f := NewEffects()
	argv := [][]byte{[]byte("SET"), []byte("key:12345"), []byte("0123456789abcdef")}
	for i := 0; i < b.N; i++ {
		if i%300 == 0 {
			f.Reset()
		}
		f.add(0, argv)
	}
}
