package tests

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// WATCH across leadership changes (issue 18): an EXEC whose watched keys
// may have changed aborts with a null reply, as Redis's does, whichever
// node the WATCH was taken on and wherever the EXEC runs. The WATCH
// belongs to one leadership (cluster/DESIGN.md, "Followers serve
// clients"): an EXEC under another aborts.

// pause stops node i's process (SIGSTOP: a paused VM, a starved host) and
// returns the function that continues it (SIGCONT), which the test's end
// also calls.
func (c *testCluster) pause(i int) (resume func()) {
	c.t.Helper()
	pid := c.nodes[i].cmd.Process.Pid
	resume = sync.OnceFunc(func() { syscall.Kill(pid, syscall.SIGCONT) })
	c.t.Cleanup(resume)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		c.t.Fatal(err)
	}
	return resume
}

// serving returns the node other than those in skip that leads and
// serves, or -1 (the skipped ones are paused: their RAFT INFO would wait).
func (c *testCluster) serving(skip ...int) int {
next:
	for i := range c.nodes {
		for _, s := range skip {
			if i == s {
				continue next
			}
		}
		if m := c.info(i); m["raft_state"] == "leader" && m["raft_serving"] == "1" {
			return i
		}
	}
	return -1
}

// waitServing waits up to d for a node other than skip to lead and serve.
func (c *testCluster) waitServing(d time.Duration, skip ...int) int {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if l := c.serving(skip...); l >= 0 {
			return l
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("no node other than %v serving within %v", skip, d)
	return -1
}

// waitFollowing waits up to d until node i knows it follows a leader.
func (c *testCluster) waitFollowing(i int, d time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if m := c.info(i); m["raft_state"] == "follower" && m["raft_serving"] == "0" && m["raft_leader_id"] != "" {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("%s does not follow a leader within %v", c.nodes[i].id, d)
}

// expect sends args on cn and fails unless the raw reply is want.
func expect(t *testing.T, cn *Conn, want string, args ...string) {
	t.Helper()
	got, err := cn.Do(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if string(got) != want {
		t.Fatalf("%v: got %q, want %q", args, got, want)
	}
}

// casExec runs MULTI, SET key val, EXEC on cn and returns EXEC's raw
// reply ("*-1\r\n" when it aborted).
func casExec(t *testing.T, cn *Conn, key, val string) string {
	t.Helper()
	expect(t, cn, "+OK\r\n", "MULTI")
	expect(t, cn, "+QUEUED\r\n", "SET", key, val)
	got, err := cn.Do("EXEC")
	if err != nil {
		t.Fatalf("EXEC: %v", err)
	}
	return string(got)
}

// expectEverywhere waits until every node has applied the leader's
// commit index and checks key's value on each (READONLY: what it holds).
func expectEverywhere(t *testing.T, c *testCluster, key, want string) {
	t.Helper()
	c.waitCaughtUp(30 * time.Second)
	for i := range c.nodes {
		cn := mustDial(t, c.addr(i))
		expect(t, cn, "+OK\r\n", "READONLY")
		expect(t, cn, "$"+strconv.Itoa(len(want))+"\r\n"+want+"\r\n", "GET", key)
		cn.Close()
	}
}

// TestClusterWatchLeaderPaused: client A on the leader WATCHes k and
// reads it; the leader is paused until another node leads and continued;
// client B sets k on the new leader (acknowledged). A's MULTI/SET/EXEC on
// its old connection, sent right away (the old leader may not have seen
// that it lost: the lease check after the pause) or once the old leader
// follows (the EXEC is forwarded), must abort. Before the fix the EXEC
// ran on the new leader without the WATCH and k ended as mine.
//
// Then the normal case, with no leadership change between WATCH and
// EXEC, on the leader and through a follower: no abort.
func TestClusterWatchLeaderPaused(t *testing.T) {
	c := mustCluster(t, 3)
	ctx := context.Background()
	l := c.waitLeader(10 * time.Second)
	a1, a2 := mustDial(t, c.addr(l)), mustDial(t, c.addr(l))
	for _, k := range []string{"k1", "k2"} {
		if err := c.cli(l).Set(ctx, k, "orig", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	expect(t, a1, "+OK\r\n", "WATCH", "k1")
	expect(t, a1, "$4\r\norig\r\n", "GET", "k1")
	expect(t, a2, "+OK\r\n", "WATCH", "k2")
	expect(t, a2, "$4\r\norig\r\n", "GET", "k2")

	start := time.Now()
	resume := c.pause(l)
	nl := c.waitServing(10*time.Second, l)
	resume()
	t.Logf("%s serving %v after %s paused", c.nodes[nl].id, time.Since(start).Round(time.Millisecond), c.nodes[l].id)
	for _, k := range []string{"k1", "k2"} {
		if err := c.cli(nl).Set(ctx, k, "theirs", 0).Err(); err != nil {
			t.Fatalf("SET %s on the new leader %s: %v", k, c.nodes[nl].id, err)
		}
	}
	if got := casExec(t, a1, "k1", "mine"); got != "*-1\r\n" {
		t.Errorf("EXEC on the old leader right after it continued: %q, want a null reply (k1 changed on the new leader)", got)
	}
	t.Logf("first EXEC answered at %v", time.Since(start).Round(time.Millisecond))
	c.waitFollowing(l, 10*time.Second)
	if got := casExec(t, a2, "k2", "mine"); got != "*-1\r\n" {
		t.Errorf("EXEC on the old leader, now a follower (forwarded): %q, want a null reply (k2 changed on the new leader)", got)
	}
	expectEverywhere(t, c, "k1", "theirs")
	expectEverywhere(t, c, "k2", "theirs")
	t.Logf("converged at %v", time.Since(start).Round(time.Millisecond))

	// no leadership change: EXEC runs, on the leader and forwarded
	nl = c.waitLeader(10 * time.Second)
	f := (nl + 1) % 3
	for _, i := range []int{nl, f} {
		cn := mustDial(t, c.addr(i))
		expect(t, cn, "+OK\r\n", "WATCH", "k1")
		expect(t, cn, ":1\r\n", "EXISTS", "k1")
		if got := casExec(t, cn, "k1", "ok"+strconv.Itoa(i)); got != "*1\r\n+OK\r\n" {
			t.Fatalf("EXEC on %s with nothing changed: %q, want it to run", c.nodes[i].id, got)
		}
		expect(t, cn, "+OK\r\n", "WATCH", "k1")
		expect(t, cn, ":1\r\n", "EXISTS", "k1")
		if err := c.cli(nl).Set(ctx, "k1", "other", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if got := casExec(t, cn, "k1", "lost"); got != "*-1\r\n" {
			t.Fatalf("EXEC on %s after another client's SET: %q, want a null reply", c.nodes[i].id, got)
		}
	}
	expectEverywhere(t, c, "k1", "other")
}

// TestClusterWatchForwardedThenLeader: clients on both followers WATCH k
// (taken on the leader, in the forwarding session's state there) and
// read it; client B then sets k on the leader (acknowledged), and the
// leader is paused until one of the followers leads. The client on the
// new leader runs its EXEC there, where its WATCH never was: before the
// fix it ran and k ended as mine. The client on the other follower
// forwards its EXEC to the new leader, which holds no WATCH of it (its
// WATCH went to the former leader): that aborted already.
func TestClusterWatchForwardedThenLeader(t *testing.T) {
	c := mustCluster(t, 3)
	ctx := context.Background()
	l := c.waitLeader(10 * time.Second)
	f1, f2 := (l+1)%3, (l+2)%3
	if err := c.cli(l).Set(ctx, "k", "orig", 0).Err(); err != nil {
		t.Fatal(err)
	}
	a := map[int]*Conn{f1: mustDial(t, c.addr(f1)), f2: mustDial(t, c.addr(f2))}
	for _, cn := range a {
		expect(t, cn, "+OK\r\n", "WATCH", "k")
		expect(t, cn, "$4\r\norig\r\n", "GET", "k")
	}
	if err := c.cli(l).Set(ctx, "k", "theirs", 0).Err(); err != nil {
		t.Fatal(err)
	}

	resume := c.pause(l)
	nl := c.waitServing(10*time.Second, l)
	resume()
	other := f1
	if nl == f1 {
		other = f2
	}
	if got := casExec(t, a[nl], "k", "mine"); got != "*-1\r\n" {
		t.Errorf("EXEC on %s, which now leads, WATCH taken through it on %s: %q, want a null reply (k changed)", c.nodes[nl].id, c.nodes[l].id, got)
	}
	// the other follower's client, its WATCH on the former leader: its
	// other commands run as on Redis (they got a null reply, unexecuted,
	// while the new leader did not know the client), its EXEC aborts
	c.waitFollowing(l, 10*time.Second)
	expect(t, a[other], "+OK\r\n", "SET", "x", "1")
	expect(t, a[other], "+OK\r\n", "WATCH", "k3")
	expect(t, a[other], "$1\r\n1\r\n", "GET", "x")
	if got := casExec(t, a[other], "k", "mine2"); got != "*-1\r\n" {
		t.Errorf("EXEC on the follower %s, WATCH taken on the former leader %s: %q, want a null reply", c.nodes[other].id, c.nodes[l].id, got)
	}
	expectEverywhere(t, c, "k", "theirs")
}

// TestClusterWatchLeaderRegained: the same node leads at WATCH and at
// EXEC, but another led in between and its writes reached this node in a
// snapshot: client A on the leader n WATCHes k, absent. n is paused;
// the new leader x sets k (acknowledged) and SAVEs, which compacts its
// log (raft-trailing-logs 1), so n, continued, catches up by installing
// x's snapshot, which holds k (a snapshot's load dirties only WATCHes on
// keys present before it: k was not). n then leads again: the third node
// is cut off while x commits an entry with n, so that only n's log is
// complete when x is paused. A's EXEC on n, under a new epoch, must
// abort; before the fix it ran and k ended as mine.
func TestClusterWatchLeaderRegained(t *testing.T) {
	c := mustCluster(t, 3, "--raft-trailing-logs", "1")
	ctx := context.Background()
	n := c.waitLeader(10 * time.Second)
	a := mustDial(t, c.addr(n))
	expect(t, a, "+OK\r\n", "WATCH", "k")
	expect(t, a, "$-1\r\n", "GET", "k")
	last, _ := strconv.ParseUint(c.info(n)["raft_last_index"], 10, 64)

	start := time.Now()
	resumeN := c.pause(n)
	x := c.waitServing(10*time.Second, n)
	t.Logf("%s serving %v after %s paused", c.nodes[x].id, time.Since(start).Round(time.Millisecond), c.nodes[n].id)
	y := 3 - n - x
	if err := c.cli(x).Set(ctx, "k", "theirs", 0).Err(); err != nil {
		t.Fatalf("SET k on the new leader %s: %v", c.nodes[x].id, err)
	}
	for i := 0; i < 8; i++ {
		if err := c.cli(x).Set(ctx, "pad"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.cli(x).Do(ctx, "SAVE").Err(); err != nil {
		t.Fatalf("SAVE on %s: %v", c.nodes[x].id, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		first, _ := strconv.ParseUint(c.info(x)["raft_first_index"], 10, 64)
		if first > last+4 {
			t.Logf("%s's log starts at %d, %s's ended at %d", c.nodes[x].id, first, c.nodes[n].id, last)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's log still starts at %d (n's last index %d)", c.nodes[x].id, first, last)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// n catches up from x's snapshot while y is cut off, then commits an
	// entry with x that y lacks
	c.partition(y)
	resumeN()
	c.waitFollowing(n, 10*time.Second)
	deadline = time.Now().Add(15 * time.Second)
	for {
		err := c.cli(x).Set(ctx, "fence", "1", 0).Err()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("SET fence on %s with %s cut off: %v", c.nodes[x].id, c.nodes[y].id, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("fence committed at %v", time.Since(start).Round(time.Millisecond))
	if m := c.info(n); m["raft_snapshots_installed"] == "0" {
		t.Fatalf("%s caught up without installing a snapshot: %v", c.nodes[n].id, m)
	}
	resumeX := c.pause(x)
	c.heal()
	if got := c.waitServing(15*time.Second, x); got != n {
		t.Fatalf("%s leads, not %s", c.nodes[got].id, c.nodes[n].id)
	}
	resumeX()
	t.Logf("%s serving again at %v", c.nodes[n].id, time.Since(start).Round(time.Millisecond))

	if got := casExec(t, a, "k", "mine"); got != "*-1\r\n" {
		t.Errorf("EXEC on %s, leading again: %q, want a null reply (k was set under another leader)", c.nodes[n].id, got)
	}
	expectEverywhere(t, c, "k", "theirs")
}

// TestClusterWatchUncertain: a WATCH sent through a follower whose link
// to the leader breaks while the WATCH waits there (the leader in DEBUG
// SLEEP) gets -UNCERTAIN: the leader may take it after all. Client B then
// sets k on the leader; the client's EXEC must abort, since its WATCH may
// have been taken. Before the fix the follower forwarded the block
// without WATCH state and it ran: k ended as mine.
func TestClusterWatchUncertain(t *testing.T) {
	c := mustCluster(t, 3)
	ctx := context.Background()
	l := c.waitLeader(10 * time.Second)
	f := (l + 1) % 3
	if err := c.cli(l).Set(ctx, "k", "orig", 0).Err(); err != nil {
		t.Fatal(err)
	}
	a := mustDial(t, c.addr(f))
	expect(t, a, "$4\r\norig\r\n", "GET", "k") // the link is up
	sleeper := mustDial(t, c.addr(l))
	if err := sleeper.Send(Encode("DEBUG", "SLEEP", "3")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the leader holds its lock
	if err := a.Send(Encode("WATCH", "k")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the WATCH waits there for the lock
	c.partition(f)
	got, err := a.ReadReply()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(got), "-UNCERTAIN") {
		t.Fatalf("WATCH whose link broke: %q, want -UNCERTAIN", got)
	}
	c.heal()
	if got, err := sleeper.ReadReply(); err != nil || string(got) != "+OK\r\n" {
		t.Fatalf("DEBUG SLEEP: %q %v", got, err)
	}
	if err := c.cli(l).Set(ctx, "k", "theirs", 0).Err(); err != nil {
		t.Fatal(err)
	}
	a.ReplyTimeout = 15 * time.Second
	if got := casExec(t, a, "k", "mine"); got != "*-1\r\n" {
		t.Errorf("EXEC after an uncertain WATCH, k changed since: %q, want a null reply", got)
	}
	expectEverywhere(t, c, "k", "theirs")
}
