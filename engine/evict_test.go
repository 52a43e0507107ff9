package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"limitdb/resp"
)

const evictT0 = 1_700_000_000_000

// evictEngine returns an engine under policy p with n string keys k0…
// in db 0; the keys with i%volEvery == 0 get a deadline (volEvery 0: none).
func evictEngine(t *testing.T, p Policy, n, volEvery int) (*Ctx, *[]string) {
	t.Helper()
	e := New()
	e.SetEvictPolicy(p, 5)
	deleted := []string{}
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: evictT0, Deleted: &deleted}
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("k%d", i)
		run(c, "SET", k, "value")
		if volEvery > 0 && i%volEvery == 0 {
			run(c, "PEXPIRE", k, fmt.Sprint(3_600_000+i*1000))
		}
	}
	return c, &deleted
}

// evictN evicts n keys one at a time and returns them.
func evictN(t *testing.T, c *Ctx, n int) []string {
	t.Helper()
	var out []string
	for i := 0; i < n; i++ {
		before := len(*c.Deleted)
		if _, res := c.Evict(1, 1); res == EvictFail {
			t.Fatalf("eviction %d failed", i)
		}
		out = append(out, (*c.Deleted)[before:]...)
	}
	return out
}

func keyIndex(k string) int {
	var i int
	fmt.Sscanf(strings.TrimPrefix(k, "k"), "%d", &i)
	return i
}

// TestEvictAllKeysPolicies: allkeys-* evict keys with and without a
// deadline, delete them through the delete path (Deleted, EvictedKeys) and
// stop once the estimated size reaches what was asked.
func TestEvictAllKeysPolicies(t *testing.T) {
	for _, p := range []Policy{PolicyAllKeysLRU, PolicyAllKeysLFU, PolicyAllKeysRandom} {
		t.Run(p.String(), func(t *testing.T) {
			c, deleted := evictEngine(t, p, 1000, 2)
			one := c.DB.dict.find("k1").memUsage()
			freed, res := c.Evict(100*one, 1000)
			if res != EvictOK || freed < 100*one {
				t.Fatalf("Evict = %d, %v", freed, res)
			}
			// k1 has the shortest key: 100 of its size take 90..100 keys
			n := len(*deleted)
			if n < 90 || n > 100 || c.DB.Len() != 1000-n || c.E.Stats.EvictedKeys != int64(n) {
				t.Fatalf("deleted %d, left %d, evicted_keys %d", len(*deleted), c.DB.Len(), c.E.Stats.EvictedKeys)
			}
			persistent := 0
			for _, k := range *deleted {
				if keyIndex(k)%2 == 1 {
					persistent++
				}
				if c.DB.dict.find(k) != nil {
					t.Fatalf("%s still there", k)
				}
			}
			if p == PolicyAllKeysLFU {
				// PEXPIRE counted as a use of the volatile keys
				if persistent != n {
					t.Fatalf("LFU evicted %d keys used twice", n-persistent)
				}
			} else if persistent < n/4 || persistent > n*3/4 {
				t.Fatalf("%d of %d victims without a deadline: not sampled from all keys", persistent, n)
			}
		})
	}
}

// TestEvictVolatilePolicies: volatile-* evict only keys with a deadline
// and fail (OOM) once none is left, leaving the other keys alone.
func TestEvictVolatilePolicies(t *testing.T) {
	for _, p := range []Policy{PolicyVolatileLRU, PolicyVolatileLFU, PolicyVolatileRandom, PolicyVolatileTTL} {
		t.Run(p.String(), func(t *testing.T) {
			c, deleted := evictEngine(t, p, 1000, 20) // 50 volatile keys
			_, res := c.Evict(1<<40, 10000)
			if res != EvictFail {
				t.Fatalf("result %v, want EvictFail", res)
			}
			if len(*deleted) != 50 || c.DB.Len() != 950 || c.DB.Expires() != 0 {
				t.Fatalf("deleted %d, left %d (%d volatile)", len(*deleted), c.DB.Len(), c.DB.Expires())
			}
			for _, k := range *deleted {
				if keyIndex(k)%20 != 0 {
					t.Fatalf("evicted %s, which has no deadline", k)
				}
			}
		})
	}
}

