package engine

import "testing"

// The Redis types' digests are compared with redis-server by the
// differential tests (tests/scenarios/server/debug.txt,
// TestDebugDigestGenerated). Limiters have no Redis counterpart: their
// digest must follow algorithm, parameters and state, and nothing else.
func TestLimiterDigest(t *testing.T) {
	digestOf := func(cmds ...[]string) string {
		h := newRL(2)
		for _, c := range cmds {
			h.do(t0, c...)
		}
		d := h.e.DatasetDigest()
		return d.Hex()
	}
	if got := digestOf(); got != "0000000000000000000000000000000000000000" {
		t.Fatalf("empty data set: %s", got)
	}
	seen := map[string]string{}
	for _, c := range [][]string{
		{"RL.ALLOW", "k", "10", "1000"},
		{"RL.ALLOW", "k", "10", "1000", "COST", "2"}, // other state
		{"RL.ALLOW", "k", "10", "2000"},              // other period
		{"RL.ALLOW", "k", "11", "1000"},              // other limit
		{"RL.ALLOW", "k", "10", "1000", "ALGO", "token-bucket"},
		{"RL.ALLOW", "k", "10", "1000", "ALGO", "sliding-log"},
		{"RL.ALLOW", "k", "10", "1000", "ALGO", "sliding-window"},
		{"RL.ALLOW", "j", "10", "1000"}, // other key
	} {
		d := digestOf(c)
		if d != digestOf(c) {
			t.Fatalf("%q: digest not deterministic", c)
		}
		if prev, dup := seen[d]; dup {
			t.Fatalf("%q and %q digest alike (%s)", prev, c, d)
		}
		seen[d] = c[1] + " " + c[2] + " " + c[3]
	}
	// the sliding log's times count, in order
	a := digestOf([]string{"RL.ALLOW", "k", "10", "1000", "ALGO", "sliding-log"})
	h := newRL(2)
	h.do(t0, "RL.ALLOW", "k", "10", "1000", "ALGO", "sliding-log")
	h.do(t0+1, "RL.ALLOW", "k", "10", "1000", "ALGO", "sliding-log")
	if d := h.e.DatasetDigest(); d.Hex() == a {
		t.Fatal("a second logged request left the digest unchanged")
	}
	// DIGEST-VALUE of a missing key is zero; of a limiter, not
	if d := h.e.DBs[0].ValueDigest("nope"); d != (Digest{}) {
		t.Fatal("missing key has a digest")
	}
	if d := h.e.DBs[0].ValueDigest("k"); d == (Digest{}) {
		t.Fatal("limiter value digest is zero")
	}
}
