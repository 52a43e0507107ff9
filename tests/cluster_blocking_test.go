package tests

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestClusterBlocking: on a 3-node cluster, clients blocked on every node
// are served in the order they blocked (they all wait on the leader) by
// pushes sent to other nodes; a follower's CLIENT UNBLOCK and a blocked
// follower client that disconnects cancel the unit on the leader; a
// timeout is the leader's; and across a leader kill, clients blocked on
// the surviving followers are blocked again on the new leader, in their
// order, with nothing popped, while the one blocked on the killed leader
// is gone with it (cluster/DESIGN.md, "Blocking commands").
func TestClusterBlocking(t *testing.T) {
	c := mustCluster(t, 3)
	defer c.stopAll()
	l := c.waitLeader(10 * time.Second)
	f1, f2 := (l+1)%3, (l+2)%3
	dial := func(i int) *Conn { return mustDial(t, c.addr(i)) }
	send := func(cn *Conn, args ...string) {
		if err := cn.Send(Encode(args...)); err != nil {
			t.Fatal(err)
		}
	}
	read := func(cn *Conn, want string) {
		t.Helper()
		r, err := cn.ReadReply()
		if err != nil || string(r) != want {
			t.Fatalf("reply %q %v, want %q", r, err, want)
		}
	}
	do := func(i int, want string, args ...string) {
		t.Helper()
		cn := dial(i)
		r, err := cn.Do(args...)
		if err != nil || string(r) != want {
			t.Fatalf("%v on node %d: %q %v, want %q", args, i, r, err, want)
		}
		cn.Close()
	}
	waitBlocked := func(i, n int) {
		t.Helper()
		if err := waitBlockedClients(c.addr(i), n); err != nil {
			t.Fatalf("%v\n%s", err, c.log(i)) // (a loaded run once: 0, want 2 after the kill)
		}
	}

	// arrival order across nodes: f1, f2, the leader, f1 again
	a, b, d, e := dial(f1), dial(f2), dial(l), dial(f1)
	send(a, "BLPOP", "q", "0")
	waitBlocked(l, 1)
	send(b, "BLPOP", "q", "0")
	waitBlocked(l, 2)
	send(d, "BRPOP", "q", "0")
	waitBlocked(l, 3)
	send(e, "BLMPOP", "0", "1", "q", "LEFT", "COUNT", "2")
	waitBlocked(l, 4)
	waitBlocked(f1, 2)
	waitBlocked(f2, 1)
	do(f2, ":5\r\n", "RPUSH", "q", "1", "2", "3", "4", "5")
	read(a, "*2\r\n$1\r\nq\r\n$1\r\n1\r\n")
	read(b, "*2\r\n$1\r\nq\r\n$1\r\n2\r\n")
	read(d, "*2\r\n$1\r\nq\r\n$1\r\n5\r\n")
	read(e, "*2\r\n$1\r\nq\r\n*2\r\n$1\r\n3\r\n$1\r\n4\r\n")
	waitBlocked(l, 0)
	for i := range c.nodes {
		do(i, ":0\r\n", "EXISTS", "q") // every node applied the pops
	}

	// a BLMOVE on a follower feeds a BZPOPMIN-free chain: BLMOVE src →
	// dst serves a BLPOP on dst blocked on the other follower
	g, h := dial(f1), dial(f2)
	send(h, "BLPOP", "dst", "0")
	waitBlocked(l, 1)
	send(g, "BLMOVE", "src", "dst", "LEFT", "RIGHT", "0")
	waitBlocked(l, 2)
	do(l, ":1\r\n", "LPUSH", "src", "x")
	read(g, "$1\r\nx\r\n")
	read(h, "*2\r\n$3\r\ndst\r\n$1\r\nx\r\n")

	// the timeout is the leader's; a follower's client gets the null array
	t0 := time.Now()
	send(g, "BZPOPMIN", "z", "0.3")
	read(g, "*-1\r\n")
	if el := time.Since(t0); el < 250*time.Millisecond || el > 3*time.Second {
		t.Fatalf("BZPOPMIN with 0.3 s answered after %v", el)
	}

	// CLIENT UNBLOCK on the follower the client is connected to
	id := strings.TrimSuffix(strings.TrimPrefix(string(mustDo(t, g, "CLIENT", "ID")), ":"), "\r\n")
	send(g, "BLPOP", "u", "0")
	waitBlocked(l, 1)
	waitBlocked(f1, 1)
	do(f1, ":1\r\n", "CLIENT", "UNBLOCK", id, "ERROR")
	read(g, "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n")
	send(g, "BLPOP", "u", "0")
	waitBlocked(l, 1)
	waitBlocked(f1, 1) // the leader's word that it blocked reached f1
	do(f1, ":1\r\n", "CLIENT", "UNBLOCK", id)
	read(g, "*-1\r\n")
	waitBlocked(l, 0)

	// a blocked follower client that goes away is dropped on the leader:
	// the next push is not popped by it
	gone := dial(f2)
	send(gone, "BLPOP", "dropped", "0")
	waitBlocked(l, 1)
	gone.Close()
	waitBlocked(l, 0)
	waitBlocked(f2, 0)
	do(f1, ":1\r\n", "RPUSH", "dropped", "v")
	do(l, ":1\r\n", "LLEN", "dropped")

	// across a leader kill: clients blocked on the two followers (f2
	// first) are blocked again on the new leader, in that order
	p, q, r := dial(f2), dial(f1), dial(l)
	send(p, "BLPOP", "k", "0")
	waitBlocked(l, 1)
	send(q, "BRPOP", "k", "0")
	waitBlocked(l, 2)
	send(r, "BLPOP", "k", "0")
	waitBlocked(l, 3)
	c.kill(l)
	nl := c.waitLeader(15 * time.Second)
	waitBlocked(nl, 2)
	other := f1
	if nl == f1 {
		other = f2
	}
	do(other, ":2\r\n", "RPUSH", "k", "first", "second")
	read(p, "*2\r\n$1\r\nk\r\n$5\r\nfirst\r\n")
	read(q, "*2\r\n$1\r\nk\r\n$6\r\nsecond\r\n")
	if _, err := r.ReadReply(); err == nil {
		t.Fatal("the client of the killed leader got a reply")
	}
	do(nl, ":0\r\n", "EXISTS", "k")
	// a timeout on the new leader
	send(p, "BLPOP", "t", "1.5")
	waitBlocked(nl, 1)
	read(p, "*-1\r\n")
	ctx := context.Background()
	if n, err := c.cli(other).LLen(ctx, "dropped").Result(); err != nil || n != 1 {
		t.Fatalf("LLEN dropped on %d: %d %v", other, n, err)
	}
}