func TestEvictNoEviction(t *testing.T) {
	c, deleted := evictEngine(t, PolicyNoEviction, 10, 1)
	if _, res := c.Evict(1, 10); res != EvictFail || len(*deleted) != 0 || c.DB.Len() != 10 {
		t.Fatalf("noeviction evicted: %v %v", res, *deleted)
	}
}

// TestEvictRunningBatch: maxKeys bounds one call (the caller goes on).
func TestEvictRunningBatch(t *testing.T) {
	c, deleted := evictEngine(t, PolicyAllKeysRandom, 100, 0)
	if _, res := c.Evict(1<<40, 10); res != EvictRunning || len(*deleted) != 10 {
		t.Fatalf("%v, %d deleted", res, len(*deleted))
	}
}

// TestEvictVolatileTTLNearestFirst: volatile-ttl takes the nearest
// deadlines first (sampled, so most, not all, victims are the nearest).
func TestEvictVolatileTTLNearestFirst(t *testing.T) {
	c, _ := evictEngine(t, PolicyVolatileTTL, 1000, 1)
	near := 0
	for _, k := range evictN(t, c, 100) {
		if keyIndex(k) < 300 {
			near++
		}
	}
	if near < 90 {
		t.Fatalf("%d of 100 victims among the 30%% nearest deadlines", near)
	}
}

// TestEvictLRUKeepsRecentlyRead: keys read recently survive an LRU
// eviction far more often than keys left cold (fixed seed: deterministic).
func TestEvictLRUKeepsRecentlyRead(t *testing.T) {
	for _, p := range []Policy{PolicyAllKeysLRU, PolicyVolatileLRU} {
		t.Run(p.String(), func(t *testing.T) {
			c, _ := evictEngine(t, p, 1000, 1)
			c.Now += 100_000
			for i := 0; i < 1000; i += 2 { // even keys are hot
				run(c, "GET", fmt.Sprintf("k%d", i))
			}
			c.Now += 20_000
			cold := 0
			for _, k := range evictN(t, c, 300) {
				if keyIndex(k)%2 == 1 {
					cold++
				}
			}
			if cold < 270 {
				t.Fatalf("%d of 300 victims cold", cold)
			}
		})
	}
}

// TestEvictLFUKeepsFrequentlyUsed: keys used often survive an LFU eviction
// far more often than keys used once.
func TestEvictLFUKeepsFrequentlyUsed(t *testing.T) {
	for _, p := range []Policy{PolicyAllKeysLFU, PolicyVolatileLFU} {
		t.Run(p.String(), func(t *testing.T) {
			c, _ := evictEngine(t, p, 1000, 1)
			for r := 0; r < 50; r++ {
				for i := 0; i < 1000; i += 2 {
					run(c, "GET", fmt.Sprintf("k%d", i))
				}
			}
			rare := 0
			for _, k := range evictN(t, c, 300) {
				if keyIndex(k)%2 == 1 {
					rare++
				}
			}
			if rare < 270 {
				t.Fatalf("%d of 300 victims rarely used", rare)
			}
		})
	}
}

// TestEvictDeterministic: the same state and calls evict the same keys.
func TestEvictDeterministic(t *testing.T) {
	for _, p := range []Policy{PolicyAllKeysLRU, PolicyAllKeysLFU, PolicyAllKeysRandom, PolicyVolatileRandom, PolicyVolatileTTL} {
		a, _ := evictEngine(t, p, 500, 3)
		b, _ := evictEngine(t, p, 500, 3)
		if ka, kb := evictN(t, a, 100), evictN(t, b, 100); !slices.Equal(ka, kb) {
			t.Fatalf("%v: victims differ", p)
		}
	}
}

