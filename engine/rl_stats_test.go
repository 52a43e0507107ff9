package engine

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
	"unsafe"

	"limitdb/resp"
)

// The counters of a scripted sequence, exactly: enforced and shadow
// refusals, NEAR, errors, inline calls (RL.ALLOW, RL.PEEK, RL.ALLOWALL,
// CL.THROTTLE); a follower applying the effects counts nothing, and the
// harness checks after each step that the digests agree (the counters are
// not state).
func TestRLStatsCounters(t *testing.T) {
	h := newEffHarness(t)
	h.do(t0, "RL.POLICY", "SET", "api", "LIMIT", "4", "PERIOD", "60000", "ALGO", "fixed-window", "NEAR", "0.5")
	h.do(t0, "RL.POLICY", "SET", "sh", "LIMIT", "1", "PERIOD", "60000", "ALGO", "fixed-window", "SHADOW")
	steps := [][]string{
		{"RL.ALLOW", "k", "POLICY", "api"},              // used 1/4: allowed
		{"RL.ALLOW", "k", "POLICY", "api", "COST", "2"}, // used 3/4: allowed, near
		{"RL.PEEK", "k", "POLICY", "api"},               // would pass, used 3/4: near
		{"RL.ALLOW", "k", "POLICY", "api", "COST", "2"}, // refused
		{"RL.ALLOW", "k", "POLICY", "api", "SHADOW"},    // used 4/4: allowed, near
		{"RL.ALLOW", "k", "POLICY", "api", "SHADOW"},    // shadow refusal
		{"RL.ALLOW", "k", "POLICY", "api", "COST", "5"}, // error: above capacity
		{"RL.ALLOW", "k", "POLICY", "api", "COST", "x"}, // error: a bad cost
		{"RL.ALLOW", "j", "POLICY", "sh"},               // allowed, near
		{"RL.ALLOW", "j", "POLICY", "sh"},               // shadow refusal
		{"RL.ALLOW", "j", "POLICY", "nope"},             // no policy: counted nowhere
		{"RL.ALLOW", "i", "10", "1000"},                 // inline: allowed
		{"RL.ALLOW", "i", "10", "1000", "COST", "11"},   // inline error
		{"RL.PEEK", "i", "10", "1000", "COST", "9"},     // remaining 9: allowed (used 1/10)
		{"RL.ALLOWALL", "2", "a", "1", "60000", "b", "5", "60000"},
		{"RL.ALLOWALL", "2", "a", "1", "60000", "b", "5", "60000"}, // a refuses, b would pass
		{"CL.THROTTLE", "c", "0", "1", "60"},                       // allowed, used 1/1: near
		{"CL.THROTTLE", "c", "0", "1", "60"},                       // limited
		{"CL.THROTTLE", "c", "0", "0", "60"},                       // inline error
		{"RL.ALLOWALL", "2", "a", "1", "60000", "a", "5", "60000"}, // inline error
	}
	for i, s := range steps {
		h.do(t0+int64(i+1), s...)
	}
	want := []RLStat{
		{Policy: "", SinceMs: t0 + 12, RLCounters: RLCounters{Requests: 8, Units: 16, Allowed: 6, Denied: 2, NearLimit: 2, Errors: 3, UnitsAllowed: 14, UnitsDenied: 2}},
		{Policy: "api", SinceMs: t0 + 1, RLCounters: RLCounters{Requests: 6, Units: 8, Allowed: 4, Denied: 1, ShadowDenied: 1, NearLimit: 3, Errors: 2, UnitsAllowed: 5, UnitsDenied: 2, UnitsShadowDenied: 1}},
		{Policy: "sh", SinceMs: t0 + 9, RLCounters: RLCounters{Requests: 2, Units: 2, Allowed: 1, ShadowDenied: 1, NearLimit: 1, UnitsAllowed: 1, UnitsShadowDenied: 1}},
	}
	got := h.a.RLStats()
	if len(got) != len(want) {
		t.Fatalf("RLStats = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if f := h.b.RLStats(); len(f) != 0 {
		t.Errorf("the follower counted %+v", f)
	}
	// a change of the policy keeps its counters; RESET restarts them
	h.do(t0+100, "RL.POLICY", "SET", "api", "LIMIT", "5", "PERIOD", "60000", "ALGO", "fixed-window")
	if r, _ := h.a.rlStat("api"); r.Requests != 6 {
		t.Errorf("after RL.POLICY SET: %+v", r)
	}
	if rep, _ := h.doReply(t0+200, "RL.STATS", "RESET", "api"); rep != "OK" {
		t.Fatalf("RESET: %s", rep)
	}
	if rep, _ := h.doReply(t0+200, "RL.STATS", "api", "sh"); rep != "[api [requests 0 units 0 allowed 0 denied 0 shadow_denied 0 near_limit 0 errors 0 since_ms "+ms(t0+200)+
		"] sh [requests 2 units 2 allowed 1 denied 0 shadow_denied 1 near_limit 1 errors 0 since_ms "+ms(t0+9)+"]]" {
		t.Errorf("RL.STATS api sh: %s", rep)
	}
	if rep, _ := h.doReply(t0+200, "RL.STATS", "nope"); rep != "!ERR no such policy 'nope'" {
		t.Errorf("RL.STATS nope: %s", rep)
	}
	if rep, _ := h.doReply(t0+200, "RL.STATS", "CLUSTER", "sh"); rep != "[nodes 1 nodes_missing [] policies [sh [requests 2 units 2 allowed 1 denied 0 shadow_denied 1 near_limit 1 errors 0 since_ms "+ms(t0+9)+"]]]" {
		t.Errorf("RL.STATS CLUSTER sh: %s", rep)
	}
	// a deleted policy's counters go with it
	h.do(t0+300, "RL.POLICY", "DEL", "sh", "FORCE")
	for _, r := range h.a.RLStats() {
		if r.Policy == "sh" {
			t.Errorf("deleted policy still counted: %+v", r)
		}
	}
	// the top refused keys of api: k, refused twice (once in shadow)
	if rep, _ := h.doReply(t0+300, "RL.TOP", "api"); rep != "[[key k count 2 err 0]]" {
		t.Errorf("RL.TOP api: %s", rep)
	}
	if rep, _ := h.doReply(t0+300, "RL.TOP", "api", "REQUESTED", "COUNT", "1", "WINDOW", "1000"); rep != "[[key k count 6 err 0]]" {
		t.Errorf("RL.TOP api REQUESTED: %s", rep)
	}
	for _, c := range []struct{ args, want string }{
		{"RL.TOP nope", "!ERR no such policy 'nope'"},
		{"RL.TOP api COUNT 0", "!" + errRLTopCount},
		{"RL.TOP api WINDOW 60001", "!" + errRLTopWindow},
		{"RL.TOP api WINDOW", "!ERR syntax error"},
		{"RL.STATS RESET nope", "!ERR no such policy 'nope'"},
	} {
		if rep, _ := h.doReply(t0+300, splitArgs(c.args)...); rep != c.want {
			t.Errorf("%s: %s, want %s", c.args, rep, c.want)
		}
	}
}

// Snapshots do not carry the counters (a fresh engine loading one has
// none), and a node loading a snapshot (a follower installing one, a
// rebuild) keeps its own.
func TestRLStatsSnapshot(t *testing.T) {
	h := newRL(2)
	h.do(t0, "RL.POLICY", "SET", "p", "LIMIT", "3", "PERIOD", "1000")
	h.do(t0+1, "RL.ALLOW", "k", "POLICY", "p")
	h.do(t0+1, "RL.ALLOW", "k", "1", "1000")
	e2 := New()
	file := snapshotInto(t, h.e, e2)
	if rows := e2.RLStats(); len(rows) != 0 {
		t.Errorf("a snapshot carried counters: %+v", rows)
	}
	before := h.e.RLStats()
	if err := h.e.LoadSnapshot(bytes.NewReader(file)); err != nil {
		t.Fatal(err)
	}
	if after := h.e.RLStats(); len(after) != 2 || after[0] != before[0] || after[1] != before[1] {
		t.Errorf("after loading a snapshot: %+v, before %+v", after, before)
	}
}

func splitArgs(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

// On a skewed stream the sketch holds every key counted more than
// N/rlTopCap times, overcounts by at most err, and err ≤ N/rlTopCap: for
// the refusals (a third of the calls) and for every call (REQUESTED, the
// allowed and denied summaries merged).
func TestRLTopHeavyHitters(t *testing.T) {
	var top rlTop
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.2, 1, 100_000)
	denied, requested := map[string]int64{}, map[string]int64{}
	const n = 300_000
	now := t0 - t0%rlTopBucketMs
	for i := 0; i < n; i++ {
		k := "user:" + strconv.FormatUint(z.Uint64(), 10)
		refused := r.IntN(3) == 0
		requested[k]++
		if refused {
			denied[k]++
		}
		top.add(now+int64(i)*40_000/n, []byte(k), refused) // 40 s: 4 buckets
	}
	for _, c := range []struct {
		requested bool
		truth     map[string]int64
	}{{false, denied}, {true, requested}} {
		var total int64
		for _, v := range c.truth {
			total += v
		}
		bound := total / rlTopCap
		got := top.query(RLTopWindowMax, c.requested, now+40_000)
		at := map[string]RLTopEntry{}
		for _, e := range got {
			at[e.Key] = e
			tr := c.truth[e.Key]
			if e.Count < tr || e.Count-e.Err > tr || e.Err > bound {
				t.Errorf("requested=%v %s: count %d err %d, true %d (bound %d)", c.requested, e.Key, e.Count, e.Err, tr, bound)
			}
		}
		heavy := 0
		for k, v := range c.truth {
			if v > bound {
				heavy++
				if _, ok := at[k]; !ok {
					t.Errorf("requested=%v: heavy hitter %s (%d > %d) missing", c.requested, k, v, bound)
				}
			}
		}
		if heavy < 3 {
			t.Errorf("requested=%v: %d heavy hitters: the stream is not skewed enough to test", c.requested, heavy)
		}
	}
	// the window: only the last bucket
	var sum int64
	for _, e := range top.query(1, true, now+40_000) {
		sum += e.Count - e.Err
	}
	if sum > n/4 {
		t.Errorf("a 1 ms window counted at least %d of %d", sum, n)
	}
}

// Memory stays bounded whatever the stream: rlTopCap counters per
// summary, no allocation per call once the counters exist.
func TestRLTopMemory(t *testing.T) {
	var top rlTop
	key := []byte("key:00000000")
	i := 0
	next := func() {
		i++
		strconv.AppendInt(key[:4], int64(10000000+i), 10)
		top.add(t0, key, true)
	}
	for range 10_000 {
		next()
	}
	if allocs := testing.AllocsPerRun(10_000, next); allocs != 0 {
		t.Errorf("%v allocations per call of always-new keys", allocs)
	}
	// the fixed part, allocated at a policy's first counted call
	if n := unsafe.Sizeof(rlStats{}); n > 24<<10 {
		t.Errorf("rlStats is %d bytes", n)
	}
	for _, b := range top.b {
		for _, s := range []*spaceSaving{&b.allowed, &b.denied} {
			if len(s.ent) > rlTopCap {
				t.Fatalf("summary of %d counters", len(s.ent))
			}
			checkSummary(t, s)
		}
	}
}

// BenchmarkRLAllowPolicy is BenchmarkRLAllow with POLICY p (the counting
// and the sketch included): compare their ns/op.
func BenchmarkRLAllowPolicy(b *testing.B) {
	benchRLAllow(b, []string{"RL.POLICY", "SET", "p", "LIMIT", "10", "PERIOD", "1000"}, "POLICY", "p")
}

// checkSummary checks a summary's invariants: every counter is found
// through its slot, the counts are sorted, positions agree, and the
// counts add up to at most the items counted and the filter's counts.
func checkSummary(t *testing.T, s *spaceSaving) {
	t.Helper()
	var sum int64
	for p := range s.ent {
		if p > 0 && s.cnt[p-1] > s.cnt[p] {
			t.Fatalf("counts not sorted at %d: %v", p, s.cnt[:len(s.ent)])
		}
		if int(s.ent[s.who[p]].pos) != p {
			t.Fatalf("position %d: counter %d says %d", p, s.who[p], s.ent[s.who[p]].pos)
		}
		sum += s.cnt[p]
	}
	for i := range s.ent {
		c := &s.ent[i]
		if s.find(c.key, c.hash) != i {
			t.Fatalf("counter %d (%q) not found", i, c.key)
		}
	}
	var filtered int64
	for _, a := range s.alpha {
		filtered += int64(a)
	}
	if sum > s.n+filtered {
		t.Fatalf("counts add up to %d, %d counted (%d in the filter)", sum, s.n, filtered)
	}
}

// What the policy and statistics work meet at: RL.ALLOWALL's POLICY limits
// count under their policy (a shadow refusal as one), an override's
// decisions under the base policy, and the whole-registry swaps (APPLY,
// RESTORE, and LIMITDB.POLICY LOAD on a follower) keep the node's
// counters of the policies they keep.
func TestRLStatsAcrossRegistryChanges(t *testing.T) {
	h := newEffHarness(t)
	h.do(t0, "RL.POLICY", "SET", "api", "LIMIT", "2", "PERIOD", "60000", "ALGO", "fixed-window")
	h.do(t0, "RL.POLICY", "SET", "sh", "LIMIT", "1", "PERIOD", "60000", "ALGO", "fixed-window", "SHADOW")
	h.do(t0+1, "RL.ALLOWALL", "2", "a", "POLICY", "api", "b", "POLICY", "sh") // both allowed
	h.do(t0+2, "RL.ALLOWALL", "2", "a", "POLICY", "api", "b", "POLICY", "sh") // api allowed, sh shadow-denied
	h.do(t0+3, "RL.POLICY", "OVERRIDE", "api", "SUBJECT", "vip", "LIMIT", "100")
	h.do(t0+4, "RL.ALLOW", "vip", "POLICY", "api")
	check := func(when string, e *Engine, api, sh RLCounters) {
		t.Helper()
		if r, _ := e.rlStat("api"); r.RLCounters != api {
			t.Errorf("%s: api %+v, want %+v", when, r.RLCounters, api)
		}
		if r, _ := e.rlStat("sh"); r.RLCounters != sh {
			t.Errorf("%s: sh %+v, want %+v", when, r.RLCounters, sh)
		}
	}
	api := RLCounters{Requests: 3, Units: 3, Allowed: 3, NearLimit: 1, UnitsAllowed: 3}
	sh := RLCounters{Requests: 2, Units: 2, Allowed: 1, ShadowDenied: 1, NearLimit: 1, UnitsAllowed: 1, UnitsShadowDenied: 1}
	check("after the calls", h.a, api, sh)
	h.do(t0+5, "RL.POLICY", "APPLY", "FORCE", "POLICY", "api", "LIMIT", "3", "PERIOD", "60000", "ALGO", "fixed-window",
		"POLICY", "sh", "LIMIT", "1", "PERIOD", "60000", "ALGO", "fixed-window", "SHADOW")
	check("after APPLY", h.a, api, sh)
	dump, _ := h.doReply(t0+6, "RL.POLICY", "DUMP")
	h.do(t0+7, "RL.POLICY", "RESTORE", dump, "REPLACE")
	check("after RESTORE", h.a, api, sh)
	// a follower's own counters (an RL.PEEK it served) survive the
	// LIMITDB.POLICY LOAD effects of APPLY and RESTORE
	fc := &Ctx{E: h.b, DB: h.b.DBs[0], W: resp.NewWriter(), Now: t0 + 8}
	fc.Exec([][]byte{[]byte("RL.PEEK"), []byte("a"), []byte("POLICY"), []byte("api")})
	before, _ := h.b.rlStat("api")
	h.do(t0+9, "RL.POLICY", "APPLY", "FORCE", "POLICY", "api", "LIMIT", "4", "PERIOD", "60000", "ALGO", "fixed-window",
		"POLICY", "sh", "LIMIT", "1", "PERIOD", "60000", "ALGO", "fixed-window", "SHADOW")
	if after, _ := h.b.rlStat("api"); after.RLCounters != before.RLCounters || after.Requests != 1 {
		t.Errorf("the follower's counters: before LOAD %+v, after %+v", before.RLCounters, after.RLCounters)
	}
}
