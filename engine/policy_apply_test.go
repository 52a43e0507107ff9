package engine

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"limitdb/resp"
)

// pubRec records what a Ctx publishes.
type pubRec struct{ msgs []string }

func (p *pubRec) Publish(channel, message []byte, f PubFlags) int {
	p.msgs = append(p.msgs, string(channel)+" "+string(message))
	return 0
}

func (p *pubRec) Introspect(argv [][]byte, w *resp.Writer) {}

type policyCase struct {
	now   int64
	args  string
	reply string
	// effects: the exact effects, or with a trailing "…" their prefix
	effects string
	// pub: what the command published, "|"-separated
	pub string
}

// runPolicyCases runs cases in order on h (its follower applying every
// record, the two strict digests compared), with a recording Publisher.
func runPolicyCases(t *testing.T, h *effHarness, cases []policyCase) {
	t.Helper()
	rec := &pubRec{}
	h.c.Pub = rec
	for _, c := range cases {
		rec.msgs = nil
		reply, effects := h.doReply(c.now, strings.Fields(c.args)...)
		okEff := effects == c.effects
		if p, ok := strings.CutSuffix(c.effects, "…"); ok {
			okEff = strings.HasPrefix(effects, p)
		}
		pub := strings.Join(rec.msgs, "|")
		if reply != c.reply || !okEff || pub != c.pub {
			t.Errorf("%s\n reply   %s\n want    %s\n effects %q\n want    %q\n pub     %q\n want    %q", c.args, reply, c.reply, effects, c.effects, pub, c.pub)
		}
	}
}

const load = "LIMITDB.POLICY LOAD …"

