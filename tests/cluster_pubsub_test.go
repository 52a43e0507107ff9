package tests

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// clusterSub is a subscriber connection to one node: SUBSCRIBE news and
// PSUBSCRIBE __keyevent@0__:* (RESP2).
type clusterSub struct {
	t    *testing.T
	node int
	c    *Conn
}

func subscribeNode(t *testing.T, c *testCluster, i int) *clusterSub {
	t.Helper()
	conn := mustDial(t, c.addr(i))
	for _, cmd := range [][]string{{"SUBSCRIBE", "news"}, {"PSUBSCRIBE", "__keyevent@0__:*"}} {
		if r, err := conn.Do(cmd...); err != nil || !strings.Contains(string(r), strings.ToLower(cmd[0])) {
			t.Fatalf("%s on node %d: %q %v", cmd[0], i, r, err)
		}
	}
	return &clusterSub{t: t, node: i, c: conn}
}

// expect reads messages until every one of want (as "channel payload",
// the last two elements of a message or pmessage) has arrived once; a
// message seen twice is an error (a message is delivered at most once).
func (s *clusterSub) expect(want ...string) {
	s.t.Helper()
	need := map[string]bool{}
	for _, w := range want {
		need[w] = true
	}
	seen := map[string]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for len(need) > 0 {
		if time.Now().After(deadline) {
			s.t.Fatalf("node %d: still waiting for %v (got %v)", s.node, need, seen)
		}
		r, err := s.c.ReadReply()
		if err != nil {
			s.t.Fatalf("node %d: %v (still waiting for %v)", s.node, err, need)
		}
		parts := strings.Split(strings.TrimSuffix(string(r), "\r\n"), "\r\n")
		if len(parts) < 4 {
			continue
		}
		m := parts[len(parts)-3] + " " + parts[len(parts)-1]
		if seen[m] {
			s.t.Fatalf("node %d: %q delivered twice", s.node, m)
		}
		seen[m] = true
		delete(need, m)
	}
}

