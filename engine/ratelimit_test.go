package engine

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"limitdb/resp"
)

const t0 = int64(1_700_000_000_000)

type rlHarness struct {
	e *Engine
	c *Ctx
}

func newRL(proto int) *rlHarness {
	e := New()
	w := resp.NewWriter()
	w.Proto = proto
	return &rlHarness{e: e, c: &Ctx{E: e, DB: e.DBs[0], W: w}}
}

// do runs a command at time now and returns the raw reply.
func (h *rlHarness) do(now int64, args ...string) string {
	h.c.Now = now
	h.c.W.Reset()
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	h.c.Exec(argv)
	return string(h.c.W.B)
}

func rlMap2(allowed, limit, remaining, retry, reset int64) string {
	it := func(n int64) string { return ":" + strconv.FormatInt(n, 10) + "\r\n" }
	return "*10\r\n$7\r\nallowed\r\n" + it(allowed) + "$5\r\nlimit\r\n" + it(limit) +
		"$9\r\nremaining\r\n" + it(remaining) + "$14\r\nretry_after_ms\r\n" + it(retry) +
		"$14\r\nreset_after_ms\r\n" + it(reset)
}

func TestRLAllowPlain(t *testing.T) {
	h := newRL(2)
	for i := int64(0); i < 10; i++ {
		got := h.do(t0, "RL.ALLOW", "k", "10", "1000")
		if want := rlMap2(1, 10, 9-i, -1, (i+1)*100); got != want {
			t.Fatalf("hit %d: %q want %q", i, got, want)
		}
	}
	if got, want := h.do(t0+50, "rl.allow", "k", "10", "1000"), rlMap2(0, 10, 0, 50, 950); got != want {
		t.Fatalf("refused: %q want %q", got, want)
	}
	if got, want := h.do(t0+100, "rl.allow", "k", "10", "1000"), rlMap2(1, 10, 0, -1, 1000); got != want {
		t.Fatalf("after 100ms: %q want %q", got, want)
	}
	e := h.e.DBs[0].dict.find("k")
	if e.kind != KindLimiter || e.exp != t0+1100 || h.e.DBs[0].Expires() != 1 {
		t.Fatalf("entry kind %v exp %d", e.kind, e.exp-t0)
	}
	if e.kind.String() != "ratelimit" {
		t.Fatal(e.kind.String())
	}
	// idle: the key vanishes when it is back to full
	if got := h.do(t0+1100, "rl.info", "k"); got != "$-1\r\n" {
		t.Fatalf("info after expiry: %q", got)
	}
	if h.e.DBs[0].Len() != 0 {
		t.Fatal("expired limiter not deleted")
	}
	// RESP3: a map
	h3 := newRL(3)
	if got := h3.do(t0, "RL.ALLOW", "k", "10", "1000"); !strings.HasPrefix(got, "%5\r\n$7\r\nallowed\r\n:1\r\n") {
		t.Fatalf("resp3: %q", got)
	}
}

func TestRLAlgorithms(t *testing.T) {
	for _, algo := range []string{"gcra", "token-bucket", "leaky-bucket", "fixed-window", "sliding-window", "sliding-log", "GCRA", "Sliding-Log"} {
		h := newRL(2)
		allowed := 0
		for i := 0; i < 8; i++ {
			if strings.Contains(h.do(t0+int64(i), "RL.ALLOW", "k", "5", "1000", "ALGO", algo), "allowed\r\n:1") {
				allowed++
			}
		}
		if allowed != 5 {
			t.Fatalf("%s: %d allowed of 8 with limit 5", algo, allowed)
		}
		info := h.do(t0+10, "RL.INFO", "k")
		if !strings.Contains(info, strings.ToLower(algo)) {
			t.Fatalf("%s: info %q", algo, info)
		}
		// clone through KindOps gives an independent copy
		e := h.e.DBs[0].dict.find("k")
		p, n := kindOps[KindLimiter].Clone(e.p, e.n)
		if n != e.n || (p == e.p) != sharedAlgo(limParams(e).Algo) {
			t.Fatalf("%s: clone", algo)
		}
		if got := h.do(t0+10, "RL.RESET", "k"); got != ":1\r\n" {
			t.Fatalf("reset %q", got)
		}
		if got := h.do(t0+10, "RL.RESET", "k"); got != ":0\r\n" {
			t.Fatalf("reset again %q", got)
		}
	}
}

