package engine

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// respText renders a RESP2 reply compactly for the tables below: integers
// and bulk strings as they are, arrays as [a b …], nil as nil, errors as
// "!message".
func respText(t *testing.T, b []byte) string {
	t.Helper()
	var out strings.Builder
	rest := respTextOne(t, b, &out)
	if len(rest) != 0 {
		t.Fatalf("trailing bytes after reply: %q", rest)
	}
	return out.String()
}

func respTextOne(t *testing.T, b []byte, out *strings.Builder) []byte {
	t.Helper()
	i := bytes.Index(b, []byte("\r\n"))
	if i < 1 {
		t.Fatalf("bad reply %q", b)
	}
	line, rest := string(b[1:i]), b[i+2:]
	switch b[0] {
	case ':', '+':
		out.WriteString(line)
	case '-':
		out.WriteString("!" + line)
	case '$':
		n, _ := strconv.Atoi(line)
		if n < 0 {
			out.WriteString("nil")
			return rest
		}
		out.Write(rest[:n])
		return rest[n+2:]
	case '*':
		n, _ := strconv.Atoi(line)
		if n < 0 {
			out.WriteString("nil")
			return rest
		}
		out.WriteByte('[')
		for j := 0; j < n; j++ {
			if j > 0 {
				out.WriteByte(' ')
			}
			rest = respTextOne(t, rest, out)
		}
		out.WriteByte(']')
	default:
		t.Fatalf("bad reply %q", b)
	}
	return rest
}

// doReply runs args at now on the effects harness (its record applied to
// the follower engine, whose strict digest must equal the executor's) and
// returns the reply as respText and the effects.
func (h *effHarness) doReply(now int64, args ...string) (reply, effects string) {
	h.t.Helper()
	effects = h.do(now, args...)
	return respText(h.t, h.c.W.B), effects
}

func ms(n int64) string { return strconv.FormatInt(n, 10) }

