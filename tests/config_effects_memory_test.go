package tests

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Effect tests of the maxmemory parameters, on TestConfigEffects's
// in-process limitdb: used_memory is this process's Go heap, so each
// measurement follows a runtime.GC() to leave only live data in it.

const oomReply = "-OOM command not allowed when used memory > 'maxmemory'.\r\n"

// pipelineDo sends every command in one write and reads as many replies,
// failing the test on any reply that is not want ("" accepts any).
func pipelineDo(t *testing.T, c *Conn, want string, cmds [][]string) {
	t.Helper()
	var b []byte
	for _, cmd := range cmds {
		b = append(b, Encode(cmd...)...)
	}
	if err := c.Send(b); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range cmds {
		r, err := c.ReadReply()
		if err != nil || want != "" && string(r) != want {
			t.Fatalf("%q: %q %v", cmd, r, err)
		}
	}
}

// usedMemory is used_memory right after a garbage collection.
func usedMemory(t *testing.T, c *Conn) int64 {
	runtime.GC()
	return mmInfoInt(t, c, "memory", "used_memory")
}

// effectMaxmemory: with noeviction, a limit under the usage makes a write
// get Redis's OOM error while reads go on; with maxmemory 0 the same write
// is served.
func effectMaxmemory(t *testing.T, c *Conn, addr, name string) {
	mustDo(t, c, "FLUSHALL")
	configSet(t, c, "maxmemory-policy", "noeviction")
	configSet(t, c, name, "1mb") // the heap of this test binary is bigger
	defer configSet(t, c, name, "0")
	expectDo(t, c, oomReply, "SET", "mm:k", "v")
	expectDo(t, c, "$-1\r\n", "GET", "mm:k")
	configSet(t, c, name, "0")
	expectDo(t, c, "+OK\r\n", "SET", "mm:k", "v")
	base := usedMemory(t, c)
	configSet(t, c, name, strconv.FormatInt(base+8<<20, 10))
	expectDo(t, c, "+OK\r\n", "SET", "mm:k", "v") // under the limit
	mustDo(t, c, "FLUSHALL")
}

const (
	evictKeys  = 400 // of each kind: p:<i> persistent, v:<i> with a deadline
	evictValue = 4096
)

// fillForEviction writes evictKeys persistent keys p:<i> and as many v:<i>
// that expire in order (v:0 first), 4 KB each, under the current policy.
func fillForEviction(t *testing.T, c *Conn) {
	mustDo(t, c, "FLUSHALL")
	val := strings.Repeat("x", evictValue)
	var cmds [][]string
	for i := 0; i < evictKeys; i++ {
		cmds = append(cmds, []string{"SET", "p:" + strconv.Itoa(i), val},
			[]string{"SET", "v:" + strconv.Itoa(i), val, "PX", strconv.Itoa(10_000_000 + 1000*i)})
	}
	pipelineDo(t, c, "+OK\r\n", cmds)
}

// touch reads every key of the given parity (0 even, 1 odd) rounds times.
func touch(t *testing.T, c *Conn, parity, rounds int) {
	var cmds [][]string
	for r := 0; r < rounds; r++ {
		for i := parity; i < evictKeys; i += 2 {
			cmds = append(cmds, []string{"STRLEN", "p:" + strconv.Itoa(i)}, []string{"STRLEN", "v:" + strconv.Itoa(i)})
		}
	}
	pipelineDo(t, c, fmt.Sprintf(":%d\r\n", evictValue), cmds)
}

// lowerLimit sets maxmemory under the usage by about free bytes (the
// eviction runs before CONFIG SET answers) and returns the keys gone.
func lowerLimit(t *testing.T, c *Conn, free int64) []string {
	used := usedMemory(t, c)
	configSet(t, c, "maxmemory", strconv.FormatInt(used-free, 10))
	left := map[string]bool{}
	for _, k := range mustDoValue(t, c, "KEYS", "*").([]any) {
		left[k.(string)] = true
	}
	var gone []string
	for i := 0; i < evictKeys; i++ {
		for _, k := range []string{"p:" + strconv.Itoa(i), "v:" + strconv.Itoa(i)} {
			if !left[k] {
				gone = append(gone, k)
			}
		}
	}
	return gone
}