func TestRLErrors(t *testing.T) {
	h := newRL(2)
	h.do(t0, "INCR", "str")
	h.do(t0, "RL.ALLOW", "g", "2", "1000")
	h.do(t0, "RL.ALLOW", "fw", "2", "1000", "ALGO", "fixed-window")
	cases := [][]string{
		{"ERR wrong number of arguments for 'rl.allow' command", "RL.ALLOW", "k", "1"},
		{"ERR limit must be a positive integer", "RL.ALLOW", "k", "0", "1000"},
		{"ERR limit must be a positive integer", "RL.ALLOW", "k", "-3", "1000"},
		{"ERR limit must be a positive integer", "RL.ALLOW", "k", "1.5", "1000"},
		{"ERR period must be a positive integer (milliseconds)", "RL.ALLOW", "k", "1", "0"},
		{"ERR period must be a positive integer (milliseconds)", "RL.ALLOW", "k", "1", "abc"},
		{"ERR cost must be a positive integer", "RL.ALLOW", "g", "2", "1000", "COST", "0"},
		{"ERR cost must be a positive integer", "RL.ALLOW", "g", "2", "1000", "COST", "-1"},
		{"ERR cost exceeds the limiter's capacity", "RL.ALLOW", "g", "2", "1000", "COST", "3"},
		{"ERR burst must be a non-negative integer", "RL.ALLOW", "g", "2", "1000", "BURST", "-1"},
		{"ERR BURST is only supported by gcra, token-bucket and leaky-bucket", "RL.ALLOW", "k", "2", "1000", "BURST", "1", "ALGO", "fixed-window"},
		{"ERR unknown algorithm, expected gcra, token-bucket, leaky-bucket, fixed-window, sliding-window or sliding-log", "RL.ALLOW", "k", "2", "1000", "ALGO", "cell"},
		{"ERR syntax error", "RL.ALLOW", "g", "2", "1000", "COST"},
		{"ERR syntax error", "RL.ALLOW", "g", "2", "1000", "FOO", "1"},
		{"ERR the key holds a limiter with another algorithm (RL.RESET it first)", "RL.ALLOW", "fw", "2", "1000"},
		{"ERR the key holds a limiter with another algorithm (RL.RESET it first)", "RL.PEEK", "fw", "2", "1000", "ALGO", "sliding-log"},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", "RL.ALLOW", "str", "2", "1000"},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", "RL.PEEK", "str", "2", "1000"},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", "RL.INFO", "str"},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", "RL.RESET", "str"},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", "RL.REFUND", "str", "1"},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", "GET", "g"},
		{"ERR refund must be a positive integer", "RL.REFUND", "g", "0"},
		{"ERR limit, burst or period is too large for this algorithm", "RL.ALLOW", "k", "100000", "1000", "ALGO", "sliding-log"},
		{"ERR numlimits must be a positive integer", "RL.ALLOWALL", "0", "a", "1", "1000"},
		{"ERR syntax error", "RL.ALLOWALL", "2", "a", "1", "1000"},
		{"ERR the same key appears twice in RL.ALLOWALL", "RL.ALLOWALL", "2", "a", "1", "1000", "a", "2", "1000"},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", "RL.ALLOWALL", "2", "a", "1", "1000", "str", "2", "1000"},
		{"Cell error: Usage: cl.throttle <key> <max_burst> <count per period> <period> [<quantity>]", "CL.THROTTLE", "c", "1", "2"},
		{"Cell error: Usage: cl.throttle <key> <max_burst> <count per period> <period> [<quantity>]", "CL.THROTTLE"},
		{"Cell error: Couldn't parse as integer: x", "CL.THROTTLE", "c", "x", "2", "3"},
		{"Cell error: Couldn't parse as integer: 1.5", "CL.THROTTLE", "c", "1", "2", "3", "1.5"},
		{"Cell error: Zero rates are not supported", "CL.THROTTLE", "c", "1", "0", "3"},
		{"Cell error: Zero rates are not supported", "CL.THROTTLE", "c", "1", "2", "0"},
		{"Cell error: negative values are not supported", "CL.THROTTLE", "c", "-1", "2", "3"},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", "CL.THROTTLE", "str", "1", "2", "3"},
		{"ERR the key holds a limiter with another algorithm (RL.RESET it first)", "CL.THROTTLE", "g", "1", "2", "3"},
	}
	before := h.e.Stats.Dirty
	ge := *h.e.DBs[0].dict.find("g")
	for _, c := range cases {
		got := h.do(t0+1, c[1:]...)
		if got != "-"+c[0]+"\r\n" {
			t.Errorf("%v: %q want %q", c[1:], got, c[0])
		}
	}
	if h.e.Stats.Dirty != before || *h.e.DBs[0].dict.find("g") != ge || h.e.DBs[0].Len() != 3 {
		t.Fatal("an error changed the keyspace")
	}
}