// The RL.POLICY commands' replies, errors and effects, in order on one
// engine (a follower applies each effect: TestPolicy checks the two
// digests after every change).
func TestPolicyCommands(t *testing.T) {
	h := newEffHarness(t)
	put := func(name string, v, created, updated int64, rest string) string {
		return "LIMITDB.POLICY PUT " + name + " " + ms(v) + " " + ms(created) + " " + ms(updated) + " default " + rest
	}
	getMap := func(name, params string, v, created, updated, reset, live int64) string {
		return "[name " + name + " " + params + " version " + ms(v) + " created_ms " + ms(created) + " updated_ms " + ms(updated) +
			" updated_by default reset_ms " + ms(reset) + " live_until_ms " + ms(live) + " overrides 0]"
	}
	for _, c := range []struct {
		now     int64
		args    string
		reply   string
		effects string
	}{
		// creation, validation
		{t0, "RL.POLICY SET api LIMIT 10 PERIOD 1000", "1", put("api", 1, t0, t0, "gcra 10 1000 0 0 0.8 0 ")},
		{t0, "RL.POLICY GET api", getMap("api", "algo gcra limit 10 period_ms 1000 burst 0 shadow 0 near 0.8 desc ", 1, t0, t0, 0, 0), ""},
		{t0, "RL.POLICY GET nope", "nil", ""},
		{t0, "RL.POLICY SET api LIMIT 10", "!ERR RL.POLICY SET needs LIMIT and PERIOD", ""},
		{t0, "RL.POLICY SET api LIMIT 0 PERIOD 1000", "!ERR limit must be a positive integer", ""},
		{t0, "RL.POLICY SET api LIMIT 10 PERIOD -1", "!ERR period must be a positive integer (milliseconds)", ""},
		{t0, "RL.POLICY SET api LIMIT 10 PERIOD 1000 BURST x", "!ERR burst must be a non-negative integer", ""},
		{t0, "RL.POLICY SET api LIMIT 10 PERIOD 1000 ALGO nope", "!" + errRLAlgo, ""},
		{t0, "RL.POLICY SET api LIMIT 10 PERIOD 1000 ALGO fixed-window BURST 2", "!ERR BURST is only supported by gcra, token-bucket and leaky-bucket", ""},
		{t0, "RL.POLICY SET api LIMIT 100000 PERIOD 1000 ALGO sliding-log", "!ERR limit, burst or period is too large for this algorithm", ""},
		{t0, "RL.POLICY SET api LIMIT 10 PERIOD 1000 NEAR 0", "!" + errPolicyNear, ""},
		{t0, "RL.POLICY SET api LIMIT 10 PERIOD 1000 NEAR 1.5", "!" + errPolicyNear, ""},
		{t0, "RL.POLICY SET api LIMIT 10 PERIOD 1000 NEAR nan", "!" + errPolicyNear, ""},
		{t0, "RL.POLICY SET api LIMIT 10 PERIOD 1000 IFVERSION -1", "!" + errPolicyVersion, ""},
		{t0, "RL.POLICY SET api LIMIT 10 PERIOD 1000 DESC", "!ERR syntax error", ""},
		{t0, "RL.POLICY SET api LIMIT 10 PERIOD 1000 COLOR red", "!ERR syntax error", ""},
		{t0, "RL.POLICY SET " + strings.Repeat("n", 129) + " LIMIT 10 PERIOD 1000", "!" + errPolicyName, ""},
		{t0, "RL.POLICY SET api LIMIT 10 PERIOD 1000 DESC " + strings.Repeat("d", 1025), "!" + errPolicyDesc, ""},
		// compare-and-set
		{t0 + 1, "RL.POLICY SET api LIMIT 20 PERIOD 1000 BURST 5 NEAR 0.9 DESC public IFVERSION 1", "2", put("api", 2, t0, t0+1, "gcra 20 1000 5 0 0.9 0 public")},
		{t0 + 2, "RL.POLICY SET api LIMIT 30 PERIOD 1000 IFVERSION 1", "!ERR version mismatch: policy 'api' is at version 2, IFVERSION 1 (nothing changed)", ""},
		{t0 + 2, "RL.POLICY SET web LIMIT 5 PERIOD 60000 ALGO sliding-window IFVERSION 3", "!ERR version mismatch: policy 'web' is at version 0, IFVERSION 3 (nothing changed)", ""},
		{t0 + 2, "RL.POLICY SET web LIMIT 5 PERIOD 60000 ALGO sliding-window SHADOW IFVERSION 0", "3", put("web", 3, t0+2, t0+2, "sliding-window 5 60000 0 1 0.8 0 ")},
		{t0 + 3, "RL.POLICY SET web LIMIT 5 PERIOD 60000 IFVERSION 0", "!ERR version mismatch: policy 'web' is at version 3, IFVERSION 0 (nothing changed)", ""},
		{t0, "RL.POLICY LIST", "[api web]", ""},
		{t0, "RL.POLICY LIST MATCH w*", "[web]", ""},
		{t0, "RL.POLICY LIST MATCH", "!ERR syntax error", ""},
		{t0, "RL.POLICY HISTORY api", "[[version 2 updated_ms " + ms(t0+1) + " updated_by default algo gcra limit 20 period_ms 1000 burst 5 shadow 0 near 0.9 desc public resetkeys 0]" +
			" [version 1 updated_ms " + ms(t0) + " updated_by default algo gcra limit 10 period_ms 1000 burst 0 shadow 0 near 0.8 desc  resetkeys 0]]", ""},
		{t0, "RL.POLICY HISTORY api COUNT 1", "[[version 2 updated_ms " + ms(t0+1) + " updated_by default algo gcra limit 20 period_ms 1000 burst 5 shadow 0 near 0.9 desc public resetkeys 0]]", ""},
		{t0, "RL.POLICY HISTORY api COUNT 0", "!" + errPolicyCount, ""},
		{t0, "RL.POLICY HISTORY nope", "!ERR no such policy 'nope'", ""},
		// decisions under a policy
		{t0 + 10, "RL.ALLOW k POLICY api", "[allowed 1 limit 25 remaining 24 retry_after_ms -1 reset_after_ms 50 policy api version 2 shadow_denied 0]",
			"RL.SET k gcra 20 1000 5 " + ms((t0+60)*1e6) + " 0 " + ms(t0+60) + " POLICY api"},
		{t0 + 10, "RL.PEEK k POLICY api COST 3", "[allowed 1 limit 25 remaining 24 retry_after_ms -1 reset_after_ms 50 policy api version 2 shadow_denied 0]", ""},
		{t0 + 10, "RL.ALLOW k POLICY api COST 26", "!ERR cost exceeds the limiter's capacity", ""},
		{t0 + 10, "RL.ALLOW k POLICY api COST 0", "!ERR cost must be a positive integer", ""},
		{t0 + 10, "RL.ALLOW k POLICY api LIMIT 3", "!ERR syntax error", ""},
		{t0 + 10, "RL.ALLOW k POLICY nope", "!ERR no such policy 'nope'", ""},
		{t0 + 10, "RL.PEEK k POLICY nope", "!ERR no such policy 'nope'", ""},
		{t0 + 10, "RL.POLICY GET api", getMap("api", "algo gcra limit 20 period_ms 1000 burst 5 shadow 0 near 0.9 desc public", 2, t0, t0+1, 0, t0+60), ""},
		// an ALGO change while keys may be live needs RESETKEYS
		{t0 + 20, "RL.POLICY SET api LIMIT 20 PERIOD 1000 ALGO token-bucket", "!ERR policy 'api' may have live keys of algorithm gcra: changing ALGO needs RESETKEYS", ""},
		{t0 + 20, "RL.POLICY SET api LIMIT 20 PERIOD 1000 BURST 0", "4", put("api", 4, t0, t0+20, "gcra 20 1000 0 0 0.8 0 ")},
		{t0 + 20, "RL.ALLOW k POLICY api", "[allowed 1 limit 20 remaining 18 retry_after_ms -1 reset_after_ms 90 policy api version 4 shadow_denied 0]",
			"RL.SET k gcra 20 1000 0 " + ms((t0+110)*1e6) + " 0 " + ms(t0+110) + " POLICY api"},
		{t0 + 30, "RL.POLICY SET api LIMIT 20 PERIOD 1000 ALGO token-bucket RESETKEYS", "5", put("api", 5, t0, t0+30, "token-bucket 20 1000 0 0 0.8 1 ")},
		{t0 + 30, "RL.PEEK k POLICY api", "[allowed 1 limit 20 remaining 20 retry_after_ms -1 reset_after_ms 0 policy api version 5 shadow_denied 0]", ""},
		{t0 + 30, "RL.ALLOW k POLICY api", "[allowed 1 limit 20 remaining 19 retry_after_ms -1 reset_after_ms 1000 policy api version 5 shadow_denied 0]",
			"RL.SET k token-bucket 20 1000 0 1 " + ms(t0+30) + " " + ms(t0+1030) + " POLICY api"},
		{t0 + 30, "RL.ALLOW k 20 1000", "!" + errRLMismatch, ""},
		// shadow: decided as enforced, reported allowed
		{t0 + 40, "RL.POLICY SET one LIMIT 1 PERIOD 1000", "6", put("one", 6, t0+40, t0+40, "gcra 1 1000 0 0 0.8 0 ")},
		{t0 + 40, "RL.ALLOW s POLICY one SHADOW", "[allowed 1 limit 1 remaining 0 retry_after_ms -1 reset_after_ms 1000 policy one version 6 shadow_denied 0]",
			"RL.SET s gcra 1 1000 0 " + ms((t0+1040)*1e6) + " 0 " + ms(t0+1040) + " POLICY one"},
		{t0 + 41, "RL.ALLOW s POLICY one SHADOW", "[allowed 1 limit 1 remaining 0 retry_after_ms -1 reset_after_ms 999 policy one version 6 shadow_denied 1]", ""},
		{t0 + 41, "RL.ALLOW s POLICY one", "[allowed 0 limit 1 remaining 0 retry_after_ms 999 reset_after_ms 999 policy one version 6 shadow_denied 0]", ""},
		{t0 + 41, "RL.PEEK s POLICY one SHADOW", "[allowed 1 limit 1 remaining 0 retry_after_ms -1 reset_after_ms 999 policy one version 6 shadow_denied 1]", ""},
		// deletion
		{t0 + 50, "RL.POLICY DEL api IFVERSION 4", "!ERR version mismatch: policy 'api' is at version 5, IFVERSION 4 (nothing changed)", ""},
		{t0 + 50, "RL.POLICY DEL api", "!ERR policy 'api' may have live keys until " + ms(t0+1030) + " (unix ms): delete it with FORCE", ""},
		{t0 + 50, "RL.POLICY DEL api IFVERSION 5 FORCE", "1", "LIMITDB.POLICY DEL api"},
		{t0 + 50, "RL.POLICY DEL api", "0", ""},
		{t0 + 50, "RL.POLICY DEL api NOW", "!ERR syntax error", ""},
		{t0 + 50, "RL.ALLOW k POLICY api", "!ERR no such policy 'api'", ""},
		{t0 + 2000, "RL.POLICY DEL web", "1", "LIMITDB.POLICY DEL web"},
		// not user keys: FLUSHALL leaves the registry, DBSIZE and KEYS do not see it
		{t0 + 2000, "FLUSHALL", "OK", "FLUSHALL"},
		{t0 + 2000, "DBSIZE", "0", ""},
		{t0 + 2000, "KEYS *", "[]", ""},
		{t0 + 2000, "RL.POLICY LIST", "[one]", ""},
		{t0 + 2000, "RL.POLICY SET api LIMIT 1 PERIOD 10", "7", put("api", 7, t0+2000, t0+2000, "gcra 1 10 0 0 0.8 0 ")},
		{t0 + 2000, "RL.POLICY HISTORY api", "[[version 7 updated_ms " + ms(t0+2000) + " updated_by default algo gcra limit 1 period_ms 10 burst 0 shadow 0 near 0.8 desc  resetkeys 0]]", ""},
		// the effect forms refuse what no executor writes
		{t0 + 2000, "LIMITDB.POLICY PUT x 0 1 1 u gcra 1 10 0 0 0.8 0 d", "!" + errPolicyEffect, ""},
		{t0 + 2000, "LIMITDB.POLICY PUT x 9 1 1 u gcra 1 10 0 2 0.8 0 d", "!" + errPolicyEffect, ""},
		{t0 + 2000, "LIMITDB.POLICY DEL x", "!ERR no such policy 'x'", ""},
	} {
		reply, effects := h.doReply(c.now, strings.Fields(c.args)...)
		if c.args == "RL.POLICY SET api LIMIT 10 PERIOD 1000 DESC "+strings.Repeat("d", 1025) {
			c.args = "RL.POLICY SET … DESC <1025 bytes>"
		}
		if reply != c.reply || effects != c.effects {
			t.Errorf("%s\n reply   %s\n want    %s\n effects %q\n want    %q", c.args, reply, c.reply, effects, c.effects)
		}
	}
}

