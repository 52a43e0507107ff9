package main

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The blpop workload: a BLPOP/LPUSH ping-pong between the two
// connections of each pair (so -conns 50 is 25 pairs). The measured side
// A pipelines LPUSH pp:<i>:ping x and BLPOP pp:<i>:pong 0, and waits for
// both replies: one operation is one exchange. The other side B answers:
// BLPOP pp:<i>:ping 0.05, then LPUSH pp:<i>:pong x, so A's BLPOP is
// served by a push from another client each time, and most of the time B
// is blocked when A's ping arrives (the blocking path, not the immediate
// pop). B's timeout only lets it notice that A stopped at the slice's end.
// Only A's operations and A's time count.

// runPingPong is runSlice for the blpop workload.
func runPingPong(s *side, ws []*worker, dur time.Duration, measure bool) float64 {
	var wg sync.WaitGroup
	cpu0 := s.cpuNs()
	start := time.Now()
	stop := start.Add(dur)
	pairs := len(ws) / 2
	var lastEnd atomic.Int64
	for i := 0; i < pairs; i++ {
		a, b := ws[2*i], ws[2*i+1]
		ping, pong := "pp:"+strconv.Itoa(i)+":ping", "pp:"+strconv.Itoa(i)+":pong"
		var aOp, bPop, bPush []byte
		aOp = appendArrayHdr(aOp, 3)
		aOp = appendBulkStr(aOp, "LPUSH")
		aOp = appendBulkStr(aOp, ping)
		aOp = appendBulkStr(aOp, "x")
		aOp = appendArrayHdr(aOp, 3)
		aOp = appendBulkStr(aOp, "BLPOP")
		aOp = appendBulkStr(aOp, pong)
		aOp = appendBulkStr(aOp, "0")
		bPop = appendArrayHdr(bPop, 3)
		bPop = appendBulkStr(bPop, "BLPOP")
		bPop = appendBulkStr(bPop, ping)
		bPop = appendBulkStr(bPop, "0.05")
		bPush = appendArrayHdr(bPush, 3)
		bPush = appendBulkStr(bPush, "LPUSH")
		bPush = appendBulkStr(bPush, pong)
		bPush = appendBulkStr(bPush, "x")
		var aDone atomic.Bool
		wg.Add(2)
		go func(wk *worker) {
			defer wg.Done()
			defer aDone.Store(true)
			c := wk.c
			for {
				t0 := time.Now()
				if !t0.Before(stop) {
					return
				}
				c.wbuf = append(c.wbuf[:0], aOp...)
				if err := c.roundTrip(2); err != nil {
					wk.err = err
					return
				}
				end := time.Now()
				if measure {
					wk.h[bucketOf(end.Sub(t0).Microseconds())]++
					wk.ops++
				}
				for {
					l := lastEnd.Load()
					if end.UnixNano() <= l || lastEnd.CompareAndSwap(l, end.UnixNano()) {
						break
					}
				}
			}
		}(a)
		go func(wk *worker) {
			defer wg.Done()
			c := wk.c
			for {
				c.wbuf = append(c.wbuf[:0], bPop...)
				if err := c.roundTrip(1); err != nil {
					wk.err = err
					return
				}
				if c.lastNull {
					if aDone.Load() {
						return
					}
					continue
				}
				c.wbuf = append(c.wbuf[:0], bPush...)
				if err := c.roundTrip(1); err != nil {
					wk.err = err
					return
				}
			}
		}(b)
	}
	wg.Wait()
	el := time.Duration(lastEnd.Load() - start.UnixNano())
	if el <= 0 {
		el = time.Since(start)
	}
	if measure && s.pid != 0 {
		s.cpu += s.cpuNs() - cpu0
	}
	var ops int64
	for _, wk := range ws {
		if wk.err != nil {
			fatalf("%s: blpop: %v", s.name, wk.err)
		}
		ops += wk.ops
		wk.ops = 0
	}
	if measure {
		s.ops += ops
	}
	return float64(ops) / el.Seconds()
}