// RL.POLICY APPLY: the diff, one LOAD effect, IFVERSION on the registry
// and per policy, DRYRUN, the ALGO and live-key rules, errors.
func TestPolicyApply(t *testing.T) {
	h := newEffHarness(t)
	v := func(n int) string { return "version " + strconv.Itoa(n) }
	runPolicyCases(t, h, []policyCase{
		{t0, "RL.POLICY SET a LIMIT 10 PERIOD 1000", "1", "LIMITDB.POLICY PUT …", "__limitdb__:policy set a 1"},
		{t0, "RL.POLICY APPLY DRYRUN POLICY a LIMIT 10 PERIOD 1000 POLICY b LIMIT 5 PERIOD 100", "[added [b] changed [] removed [] unchanged [a] " + v(2) + "]", "", ""},
		{t0, "RL.POLICY LIST", "[a]", "", ""},
		{t0, "RL.POLICY APPLY IFVERSION 7 POLICY b LIMIT 5 PERIOD 100", "!ERR version mismatch: the registry is at version 1, IFVERSION 7 (nothing changed)", "", ""},
		{t0, "RL.POLICY APPLY POLICY a LIMIT 10 PERIOD 1000 IFVERSION 3", "!ERR version mismatch: policy 'a' is at version 1, IFVERSION 3 (nothing changed)", "", ""},
		{t0 + 1, "RL.POLICY APPLY IFVERSION 1 POLICY a LIMIT 10 PERIOD 1000 POLICY b LIMIT 5 PERIOD 100 DESC policy", "[added [b] changed [] removed [] unchanged [a] " + v(2) + "]", load, "__limitdb__:policy apply 2"},
		{t0 + 1, "RL.POLICY GET b", "[name b algo gcra limit 5 period_ms 100 burst 0 shadow 0 near 0.8 desc policy version 2 created_ms " + ms(t0+1) + " updated_ms " + ms(t0+1) + " updated_by default reset_ms 0 live_until_ms 0 overrides 0]", "", ""},
		{t0 + 1, "RL.POLICY HISTORY a", "[[version 1 updated_ms " + ms(t0) + " updated_by default algo gcra limit 10 period_ms 1000 burst 0 shadow 0 near 0.8 desc  resetkeys 0]]", "", ""},
		// nothing to change: no effect, no notification, the same version
		{t0 + 1, "RL.POLICY APPLY POLICY b LIMIT 5 PERIOD 100 DESC policy POLICY a LIMIT 10 PERIOD 1000", "[added [] changed [] removed [] unchanged [a b] " + v(2) + "]", "", ""},
		{t0 + 10, "RL.ALLOW k POLICY a", "[allowed 1 limit 10 remaining 9 retry_after_ms -1 reset_after_ms 100 policy a version 1 shadow_denied 0]", "RL.SET …", ""},
		// a removal of a policy with live keys needs FORCE, an ALGO change RESETKEYS
		{t0 + 10, "RL.POLICY APPLY POLICY b LIMIT 6 PERIOD 100", "!ERR policy 'a' may have live keys until " + ms(t0+110) + " (unix ms): remove it with FORCE", "", ""},
		{t0 + 10, "RL.POLICY APPLY POLICY a LIMIT 10 PERIOD 1000 ALGO token-bucket POLICY b LIMIT 6 PERIOD 100", "!ERR policy 'a' may have live keys of algorithm gcra: changing ALGO needs RESETKEYS", "", ""},
		{t0 + 10, "RL.POLICY APPLY DRYRUN POLICY a LIMIT 10 PERIOD 1000 ALGO token-bucket RESETKEYS POLICY b LIMIT 6 PERIOD 100", "[added [] changed [a b] removed [] unchanged [] " + v(3) + "]", "", ""},
		{t0 + 20, "RL.POLICY APPLY RESETKEYS POLICY a LIMIT 10 PERIOD 1000 ALGO token-bucket POLICY b LIMIT 6 PERIOD 100", "[added [] changed [a b] removed [] unchanged [] " + v(3) + "]", load, "__limitdb__:policy apply 3"},
		{t0 + 20, "RL.ALLOW k POLICY a", "[allowed 1 limit 10 remaining 9 retry_after_ms -1 reset_after_ms 1000 policy a version 3 shadow_denied 0]", "RL.SET …", ""},
		{t0 + 20, "RL.POLICY HISTORY a COUNT 1", "[[version 3 updated_ms " + ms(t0+20) + " updated_by default algo token-bucket limit 10 period_ms 1000 burst 0 shadow 0 near 0.8 desc  resetkeys 1]]", "", ""},
		{t0 + 20, "RL.POLICY HISTORY b COUNT 1", "[[version 3 updated_ms " + ms(t0+20) + " updated_by default algo gcra limit 6 period_ms 100 burst 0 shadow 0 near 0.8 desc  resetkeys 0]]", "", ""},
		// an empty set removes everything
		{t0 + 20, "RL.POLICY APPLY FORCE", "[added [] changed [] removed [a b] unchanged [] " + v(4) + "]", load, "__limitdb__:policy apply 4"},
		{t0 + 20, "RL.POLICY LIST", "[]", "", ""},
		{t0 + 20, "RL.POLICY HISTORY a", "!ERR no such policy 'a'", "", ""},
		{t0 + 20, "RL.ALLOW k POLICY a", "!ERR no such policy 'a'", "", ""},
		// errors
		{t0, "RL.POLICY APPLY POLICY x LIMIT 1 PERIOD 1 POLICY x LIMIT 2 PERIOD 1", "!ERR policy 'x' appears twice in RL.POLICY APPLY", "", ""},
		{t0, "RL.POLICY APPLY POLICY", "!ERR syntax error", "", ""},
		{t0, "RL.POLICY APPLY BOGUS POLICY x LIMIT 1 PERIOD 1", "!ERR syntax error", "", ""},
		{t0, "RL.POLICY APPLY IFVERSION -2", "!" + errPolicyVersion, "", ""},
		{t0, "RL.POLICY APPLY POLICY x LIMIT 1", "!ERR RL.POLICY SET needs LIMIT and PERIOD", "", ""},
		{t0, "RL.POLICY APPLY POLICY x LIMIT 1 PERIOD 1 POLICY y LIMIT 0 PERIOD 1", "!ERR limit must be a positive integer", "", ""},
		{t0, "RL.POLICY LIST", "[]", "", ""},
		{t0, "LIMITDB.POLICY LOAD garbage", "!" + errPolicyEffect, "", ""},
	})
}