// TestEvictAllDatabases: victims come from every database, and an
// eviction dirties a WATCH on the key.
func TestEvictAllDatabases(t *testing.T) {
	c, deleted := evictEngine(t, PolicyAllKeysLRU, 0, 0)
	c.DB = c.E.DBs[3]
	run(c, "SET", "x", "1")
	w := c.AddWatch(c.E.DBs[3], "x")
	if _, res := c.Evict(1, 10); res != EvictOK || len(*deleted) != 1 || c.E.DBs[3].Len() != 0 {
		t.Fatalf("%v %v", res, *deleted)
	}
	if !c.WatchChanged(w) {
		t.Fatal("WATCH did not see the eviction")
	}
	if _, res := c.Evict(1, 10); res != EvictFail {
		t.Fatal("empty keyspace: want EvictFail")
	}
}

// TestObjectFreqLFU: OBJECT FREQ answers the counter under an LFU policy
// (5 for a new key, growing logarithmically, decaying one per minute),
// IDLETIME answers Redis's error then, and the other way round.
func TestObjectFreqLFU(t *testing.T) {
	c, _ := evictEngine(t, PolicyAllKeysLFU, 1, 0)
	c.AgeAccess(1) // the cron's first call notes the minute
	if got := run(c, "OBJECT", "FREQ", "k0"); got != ":5\r\n" {
		t.Fatalf("new key freq %q", got)
	}
	for i := 0; i < 1000; i++ {
		run(c, "GET", "k0")
	}
	var f int
	fmt.Sscanf(run(c, "OBJECT", "FREQ", "k0"), ":%d", &f)
	if f < 10 || f > 40 {
		t.Fatalf("freq after 1000 reads = %d, want logarithmic growth", f)
	}
	if got := run(c, "OBJECT", "IDLETIME", "k0"); got != "-"+errObjectLFU+"\r\n" {
		t.Fatalf("IDLETIME under LFU: %q", got)
	}
	c.Now += 61_000
	c.AgeAccess(1)
	if got := run(c, "OBJECT", "FREQ", "k0"); got != fmt.Sprintf(":%d\r\n", f-1) {
		t.Fatalf("after a minute: %q, want %d", got, f-1)
	}
	c.E.SetEvictPolicy(PolicyAllKeysLRU, 5)
	if got := run(c, "OBJECT", "FREQ", "k0"); got != "-"+errObjectNoLFU+"\r\n" {
		t.Fatalf("FREQ under LRU: %q", got)
	}
}

// TestAgeAccessWaitsForAMinute: a pass starts only when a minute is
// crossed, never because the policy became LFU (or the server started)
// mid-minute: Redis decays a counter by the minutes since its last access.
func TestAgeAccessWaitsForAMinute(t *testing.T) {
	c, _ := evictEngine(t, PolicyNoEviction, 1, 0)
	c.Now = evictT0/60000*60000 + 10_000
	c.AgeAccess(1) // under noeviction: only notes the minute
	c.E.SetEvictPolicy(PolicyAllKeysLFU, 5)
	run(c, "SET", "f", "v")
	run(c, "GET", "f")
	c.Now += 1000
	c.AgeAccess(1)
	if got := run(c, "OBJECT", "FREQ", "f"); got != ":6\r\n" {
		t.Fatalf("after a switch mid-minute: %q, want 6", got)
	}
	c.Now += 60_000
	c.AgeAccess(1)
	if got := run(c, "OBJECT", "FREQ", "f"); got != ":5\r\n" {
		t.Fatalf("after a minute crossed: %q, want 5", got)
	}
	// a fresh engine whose first call is already under LFU
	c2, _ := evictEngine(t, PolicyAllKeysLFU, 0, 0)
	run(c2, "SET", "f", "v")
	c2.AgeAccess(1)
	if got := run(c2, "OBJECT", "FREQ", "f"); got != ":5\r\n" {
		t.Fatalf("first pass at start: %q, want 5", got)
	}
}