type evictedSet struct {
	persistent, volatile, odd int
	volatileIdx               int // sum of the v:<i> indexes
}

func classify(keys []string) evictedSet {
	var s evictedSet
	for _, k := range keys {
		i, _ := strconv.Atoi(k[2:])
		if k[0] == 'p' {
			s.persistent++
		} else {
			s.volatile++
			s.volatileIdx += i
		}
		if i%2 == 1 {
			s.odd++
		}
	}
	return s
}

// effectMaxmemoryPolicy: for each of the eight policies, 400 persistent
// and 400 volatile keys of 4 KB; the even ones are read 60 times (an LFU
// counter stays at 6, as after one read, with p = (10/11)^59 ≈ 0.4%),
// then (after the LRU clock, in seconds, moved on, for the LRU policies)
// the odd ones once; then maxmemory is set 512 KB under the usage:
// noeviction evicts nothing and refuses writes with OOM; allkeys-* take
// persistent keys too, volatile-* only keys with a deadline; *-lru takes
// mostly even keys (read longest ago), *-lfu mostly odd ones (read least
// often), *-random both; volatile-ttl takes the nearest deadlines (low
// v:<i>: mean index measured 77 of 400, against 200 for random victims).
// Only the eviction that CONFIG SET maxmemory runs is looked at: the
// commands after it may evict more (TestMaxmemoryEviction writes under
// eviction).
func effectMaxmemoryPolicy(t *testing.T, c *Conn, addr, name string) {
	defer configSet(t, c, name, "noeviction")
	defer configSet(t, c, "maxmemory", "0")
	defer mustDo(t, c, "FLUSHALL")
	for _, pol := range []string{"noeviction", "allkeys-random", "allkeys-lru", "allkeys-lfu",
		"volatile-random", "volatile-lru", "volatile-lfu", "volatile-ttl"} {
		configSet(t, c, "maxmemory", "0")
		configSet(t, c, name, pol)
		fillForEviction(t, c)
		touch(t, c, 0, 60)
		if strings.HasSuffix(pol, "-lru") {
			time.Sleep(1100 * time.Millisecond)
		}
		touch(t, c, 1, 1)
		gone := classify(lowerLimit(t, c, 512<<10))
		n := gone.persistent + gone.volatile
		t.Logf("%s: evicted %+v", pol, gone)
		switch {
		case pol == "noeviction":
			if n != 0 {
				t.Fatalf("noeviction evicted %d keys", n)
			}
			expectDo(t, c, oomReply, "SET", "mm:new", "v")
			expectDo(t, c, ":4096\r\n", "STRLEN", "p:1")
		case n < 64:
			t.Fatalf("%s: evicted %d keys for 512 KB of 4 KB values", pol, n)
		case strings.HasPrefix(pol, "allkeys") && gone.persistent == 0:
			t.Fatalf("%s: no key without a deadline evicted", pol)
		case strings.HasPrefix(pol, "volatile") && gone.persistent != 0:
			t.Fatalf("%s: evicted %d keys without a deadline", pol, gone.persistent)
		case strings.HasSuffix(pol, "-lru") && gone.odd > tolerated(pol, n):
			t.Fatalf("%s: %d of %d victims read recently", pol, gone.odd, n)
		case strings.HasSuffix(pol, "-lfu") && n-gone.odd > tolerated(pol, n):
			t.Fatalf("%s: %d of %d victims read often", pol, n-gone.odd, n)
		case strings.HasSuffix(pol, "-random") && (gone.odd < n/4 || gone.odd > n*3/4):
			t.Fatalf("%s: %d of %d victims odd", pol, gone.odd, n)
		case pol == "allkeys-random" && gone.volatile == 0:
			t.Fatalf("%s: only keys without a deadline evicted", pol)
		case pol == "volatile-ttl" && gone.volatileIdx/n > evictKeys*3/8:
			t.Fatalf("%s: mean index of the victims %d of %d", pol, gone.volatileIdx/n, evictKeys)
		}
	}
}