// Per-subject overrides: looked up before the base policy, counted in
// GET, listed, kept by SET and APPLY (and checked against their new
// parameters), replicated, bounded.
func TestPolicyOverrides(t *testing.T) {
	h := newEffHarness(t)
	runPolicyCases(t, h, []policyCase{
		{t0, "RL.POLICY SET o LIMIT 2 PERIOD 1000 ALGO fixed-window", "1", "LIMITDB.POLICY PUT …", "__limitdb__:policy set o 1"},
		{t0, "RL.POLICY OVERRIDE o SUBJECT vip LIMIT 5", "2", "LIMITDB.POLICY OVERRIDE o 2 " + ms(t0) + " default vip 5 0", "__limitdb__:policy override o 2 vip"},
		{t0, "RL.POLICY OVERRIDE o SUBJECT slow LIMIT 1 PERIOD 60000", "3", "LIMITDB.POLICY OVERRIDE o 3 " + ms(t0) + " default slow 1 60000", "__limitdb__:policy override o 3 slow"},
		{t0, "RL.ALLOW vip POLICY o", "[allowed 1 limit 5 remaining 4 retry_after_ms -1 reset_after_ms 1000 policy o version 3 shadow_denied 0]", "RL.SET …", ""},
		{t0, "RL.ALLOW anon POLICY o", "[allowed 1 limit 2 remaining 1 retry_after_ms -1 reset_after_ms 1000 policy o version 3 shadow_denied 0]", "RL.SET …", ""},
		{t0, "RL.ALLOW slow POLICY o", "[allowed 1 limit 1 remaining 0 retry_after_ms -1 reset_after_ms 60000 policy o version 3 shadow_denied 0]", "RL.SET …", ""},
		{t0, "RL.PEEK slow POLICY o", "[allowed 0 limit 1 remaining 0 retry_after_ms 60000 reset_after_ms 60000 policy o version 3 shadow_denied 0]", "", ""},
		{t0, "RL.POLICY GET o", "[name o algo fixed-window limit 2 period_ms 1000 burst 0 shadow 0 near 0.8 desc  version 3 created_ms " + ms(t0) + " updated_ms " + ms(t0) + " updated_by default reset_ms 0 live_until_ms " + ms(t0+60000) + " overrides 2]", "", ""},
		{t0, "RL.POLICY OVERRIDES o", "[[subject slow limit 1 period_ms 60000] [subject vip limit 5 period_ms 0]]", "", ""},
		// SET keeps them; one that would not fit the new parameters refuses it
		{t0 + 1, "RL.POLICY SET o LIMIT 3 PERIOD 2000 ALGO fixed-window", "4", "LIMITDB.POLICY PUT …", "__limitdb__:policy set o 4"},
		{t0 + 1, "RL.ALLOW vip POLICY o", "[allowed 1 limit 5 remaining 3 retry_after_ms -1 reset_after_ms 1999 policy o version 4 shadow_denied 0]", "RL.SET …", ""},
		{t0 + 1, "RL.POLICY OVERRIDE o SUBJECT huge LIMIT 100000", "5", "LIMITDB.POLICY OVERRIDE …", "__limitdb__:policy override o 5 huge"},
		{t0 + 1, "RL.POLICY SET o LIMIT 3 PERIOD 2000 ALGO sliding-log RESETKEYS", "!ERR the override of subject 'huge' does not fit policy 'o': ERR limit, burst or period is too large for this algorithm", "", ""},
		{t0 + 1, "RL.POLICY APPLY RESETKEYS POLICY o LIMIT 3 PERIOD 2000 ALGO sliding-log", "!ERR the override of subject 'huge' does not fit policy 'o': ERR limit, burst or period is too large for this algorithm", "", ""},
		{t0 + 1, "RL.POLICY UNOVERRIDE o SUBJECT huge", "6", "LIMITDB.POLICY UNOVERRIDE o 6 " + ms(t0+1) + " default huge", "__limitdb__:policy unoverride o 6 huge"},
		{t0 + 1, "RL.POLICY UNOVERRIDE o SUBJECT huge", "0", "", ""},
		// APPLY keeps a kept policy's overrides
		{t0 + 2, "RL.POLICY APPLY POLICY o LIMIT 4 PERIOD 2000 ALGO fixed-window", "[added [] changed [o] removed [] unchanged [] version 7]", load, "__limitdb__:policy apply 7"},
		{t0 + 2, "RL.POLICY OVERRIDES o", "[[subject slow limit 1 period_ms 60000] [subject vip limit 5 period_ms 0]]", "", ""},
		{t0 + 2, "RL.ALLOW vip POLICY o", "[allowed 1 limit 5 remaining 2 retry_after_ms -1 reset_after_ms 1998 policy o version 7 shadow_denied 0]", "RL.SET …", ""},
		// errors
		{t0, "RL.POLICY OVERRIDE o SUBJECT vip LIMIT 0", "!ERR limit must be a positive integer", "", ""},
		{t0, "RL.POLICY OVERRIDE o SUBJECT vip LIMIT 1 PERIOD 0", "!ERR period must be a positive integer (milliseconds)", "", ""},
		{t0, "RL.POLICY OVERRIDE o SUBJECT vip LIMIT 1 BURST 2", "!ERR syntax error", "", ""},
		{t0, "RL.POLICY OVERRIDE o KEY vip LIMIT 1", "!ERR syntax error", "", ""},
		{t0, "RL.POLICY OVERRIDE nope SUBJECT vip LIMIT 1", "!ERR no such policy 'nope'", "", ""},
		{t0, "RL.POLICY UNOVERRIDE nope SUBJECT vip", "!ERR no such policy 'nope'", "", ""},
		{t0, "RL.POLICY OVERRIDES nope", "!ERR no such policy 'nope'", "", ""},
		{t0, "LIMITDB.POLICY OVERRIDE nope 9 1 u s 1 0", "!" + errPolicyEffect, "", ""},
	})
	// bounded: PolicyOverrideMax subjects, then an error
	for i := len(h.a.Policies.Get([]byte("o")).Overrides); i < PolicyOverrideMax; i++ {
		h.do(t0+3, "RL.POLICY", "OVERRIDE", "o", "SUBJECT", "s"+strconv.Itoa(i), "LIMIT", "7")
	}
	reply, _ := h.doReply(t0+3, "RL.POLICY", "OVERRIDE", "o", "SUBJECT", "one-more", "LIMIT", "7")
	if want := "!ERR policy 'o' has 1024 overrides, the most a policy holds"; reply != want {
		t.Fatalf("override %d: %s, want %s", PolicyOverrideMax+1, reply, want)
	}
	if reply, _ := h.doReply(t0+3, "RL.POLICY", "OVERRIDE", "o", "SUBJECT", "vip", "LIMIT", "8"); reply != strconv.FormatInt(h.a.Policies.Version, 10) {
		t.Fatalf("changing an existing override at the bound: %s", reply)
	}
	// snapshots carry them
	e := New()
	for _, f := range h.a.Policies.aux() {
		if ok, err := e.Policies.loadAux(f.Key, f.Value); !ok || err != nil {
			t.Fatalf("loadAux: %v %v", ok, err)
		}
	}
	if got := len(e.Policies.Get([]byte("o")).Overrides); got != PolicyOverrideMax {
		t.Fatalf("overrides after a snapshot round trip: %d", got)
	}
}

