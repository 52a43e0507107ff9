package tests

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// A follower's cluster_state follows the LIMITDB.SLOTS effects it
// applies, not its cron: at hz 1 (a cron a second) the leader's
// ADDSLOTS and DELSLOTS turn the follower's keyed replies from
// CLUSTERDOWN to MOVED and back within replication's delay.
func TestClusterModeFollowerStateFollowsSlots(t *testing.T) {
	c := mustCluster(t, 3, "--cluster-enabled", "yes", "--hz", "1")
	l := c.waitLeader(10 * time.Second)
	f := (l + 1) % 3
	c.waitFollowing(f, 10*time.Second)
	fc := mustDial(t, c.addr(f))
	down := "-CLUSTERDOWN The cluster is down\r\n"
	moved := "-MOVED " + strconv.Itoa(testKeySlot("a")) + " " + c.addr(l) + "\r\n"
	if r := string(mustDo(t, fc, "GET", "a")); r != "-CLUSTERDOWN Hash slot not served\r\n" {
		t.Fatalf("before any slot is assigned: %q", r)
	}
	steps := []struct {
		args []any
		want string
	}{
		{[]any{"CLUSTER", "ADDSLOTSRANGE", "0", "16383"}, moved},
		{[]any{"CLUSTER", "DELSLOTSRANGE", "0", "0"}, down},
		{[]any{"CLUSTER", "ADDSLOTS", "0"}, moved},
	}
	for _, st := range steps {
		if err := c.cli(l).Do(context.Background(), st.args...).Err(); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		for {
			r := string(mustDo(t, fc, "GET", "a"))
			if r == st.want {
				break
			}
			if el := time.Since(t0); el > 250*time.Millisecond {
				t.Fatalf("after %v: the follower still answers %q to GET, want %q (its cron runs once a second)", st.args, r, st.want)
			}
			time.Sleep(2 * time.Millisecond)
		}
		t.Logf("%v: the follower answers %q after %v", st.args, st.want, time.Since(t0))
	}
}