// The RESP3 reply of RL.POLICY GET is a map, as RL.INFO's.
func TestPolicyGetRESP3(t *testing.T) {
	h := newRL(3)
	h.do(t0, "RL.POLICY", "SET", "p", "LIMIT", "3", "PERIOD", "100")
	if got := h.do(t0, "RL.POLICY", "GET", "p"); !strings.HasPrefix(got, "%15\r\n$4\r\nname\r\n$1\r\np\r\n") {
		t.Fatalf("RESP3 GET: %q", got)
	}
	if got := h.do(t0, "RL.ALLOW", "k", "POLICY", "p"); !strings.HasPrefix(got, "%8\r\n") {
		t.Fatalf("RESP3 RL.ALLOW … POLICY: %q", got)
	}
}

// Shadow mode decides exactly as enforcement: the same request stream
// against an enforcing and a shadow policy gives the same decisions (the
// shadow one reporting each refusal as shadow_denied) and the same state.
func TestPolicyShadowMatchesEnforcing(t *testing.T) {
	for _, algo := range []string{"gcra", "token-bucket", "leaky-bucket", "fixed-window", "sliding-window", "sliding-log"} {
		h := newRL(2)
		h.do(t0, "RL.POLICY", "SET", "enf", "LIMIT", "5", "PERIOD", "200", "ALGO", algo)
		h.do(t0, "RL.POLICY", "SET", "sh", "LIMIT", "5", "PERIOD", "200", "ALGO", algo, "SHADOW")
		rng := rand.New(rand.NewPCG(3, 4))
		now := t0
		for i := 0; i < 2000; i++ {
			now += int64(rng.IntN(30))
			cost := strconv.Itoa(1 + rng.IntN(3))
			enf := h.do(now, "RL.ALLOW", "a", "POLICY", "enf", "COST", cost)
			sh := h.do(now, "RL.ALLOW", "b", "POLICY", "sh", "COST", cost)
			refused := strings.Contains(enf, "allowed\r\n:0")
			if refused != strings.Contains(sh, "shadow_denied\r\n:1") || strings.Contains(sh, "allowed\r\n:0") {
				t.Fatalf("%s call %d: enforcing %q, shadow %q", algo, i, enf, sh)
			}
			ia, ib := h.do(now, "RL.INFO", "a"), h.do(now, "RL.INFO", "b")
			if ia != ib {
				t.Fatalf("%s call %d: states differ: %q vs %q", algo, i, ia, ib)
			}
		}
	}
}

