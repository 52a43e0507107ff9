package procs

import (
	"os"
	"runtime"
	"testing"
)

// TestServeAndBackground: one P while serving, two while a job runs,
// back to one when the last of overlapping jobs ends; an end called
// twice counts once.
func TestServeAndBackground(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" || runtime.NumCPU() < 2 {
		t.Skip("GOMAXPROCS is set in the environment, or one CPU: Serve leaves the count alone")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer func() { mu.Lock(); active = false; mu.Unlock() }()
	Serve()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("serving: GOMAXPROCS %d, want 1", n)
	}
	end1 := Background()
	end2 := Background()
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Fatalf("two jobs: GOMAXPROCS %d, want 2", n)
	}
	end1()
	end1()
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Fatalf("one job left (its sibling's end called twice): GOMAXPROCS %d, want 2", n)
	}
	end2()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("no job: GOMAXPROCS %d, want 1", n)
	}
}