// RL.POLICY DUMP and RESTORE: a round trip into an empty engine keeps
// every record; a registry that is not empty needs REPLACE; a flipped
// byte, a cut payload, a wrong format version are refused, changing
// nothing.
func TestPolicyDumpRestore(t *testing.T) {
	h := newEffHarness(t)
	h.do(t0, "RL.POLICY", "SET", "a", "LIMIT", "10", "PERIOD", "1000", "DESC", "bytes \x00\r\n")
	h.do(t0+1, "RL.POLICY", "SET", "a", "LIMIT", "11", "PERIOD", "1000", "SHADOW", "NEAR", "0.5")
	h.do(t0+2, "RL.POLICY", "SET", "b", "LIMIT", "3", "PERIOD", "10", "ALGO", "sliding-log")
	h.do(t0+3, "RL.POLICY", "OVERRIDE", "a", "SUBJECT", "vip", "LIMIT", "99", "PERIOD", "5")
	h.do(t0+4, "RL.ALLOW", "k", "POLICY", "b")
	h.do(t0+5, "RL.POLICY", "DUMP")
	payload := string(h.c.W.B[strings.Index(string(h.c.W.B), "\r\n")+2 : len(h.c.W.B)-2])
	want := encodeRegistry(&h.a.Policies)

	g := newEffHarness(t)
	rec := &pubRec{}
	g.c.Pub = rec
	if reply, eff := g.doReply(t0+10, "RL.POLICY", "RESTORE", payload); reply != "2" || !strings.HasPrefix(eff, "LIMITDB.POLICY LOAD ") {
		t.Fatalf("RESTORE: %s %q", reply, eff)
	}
	if got := encodeRegistry(&g.a.Policies); got != want {
		t.Fatalf("restored registry\n %q\nwant\n %q", got, want)
	}
	if strings.Join(rec.msgs, "|") != "__limitdb__:policy restore 4" {
		t.Fatalf("RESTORE published %q", rec.msgs)
	}
	if reply, _ := g.doReply(t0+10, "RL.POLICY", "RESTORE", payload); reply != "!"+errPolicyBusy {
		t.Fatalf("RESTORE into a registry with policies: %s", reply)
	}
	// REPLACE: versions not above the registry's become the next one
	g.do(t0+11, "RL.POLICY", "SET", "c", "LIMIT", "1", "PERIOD", "1")
	if reply, _ := g.doReply(t0+12, "RL.POLICY", "RESTORE", payload, "REPLACE"); reply != "2" {
		t.Fatalf("RESTORE REPLACE: %s", reply)
	}
	if g.a.Policies.Get([]byte("c")) != nil || g.a.Policies.Version != 6 || g.a.Policies.Get([]byte("a")).Version != 6 {
		t.Fatalf("after RESTORE REPLACE: version %d, a %+v", g.a.Policies.Version, g.a.Policies.Get([]byte("a")))
	}
	before := encodeRegistry(&g.a.Policies)
	bad := func(why, p string, wantErr string) {
		t.Helper()
		if reply, eff := g.doReply(t0+13, "RL.POLICY", "RESTORE", p, "REPLACE"); reply != "!"+wantErr || eff != "" {
			t.Errorf("%s: %s %q", why, reply, eff)
		}
		if encodeRegistry(&g.a.Policies) != before {
			t.Errorf("%s changed the registry", why)
		}
	}
	for _, i := range []int{0, 5, len(payload) / 2, len(payload) - 10, len(payload) - 1} {
		b := []byte(payload)
		b[i] ^= 0x20
		bad("a flipped byte at "+strconv.Itoa(i), string(b), errPolicyPayload)
	}
	bad("a cut payload", payload[:len(payload)-1], errPolicyPayload)
	bad("an empty payload", "", errPolicyPayload)
	// a valid checksum over a body that does not decode
	body := []byte(policyDumpMagic + "2:99")
	body = append(body, 1, 0)
	body = append(body, le64(crc64Update(0, body))...)
	bad("a bad body", string(body), errPolicyBadDump)
	if reply, _ := g.doReply(t0+13, "RL.POLICY", "RESTORE", payload, "MERGE"); reply != "!ERR syntax error" {
		t.Errorf("RESTORE … MERGE: %s", reply)
	}
}