// tolerated is how many of n LRU/LFU victims may be keys the policy should
// keep (read recently or often): a tenth of them, plus every victim beyond
// the cold keys the policy may take (half of the eligible keys). The
// eviction that CONFIG SET runs can go on past 512 KB while garbage the Go
// heap has not collected still counts as used memory, and once the cold
// keys are gone the hot ones must go; volatile-* have only 200 cold keys.
func tolerated(pol string, n int) int {
	cold := evictKeys // allkeys-*: the cold half of 2 × evictKeys keys
	if strings.HasPrefix(pol, "volatile") {
		cold = evictKeys / 2
	}
	return n/10 + max(0, n-cold)
}

// effectMaxmemorySamples: volatile-ttl ranks the sampled keys by
// deadline, so how many are sampled decides how near the victims' deadlines
// are to the nearest ones. Over the same keys, the mean deadline rank of
// the ~127 victims with 64 samples is well below that with 1 (measured:
// 63, the ideal, against 203, that of random victims).
func effectMaxmemorySamples(t *testing.T, c *Conn, addr, name string) {
	evictionCase(t, c, name, "5", "volatile-ttl")
	meanRank := func(samples string) int {
		configSet(t, c, "maxmemory", "0")
		configSet(t, c, name, samples)
		fillForEviction(t, c)
		gone := classify(lowerLimit(t, c, 512<<10))
		if gone.volatile < 64 {
			t.Fatalf("%s %s: evicted %+v", name, samples, gone)
		}
		return gone.volatileIdx / gone.volatile
	}
	one, many := meanRank("1"), meanRank("64")
	t.Logf("mean deadline rank of the victims: samples 1 %d, samples 64 %d", one, many)
	if many*3/2 > one {
		t.Fatalf("samples 64: mean rank %d, samples 1: %d", many, one)
	}
}

// effectEvictionTenacity: maxmemory-eviction-tenacity bounds the time one
// eviction runs (Redis's evictionTimeLimitUs, checked every 16 keys). With
// 800 keys of 4 KB and maxmemory set 2 MB under the usage (allkeys-random),
// at 0 the CONFIG SET and the KEYS after it evict 16 keys each (a cron
// tick may add some), at 100 (no bound) the CONFIG SET evicts the ~500
// keys needed at once.
func effectEvictionTenacity(t *testing.T, c *Conn, addr, name string) {
	evictionCase(t, c, name, "10", "allkeys-random")
	for _, v := range []string{"0", "100"} {
		configSet(t, c, "maxmemory", "0")
		configSet(t, c, name, v)
		fillForEviction(t, c)
		n := len(lowerLimit(t, c, 2<<20))
		t.Logf("tenacity %s: %d keys evicted", v, n)
		if v == "0" && (n < 16 || n > 96) || v == "100" && n < 300 {
			t.Fatalf("%s %s: %d keys evicted for 2 MB of 4 KB values", name, v, n)
		}
	}
}

// evictionCase sets maxmemory-policy pol for the effect test of name and,
// when it ends, empties the keyspace and restores maxmemory 0, noeviction
// and name's default def.
func evictionCase(t *testing.T, c *Conn, name, def, pol string) {
	t.Cleanup(func() {
		mustDo(t, c, "FLUSHALL")
		configSet(t, c, "maxmemory", "0")
		configSet(t, c, "maxmemory-policy", "noeviction")
		configSet(t, c, name, def)
	})
	configSet(t, c, "maxmemory-policy", pol)
}
