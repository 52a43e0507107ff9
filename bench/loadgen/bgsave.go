package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Background saves during a benchmark (-preload, -bgsave-loop): the data
// set is grown to -preload keys on both servers before the cases, and a
// goroutine keeps a BGSAVE running on the chosen server(s) for the whole
// run: BGSAVE, poll INFO persistence until it is over, start the next
// (at once, or -bgsave-every after the previous one started, so that two
// servers whose saves take different times do the same number).

// preload loads n keys (INCR pre:i + EXPIRE pre:i 3600, pipelined) into s.
func preload(s *side, n int) {
	c, err := dial(s.addr, s.auth, 99)
	if err != nil {
		fatalf("%s: %v", s.name, err)
	}
	defer c.nc.Close()
	t := time.Now()
	load(c, s, n, 2, func(b []byte, i int) []byte {
		b = appendArrayHdr(b, 2)
		b = appendBulkStr(b, "INCR")
		b = appendBulkKey(b, "pre:", int64(i))
		b = appendArrayHdr(b, 3)
		b = appendBulkStr(b, "EXPIRE")
		b = appendBulkKey(b, "pre:", int64(i))
		return appendBulkStr(b, "3600")
	})
	fmt.Printf("preloaded %d keys into %s in %v (errors %d)\n", n, s.name, time.Since(t).Round(time.Millisecond), c.errs)
}

// bgsaveLoop runs BGSAVEs back to back on s until stop is closed.
type bgsaveLoop struct {
	s     *side
	mu    sync.Mutex
	times []time.Duration // completed saves
	fails int
	first string // first unexpected reply
}

func (l *bgsaveLoop) run(stop chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	c, err := dial(l.s.addr, l.s.auth, 98)
	if err != nil {
		fatalf("%s: %v", l.s.name, err)
	}
	defer c.nc.Close()
	inProgress := func() bool {
		r, err := c.do("INFO", "persistence")
		if err != nil {
			fatalf("%s: INFO: %v", l.s.name, err)
		}
		return strings.Contains(r, "rdb_bgsave_in_progress:1")
	}
	var last time.Time
	for {
		select {
		case <-stop:
			return
		default:
		}
		for inProgress() { // one left by a previous case
			time.Sleep(20 * time.Millisecond)
		}
		if wait := *fBgEvery - time.Since(last); wait > 0 {
			select {
			case <-stop:
				return
			case <-time.After(wait):
			}
		}
		t := time.Now()
		last = t
		r, err := c.do("BGSAVE")
		if err != nil || !strings.HasPrefix(r, "+Background saving started") {
			l.mu.Lock()
			l.fails++
			if l.first == "" {
				l.first = fmt.Sprintf("%q %v", r, err)
			}
			l.mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for inProgress() {
			time.Sleep(20 * time.Millisecond)
		}
		l.mu.Lock()
		l.times = append(l.times, time.Since(t))
		l.mu.Unlock()
	}
}

func (l *bgsaveLoop) report() {
	l.mu.Lock()
	defer l.mu.Unlock()
	ts := append([]time.Duration(nil), l.times...)
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	if len(ts) == 0 {
		fmt.Printf("%s: no BGSAVE completed (%d refused: %s)\n", l.s.name, l.fails, l.first)
		return
	}
	fmt.Printf("%s: %d BGSAVEs completed, duration median %v, min %v, max %v (as seen by polling INFO every 20 ms); %d refused %s\n",
		l.s.name, len(ts), ts[len(ts)/2].Round(time.Millisecond), ts[0].Round(time.Millisecond), ts[len(ts)-1].Round(time.Millisecond), l.fails, l.first)
}

// startBgsaveLoops starts the loops -bgsave-loop asks for; the returned
// function stops them and prints what they did.
func startBgsaveLoops(ref, cand *side) func() {
	var loops []*bgsaveLoop
	switch *fBgsave {
	case "", "none":
		return func() {}
	case "limitdb":
		loops = []*bgsaveLoop{{s: cand}}
	case "both":
		loops = []*bgsaveLoop{{s: ref}, {s: cand}}
	default:
		fatalf("-bgsave-loop %q: none, limitdb or both", *fBgsave)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, l := range loops {
		wg.Add(1)
		go l.run(stop, &wg)
	}
	return func() {
		close(stop)
		wg.Wait()
		fmt.Println()
		for _, l := range loops {
			l.report()
		}
	}
}
