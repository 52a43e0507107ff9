package tests

import (
	"context"
	"fmt"
	"strconv"
	"sync"
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
// exactly its limit, across a move of slots under load: 3 of each key's
// 5 per-hour calls made, then 64 slots of group 0 holding 20 of the keys
// moved to group 1 with CLUSTER MIGRATION IMPORT while a goroutine keeps
// calling both libraries on those 20 keys, then every key called again.
// Every decision is checked exactly (a move is no fault: a command MOVED
// or TRYAGAIN was not executed, so the client's retry applies once).
func TestClusterShardsRateLibs(t *testing.T) {
	s := mustShards(t, 3, 1)
	cc := s.clusterClient()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const spread, inMove, limit, before = 40, 20, 5, 3
	g0lo, _ := s.slotRange(0)
	lo, hi := g0lo+1000, g0lo+1063
	// keys "lib:{tag}": redis_rate's rate:lib:{tag} and ulule's
	// shards-ulule:lib:{tag} share tag's slot
	var keys []string
	for k := 0; k < spread; k++ {
		keys = append(keys, fmt.Sprintf("lib:{%d}", k))
	}
	var moved []string
	for k := 0; len(moved) < inMove; k++ {
		if sl := testKeySlot("m" + strconv.Itoa(k)); sl >= lo && sl <= hi {
			moved = append(moved, fmt.Sprintf("lib:{m%d}", k))
		}
	}
	keys = append(keys, moved...)
	groups := map[int]bool{}
	rr := redis_rate.NewLimiter(cc)
	st, err := sredis.NewStoreWithOptions(cc, limiter.StoreOptions{Prefix: "shards-ulule"})
	if err != nil {
		t.Fatal(err)
	}
	ul := limiter.New(st, limiter.Rate{Period: time.Hour, Limit: limit})
	var mu sync.Mutex // calls and checked, shared with the goroutine during the move
	calls := map[string]int{}
	checked := 0
	// call makes key's next call through both libraries and checks it
	// against the count of its calls so far (t.Errorf only: it also runs
	// on the goroutine)
	call := func(key string) bool {
		mu.Lock()
		i := calls[key]
		calls[key]++
		checked += 2
		mu.Unlock()
		res, err := rr.Allow(ctx, key, redis_rate.PerHour(limit))
		if err != nil {
			t.Errorf("redis_rate %s call %d: %v", key, i, err)
			return false
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
			t.Errorf("ulule %s call %d: %v", key, i, err)
			return false
		}
		if c.Reached != (i >= limit) || c.Remaining != int64(max(limit-1-i, 0)) {
			t.Errorf("ulule %s call %d: %+v", key, i, c)
		}
		return true
	}
	for _, key := range keys {
		groups[s.groupOf(testKeySlot("rate:"+key))] = true
		for range before {
			if !call(key) {
				t.FailNow()
			}
		}
	}
	if len(groups) != len(s.groups) {
		t.Errorf("redis_rate's keys reached %d of %d groups", len(groups), len(s.groups))
	}
	// the move, the moved keys called all along it (bounded)
	stop, done := make(chan struct{}), make(chan int, 1)
	go func() {
		n := 0
		defer func() { done <- n }()
		for n < 20000 {
			for _, key := range moved {
				select {
				case <-stop:
					return
				default:
				}
				if !call(key) {
					return
				}
				n += 2
			}
		}
	}()
	time.Sleep(20 * time.Millisecond)
	took := s.moveSlots(lo, hi, 0, 1, 20*time.Second)
	close(stop)
	during := <-done
	// after it: every key twice more (a moved key's refused from the
	// target, its count of calls carried over)
	for _, key := range keys {
		for range 2 {
			if !call(key) {
				t.FailNow()
			}
		}
	}
	t.Logf("%d decisions checked over %d keys, %d of them across the move of slots %d-%d (the %d keys there, to group 1 in %v)",
		checked, len(keys), during, lo, hi, len(moved), took.Round(time.Millisecond))
}
