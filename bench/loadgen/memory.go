package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// usedMemory reads used_memory from INFO memory.
func usedMemory(c *conn) int64 {
	r, err := c.do("INFO", "memory")
	if err != nil {
		fatalf("INFO memory: %v", err)
	}
	for _, l := range strings.Split(bulkValue(r), "\r\n") {
		if v, ok := strings.CutPrefix(l, "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// rss reads VmRSS (bytes) of pid from /proc.
func rss(pid int) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		fatalf("read RSS: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			v = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))
			n, _ := strconv.ParseInt(v, 10, 64)
			return n * 1024
		}
	}
	return 0
}

// settledRSS is pid's VmRSS once it stopped moving: limitdb collects and
// returns garbage when it goes idle (server/scavenge.go), which takes a
// moment after a large load. It waits at least 1 s, then until two
// readings 250 ms apart differ by under 0.5%, for at most 10 s.
func settledRSS(pid int) int64 {
	time.Sleep(time.Second)
	prev := rss(pid)
	for deadline := time.Now().Add(9 * time.Second); time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
		cur := rss(pid)
		if d := cur - prev; d*200 < prev && -d*200 < prev {
			return cur
		}
		prev = cur
	}
	return prev
}

// load sends n operations built by b in pipelined batches of 500.
func load(c *conn, s *side, n int, perOp int, b func(b []byte, i int) []byte) {
	const batch = 500
	for i := 0; i < n; i += batch {
		if err := c.sendBatch(i, min(i+batch, n), perOp, b); err != nil {
			fatalf("%s: load: %v", s.name, err)
		}
	}
}

type memRow struct {
	what        string
	refB, candB float64
}

