package tests

import (
	"context"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestClusterFollowerWrites: a write through a follower is answered
// within a round trip's time of the leader's commit, not on Raft's
// CommitTimeout tick (50-100 ms: hashicorp/raft told followers of a
// commit only with the next entries; third_party/raft/LIMITDB-PATCH.md),
// and the connection then reads its own write on that follower, with
// READONLY (no read barrier) as without.
func TestClusterFollowerWrites(t *testing.T) {
	c := mustCluster(t, 3)
	ctx := context.Background()
	c.waitVoters(3, 20*time.Second)
	l := c.waitLeader(10 * time.Second)
	f := (l + 1) % 3
	for _, readonly := range []bool{false, true} {
		cl := redis.NewClient(&redis.Options{Addr: c.addr(f), MaxRetries: -1, Protocol: 2, PoolSize: 1})
		defer cl.Close()
		if readonly {
			if err := cl.Do(ctx, "READONLY").Err(); err != nil {
				t.Fatal(err)
			}
		}
		key := "ryw:" + strconv.FormatBool(readonly)
		var took []time.Duration
		deadline := time.Now().Add(30 * time.Second)
		for i := 1; i <= 60 && time.Now().Before(deadline); i++ {
			start := time.Now()
			n, err := cl.Incr(ctx, key).Result()
			took = append(took, time.Since(start))
			if err != nil || n != int64(i) {
				t.Fatalf("readonly=%v: INCR through a follower: %d %v, want %d", readonly, n, err, i)
			}
			if v, err := cl.Get(ctx, key).Result(); err != nil || v != strconv.Itoa(i) {
				t.Fatalf("readonly=%v: GET after the connection's INCR on the follower: %q %v, want %d", readonly, v, err, i)
			}
			if s, err := cl.Do(ctx, "SCAN", "0", "MATCH", key).Slice(); err != nil || len(s[1].([]any)) != 1 {
				t.Fatalf("readonly=%v: SCAN after the connection's INCR on the follower: %v %v", readonly, s, err)
			}
			if i%10 == 0 {
				time.Sleep(120 * time.Millisecond) // the log idles past a CommitTimeout tick
			}
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		// 77 ms (p50) before the leader told followers of commits at once;
		// 0.4 ms on a quiet machine
		if p50 := took[len(took)/2]; p50 > 25*time.Millisecond {
			t.Fatalf("readonly=%v: INCR through a follower took %v (median of %d), want ≤ 25 ms", readonly, p50, len(took))
		}
	}
}