func le64(x uint64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(x >> (8 * i))
	}
	return b
}

// RL.ALLOWALL with key POLICY name limits: the policy's parameters (its
// override), policy/version/shadow_denied in the limit's entry, a shadow
// limit that would refuse does not refuse the request, a missing policy
// is an error.
func TestPolicyAllowAll(t *testing.T) {
	h := newEffHarness(t)
	h.do(t0, "RL.POLICY", "SET", "p", "LIMIT", "2", "PERIOD", "1000", "ALGO", "fixed-window")
	h.do(t0, "RL.POLICY", "SET", "s", "LIMIT", "1", "PERIOD", "1000", "ALGO", "fixed-window", "SHADOW")
	h.do(t0, "RL.POLICY", "OVERRIDE", "p", "SUBJECT", "vip", "LIMIT", "3")
	lim := func(key string, allowed, limit, rem int, retry, reset string) string {
		return "[key " + key + " allowed " + strconv.Itoa(allowed) + " limit " + strconv.Itoa(limit) + " remaining " + strconv.Itoa(rem) +
			" retry_after_ms " + retry + " reset_after_ms " + reset
	}
	runPolicyCases(t, h, []policyCase{
		{t0, "RL.ALLOWALL 3 u POLICY p sh POLICY s inl 5 1000 ALGO fixed-window", "[allowed 1 refused -1 retry_after_ms -1 limits [" +
			lim("u", 1, 2, 1, "-1", "1000") + " policy p version 3 shadow_denied 0] " +
			lim("sh", 1, 1, 0, "-1", "1000") + " policy s version 2 shadow_denied 0] " +
			lim("inl", 1, 5, 4, "-1", "1000") + "]]]",
			"RL.SET u fixed-window 2 1000 0 1 " + ms(t0) + " " + ms(t0+1000) + " POLICY p|RL.SET sh fixed-window 1 1000 0 1 " + ms(t0) + " " + ms(t0+1000) + " POLICY s|RL.SET inl fixed-window 5 1000 0 1 " + ms(t0) + " " + ms(t0+1000), ""},
		// the shadow limit would refuse: the request passes, nothing is taken from it
		{t0 + 1, "RL.ALLOWALL 2 vip POLICY p sh POLICY s", "[allowed 1 refused -1 retry_after_ms -1 limits [" +
			lim("vip", 1, 3, 2, "-1", "1000") + " policy p version 3 shadow_denied 0] " +
			lim("sh", 1, 1, 0, "-1", "999") + " policy s version 2 shadow_denied 1]]]",
			"RL.SET vip fixed-window 3 1000 0 1 " + ms(t0+1) + " " + ms(t0+1001) + " POLICY p", ""},
		{t0 + 2, "RL.ALLOWALL 2 u POLICY p u2 POLICY p COST 2", "[allowed 0 refused 1 retry_after_ms 998 limits [" +
			lim("u", 0, 2, 1, "998", "998") + " policy p version 3 shadow_denied 0] " +
			lim("u2", 1, 2, 2, "-1", "0") + " policy p version 3 shadow_denied 0]]]", "", ""},
		{t0, "RL.ALLOWALL 2 u POLICY nope inl 5 1000", "!ERR no such policy 'nope'", "", ""},
		{t0, "RL.ALLOWALL 1 u POLICY p COST 3", "!ERR cost exceeds the limiter's capacity", "", ""},
		{t0, "RL.ALLOWALL 2 u POLICY p v", "!ERR syntax error", "", ""},
	})
}