func TestRLPeekRefundInfo(t *testing.T) {
	h := newRL(2)
	if got := h.do(t0, "RL.PEEK", "k", "3", "1000"); got != rlMap2(1, 3, 3, -1, 0) {
		t.Fatalf("peek missing: %q", got)
	}
	if h.e.DBs[0].Len() != 0 {
		t.Fatal("peek created the key")
	}
	h.do(t0, "RL.ALLOW", "k", "3", "1000", "COST", "3")
	if got := h.do(t0, "RL.PEEK", "k", "3", "1000"); got != rlMap2(0, 3, 0, 334, 1001) {
		t.Fatalf("peek full: %q", got)
	}
	if got := h.do(t0, "RL.REFUND", "k", "2"); got != ":2\r\n" {
		t.Fatalf("refund: %q", got)
	}
	if got := h.do(t0, "RL.REFUND", "k", "5"); got != ":3\r\n" {
		t.Fatalf("refund beyond full: %q", got)
	}
	if h.e.DBs[0].Len() != 0 {
		t.Fatal("a full limiter should be deleted")
	}
	if got := h.do(t0, "RL.REFUND", "k", "1"); got != "$-1\r\n" {
		t.Fatalf("refund missing: %q", got)
	}
	h.do(t0, "RL.ALLOW", "k", "3", "1000", "ALGO", "token-bucket", "BURST", "2")
	got := h.do(t0+10, "RL.INFO", "k")
	want := "*18\r\n$9\r\nalgorithm\r\n$12\r\ntoken-bucket\r\n$5\r\nlimit\r\n:3\r\n$9\r\nperiod_ms\r\n:1000\r\n$5\r\nburst\r\n:2\r\n$8\r\ncapacity\r\n:5\r\n$9\r\nremaining\r\n:4\r\n$14\r\nreset_after_ms\r\n:990\r\n$6\r\nttl_ms\r\n:990\r\n$5\r\nstate\r\n*2\r\n:1\r\n:" + strconv.FormatInt(t0, 10) + "\r\n"
	if got != want {
		t.Fatalf("info:\n%q\n%q", got, want)
	}
}

