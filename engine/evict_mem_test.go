package engine

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"limitdb/resp"
)

// TestMemUsageCalibrated: the size eviction credits for a key (memUsage)
// is within -30%..+35% of what the key really holds on the heap, for every
// type, with 1 and 100 elements per key (short and 80-byte elements).
func TestMemUsageCalibrated(t *testing.T) {
	if testing.Short() {
		t.Skip("heap measurements")
	}
	long := strings.Repeat("m", 70)
	kinds := map[string]func(c *Ctx, k string, j int){
		"string":  func(c *Ctx, k string, j int) { run(c, "SET", k, "value-"+long[:j%64]) },
		"list":    func(c *Ctx, k string, j int) { run(c, "RPUSH", k, fmt.Sprint("member:", j)) },
		"hash":    func(c *Ctx, k string, j int) { run(c, "HSET", k, fmt.Sprint("f", j), "v") },
		"hashbig": func(c *Ctx, k string, j int) { run(c, "HSET", k, fmt.Sprint("f", j), long) },
		"set":     func(c *Ctx, k string, j int) { run(c, "SADD", k, fmt.Sprint("member:", j)) },
		"intset":  func(c *Ctx, k string, j int) { run(c, "SADD", k, fmt.Sprint(j)) },
		"zset":    func(c *Ctx, k string, j int) { run(c, "ZADD", k, fmt.Sprint(j), fmt.Sprint("m", j)) },
		"zsetbig": func(c *Ctx, k string, j int) { run(c, "ZADD", k, fmt.Sprint(j), fmt.Sprint(long, j)) },
		"limiter": func(c *Ctx, k string, j int) { run(c, "RL.ALLOW", k, "10", "1000") },
	}
	for _, name := range []string{"string", "list", "hash", "hashbig", "set", "intset", "zset", "zsetbig", "limiter"} {
		for _, m := range []int{1, 100} {
			if m > 1 && (name == "string" || name == "limiter") {
				continue
			}
			e := New()
			c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: evictT0}
			// enough keys that the dict's fixed chunks (40 KB of entries,
			// 64 KB key slabs) stay small beside a listpack of 100 members
			keys := max(20000/m, 4000)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var est int64
			for i := 0; i < keys; i++ {
				k := fmt.Sprintf("key:%08d", i)
				for j := 0; j < m; j++ {
					kinds[name](c, k, j)
				}
				est += c.DB.dict.find(k).memUsage()
			}
			c.W = nil
			runtime.GC()
			runtime.ReadMemStats(&after)
			real := float64(after.HeapAlloc) - float64(before.HeapAlloc)
			runtime.KeepAlive(e)
			if r := float64(est) / real; r < 0.7 || r > 1.35 {
				t.Errorf("%s × %d: estimate %.0f B/key, heap %.0f B/key", name, m, float64(est)/float64(keys), real/float64(keys))
			}
		}
	}
}