// A policy change applies to a live key at its next call under the
// inline form's rules: the same replies as RL.ALLOW with the new numbers.
func TestPolicyChangeMatchesInline(t *testing.T) {
	h := newRL(2)
	rng := rand.New(rand.NewPCG(5, 6))
	now := t0
	limit, period, burst := 10, 1000, 0
	set := func() {
		h.do(now, "RL.POLICY", "SET", "p", "LIMIT", strconv.Itoa(limit), "PERIOD", strconv.Itoa(period), "BURST", strconv.Itoa(burst))
	}
	set()
	for i := 0; i < 3000; i++ {
		now += int64(rng.IntN(40))
		if rng.IntN(20) == 0 {
			limit, period, burst = 1+rng.IntN(20), 100+rng.IntN(2000), rng.IntN(5)
			set()
		}
		pol := h.do(now, "RL.ALLOW", "a", "POLICY", "p")
		inl := h.do(now, "RL.ALLOW", "b", strconv.Itoa(limit), strconv.Itoa(period), "BURST", strconv.Itoa(burst))
		if j := strings.Index(pol, "$6\r\npolicy"); j < 0 || "*10"+pol[3:j] != inl {
			t.Fatalf("call %d: policy %q, inline %q", i, pol, inl)
		}
	}
}

// Random policy changes and decisions, each unit's record applied to a
// follower: the strict digests (which cover the registry) stay equal.
func TestPolicyReplay(t *testing.T) {
	h := newEffHarness(t)
	rng := rand.New(rand.NewPCG(7, 8))
	algos := []string{"gcra", "token-bucket", "fixed-window", "sliding-log"}
	now := t0
	for i := 0; i < 3000; i++ {
		now += int64(rng.IntN(20))
		name := "p" + strconv.Itoa(rng.IntN(3))
		switch r := rng.IntN(10); {
		case r < 2:
			args := []string{"RL.POLICY", "SET", name, "LIMIT", strconv.Itoa(1 + rng.IntN(5)), "PERIOD", strconv.Itoa(50 + rng.IntN(200)), "ALGO", algos[rng.IntN(len(algos))]}
			if rng.IntN(2) == 0 {
				args = append(args, "RESETKEYS")
			}
			if rng.IntN(3) == 0 {
				args = append(args, "SHADOW")
			}
			h.do(now, args...)
		case r < 3:
			h.do(now, "RL.POLICY", "DEL", name, "FORCE")
		default:
			h.do(now, "RL.ALLOW", "k"+strconv.Itoa(rng.IntN(4)), "POLICY", name)
		}
	}
	if h.a.Policies.Len() == 0 {
		t.Fatal("no policies left at the end")
	}
}

