package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

var (
	fMaxmem     = flag.String("maxmemory", "100mb", "maxmemory mode: the limit set on both servers")
	fMaxmemSets = flag.Int("maxmemory-sets", 300000, "maxmemory mode: pipelined 1 KB SETs sent to each server")
	fHeadroom   = flag.Int64("headroom", 0, "maxmemory mode: when > 0, set maxmemory to each server's used_memory at the start plus this many bytes instead of -maxmemory")
)

// mmResult is one server's outcome under the maxmemory load.
type mmResult struct {
	limit             int64
	keys              int64
	evicted           int64
	errs              int64
	firstErr          string
	emptyRefusals     int64 // OOM replies in a batch after which DBSIZE was 0
	peakRSS, endUsed  int64
	notCounted        int64
	took              time.Duration
	cpu               time.Duration // the server's CPU time during the load
	minKeysAfterEvict int64         // fewest keys seen after a batch once eviction began
}

// maxmemoryMode is issue 18's measurement: maxmemory with allkeys-lru on
// both servers, then -maxmemory-sets SETs of 1000-byte values on distinct
// keys in pipelined batches of 500; per server the keys kept, the keys
// evicted, the error replies (OOM refusals), the peak VmRSS sampled after
// every batch and the time taken. Redis runs first, then limitdb, so that
// the two never share the cores.
func maxmemoryMode(ref, cand *side) {
	openConns(ref, 1, 7)
	openConns(cand, 1, 7)
	rr := maxmemoryRun(ref)
	cr := maxmemoryRun(cand)
	fmt.Println()
	fmt.Printf("%-32s %14s %14s %7s\n", "", "redis", "limitdb", "ratio")
	row := func(what string, r, c float64, f string) {
		ratio := "-"
		if r != 0 {
			ratio = fmt.Sprintf("%.2f", c/r)
		}
		fmt.Printf("%-32s %14s %14s %7s\n", what, fmt.Sprintf(f, r), fmt.Sprintf(f, c), ratio)
	}
	row("maxmemory (MB)", mb(rr.limit), mb(cr.limit), "%.1f")
	row("keys kept", float64(rr.keys), float64(cr.keys), "%.0f")
	row("evicted_keys", float64(rr.evicted), float64(cr.evicted), "%.0f")
	row("error replies", float64(rr.errs), float64(cr.errs), "%.0f")
	row("refusals with DBSIZE 0", float64(rr.emptyRefusals), float64(cr.emptyRefusals), "%.0f")
	row("fewest keys after a batch", float64(rr.minKeysAfterEvict), float64(cr.minKeysAfterEvict), "%.0f")
	row("load time (s)", rr.took.Seconds(), cr.took.Seconds(), "%.2f")
	row("server CPU during the load (s)", rr.cpu.Seconds(), cr.cpu.Seconds(), "%.2f")
	row("peak VmRSS (MB)", mb(rr.peakRSS), mb(cr.peakRSS), "%.1f")
	row("peak VmRSS / maxmemory", float64(rr.peakRSS)/float64(rr.limit), float64(cr.peakRSS)/float64(cr.limit), "%.2f")
	row("used_memory at the end (MB)", mb(rr.endUsed), mb(cr.endUsed), "%.1f")
	row("mem_not_counted_for_evict (MB)", mb(rr.notCounted), mb(cr.notCounted), "%.1f")
	if rr.firstErr != "" || cr.firstErr != "" {
		fmt.Printf("first error replies: redis %q limitdb %q\n", rr.firstErr, cr.firstErr)
	}
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

func infoInt(c *conn, section, field string) int64 {
	r, err := c.do("INFO", section)
	if err != nil {
		fatalf("INFO %s: %v", section, err)
	}
	for _, l := range strings.Split(bulkValue(r), "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

func dbsize(c *conn) int64 {
	r, err := c.do("DBSIZE")
	if err != nil || len(r) < 3 {
		fatalf("DBSIZE: %q %v", r, err)
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(r[1:]), 10, 64)
	return n
}

func maxmemoryRun(s *side) mmResult {
	c := s.conns[0]
	if r, err := c.do("FLUSHALL"); err != nil || r != "+OK\r\n" {
		fatalf("%s: FLUSHALL: %q %v", s.name, r, err)
	}
	time.Sleep(300 * time.Millisecond)
	limit := *fMaxmem
	if *fHeadroom > 0 {
		limit = strconv.FormatInt(usedMemory(c)+*fHeadroom, 10)
	}
	if r, err := c.do("CONFIG", "SET", "maxmemory", limit, "maxmemory-policy", "allkeys-lru"); err != nil || r != "+OK\r\n" {
		fatalf("%s: CONFIG SET maxmemory: %q %v", s.name, r, err)
	}
	res := mmResult{limit: infoInt(c, "memory", "maxmemory"), minKeysAfterEvict: -1}
	val := strings.Repeat("x", 1000)
	set := func(b []byte, j int) []byte {
		b = appendArrayHdr(b, 3)
		b = appendBulkStr(b, "SET")
		b = appendBulkKey(b, "key:", int64(j))
		return appendBulkStr(b, val)
	}
	const batch = 500
	n := *fMaxmemSets
	start, cpu0 := time.Now(), cpuNs(s.pid)
	for i := 0; i < n; i += batch {
		k := min(i+batch, n) - i
		errs := c.errs
		if err := c.sendBatch(i, i+k, 1, set); err != nil {
			fatalf("%s: load: %v", s.name, err)
		}
		if s.pid != 0 {
			res.peakRSS = max(res.peakRSS, rss(s.pid))
		}
		// the keyspace after the batch, once eviction has begun (a
		// DBSIZE every 20 batches and after any batch with an error)
		if c.errs != errs || i/batch%20 == 19 {
			keys := dbsize(c)
			if c.errs != errs && keys == 0 {
				res.emptyRefusals += c.errs - errs
			}
			if int64(i+k) > keys && (res.minKeysAfterEvict < 0 || keys < res.minKeysAfterEvict) {
				res.minKeysAfterEvict = keys
			}
		}
	}
	res.took, res.cpu = time.Since(start), time.Duration(cpuNs(s.pid)-cpu0)
	res.keys = dbsize(c)
	res.evicted = infoInt(c, "stats", "evicted_keys")
	res.errs, res.firstErr = c.errs, c.lastErr
	res.endUsed = infoInt(c, "memory", "used_memory")
	res.notCounted = infoInt(c, "memory", "mem_not_counted_for_evict")
	fmt.Printf("%s: maxmemory %d, %d SETs in %v: %d keys, %d evicted, %d error replies, peak RSS %.1f MB\n",
		s.name, res.limit, n, res.took.Round(time.Millisecond), res.keys, res.evicted, res.errs, mb(res.peakRSS))
	c.errs, c.lastErr = 0, ""
	if r, err := c.do("CONFIG", "SET", "maxmemory", "0"); err != nil || r != "+OK\r\n" {
		fatalf("%s: CONFIG SET maxmemory 0: %q %v", s.name, r, err)
	}
	return res
}
