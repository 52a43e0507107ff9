package tests

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestClusterJoinRetries: a node started with --join before the member
// it names listens (the README's three commands started at once, or a
// replaced disk's node whose join target is restarting) keeps asking
// until it is added, and answers meanwhile: PING, RAFT INFO with
// raft_joining:1, and -CLUSTERDOWN for a write after leader-wait-ms, as
// any follower without a leader. Before, a join attempt's "connection
// refused" ended the start at once (the process exited: "start-up
// failed ... connection refused"), and a joining node answered nothing
// until the leader had committed its addition (the fault suite's wipe
// nemesis waited 10 s for a PING that came only once the join was
// through: tests/FAULTS.md, "A replaced node rejoins").
func TestClusterJoinRetries(t *testing.T) {
	c := newTestCluster(t, 2, "n", func(int) []string { return []string{"--leader-wait-ms", "300"} })
	ctx := context.Background()
	exited := c.spawn(1) // joins through c.addr(0), where nothing listens yet
	if err := waitPing(c.addr(1)); err != nil {
		t.Fatalf("the joining node: %v\n%s", err, c.log(1))
	}
	time.Sleep(1500 * time.Millisecond) // several attempts refused
	select {
	case <-exited:
		t.Fatalf("the joining node exited while the member it joins through was not up yet\n%s", c.log(1))
	default:
	}
	if m := c.info(1); m["raft_joining"] != "1" {
		t.Fatalf("the node not added yet: raft_joining %q", m["raft_joining"])
	}
	if err := c.cli(1).Set(ctx, "k", "v", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "CLUSTERDOWN") {
		t.Fatalf("a write on a node that has not joined yet: %v", err)
	}
	if !strings.Contains(c.log(1), "join attempt failed, retrying") {
		t.Fatalf("the refused attempts are not logged\n%s", c.log(1))
	}
	c.start(0) // bootstraps; the joining node's next attempt gets in
	c.waitJoined(1, 20*time.Second)
	c.waitVoters(2, 20*time.Second)
	if err := c.cli(1).Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("a write through the joined node: %v", err)
	}
	if v, err := c.cli(0).Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("k on the first node: %q %v", v, err)
	}
}

// TestClusterMembershipOffLoop: a membership change or a transfer sent
// to the leader waits for the cluster (a commit of the configuration,
// another leader) with the engine lock released; on an event loop it
// stopped every other connection of that loop meanwhile (RAFT JOIN up
// to Raft's 10 s enqueue timeout per change where the leader cannot
// change its configuration yet, and a joining node asks again until it
// is added). Here a RAFT TRANSFER to a stopped voter waits its 2 s; a
// PING on another connection of the leader must not wait with it.
// Before, the PING was answered only once the transfer gave up (~2 s).
func TestClusterMembershipOffLoop(t *testing.T) {
	c := mustCluster(t, 3)
	ctx := context.Background()
	l := c.waitLeader(10 * time.Second)
	f := (l + 1) % 3
	pid := c.nodes[f].cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	ping, err := Dial(c.addr(l)) // connected before: the same loop, already adopted
	if err != nil {
		t.Fatal(err)
	}
	defer ping.Close()
	if _, err := ping.Do("PING"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.cli(l).Do(ctx, "RAFT", "TRANSFER", c.nodes[f].id).Err() }()
	time.Sleep(200 * time.Millisecond) // the transfer waits for the stopped voter
	t0 := time.Now()
	r, err := ping.Do("PING")
	took := time.Since(t0)
	if err != nil || string(r) != "+PONG\r\n" {
		t.Fatalf("PING during the transfer: %q %v", r, err)
	}
	select {
	case err := <-done:
		t.Fatalf("the transfer to a stopped voter ended before the PING was sent (%v): nothing measured", err)
	default:
	}
	if took > time.Second {
		t.Fatalf("a PING on the leader waited %v for a RAFT TRANSFER on another connection", took)
	}
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the transfer to a stopped voter did not end")
	}
}
