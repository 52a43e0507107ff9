package tests

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mmInfo returns the value of field in an INFO reply.
func mmInfo(t *testing.T, c *Conn, section, field string) string {
	t.Helper()
	r, err := c.Do("INFO", section)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(r), "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return ""
}

func mmInfoInt(t *testing.T, c *Conn, section, field string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(mmInfo(t, c, section, field), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mmExpect(t *testing.T, c *Conn, want string, args ...string) {
	t.Helper()
	r, err := c.Do(args...)
	if err != nil || (want != "" && string(r) != want) {
		t.Fatalf("%v: %q %v, want %q", args, r, err, want)
	}
}

// TestMaxmemoryInfoFields: INFO memory and stats carry the maxmemory
// fields on both servers (mem_not_counted_for_evict among them), with the same values for maxmemory, its human
// form and the policy.
func TestMaxmemoryInfoFields(t *testing.T) {
	for _, addr := range []string{redisAddr, limitAddr} {
		c := mustDial(t, addr)
		mmExpect(t, c, "+OK\r\n", "CONFIG", "SET", "maxmemory", "3gb", "maxmemory-policy", "volatile-ttl")
		got := mmInfo(t, c, "memory", "maxmemory") + " " + mmInfo(t, c, "memory", "maxmemory_human") + " " + mmInfo(t, c, "memory", "maxmemory_policy")
		if got != "3221225472 3.00G volatile-ttl" {
			t.Errorf("%s: %q", addr, got)
		}
		mmInfoInt(t, c, "memory", "used_memory")
		mmInfoInt(t, c, "memory", "mem_not_counted_for_evict")
		mmInfoInt(t, c, "stats", "evicted_keys")
		mmExpect(t, c, "+OK\r\n", "CONFIG", "SET", "maxmemory", "0", "maxmemory-policy", "noeviction")
	}
}

// TestMaxmemoryEviction drives a limitdb process over its limit (its own
// process: used_memory is the Go heap, which an in-process server shares
// with the tests):
// allkeys-random evicts (evicted_keys counts, used_memory stays near the
// limit), lowering maxmemory below the usage evicts at once, and
// volatile-lru with no key that has a deadline refuses writes with OOM
// while reads and DEL still work.
func TestMaxmemoryEviction(t *testing.T) {
	addr, _ := mustLimitdbProcess(t)
	c := mustDial(t, addr)
	defer c.Do("CONFIG", "SET", "maxmemory", "0", "maxmemory-policy", "noeviction")
	mmExpect(t, c, "+OK\r\n", "FLUSHALL")
	base := mmInfoInt(t, c, "memory", "used_memory")
	limit := base + 16<<20
	mmExpect(t, c, "+OK\r\n", "CONFIG", "SET", "maxmemory", strconv.FormatInt(limit, 10), "maxmemory-policy", "allkeys-random")
	val := strings.Repeat("v", 4096)
	for i := 0; i < 16000; i++ { // 64 MB
		mmExpect(t, c, "+OK\r\n", "SET", fmt.Sprintf("key:%d", i), val)
	}
	evicted := mmInfoInt(t, c, "stats", "evicted_keys")
	used := mmInfoInt(t, c, "memory", "used_memory")
	n, _ := c.Do("DBSIZE")
	t.Logf("limit %d, used %d, evicted %d, dbsize %s", limit, used, evicted, strings.TrimSpace(string(n)))
	if evicted < 8000 || used > limit+limit/4 {
		t.Fatalf("evicted %d keys, used %d for a limit of %d", evicted, used, limit)
	}

	// CONFIG SET below the usage evicts, at once or (while the collection
	// that earlier evictions started runs) from the cron, as Redis's
	// eviction timer does
	before := mmDBSize(t, c)
	mmExpect(t, c, "+OK\r\n", "CONFIG", "SET", "maxmemory", strconv.FormatInt(base+1<<20, 10))
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		after := mmDBSize(t, c)
		if after < before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lowering maxmemory left %d keys of %d after 3 s", after, before)
		}
	}

	// volatile-*: nothing has a deadline, so writes are refused (once the
	// collection that the evictions above may have started has ended:
	// meanwhile eviction counts as running and writes go on, as in Redis)
	mmExpect(t, c, "+OK\r\n", "CONFIG", "SET", "maxmemory", strconv.FormatInt(base/2, 10), "maxmemory-policy", "volatile-lru")
	for i := 0; ; i++ {
		r, err := c.Do("SET", "x", "1")
		if err != nil {
			t.Fatal(err)
		}
		if string(r) == "-OOM command not allowed when used memory > 'maxmemory'.\r\n" {
			break
		}
		if i == 500 {
			t.Fatalf("SET over maxmemory with nothing to evict: %q", r)
		}
		time.Sleep(10 * time.Millisecond)
	}
	mmExpect(t, c, "-OOM command not allowed when used memory > 'maxmemory'.\r\n", "RL.ALLOW", "rl", "10", "1")
	mmExpect(t, c, "", "GET", "key:1")
	mmExpect(t, c, "", "DEL", "key:1")
	mmExpect(t, c, "+OK\r\n", "CONFIG", "SET", "maxmemory", "0")
	mmExpect(t, c, "+OK\r\n", "FLUSHALL")
}

