package server

import (
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"limitdb/engine"
	"limitdb/resp"
)

// benchMaxmemory is benchBatch with maxmemory 1gb and allkeys-lru, so the
// per-command check (a heap sample at most once per ms, the comparison)
// is on the path; nothing is evicted.
func benchMaxmemory(b *testing.B, cmd func(i int) []string) {
	benchBatchWith(b, func(s *Server, _ *client) {
		s.conf.params["maxmemory"] = strconv.Itoa(1 << 30)
		s.conf.params["maxmemory-policy"] = "allkeys-lru"
		s.applyMaxmemory()
		b.Cleanup(func() {
			s.conf.params["maxmemory"] = "0"
			s.applyMaxmemory() // restores the Go memory limit
		})
	}, cmd)
}

func BenchmarkBatchIncrMaxmemory(b *testing.B) {
	benchMaxmemory(b, func(int) []string { return []string{"INCR", "counter"} })
}

func BenchmarkBatchGetMaxmemory(b *testing.B) {
	benchMaxmemory(b, func(int) []string { return []string{"GET", "counter"} })
}

func BenchmarkBatchSet(b *testing.B) {
	benchBatch(b, func(i int) []string { return []string{"SET", "k" + strconv.Itoa(i), "value"} })
}

func BenchmarkBatchSetMaxmemory(b *testing.B) {
	benchMaxmemory(b, func(i int) []string { return []string{"SET", "k" + strconv.Itoa(i), "value"} })
}

// TestGoMemoryLimit: maxmemory sets the process's Go memory limit to
// max(1.25 × maxmemory, maxmemory + 16 MB), the largest of several servers
// wins, and the previous limit comes back when none has maxmemory set.
func TestGoMemoryLimit(t *testing.T) {
	orig := debug.SetMemoryLimit(-1)
	a, b := New(Config{}, nil), New(Config{}, nil)
	set := func(s *Server, v string) {
		s.door.Lock()
		s.conf.params["maxmemory"] = v
		s.applyMaxmemory()
		s.door.Unlock()
	}
	set(a, "1073741824")
	if got := debug.SetMemoryLimit(-1); got != 1<<30+1<<28 {
		t.Fatalf("limit %d", got)
	}
	set(b, "1048576")
	if got := debug.SetMemoryLimit(-1); got != 1<<30+1<<28 {
		t.Fatalf("limit %d after a smaller server", got)
	}
	set(a, "0")
	if got := debug.SetMemoryLimit(-1); got != 1<<20+goHeadroom {
		t.Fatalf("limit %d, want b's", got)
	}
	set(b, "0")
	if got := debug.SetMemoryLimit(-1); got != orig {
		t.Fatalf("limit %d, want %d restored", got, orig)
	}
}

// TestEvictionWaitsForCollector: once a quarter of maxmemory has been
// evicted since the last collection, performEvictions stops evicting,
// starts a collection and reports running (not OOM); the collection resets
// the bookkeeping.
func TestEvictionWaitsForCollector(t *testing.T) {
	s := New(Config{}, nil)
	s.door.Lock()
	defer s.door.Unlock()
	ctx := engine.Ctx{E: s.eng, DB: s.eng.DBs[0], W: resp.NewWriter(), Now: 1}
	for i := 0; i < 100; i++ {
		ctx.Exec([][]byte{[]byte("SET"), []byte("k" + strconv.Itoa(i)), []byte("v")})
	}
	s.conf.params["maxmemory"] = "1"
	s.conf.params["maxmemory-policy"] = "allkeys-random"
	// no time bound on the eviction: at the default tenacity a loaded
	// machine stopped it after 500 µs with keys left (seen in CI)
	s.conf.params["maxmemory-eviction-tenacity"] = "100"
	s.applyMaxmemory()
	defer func() {
		s.conf.params["maxmemory"] = "0"
		s.applyMaxmemory()
	}()
	if s.eng.DBs[0].Len() != 0 {
		t.Fatalf("%d keys left over maxmemory 1", s.eng.DBs[0].Len())
	}
	s.mem.pendingFree = 1 // as if evicted keys were waiting for the collector
	gcs := s.mem.gcs
	ctx.Exec([][]byte{[]byte("SET"), []byte("x"), []byte("v")})
	ctx.Now++
	if res := s.performEvictions(&ctx); res != engine.EvictRunning || s.eng.DBs[0].Len() != 1 {
		t.Fatalf("result %v, %d keys: evicted while the collector is behind", res, s.eng.DBs[0].Len())
	}
	for deadline := time.Now().Add(5 * time.Second); s.mem.collecting.Load(); {
		if time.Now().After(deadline) {
			t.Fatal("no collection")
		}
		time.Sleep(time.Millisecond)
	}
	ctx.Now++
	if res := s.performEvictions(&ctx); res != engine.EvictFail || s.mem.gcs == gcs || s.eng.DBs[0].Len() != 0 {
		t.Fatalf("after the collection: %v, gcs %d→%d, %d keys", res, gcs, s.mem.gcs, s.eng.DBs[0].Len())
	}
}
