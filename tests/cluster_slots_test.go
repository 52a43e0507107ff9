package tests

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// TestClusterSlotsOwnership: the owned hash slots are replicated state.
// LIMITDB.SLOTS ADD sent to a follower is forwarded and committed once;
// a second ADD over an owned slot is refused with Redis's text on every
// node; a node that was down catches up from a snapshot (past the
// trailing log) that carries the set, and a leader killed and restarted
// from its dir keeps it: every node's strict digest (which covers the
// set) ends equal to the one taken right after the change.
func TestClusterSlotsOwnership(t *testing.T) {
	c := mustCluster(t, 3, "--raft-snapshot-threshold", "64", "--raft-trailing-logs", "16", "--raft-snapshot-interval", "1")
	ctx := context.Background()
	l := c.waitLeader(10 * time.Second)
	f, down := (l+1)%3, (l+2)%3
	c.kill(down)
	empty, err := c.cli(l).Do(ctx, "DEBUG", "DIGEST-STRICT").Text()
	if err != nil {
		t.Fatal(err)
	}
	if r, err := c.cli(f).Do(ctx, "LIMITDB.SLOTS", "ADD", "0", "100", "16383", "16383").Text(); err != nil || r != "OK" {
		t.Fatalf("LIMITDB.SLOTS ADD through a follower: %q %v", r, err)
	}
	for _, i := range []int{l, f} {
		if err := c.cli(i).Do(ctx, "LIMITDB.SLOTS", "ADD", "50", "60").Err(); err == nil || err.Error() != "ERR Slot 50 is already busy" {
			t.Fatalf("node %d: ADD over an owned slot: %v", i, err)
		}
	}
	want, err := c.cli(l).Do(ctx, "DEBUG", "DIGEST-STRICT").Text()
	if err != nil || want == empty {
		t.Fatalf("strict digest unchanged by LIMITDB.SLOTS ADD (%v)", err)
	}
	// enough entries for the leader to snapshot past its trailing log, so
	// the node that was down gets the set from a snapshot
	for i := 0; i < 200; i++ {
		if err := c.cli(l).Do(ctx, "SET", fmt.Sprint("k", i), "v").Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 200; i++ {
		c.cli(l).Do(ctx, "DEL", fmt.Sprint("k", i))
	}
	deadline := time.Now().Add(15 * time.Second)
	for si, _ := strconv.Atoi(c.info(l)["raft_snapshot_index"]); si < 100; si, _ = strconv.Atoi(c.info(l)["raft_snapshot_index"]) {
		if time.Now().After(deadline) {
			t.Fatal("the leader took no snapshot")
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.start(down)
	c.mustConverge(30 * time.Second)
	if n, _ := strconv.Atoi(c.info(down)["raft_snapshots_installed"]); n < 1 {
		t.Fatalf("the node that was down installed no snapshot: %v", c.info(down))
	}
	c.kill(l)
	c.start(l)
	c.mustConverge(30 * time.Second)
	for i := range 3 {
		if d, err := c.cli(i).Do(ctx, "DEBUG", "DIGEST-STRICT").Text(); err != nil || d != want {
			t.Fatalf("node %d: strict digest %s (%v), want %s", i, d, err, want)
		}
	}
}