// Changing parameters keeps the state: no silent reset to full.
func TestRLParamChange(t *testing.T) {
	h := newRL(2)
	h.do(t0, "RL.ALLOW", "k", "10", "1000", "COST", "10")
	// twice the rate: the 1000 ms of debt now count as 20 units of 50 ms
	if got := h.do(t0, "RL.ALLOW", "k", "20", "1000"); got != rlMap2(0, 20, 0, 50, 1000) {
		t.Fatalf("new params: %q", got)
	}
	if got := h.do(t0, "RL.ALLOW", "k", "20", "2000", "BURST", "5"); got != rlMap2(1, 25, 14, -1, 1100) {
		t.Fatalf("burst: %q", got)
	}
	// sliding log grows its ring and keeps its entries
	h.do(t0, "RL.ALLOW", "s", "2", "1000", "ALGO", "sliding-log", "COST", "2")
	if got := h.do(t0+1, "RL.ALLOW", "s", "4", "1000", "ALGO", "sliding-log", "COST", "2"); got != rlMap2(1, 4, 0, -1, 1000) {
		t.Fatalf("log grow: %q", got)
	}
	if got := h.do(t0+2, "RL.ALLOW", "s", "4", "1000", "ALGO", "sliding-log"); got != rlMap2(0, 4, 0, 998, 999) {
		t.Fatalf("log after grow: %q", got)
	}
}

// RL.ALLOWALL: nothing is consumed unless every limit allows.
func TestRLAllowAll(t *testing.T) {
	h := newRL(2)
	args := []string{"RL.ALLOWALL", "3", "ip:1", "3", "1000", "user:7", "2", "1000", "ip:1:m", "100", "60000", "ALGO", "sliding-log"}
	for i := 0; i < 2; i++ {
		if got := h.do(t0, args...); !strings.HasPrefix(got, "*8\r\n$7\r\nallowed\r\n:1\r\n$7\r\nrefused\r\n:-1\r\n") {
			t.Fatalf("call %d: %q", i, got)
		}
	}
	got := h.do(t0, args...)
	if !strings.HasPrefix(got, "*8\r\n$7\r\nallowed\r\n:0\r\n$7\r\nrefused\r\n:2\r\n$14\r\nretry_after_ms\r\n:1000\r\n") {
		t.Fatalf("refused: %q", got)
	}
	// ip:1 still has one unit left: nothing was consumed by the refusal
	if got := h.do(t0, "RL.PEEK", "ip:1", "3", "1000", "ALGO", "sliding-log"); got != rlMap2(1, 3, 1, -1, 1000) {
		t.Fatalf("ip:1 after refusal: %q", got)
	}
	if got := h.do(t0, "RL.PEEK", "ip:1:m", "100", "60000", "ALGO", "sliding-log"); got != rlMap2(1, 100, 98, -1, 60000) {
		t.Fatalf("ip:1:m after refusal: %q", got)
	}
}

func TestCLThrottle(t *testing.T) {
	h := newRL(3)
	arr := func(a ...int64) string {
		s := "*5\r\n"
		for _, n := range a {
			s += ":" + strconv.FormatInt(n, 10) + "\r\n"
		}
		return s
	}
	steps := []struct {
		at   int64
		args []string
		want string
	}{
		{0, []string{"c", "4", "1", "1", "6"}, arr(1, 5, 5, -1, 0)},
		{0, []string{"c", "4", "1", "1"}, arr(0, 5, 4, -1, 1)},
		{0, []string{"c", "4", "1", "1", "4"}, arr(0, 5, 0, -1, 5)},
		{0, []string{"c", "4", "1", "1"}, arr(1, 5, 0, 1, 5)},
		{2500, []string{"c", "4", "1", "1", "0"}, arr(0, 5, 2, -1, 3)},
		{2500, []string{"c", "+4", "1", "1", "2"}, arr(0, 5, 0, -1, 5)},
		{2600, []string{"c", "4", "1", "1", "2"}, arr(1, 5, 0, 2, 5)},
	}
	for i, s := range steps {
		if got := h.do(t0+s.at, append([]string{"CL.THROTTLE"}, s.args...)...); got != s.want {
			t.Fatalf("step %d: %q want %q", i, got, s.want)
		}
	}
	if got := h.do(t0, "CL.THROTTLE", "p", "4", "1", "1", "0"); got != arr(0, 5, 5, -1, 0) || h.e.DBs[0].dict.find("p") != nil {
		t.Fatalf("peek on a missing key: %q", got)
	}
}