// An overrides section or a registry that is not what the encoders write
// fails to decode; no cut of a registry decodes or panics.
func TestPolicyOverridesHostile(t *testing.T) {
	h := newRL(2)
	h.do(t0, "RL.POLICY", "SET", "p", "LIMIT", "3", "PERIOD", "100")
	h.do(t0, "RL.POLICY", "OVERRIDE", "p", "SUBJECT", "vip", "LIMIT", "9")
	h.do(t0, "RL.POLICY", "SET", "q", "LIMIT", "3", "PERIOD", "100", "ALGO", "sliding-log")
	p := h.e.Policies.Get([]byte("p"))
	good := encodePolicy(p)
	if d, err := decodePolicy(good); err != nil || d.Overrides["vip"] != (PolicyOverride{Limit: 9}) {
		t.Fatalf("decode: %+v %v", d, err)
	}
	base := strings.TrimSuffix(good, "1:13:vip1:91:0")
	if base == good {
		t.Fatalf("unexpected record %q", good)
	}
	for _, bad := range []string{
		base + "1:0",                       // a count of 0 is never written
		base + "1:13:vip1:01:0",            // limit 0
		base + "1:13:vip1:91:-1",           // negative period
		base + "1:23:vip1:91:03:vip1:91:0", // the same subject twice
		base + "4:2000",                    // over the bound
		base + "1:13:vip1:91:0x",           // trailing bytes
		base + "1:23:vip1:91:0",            // fewer than announced
		encodePolicy(h.e.Policies.Get([]byte("q"))) + "1:16:subj-q6:1000001:0", // a limit sliding-log refuses
	} {
		if _, err := decodePolicy(bad); err == nil {
			t.Errorf("decoded %q", bad)
		}
	}
	reg := encodeRegistry(&h.e.Policies)
	if _, err := decodeRegistry(reg); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(reg); i++ {
		if _, err := decodeRegistry(reg[:i]); err == nil {
			t.Errorf("decoded a registry cut at %d", i)
		}
	}
}