// TestLRUSaturates: under an LRU policy the aging pass stops a cold key's
// clock at 128 s, so after 300 s it still looks older than a key read 10 s
// ago (without the pass its idle time would have wrapped to 44 s).
func TestLRUSaturates(t *testing.T) {
	c, _ := evictEngine(t, PolicyAllKeysLRU, 2, 0)
	c.AgeAccess(1) // the cron's first call notes the minute
	c.Now += 200_000
	c.AgeAccess(1)
	c.Now += 90_000
	run(c, "GET", "k1")
	c.Now += 10_000
	idle0, idle1 := run(c, "OBJECT", "IDLETIME", "k0"), run(c, "OBJECT", "IDLETIME", "k1")
	if idle0 != ":228\r\n" || idle1 != ":10\r\n" {
		t.Fatalf("idle times %q %q, want 228 and 10", idle0, idle1)
	}
	if got := evictN(t, c, 1); got[0] != "k0" {
		t.Fatalf("evicted %v, want the cold k0", got)
	}
}

// TestEvictLimiters: native limiter keys are ordinary keys for eviction;
// they carry deadlines, so volatile-* evict them (beside plain keys that
// have none).
func TestEvictLimiters(t *testing.T) {
	for _, p := range []Policy{PolicyVolatileTTL, PolicyVolatileLRU, PolicyAllKeysLFU} {
		c, deleted := evictEngine(t, p, 10, 0)
		for i := 0; i < 10; i++ {
			if got := run(c, "RL.ALLOW", fmt.Sprintf("rl%d", i), "10", "1000"); got[0] == '-' {
				t.Fatal(got)
			}
		}
		n := 20 // evicted
		if p.volatile() {
			n = 10 // the plain keys stay
		}
		_, res := c.Evict(1<<40, 100)
		if res != EvictFail || c.DB.Len() != 20-n || len(*deleted) != n {
			t.Fatalf("%v: %v, %d keys left, deleted %v", p, res, c.DB.Len(), *deleted)
		}
		for _, k := range *deleted {
			if p.volatile() && !strings.HasPrefix(k, "rl") {
				t.Fatalf("%v evicted %s", p, k)
			}
		}
	}
}

// TestEvictDuringCapture: keys evicted while a capture is active are not
// returned as freed (the capture keeps their values alive) but counted as
// the capture's pinned memory, which its release turns into freed; the
// capture's arrays count while it lasts, and with no spare kept, go with it.
func TestEvictDuringCapture(t *testing.T) {
	c, _ := evictEngine(t, PolicyAllKeysLRU, 1000, 0)
	e := c.E
	e.SetCaptureSpare(false)
	if a, p, f := e.CaptureMemory(); a != 0 || p != 0 || f != 0 {
		t.Fatalf("before any capture: arrays %d pinned %d freed %d", a, p, f)
	}
	if freed, _ := c.Evict(1, 10); freed == 0 {
		t.Fatal("eviction without a capture freed nothing")
	}
	s := e.Capture()
	arrays, _, _ := e.CaptureMemory()
	if arrays < 999*40 {
		t.Fatalf("capture of 990 keys: arrays %d bytes", arrays)
	}
	freed, res := c.Evict(2000, 20)
	_, pinned, _ := e.CaptureMemory()
	if freed != 0 || pinned < 20*5 || res != EvictRunning {
		t.Fatalf("20 evictions during a capture: freed %d, pinned %d, %v", freed, pinned, res)
	}
	s.Release()
	a, p, f := e.CaptureMemory()
	if a != 0 || p != 0 || f != arrays+pinned {
		t.Fatalf("after the release: arrays %d pinned %d freed %d, want 0 0 %d", a, p, f, arrays+pinned)
	}
	if freed, _ := c.Evict(1, 10); freed == 0 {
		t.Fatal("eviction after the release freed nothing")
	}
}
