package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestClusterFunctions: function libraries are replicated state. A library
// loaded through a follower (forwarded to the leader, recorded as FUNCTION
// LOAD, applied by every node) is listed and callable on every node; after
// the leader is killed the new leader and the other follower call it, a
// FUNCTION RESTORE and DELETE made under the new leader reach everyone,
// and the killed node, restarted from its dir, converges to the same
// strict digest (which covers the libraries) and calls the function too.
func TestClusterFunctions(t *testing.T) {
	c := mustCluster(t, 3)
	ctx := context.Background()
	l := c.waitLeader(10 * time.Second)
	f := (l + 1) % 3
	lib := "#!lua name=climits\n" +
		"redis.register_function('fw_hit', function(keys, args)\n" +
		"  local n = redis.call('incr', keys[1])\n" +
		"  if n == 1 then redis.call('pexpire', keys[1], args[1]) end\n" +
		"  return n\n" +
		"end)\n" +
		"redis.register_function{function_name='fw_peek', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}}"
	if name, err := c.cli(f).FunctionLoad(ctx, lib).Result(); err != nil || name != "climits" {
		t.Fatalf("FUNCTION LOAD on a follower: %q %v", name, err)
	}
	hits := 0
	for i := range c.nodes {
		n, err := c.cli(i).FCall(ctx, "fw_hit", []string{"fw:k"}, 600000).Int()
		if err != nil {
			t.Fatalf("FCALL on %s: %v", c.nodes[i].id, err)
		}
		hits++
		if n != hits {
			t.Fatalf("FCALL on %s: %d, want %d", c.nodes[i].id, n, hits)
		}
		libs, err := c.cli(i).FunctionList(ctx, redis.FunctionListQuery{}).Result()
		if err != nil || len(libs) != 1 || libs[0].Name != "climits" || len(libs[0].Functions) != 2 {
			t.Fatalf("FUNCTION LIST on %s: %+v %v", c.nodes[i].id, libs, err)
		}
		if v, err := c.cli(i).FCallRO(ctx, "fw_peek", []string{"fw:k"}).Text(); err != nil || v != fmt.Sprint(hits) {
			t.Fatalf("FCALL_RO on %s: %q %v", c.nodes[i].id, v, err)
		}
	}
	dump, err := c.cli(l).FunctionDump(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}

	killed := time.Now()
	c.kill(l)
	nl := -1
	for time.Since(killed) < 5*time.Second {
		if nl = c.leader(); nl >= 0 && nl != l {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if nl < 0 || nl == l {
		t.Fatal("no new leader within 5 s of the kill")
	}
	for i := range c.nodes {
		if i == l {
			continue
		}
		if _, err := c.cli(i).FCall(ctx, "fw_hit", []string{"fw:k"}, 600000).Int(); err != nil {
			t.Fatalf("FCALL on %s after the leader's kill: %v", c.nodes[i].id, err)
		}
		hits++
	}
	// RESTORE and DELETE under the new leader, through the other follower
	of := 3 - l - nl
	if err := c.cli(of).FunctionDelete(ctx, "climits").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.cli(of).FunctionRestore(ctx, dump).Err(); err != nil {
		t.Fatalf("FUNCTION RESTORE: %v", err)
	}
	c.start(l)
	ds := c.waitConverged(30 * time.Second)
	for _, d := range ds {
		if d != ds[0] {
			t.Fatalf("strict digests differ after the restart: %v", ds)
		}
	}
	for i := range c.nodes {
		n, err := c.cli(i).FCall(ctx, "fw_hit", []string{"fw:k"}, 600000).Int()
		if err != nil {
			t.Fatalf("FCALL on %s after the restart: %v", c.nodes[i].id, err)
		}
		hits++
		if n != hits {
			t.Fatalf("FCALL on %s: %d, want %d", c.nodes[i].id, n, hits)
		}
	}
}