// TestLimiterMemory creates 1,000,000 GCRA limiters through the engine and
// reports the bytes each costs (key string + entry + bucket + shared
// parameters), for 8-byte keys ("r:000000") and 10-byte keys.
func TestLimiterMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, kl := range []int{8, 10} {
		heap, res := limiterMemory(t, kl)
		t.Logf("1,000,000 GCRA limiters, %d-byte keys: %.1f B/limiter heap in use, %.1f B/limiter RSS (entry %d B)", kl, heap, res, unsafe.Sizeof(entry{}))
		if heap > 58 {
			t.Errorf("%.1f B per limiter (target 58)", heap)
		}
	}
	for _, algo := range []string{"token-bucket", "sliding-log"} {
		heap, res := limiterMemory(t, 8, "ALGO", algo)
		t.Logf("1,000,000 %s limiters (limit 10), 8-byte keys: %.1f B/limiter heap in use, %.1f B/limiter RSS", algo, heap, res)
	}
}

func limiterMemory(t *testing.T, keyLen int, opts ...string) (heap, res float64) {
	const n = 1_000_000
	runtime.GC()
	debug.FreeOSMemory()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	rss0 := rss()
	e := New()
	w := resp.NewWriter()
	c := &Ctx{E: e, DB: e.DBs[0], W: w, Now: t0}
	argv := [][]byte{[]byte("RL.ALLOW"), nil, []byte("10"), []byte("1000")}
	for _, o := range opts {
		argv = append(argv, []byte(o))
	}
	key := make([]byte, 0, 32)
	for i := 0; i < n; i++ {
		key = append(key[:0], "r:"...)
		if keyLen == 10 {
			key = append(key, "l:"...)
		}
		key = strconv.AppendInt(key, int64(1_000_000+i), 10)
		key = append(key[:len(key)-7], key[len(key)-6:]...) // six digits
		argv[1] = key
		w.Reset()
		cmdRLAllow(c, argv)
	}
	if len(key) != keyLen || e.DBs[0].Len() != n {
		t.Fatal("keys", len(key), e.DBs[0].Len())
	}
	runtime.GC()
	debug.FreeOSMemory()
	runtime.ReadMemStats(&m1)
	rss1 := rss()
	runtime.KeepAlive(e)
	return float64(m1.HeapInuse-m0.HeapInuse) / n, float64(rss1-rss0) / n
}

func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

func BenchmarkRLAllow(b *testing.B) { benchRLAllow(b, nil, "10", "1000") }

// benchRLAllow runs RL.ALLOW key rest… over 10,000 keys, after the setup
// command (nil: none).
func benchRLAllow(b *testing.B, setup []string, rest ...string) {
	e := New()
	w := resp.NewWriter()
	c := &Ctx{E: e, DB: e.DBs[0], W: w, Now: t0}
	if setup != nil {
		argv := make([][]byte, len(setup))
		for i, a := range setup {
			argv[i] = []byte(a)
		}
		c.Exec(argv)
	}
	keys := make([][]byte, 10000)
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i))
	}
	argv := [][]byte{[]byte("RL.ALLOW"), nil}
	for _, a := range rest {
		argv = append(argv, []byte(a))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		argv[1] = keys[i%len(keys)]
		c.Now = t0 + int64(i/1000)
		w.Reset()
		cmdRLAllow(c, argv)
	}
}

