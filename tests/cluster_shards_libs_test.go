package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/ulule/limiter/v3"
	sredis "github.com/ulule/limiter/v3/drivers/store/redis"
)

// TestClusterShardsRateLibs: the rate limiter libraries that sit on
// go-redis (redis_rate, ulule/limiter's redis store) over a ClusterClient
// of three groups: their scripts reach every group (EVALSHA, EVAL on
// NOSCRIPT, SCRIPT LOAD), and each key, whatever group owns it, admits
// exactly its limit.
func TestClusterShardsRateLibs(t *testing.T) {
	s := mustShards(t, 3, 1)
	cc := s.clusterClient()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const keys, limit, calls = 60, 5, 7
	groups := map[int]bool{}
	rr := redis_rate.NewLimiter(cc)
	st, err := sredis.NewStoreWithOptions(cc, limiter.StoreOptions{Prefix: "shards-ulule"})
	if err != nil {
		t.Fatal(err)
	}
	ul := limiter.New(st, limiter.Rate{Period: time.Hour, Limit: limit})
	checked := 0
	for k := 0; k < keys; k++ {
		key := fmt.Sprintf("lib:%d", k)
		groups[s.groupOf(testKeySlot("rate:"+key))] = true
		for i := 0; i < calls; i++ {
			res, err := rr.Allow(ctx, key, redis_rate.PerHour(limit))
			if err != nil {
				t.Fatalf("redis_rate %s call %d: %v", key, i, err)
			}
			wantAllowed, wantRemaining := 0, limit-1-i
			if i < limit {
				wantAllowed = 1
			} else {
				wantRemaining = 0
			}
			if res.Allowed != wantAllowed || res.Remaining != wantRemaining {
				t.Errorf("redis_rate %s call %d: %+v, want allowed %d remaining %d", key, i, res, wantAllowed, wantRemaining)
			}
			c, err := ul.Get(ctx, key)
			if err != nil {
				t.Fatalf("ulule %s call %d: %v", key, i, err)
			}
			if c.Reached != (i >= limit) || c.Remaining != int64(max(limit-1-i, 0)) {
				t.Errorf("ulule %s call %d: %+v", key, i, c)
			}
			checked += 2
		}
	}
	if len(groups) != len(s.groups) {
		t.Errorf("redis_rate's keys reached %d of %d groups", len(groups), len(s.groups))
	}
	t.Logf("%d decisions checked over %d keys", checked, keys)
}