// A snapshot carries the registry (history, live deadlines, the version
// counter, binary names and descriptions); a reset empties it.
func TestPolicySnapshotRoundTrip(t *testing.T) {
	h := newRL(2)
	h.do(t0, "RL.POLICY", "SET", "a\x00b", "LIMIT", "3", "PERIOD", "100", "DESC", "x:1:\r\n\xff")
	for i := 0; i < PolicyHistoryMax+3; i++ {
		h.do(t0+int64(i), "RL.POLICY", "SET", "b", "LIMIT", strconv.Itoa(1+i), "PERIOD", "1000", "NEAR", "0.25")
	}
	h.do(t0+50, "RL.ALLOW", "k", "POLICY", "b")
	h.do(t0+60, "RL.POLICY", "DEL", "a\x00b", "FORCE")
	h.do(t0+60, "RL.POLICY", "SET", "c", "LIMIT", "3", "PERIOD", "100", "ALGO", "sliding-log", "SHADOW", "RESETKEYS")
	if n := len(h.e.Policies.Get([]byte("b")).History); n != PolicyHistoryMax {
		t.Fatalf("history of %d changes", n)
	}
	e2 := New()
	snapshotInto(t, h.e, e2)
	if a, b := h.e.StrictDigest(), e2.StrictDigest(); a != b {
		t.Fatal("strict digests differ after a snapshot round trip")
	}
	for _, n := range h.e.Policies.Names() {
		if a, b := encodePolicy(h.e.Policies.Get([]byte(n))), encodePolicy(e2.Policies.Get([]byte(n))); a != b {
			t.Fatalf("policy %q: %q after loading, %q before", n, b, a)
		}
	}
	if e2.Policies.Version != h.e.Policies.Version || e2.Policies.Len() != 2 {
		t.Fatalf("version %d, %d policies", e2.Policies.Version, e2.Policies.Len())
	}
	if err := e2.Reset(nil); err != nil || e2.Policies.Len() != 0 || e2.Policies.Version != 0 {
		t.Fatalf("after Reset: %v, %d policies, version %d", err, e2.Policies.Len(), e2.Policies.Version)
	}
}

// A record that is not what encodePolicy writes fails the load.
func TestPolicyRecordHostile(t *testing.T) {
	h := newRL(2)
	h.do(t0, "RL.POLICY", "SET", "p", "LIMIT", "3", "PERIOD", "100")
	good := encodePolicy(h.e.Policies.Get([]byte("p")))
	if _, err := decodePolicy(good); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		"", good[:len(good)-1], good + "0:", "99999999999:x", "1:p",
		strings.Replace(good, "4:gcra", "4:cell", 1),
		strings.Replace(good, "1:3", "1:0", 1), // limit 0
		strings.Replace(good, "3:0.8", "3:1.8", 1),
	} {
		if _, err := decodePolicy(bad); err == nil {
			t.Errorf("decoded %q", bad)
		}
	}
}
