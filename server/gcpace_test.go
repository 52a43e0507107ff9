package server

import (
	"runtime/debug"
	"testing"
)

// TestPaceGC: GOGC makes the heap goal live + gcFloor below gcFloor of
// live data (at most gcPercentMax), is 100 above it, and is 100 at once
// while a server has maxmemory set.
func TestPaceGC(t *testing.T) {
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	goMem.Lock()
	env, pct, live := goMem.envGOGC, goMem.gcPercent, goMem.live
	no := false
	goMem.envGOGC, goMem.gcPercent, goMem.live = &no, 0, 0
	goMem.Unlock()
	defer func() {
		goMem.Lock()
		goMem.envGOGC, goMem.gcPercent, goMem.live = env, pct, live
		goMem.Unlock()
	}()
	current := func() int {
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p
	}
	for _, c := range []struct {
		live uint64
		want int
	}{
		{1 << 20, gcPercentMax},
		{16 << 20, 400},
		{17 << 20, 400}, // within an eighth: left as it was
		{32 << 20, 200},
		{64 << 20, 100},
		{1 << 30, 100},
		{8 << 20, 800},
	} {
		goMem.Lock()
		paceGC(c.live)
		goMem.Unlock()
		if got := current(); got != c.want {
			t.Fatalf("live %d MB: GOGC %d, want %d", c.live>>20, got, c.want)
		}
	}
	s := New(Config{}, nil)
	for _, c := range []struct {
		maxmemory string
		want      int
	}{
		{"1073741824", 100}, // maxmemory set: no floor
		{"0", 800},          // unset: paced again
	} {
		s.door.Lock()
		s.conf.params["maxmemory"] = c.maxmemory
		s.applyMaxmemory()
		s.door.Unlock()
		if got := current(); got != c.want {
			t.Fatalf("maxmemory %s: GOGC %d, want %d", c.maxmemory, got, c.want)
		}
	}
}