// Shrinking the parameters never reports negative remaining nor resets.
func TestRLShrink(t *testing.T) {
	for _, algo := range []string{"gcra", "token-bucket", "leaky-bucket", "fixed-window", "sliding-window", "sliding-log"} {
		h := newRL(2)
		h.do(t0, "RL.ALLOW", "k", "10", "1000", "ALGO", algo, "COST", "10")
		got := h.do(t0+1, "RL.ALLOW", "k", "2", "1000", "ALGO", algo)
		if !strings.Contains(got, "allowed\r\n:0") || !strings.Contains(got, "remaining\r\n:0\r\n") {
			t.Fatalf("%s: %q", algo, got)
		}
	}
}

func TestRLRefundMovesDeadline(t *testing.T) {
	h := newRL(2)
	h.do(t0, "RL.ALLOW", "k", "10", "1000", "COST", "5")
	if e := h.e.DBs[0].dict.find("k"); e.exp != t0+500 {
		t.Fatal(e.exp - t0)
	}
	h.do(t0, "RL.REFUND", "k", "2")
	if e := h.e.DBs[0].dict.find("k"); e.exp != t0+300 {
		t.Fatal(e.exp - t0)
	}
	h.do(t0, "CL.THROTTLE", "c", "9", "10", "1", "5")
	h.do(t0, "RL.REFUND", "c", "2")
	if e := h.e.DBs[0].dict.find("c"); e.exp != t0+300 {
		t.Fatal(e.exp - t0)
	}
}

// Every algorithm's key expires exactly when the limiter is back to full.
func TestRLExpiryIsResetAfter(t *testing.T) {
	for _, algo := range []string{"gcra", "token-bucket", "leaky-bucket", "fixed-window", "sliding-window", "sliding-log"} {
		h := newRL(2)
		now := t0 + 123
		var reset int64
		for i := 0; i < 3; i++ {
			now += 7
			got := h.do(now, "RL.ALLOW", "k", "4", "1000", "ALGO", algo)
			i := strings.Index(got, "reset_after_ms\r\n:")
			reset, _ = strconv.ParseInt(strings.TrimSpace(got[i+17:]), 10, 64)
		}
		e := h.e.DBs[0].dict.find("k")
		if e == nil || e.exp != now+reset {
			t.Fatalf("%s: deadline %v, reset %d", algo, e, reset)
		}
		if got := h.do(now+reset-1, "RL.INFO", "k"); got == "$-1\r\n" {
			t.Fatalf("%s: gone too early", algo)
		}
		if got := h.do(now+reset, "RL.INFO", "k"); got != "$-1\r\n" {
			t.Fatalf("%s: still there: %q", algo, got)
		}
	}
}

// A refused RL.ALLOWALL leaves a sliding log exactly as it was, also when
// the log holds expired entries that a speculative write could revive.
func TestRLAllowAllSlidingLogRefused(t *testing.T) {
	h := newRL(2)
	h.do(t0, "RL.ALLOW", "a", "3", "1000", "ALGO", "sliding-log", "COST", "2")
	h.do(t0+900, "RL.ALLOW", "a", "3", "1000", "ALGO", "sliding-log")
	h.do(t0+1500, "RL.ALLOW", "b", "3", "1000", "ALGO", "sliding-log", "COST", "3")
	// at t0+1500 two of a's three entries have expired but are still stored
	got := h.do(t0+1500, "RL.ALLOWALL", "2", "a", "3", "1000", "b", "3", "1000", "ALGO", "sliding-log", "COST", "2")
	if !strings.HasPrefix(got, "*8\r\n$7\r\nallowed\r\n:0\r\n$7\r\nrefused\r\n:2\r\n") {
		t.Fatalf("%q", got)
	}
	if got := h.do(t0+1500, "RL.PEEK", "a", "3", "1000", "ALGO", "sliding-log"); got != rlMap2(1, 3, 2, -1, 400) {
		t.Fatalf("a changed: %q", got)
	}
}
