package engine

import (
	"strconv"
	"testing"

	"limitdb/ratelimit"
)

// TestCensusStep: a census in small steps counts each limiter key once
// per pass, by algorithm, and a data set within one step is exact at once.
func TestCensusStep(t *testing.T) {
	h := newRL(2)
	for i := 0; i < 300; i++ {
		algo := "gcra"
		if i%3 == 0 {
			algo = "sliding-window"
		}
		h.do(t0, "RL.ALLOW", "k"+strconv.Itoa(i), "10", "60000", "ALGO", algo)
	}
	h.do(t0, "SET", "plain", "x")
	h.do(t0, "SELECT", "3")
	h.c.DB = h.e.DBs[3]
	h.do(t0, "RL.ALLOW", "other", "10", "60000", "ALGO", "fixed-window")
	var c LimiterCensus
	if !h.e.CensusStep(&c, 1<<20) {
		t.Fatal("a step larger than the data set did not complete a pass")
	}
	want := [LimiterAlgos]int64{}
	want[ratelimit.GCRA], want[ratelimit.SlidingWindow], want[ratelimit.FixedWindow] = 200, 100, 1
	if c.Counts != want {
		t.Fatalf("counts %v, want %v", c.Counts, want)
	}
	steps := 0
	for !h.e.CensusStep(&c, 10) {
		steps++
		if steps > 1000 {
			t.Fatal("no pass completed")
		}
	}
	if steps < 10 || c.Passes != 2 || c.Counts != want {
		t.Fatalf("steps %d passes %d counts %v", steps, c.Passes, c.Counts)
	}
}
