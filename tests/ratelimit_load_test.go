package tests

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"math/rand"
	"net"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestRLLoad compares RL.ALLOW key:<random of 10k> 10 1000 on limitdb with
// the equivalent seed scripts run by EVALSHA on the real redis-server: 50
// connections, without pipelining and with 16-deep pipelines, interleaved
// runs. It is a measurement, not a check: run it with RL_LOAD=1.
func TestRLLoad(t *testing.T) {
	if os.Getenv("RL_LOAD") == "" {
		t.Skip("set RL_LOAD=1 to run the load comparison")
	}
	dur := 2 * time.Second
	tb := seed(t, "001-token-bucket.lua")
	fw := seed(t, "001-counter.lua")
	r := dialT(t, redisAddr)
	for _, s := range []string{tb, fw} {
		do(t, r, "SCRIPT", "LOAD", s)
	}
	sha := func(s string) string { h := sha1.Sum([]byte(s)); return hex.EncodeToString(h[:]) }
	type target struct {
		name, addr string
		cmd        func(key string) []byte
	}
	targets := []target{
		{"limitdb RL.ALLOW (gcra)", limitAddr, func(k string) []byte { return Encode("RL.ALLOW", k, "10", "1000") }},
		{"redis EVALSHA 001-token-bucket", redisAddr, func(k string) []byte {
			return Encode("EVALSHA", sha(tb), "1", k, "10", "10", "1", strconv.FormatInt(time.Now().Unix(), 10))
		}},
		{"limitdb RL.ALLOW token-bucket", limitAddr, func(k string) []byte { return Encode("RL.ALLOW", k+"t", "10", "1000", "ALGO", "token-bucket") }},
		{"redis EVALSHA 001-counter", redisAddr, func(k string) []byte { return Encode("EVALSHA", sha(fw), "1", k+"f", "10", "1") }},
		{"limitdb RL.ALLOW fixed-window", limitAddr, func(k string) []byte { return Encode("RL.ALLOW", k+"f", "10", "1000", "ALGO", "fixed-window") }},
	}
	for _, depth := range []int{1, 16} {
		for _, tg := range targets {
			ops, p99 := loadRun(t, tg.addr, 50, depth, dur, tg.cmd)
			t.Logf("pipeline %2d  %-32s %9.0f ops/s  p99 %v", depth, tg.name, ops, p99)
		}
	}
}

func loadRun(t *testing.T, addr string, conns, depth int, dur time.Duration, cmd func(string) []byte) (float64, time.Duration) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var lat []time.Duration
	total := 0
	deadline := time.Now().Add(dur)
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer nc.Close()
			br := bufio.NewReader(nc)
			rng := rand.New(rand.NewSource(seed))
			var my []time.Duration
			n := 0
			var buf []byte
			var out bytes.Buffer
			for time.Now().Before(deadline) && n < 5_000_000 {
				buf = buf[:0]
				for j := 0; j < depth; j++ {
					buf = append(buf, cmd("key:"+strconv.Itoa(rng.Intn(10000)))...)
				}
				start := time.Now()
				if _, err := nc.Write(buf); err != nil {
					t.Error(err)
					return
				}
				for j := 0; j < depth; j++ {
					out.Reset()
					if err := readValue(br, &out); err != nil {
						t.Error(err)
						return
					}
				}
				my = append(my, time.Since(start))
				n += depth
			}
			mu.Lock()
			lat = append(lat, my...)
			total += n
			mu.Unlock()
		}(int64(i))
	}
	wg.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	var p99 time.Duration
	if len(lat) > 0 {
		p99 = lat[len(lat)*99/100]
	}
	return float64(total) / dur.Seconds(), p99
}