// TestClusterPubsub: a message published on any node of a 3-node cluster
// reaches the subscribers of every node, once; PUBLISH counts this
// node's receivers only (as Redis Cluster); a keyspace event of a write
// sent to a follower (executed on the leader) reaches every node; the
// same after the leader is killed, and the restarted node is reached
// again. Messages never enter the Raft log: a restarted node replays its
// log without delivering any again.
func TestClusterPubsub(t *testing.T) {
	c := mustCluster(t, 3)
	l := c.waitLeader(10 * time.Second)
	f := (l + 1) % 3
	// notifications are a cluster-wide setting: set on a follower
	cfg := mustDial(t, c.addr(f))
	if r, err := cfg.Do("CONFIG", "SET", "notify-keyspace-events", "E$g"); err != nil || string(r) != "+OK\r\n" {
		t.Fatalf("CONFIG SET on a follower: %q %v", r, err)
	}
	for i := range c.nodes {
		deadline := time.Now().Add(5 * time.Second)
		for {
			conn := mustDial(t, c.addr(i))
			r, _ := conn.Do("CONFIG", "GET", "notify-keyspace-events")
			conn.Close()
			if strings.Contains(string(r), "$E") || strings.Contains(string(r), "g$E") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d: notify-keyspace-events %q", i, r)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	subs := make([]*clusterSub, 3)
	for i := range subs {
		subs[i] = subscribeNode(t, c, i)
	}
	pub := func(i int, msg string) string {
		t.Helper()
		conn := mustDial(t, c.addr(i))
		defer conn.Close()
		r, err := conn.Do("PUBLISH", "news", msg)
		if err != nil {
			t.Fatal(err)
		}
		return string(r)
	}
	write := func(i int, args ...string) {
		t.Helper()
		conn := mustDial(t, c.addr(i))
		defer conn.Close()
		if r, err := conn.Do(args...); err != nil || r[0] == '-' {
			t.Fatalf("%q on node %d: %q %v", args, i, r, err)
		}
	}
	// the other nodes' subscribers are reached through the fanout
	// connections, which a node dials on its first message: give each
	// node's first message time, then require every delivery
	for i := range c.nodes {
		if r := pub(i, "hello from "+c.nodes[i].id); r != ":1\r\n" {
			t.Fatalf("PUBLISH on node %d: %q, want :1 (this node's subscriber)", i, r)
		}
	}
	for _, s := range subs {
		s.expect("news hello from n1", "news hello from n2", "news hello from n3")
	}
	// keyspace events of a write sent to a follower, executed on the leader
	write(f, "SET", "ck", "v")
	write(f, "DEL", "ck")
	for _, s := range subs {
		s.expect("__keyevent@0__:set ck", "__keyevent@0__:del ck")
	}
	// a PUBLISH inside a script on a follower runs on the leader
	write(f, "EVAL", "return redis.call('publish', 'news', 'from a script')", "0")
	for _, s := range subs {
		s.expect("news from a script")
	}

	// SUBSCRIBE inside MULTI on a follower: the block runs on the leader,
	// where the client has no connection; refused (limitdb's text)
	mc := mustDial(t, c.addr(f))
	for _, cmd := range [][]string{{"MULTI"}, {"SUBSCRIBE", "x"}, {"PUBLISH", "news", "in a block"}} {
		mc.Do(cmd...)
	}
	if r, err := mc.Do("EXEC"); err != nil || !strings.Contains(string(r), "cannot run on a cluster follower") || !strings.HasSuffix(string(r), ":1\r\n") {
		t.Fatalf("MULTI SUBSCRIBE PUBLISH EXEC on a follower: %q %v", r, err)
	}
	mc.Close()
	for _, s := range subs {
		s.expect("news in a block")
	}

	// kill the leader: the survivors keep exchanging messages, and a
	// write on the remaining follower still notifies both
	c.kill(l)
	nl := c.waitLeader(10 * time.Second)
	var alive []int
	for i := range c.nodes {
		if i != l {
			alive = append(alive, i)
		}
	}
	nf := alive[0]
	if nf == nl {
		nf = alive[1]
	}
	for _, i := range alive {
		pub(i, "after the kill from "+c.nodes[i].id)
	}
	write(nf, "INCR", "counter")
	for _, i := range alive {
		subs[i].expect("news after the kill from "+c.nodes[alive[0]].id, "news after the kill from "+c.nodes[alive[1]].id,
			"__keyevent@0__:incrby counter")
	}
	// what the killed node's subscribers missed is counted where it was
	// published (RAFT INFO, and /metrics from it)
	for _, i := range alive {
		deadline := time.Now().Add(10 * time.Second)
		for c.info(i)["raft_pubsub_batches_dropped"] == "0" || c.info(i)["raft_pubsub_batches_dropped"] == "" {
			if time.Now().After(deadline) {
				t.Fatalf("node %d published to a dead peer and counts no dropped batch: %v", i, c.info(i)["raft_pubsub_batches_dropped"])
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// the killed node comes back (replaying its log delivers nothing:
	// its new subscriber sees only what is published from now on)
	c.start(l)
	c.waitVoters(3, 20*time.Second)
	subs[l] = subscribeNode(t, c, l)
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; ; n++ {
		// the others reconnect to it within their redial pause
		pub(nl, "welcome back "+string(rune('a'+n)))
		r, err := readWithin(subs[l].c, 700*time.Millisecond)
		if err == nil {
			if !strings.Contains(string(r), "welcome back") {
				t.Fatalf("restarted node %d got %q first (a replayed message?)", l, r)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("restarted node %d never reached: %v", l, err)
		}
	}
}

// readWithin reads one reply, waiting at most d.
func readWithin(c *Conn, d time.Duration) ([]byte, error) {
	c.nc.SetReadDeadline(time.Now().Add(d))
	var out bytes.Buffer
	err := readValue(c.br, &out)
	return out.Bytes(), err
}