func memoryMode(ref, cand *side) {
	if cand.pid == 0 {
		fatalf("memory mode needs limitdb's pid: start it here (-limitdb-bin) or give -limitdb-pid")
	}
	openConns(ref, 1, 7)
	openConns(cand, 1, 7)
	rc, cc := ref.conns[0], cand.conns[0]
	n := *fMemKeys
	var rows []memRow
	skip := *fSkipMem + ","

	measure := func(what string, perOp int, refB, candB func(b []byte, i int) []byte) {
		time.Sleep(300 * time.Millisecond)
		r0, c0 := usedMemory(rc), rss(cand.pid)
		t := time.Now()
		load(rc, ref, n, perOp, refB)
		tr := time.Since(t)
		t = time.Now()
		load(cc, cand, n, perOp, candB)
		tc := time.Since(t)
		r1, c1 := usedMemory(rc), settledRSS(cand.pid)
		row := memRow{what: what, refB: float64(r1-r0) / float64(n), candB: float64(c1-c0) / float64(n)}
		rows = append(rows, row)
		fmt.Printf("%s: redis used_memory %d -> %d (load %v), limitdb RSS %d -> %d (load %v); errors r/l %d/%d\n",
			what, r0, r1, tr.Round(time.Millisecond), c0, c1, tc.Round(time.Millisecond), rc.errs, cc.errs)
		if rc.lastErr != "" || cc.lastErr != "" {
			fmt.Printf("  first error replies: redis %q limitdb %q\n", rc.lastErr, cc.lastErr)
		}
		rc.errs, cc.errs, rc.lastErr, cc.lastErr = 0, 0, "", ""
	}

	if !strings.Contains(skip, "incr,") {
		incrExpire := func(b []byte, i int) []byte {
			b = appendArrayHdr(b, 2)
			b = appendBulkStr(b, "INCR")
			b = appendBulkKey(b, "k:", int64(i))
			b = appendArrayHdr(b, 3)
			b = appendBulkStr(b, "EXPIRE")
			b = appendBulkKey(b, "k:", int64(i))
			return appendBulkStr(b, "3600")
		}
		measure(fmt.Sprintf("%d x INCR k:i + EXPIRE k:i 3600", n), 2, incrExpire, incrExpire)
	}

	if !strings.Contains(skip, "gcra,") {
		r, err := cc.do("RL.ALLOW", "probe:gcra", "10", "3600000")
		if err != nil || strings.HasPrefix(r, "-") {
			fmt.Printf("GCRA limiters skipped: limitdb answered %q to RL.ALLOW\n", strings.TrimSpace(r))
		} else {
			w := findWorkload("evalsha-tb")
			if err := w.prepare(ref, true, *fSeedDir); err != nil {
				fatalf("%v", err)
			}
			sha := ref.shas[scriptTB]
			now := time.Now().Unix()
			// Redis: the token bucket script (two keys per limiter)
			tb := func(b []byte, i int) []byte {
				b = appendArrayHdr(b, 8)
				b = appendBulkStr(b, "EVALSHA")
				b = appendBulkStr(b, sha)
				b = appendBulkStr(b, "1")
				b = appendBulkKey(b, "lim:", int64(i))
				b = appendBulkStr(b, "10")
				b = appendBulkStr(b, "1")
				b = appendBulkStr(b, "3600")
				return appendBulkInt(b, now)
			}
			gcra := func(b []byte, i int) []byte {
				b = appendArrayHdr(b, 4)
				b = appendBulkStr(b, "RL.ALLOW")
				b = appendBulkKey(b, "lim:", int64(i))
				b = appendBulkStr(b, "10")
				return appendBulkStr(b, "3600000")
			}
			measure(fmt.Sprintf("%d limiters: redis token-bucket Lua vs limitdb RL.ALLOW (GCRA)", n), 1, tb, gcra)
		}
	}

	if !strings.Contains(skip, "zset,") {
		// the documents' sliding log (002-sliding-window-zset.lua): a
		// sorted set of the last 10 requests' millisecond times, members
		// the time and 4 random digits, with a TTL
		now := time.Now().UnixMilli()
		zlog := func(b []byte, i int) []byte {
			b = appendArrayHdr(b, 2+2*10)
			b = appendBulkStr(b, "ZADD")
			b = appendBulkKey(b, "sw:", int64(i))
			for j := int64(0); j < 10; j++ {
				ms := now + int64(i%1000) + j*37
				b = appendBulkInt(b, ms)
				b = appendBulkInt(b, ms*10000+1000+(int64(i)*7919+j*104729)%9000)
			}
			b = appendArrayHdr(b, 3)
			b = appendBulkStr(b, "PEXPIRE")
			b = appendBulkKey(b, "sw:", int64(i))
			return appendBulkStr(b, "3600000")
		}
		measure(fmt.Sprintf("%d sliding logs: ZADD sw:i (10 members) + PEXPIRE", n), 2, zlog, zlog)
	}

	if !strings.Contains(skip, "hash,") {
		// a token bucket kept as a two-field hash with a TTL
		now := time.Now().UnixMilli()
		hb := func(b []byte, i int) []byte {
			b = appendArrayHdr(b, 6)
			b = appendBulkStr(b, "HSET")
			b = appendBulkKey(b, "hb:", int64(i))
			b = appendBulkStr(b, "tokens")
			b = appendBulkInt(b, int64(i%10))
			b = appendBulkStr(b, "ts")
			b = appendBulkInt(b, now+int64(i%1000))
			b = appendArrayHdr(b, 3)
			b = appendBulkStr(b, "PEXPIRE")
			b = appendBulkKey(b, "hb:", int64(i))
			return appendBulkStr(b, "3600000")
		}
		measure(fmt.Sprintf("%d token buckets: HSET hb:i tokens t ts ms + PEXPIRE", n), 2, hb, hb)
	}

	fmt.Println()
	fmt.Printf("%-72s %14s %16s %7s\n", "memory per key", "redis B/key", "limitdb B/key", "ratio")
	for _, r := range rows {
		fmt.Printf("%-72s %14.1f %16.1f %7.2f\n", r.what, r.refB, r.candB, r.candB/r.refB)
	}
	fmt.Println("(redis: used_memory growth; limitdb: VmRSS growth of its process)")
}

// cpuNs is the CPU time (ns) all threads of pid have run, from
// /proc/<pid>/task/*/schedstat (0 when pid is 0 or unreadable).
func cpuNs(pid int) int64 {
	if pid == 0 {
		return 0
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var sum int64
	var buf [128]byte
	for _, e := range ents {
		f, err := os.Open(dir + "/" + e.Name() + "/schedstat")
		if err != nil {
			continue
		}
		n, _ := f.Read(buf[:])
		f.Close()
		fs := strings.Fields(string(buf[:n]))
		if len(fs) > 0 {
			v, _ := strconv.ParseInt(fs[0], 10, 64)
			sum += v
		}
	}
	return sum
}
