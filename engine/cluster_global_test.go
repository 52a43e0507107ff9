package engine

import (
	"strconv"
	"strings"
	"testing"
)

// TestGlobalStampLoad: the directory's content stamped, loaded by a
// member group (its follower applying the same record: the harness
// compares strict digests), which then holds the same content; an older
// or equal version, or malformed content, changes nothing; a member's
// live deadlines survive a load; the version travels in snapshots and
// Reset empties it.
func TestGlobalStampLoad(t *testing.T) {
	dir := newEffHarness(t)
	dir.do(1000, "RL.POLICY", "SET", "p", "LIMIT", "5", "PERIOD", "60000")
	dir.do(1000, "RL.POLICY", "OVERRIDE", "p", "vip", "LIMIT", "50", "PERIOD", "60000")
	dir.do(1000, "LIMITDB.CONFIG", "hash-max-listpack-entries", "77")
	content, digest := dir.a.GlobalContent()
	if eff := dir.do(1000, "LIMITDB.GLOBAL", "STAMP", strconv.FormatUint(digest, 10)); !strings.HasPrefix(eff, "LIMITDB.GLOBAL STAMP") {
		t.Fatalf("STAMP's effect: %q", eff)
	}
	if g := dir.a.GlobalOf(); g.Ver != 1 || g.Digest != digest || dir.b.GlobalOf() != g {
		t.Fatalf("after STAMP: %+v, follower %+v", g, dir.b.GlobalOf())
	}

	m := newEffHarness(t)
	m.do(2000, "RL.POLICY", "SET", "own", "LIMIT", "1", "PERIOD", "1000")
	load := func(ver int64, c string) (string, string) {
		return m.doReply(3000, "LIMITDB.GLOBAL", "LOAD", strconv.FormatInt(ver, 10), c)
	}
	if r, eff := load(1, content); r != "1" || eff == "" {
		t.Fatalf("LOAD 1: %q, effects %q", r, eff)
	}
	if _, d := m.a.GlobalContent(); d != digest {
		t.Fatal("the member's content after LOAD is not the directory's")
	}
	if m.a.Policies.Get([]byte("own")) != nil || m.a.Enc.HashMaxListpackEntries != 77 {
		t.Fatalf("LOAD left the member's own policy or parameters: %v %d", m.a.Policies.Names(), m.a.Enc.HashMaxListpackEntries)
	}
	before := m.a.StrictDigest()
	for _, c := range []struct {
		ver     int64
		content string
		reply   string
	}{
		{1, content, "1"},
		{1, "garbage", "1"},
		{2, "garbage", "!ERR LIMITDB.GLOBAL LOAD content is malformed"},
		{0, content, "!ERR LIMITDB.GLOBAL version must be a positive integer"},
	} {
		if r, _ := load(c.ver, c.content); r != c.reply {
			t.Fatalf("LOAD %d %.10q: %q, want %q", c.ver, c.content, r, c.reply)
		}
	}
	if m.a.StrictDigest() != before {
		t.Fatal("a refused or stale LOAD changed the state")
	}

	// the member's keys under p keep its live deadline across a load
	m.do(4000, "RL.ALLOW", "k", "POLICY", "p")
	live := m.a.Policies.Get([]byte("p")).LiveUntil
	if live <= 4000 {
		t.Fatalf("RL.ALLOW under p left live_until %d", live)
	}
	dir.do(5000, "RL.POLICY", "SET", "p", "LIMIT", "6", "PERIOD", "60000")
	content, digest = dir.a.GlobalContent()
	dir.do(5000, "LIMITDB.GLOBAL", "STAMP", strconv.FormatUint(digest, 10))
	if r, _ := load(2, content); r != "2" {
		t.Fatalf("LOAD 2: %q", r)
	}
	if p := m.a.Policies.Get([]byte("p")); p.Params.Limit != 6 || p.LiveUntil != live {
		t.Fatalf("after LOAD 2: limit %d live_until %d, want 6 and %d", p.Params.Limit, p.LiveUntil, live)
	}

	n := New()
	snapshotInto(t, m.a, n)
	if n.GlobalOf() != m.a.GlobalOf() || n.StrictDigest() != m.a.StrictDigest() {
		t.Fatalf("snapshot: %+v, want %+v (or the digests differ)", n.GlobalOf(), m.a.GlobalOf())
	}
	if err := n.Reset(nil); err != nil || n.GlobalOf() != (Global{}) {
		t.Fatalf("Reset: %v, %+v", err, n.GlobalOf())
	}
}

// TestGlobalLive: LIMITDB.GLOBAL LIVE raises the named policies' live
// deadlines, never lowers them, skips unknown names; LiveRaises is the
// part of a report that would raise them.
func TestGlobalLive(t *testing.T) {
	h := newEffHarness(t)
	h.do(1000, "RL.POLICY", "SET", "a", "LIMIT", "5", "PERIOD", "60000")
	h.do(1000, "RL.POLICY", "SET", "b", "LIMIT", "5", "PERIOD", "60000")
	report := []PolicyLive{{"a", 9000}, {"b", 0}, {"gone", 9000}}
	args := h.a.LiveRaises(report)
	if len(args) != 2 || string(args[0]) != "a" || string(args[1]) != "9000" {
		t.Fatalf("LiveRaises: %q", args)
	}
	if r, eff := h.doReply(2000, "LIMITDB.GLOBAL", "LIVE", "a", "9000", "gone", "5"); r != "OK" || eff == "" {
		t.Fatalf("LIVE: %q, effects %q", r, eff)
	}
	if r, eff := h.doReply(2000, "LIMITDB.GLOBAL", "LIVE", "a", "8000"); r != "OK" || eff != "" {
		t.Fatalf("LIVE lower: %q, effects %q (want none)", r, eff)
	}
	if got := h.a.Policies.Get([]byte("a")).LiveUntil; got != 9000 {
		t.Fatalf("a's live deadline %d, want 9000", got)
	}
	if l := h.a.LiveDeadlines(); len(l) != 1 || l[0] != (PolicyLive{"a", 9000}) {
		t.Fatalf("LiveDeadlines: %v", l)
	}
	if r, _ := h.doReply(2000, "LIMITDB.GLOBAL", "LIVE", "a", "x"); r != "!ERR syntax error" {
		t.Fatalf("LIVE a x: %q", r)
	}
}