// Random sequences of registry changes and decisions under policies: the
// follower that applies every record keeps the executor's strict digest
// (which covers the registry: overrides, histories, live deadlines), and
// no reply is a panic's.
func TestPolicyRandomOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	names := []string{"a", "b", "c"}
	algos := []string{"gcra", "token-bucket", "fixed-window", "sliding-window", "sliding-log"}
	spec := func() []string {
		a := []string{"POLICY", names[rng.IntN(3)], "LIMIT", strconv.Itoa(1 + rng.IntN(5)), "PERIOD", strconv.Itoa(50 + rng.IntN(200)), "ALGO", algos[rng.IntN(len(algos))]}
		if rng.IntN(3) == 0 {
			a = append(a, "SHADOW")
		}
		if rng.IntN(2) == 0 {
			a = append(a, "RESETKEYS")
		}
		return a
	}
	ok := map[string]int{}
	for run := 0; run < 20; run++ {
		h := newEffHarness(t)
		now := t0
		var dump string
		for i := 0; i < 300; i++ {
			now += int64(rng.IntN(30))
			n := names[rng.IntN(3)]
			key := "k" + strconv.Itoa(rng.IntN(4))
			var args []string
			switch rng.IntN(10) {
			case 0:
				args = append([]string{"RL.POLICY", "SET"}, spec()[1:]...)
			case 1:
				args = []string{"RL.POLICY", "APPLY", "FORCE"}
				for k := rng.IntN(3); k >= 0; k-- {
					args = append(args, spec()...)
				}
			case 2:
				args = []string{"RL.POLICY", "OVERRIDE", n, "SUBJECT", key, "LIMIT", strconv.Itoa(1 + rng.IntN(9))}
				if rng.IntN(2) == 0 {
					args = append(args, "PERIOD", strconv.Itoa(10+rng.IntN(300)))
				}
			case 3:
				args = []string{"RL.POLICY", "UNOVERRIDE", n, "SUBJECT", key}
			case 4:
				args = []string{"RL.POLICY", "DEL", n, "FORCE"}
			case 5:
				if dump != "" {
					args = []string{"RL.POLICY", "RESTORE", dump, "REPLACE"}
				} else {
					args = []string{"RL.POLICY", "DUMP"}
				}
			case 6, 7:
				args = []string{"RL.ALLOWALL", "2", key, "POLICY", n, key + "x", "POLICY", names[rng.IntN(3)]}
			default:
				args = []string{"RL.ALLOW", key, "POLICY", n}
			}
			reply, _ := h.doReply(now, args...)
			if strings.Contains(reply, "panic") {
				t.Fatalf("%q: %s", args, reply)
			}
			if !strings.HasPrefix(reply, "!") {
				ok[args[0]+" "+args[1]]++
			}
			if args[1] == "DUMP" {
				dump = string(h.c.W.B[strings.Index(string(h.c.W.B), "\r\n")+2 : len(h.c.W.B)-2])
			}
		}
	}
	// each kind of change and decision succeeded often enough to matter
	t.Logf("successful calls: %v", ok)
	for _, k := range []string{"RL.POLICY SET", "RL.POLICY APPLY", "RL.POLICY OVERRIDE", "RL.POLICY UNOVERRIDE", "RL.POLICY DEL", "RL.POLICY RESTORE", "RL.ALLOWALL 2", "RL.ALLOW k0"} {
		if ok[k] < 20 {
			t.Errorf("only %d successful %s", ok[k], k)
		}
	}
}