func mmDBSize(t *testing.T, c *Conn) int {
	r, err := c.Do("DBSIZE")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(r[1:])))
	return n
}

// procRSS is the resident set of process pid, bytes.
func procRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS")
}

// TestMaxmemoryRSS is the measurement: a limitdb process with
// maxmemory 64mb (allkeys-lru) receives ten times that much data (655,360
// SETs of 1000-byte values, pipelined); its resident memory, sampled after
// every batch, stays within 1.5 × maxmemory.
func TestMaxmemoryRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and writes 640 MB")
	}
	addr, pid := mustLimitdbProcess(t)
	c := mustDial(t, addr)
	const maxmem = 64 << 20
	mmExpect(t, c, "+OK\r\n", "CONFIG", "SET", "maxmemory", "64mb", "maxmemory-policy", "allkeys-lru")
	val := strings.Repeat("x", 1000)
	const batch, total = 1024, 10 * maxmem / 1000
	var peak int64
	deadline := time.Now().Add(3 * time.Minute)
	br := bufio.NewReader(c.nc)
	for sent := 0; sent < total; sent += batch {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d SETs within the time bound", sent, total)
		}
		var req []byte
		for i := 0; i < batch; i++ {
			req = append(req, Encode("SET", "key:"+strconv.Itoa(sent+i), val)...)
		}
		if err := c.Send(req); err != nil {
			t.Fatal(err)
		}
		c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
		for i := 0; i < batch; i++ {
			l, err := br.ReadString('\n')
			if err != nil || l != "+OK\r\n" {
				t.Fatalf("SET %d: %q %v", sent+i, l, err)
			}
		}
		rss, err := procRSS(pid)
		if err != nil {
			t.Fatal(err)
		}
		peak = max(peak, rss)
	}
	c.br = br
	used := mmInfoInt(t, c, "memory", "used_memory")
	evicted := mmInfoInt(t, c, "stats", "evicted_keys")
	t.Logf("maxmemory %d MB, written %d MB: peak VmRSS %.1f MB (%.2f x), used_memory %.1f MB, evicted %d, %d keys left",
		maxmem>>20, total*1000>>20, float64(peak)/(1<<20), float64(peak)/maxmem, float64(used)/(1<<20), evicted, mmDBSize(t, c))
	if peak > maxmem*3/2 {
		t.Fatalf("peak RSS %d > 1.5 x maxmemory", peak)
	}
	if used > maxmem+maxmem/10 {
		t.Fatalf("used_memory %d well over maxmemory", used)
	}
}
