package tests

import (
	"strings"
	"testing"
	"time"
)

// TestClusterPubsubUncertain: a write whose entry never commits publishes
// nothing. The leader's log cannot be written (DEBUG RAFT-FAIL-WRITES), so
// the entry of a pipelined SET ghost + PUBLISH news after-ghost is never
// stored or sent, the leader steps down and the client gets -UNCERTAIN;
// the others elect a leader whose log lacks the write. Subscribers on the
// old leader (local delivery) and on the followers (messages sent between
// nodes) must see neither the keyspace event of that SET nor the PUBLISH
// gated behind it, and do see the next committed write's. cluster/DESIGN.md,
// "Pub/Sub messages".
func TestClusterPubsubUncertain(t *testing.T) {
	c := mustCluster(t, 3)
	l := c.waitLeader(10 * time.Second)
	cfg := mustDial(t, c.addr(l))
	if r, err := cfg.Do("CONFIG", "SET", "notify-keyspace-events", "E$g"); err != nil || string(r) != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q %v", r, err)
	}
	for i := range c.nodes {
		if !eventually(5*time.Second, func() bool {
			cn, err := Dial(c.addr(i))
			if err != nil {
				return false
			}
			defer cn.Close()
			r, _ := cn.Do("CONFIG", "GET", "notify-keyspace-events")
			return strings.Contains(string(r), "$E") || strings.Contains(string(r), "g$E")
		}) {
			t.Fatalf("node %d: notify-keyspace-events not set", i)
		}
	}
	subs := make([]*clusterSub, 3)
	for i := range subs {
		subs[i] = subscribeNode(t, c, i)
	}
	// the subscribers are live: a committed write's event reaches each
	if r, err := cfg.Do("SET", "before", "1"); err != nil || string(r) != "+OK\r\n" {
		t.Fatalf("SET before: %q %v", r, err)
	}
	for _, s := range subs {
		s.expect("__keyevent@0__:set before")
	}

	if r, err := cfg.Do("DEBUG", "RAFT-FAIL-WRITES", "1"); err != nil || string(r) != "+OK\r\n" {
		t.Fatalf("DEBUG RAFT-FAIL-WRITES: %q %v", r, err)
	}
	defer func() {
		if cn, err := Dial(c.addr(l)); err == nil {
			cn.Do("DEBUG", "RAFT-FAIL-WRITES", "0")
			cn.Close()
		}
	}()
	if err := cfg.Send(append(Encode("SET", "ghost", "1"), Encode("PUBLISH", "news", "after-ghost")...)); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"SET", "PUBLISH"} {
		r, err := cfg.ReadReply()
		if err != nil || !strings.HasPrefix(string(r), "-") {
			t.Fatalf("%s on a leader whose log fails: %q %v, want an error (-UNCERTAIN)", cmd, r, err)
		}
		t.Logf("%s: %q", cmd, strings.TrimSpace(string(r)))
	}

	// a leader without the write, which commits the next one
	var nl int
	if !eventually(15*time.Second, func() bool { nl = c.leader(); return nl >= 0 && nl != l }) {
		t.Fatalf("no other leader after the old one's log failed\n%s", c.log(l))
	}
	w := mustDial(t, c.addr(nl))
	if r, err := w.Do("EXISTS", "ghost"); err != nil || string(r) != ":0\r\n" {
		t.Fatalf("EXISTS ghost on the new leader: %q %v (the write happened: the test checks nothing)", r, err)
	}
	if r, err := w.Do("SET", "after", "1"); err != nil || string(r) != "+OK\r\n" {
		t.Fatalf("SET after: %q %v", r, err)
	}
	if r, err := w.Do("PUBLISH", "news", "after-after"); err != nil || r[0] != ':' {
		t.Fatalf("PUBLISH: %q %v", r, err)
	}
	// each subscriber gets the committed write's event and message, and
	// nothing of the write that never happened before them
	for i, s := range subs {
		got := map[string]bool{}
		deadline := time.Now().Add(10 * time.Second)
		for !got["__keyevent@0__:set after"] || !got["news after-after"] {
			if time.Now().After(deadline) {
				t.Fatalf("node %d: the committed write's messages did not arrive (got %v)", i, got)
			}
			r, err := s.c.ReadReply()
			if err != nil {
				t.Fatalf("node %d: %v (got %v)", i, err, got)
			}
			parts := strings.Split(strings.TrimSuffix(string(r), "\r\n"), "\r\n")
			if len(parts) < 4 {
				continue
			}
			m := parts[len(parts)-3] + " " + parts[len(parts)-1]
			if strings.Contains(m, "ghost") {
				who := "a follower's"
				if i == l {
					who = "the old leader's"
				}
				t.Errorf("%s subscriber (node %d) got %q, of a write that never happened", who, i, m)
			}
			got[m] = true
		}
	}
}

// TestPubsubUncertainSingleNode: the same on a durable node of one (the
// default): a SET whose entry cannot be stored answers an error and its
// keyspace event reaches no subscriber; the next stored write's does.
func TestPubsubUncertainSingleNode(t *testing.T) {
	p := mustProc(t, "")
	p.waitServing()
	cn := mustDial(t, p.addr())
	for _, cmd := range [][]string{{"CONFIG", "SET", "notify-keyspace-events", "E$"}, {"SET", "before", "1"}} {
		if r, err := cn.Do(cmd...); err != nil || string(r) != "+OK\r\n" {
			t.Fatalf("%v: %q %v", cmd, r, err)
		}
	}
	sub := mustDial(t, p.addr())
	if r, err := sub.Do("PSUBSCRIBE", "__keyevent@0__:*"); err != nil || !strings.Contains(string(r), "psubscribe") {
		t.Fatalf("PSUBSCRIBE: %q %v", r, err)
	}
	if r, err := cn.Do("DEBUG", "RAFT-FAIL-WRITES", "1"); err != nil || string(r) != "+OK\r\n" {
		t.Fatalf("DEBUG RAFT-FAIL-WRITES: %q %v", r, err)
	}
	if r, err := cn.Do("SET", "ghost", "1"); err != nil || !strings.HasPrefix(string(r), "-") {
		t.Fatalf("SET while the log fails: %q %v, want an error", r, err)
	}
	cn.Do("DEBUG", "RAFT-FAIL-WRITES", "0")
	var r []byte
	if !eventually(10*time.Second, func() bool {
		r, _ = cn.Do("SET", "after", "1")
		return string(r) == "+OK\r\n"
	}) {
		t.Fatalf("writes not accepted again: %q", r)
	}
	for {
		m, err := sub.ReadReply()
		if err != nil {
			t.Fatalf("the stored write's event did not arrive: %v", err)
		}
		if strings.Contains(string(m), "ghost") {
			t.Fatalf("a subscriber got %q, of a write that was never stored", m)
		}
		if strings.Contains(string(m), "after") {
			break
		}
	}
}
