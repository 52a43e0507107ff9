package tests

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestClusterMinReplicas: on a cluster's leader the followers are the
// replicas min-replicas-to-write counts, each good while its last report
// (a ping a second, limitdb's REPLCONF ACK) is at most
// min-replicas-max-lag seconds old: writes, scripts' writes and
// followers' forwarded writes get NOREPLICAS while too few are good, and
// INFO's min_slaves_good_slaves says how many are.
func TestClusterMinReplicas(t *testing.T) {
	c := mustCluster(t, 3)
	ctx := context.Background()
	l := c.waitLeader(10 * time.Second)
	c.waitVoters(3, 10*time.Second)
	lc := c.cli(l)
	f := (l + 1) % 3
	good := func() string {
		s, _ := lc.Info(ctx, "replication").Result()
		for _, line := range strings.Split(s, "\r\n") {
			if v, ok := strings.CutPrefix(line, "min_slaves_good_slaves:"); ok {
				return v
			}
		}
		return ""
	}
	waitGood := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for good() != want {
			if time.Now().After(deadline) {
				t.Fatalf("min_slaves_good_slaves %q, want %s", good(), want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	set := func(name, v string) {
		t.Helper()
		if err := lc.ConfigSet(ctx, name, v).Err(); err != nil {
			t.Fatalf("CONFIG SET %s %s: %v", name, v, err)
		}
	}
	const noReplicas = "NOREPLICAS Not enough good replicas to write."
	set("min-replicas-max-lag", "2")
	set("min-replicas-to-write", "2")
	waitGood("2")
	if err := lc.Set(ctx, "mr:a", "1", 0).Err(); err != nil {
		t.Fatalf("SET with 2 good replicas of 2: %v", err)
	}
	set("min-replicas-to-write", "3")
	if err := lc.Set(ctx, "mr:b", "1", 0).Err(); err == nil || err.Error() != noReplicas {
		t.Fatalf("SET with 2 good replicas of 3: %v", err)
	}
	if err := lc.Eval(ctx, "return redis.call('set', KEYS[1], '1')", []string{"mr:c"}).Err(); err == nil || !strings.Contains(err.Error(), "NOREPLICAS") {
		t.Fatalf("a script's write with 2 good replicas of 3: %v", err)
	}
	if v, err := lc.Get(ctx, "mr:a").Result(); err != nil || v != "1" {
		t.Fatalf("a read: %q %v", v, err)
	}
	// a follower's write runs on the leader, which checks
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := c.cli(f).Set(ctx, "mr:d", "1", 0).Err()
		if err != nil && err.Error() == noReplicas {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a follower's SET with 2 good replicas of 3: %v", err)
		}
		time.Sleep(100 * time.Millisecond) // the setting reaches it
	}
	set("min-replicas-to-write", "2")
	c.kill(f)
	waitGood("1")
	// the slaveN lines' lag is seconds since the last report, as
	// Redis's: the killed follower's is past max-lag, the other's not
	var lags []int
	s, _ := lc.Info(ctx, "replication").Result()
	for _, line := range strings.Split(s, "\r\n") {
		if strings.HasPrefix(line, "slave") && strings.Contains(line, ",lag=") {
			lag, _ := strconv.Atoi(line[strings.LastIndex(line, "=")+1:])
			lags = append(lags, lag)
		}
	}
	if sort.Ints(lags); len(lags) != 2 || lags[0] > 2 || lags[1] < 3 {
		t.Fatalf("slave lines' lags %v, want one <= 2 and one > 2:\n%s", lags, s)
	}
	if err := lc.Set(ctx, "mr:e", "1", 0).Err(); err == nil || err.Error() != noReplicas {
		t.Fatalf("SET with 1 good replica of 2 (one killed): %v", err)
	}
	set("min-replicas-to-write", "1")
	if err := lc.Set(ctx, "mr:f", "1", 0).Err(); err != nil {
		t.Fatalf("SET with 1 good replica of 1: %v", err)
	}
}
