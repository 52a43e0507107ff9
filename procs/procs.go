// Package procs sets how many Ps (GOMAXPROCS) the Go runtime gives the
// limitdb process: one while it serves, as Redis's one main thread, and a
// second while a background job (a snapshot being written) runs beside
// the serving thread, as Redis's forked child does. DESIGN.md says why.
package procs

import (
	"os"
	"runtime"
	"sync"
)

var (
	mu     sync.Mutex
	active bool // Serve took the count: no GOMAXPROCS in the environment, 2 CPUs or more
	jobs   int  // background jobs running
)

// Serve gives the process one P from now on, and two while a background
// job runs. It does nothing when GOMAXPROCS is set in the environment
// (the operator chose) or the machine has one CPU. The binary calls it
// once its data is loaded; the server packages' tests, which never call
// it, keep Go's default.
func Serve() {
	if os.Getenv("GOMAXPROCS") != "" || runtime.NumCPU() < 2 {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	active = true
	if jobs == 0 {
		runtime.GOMAXPROCS(1)
	}
}

// Background marks a background job for as long as it runs; call the
// returned function (once; later calls do nothing) when it ends.
func Background() (end func()) {
	mu.Lock()
	if jobs++; active && jobs == 1 {
		runtime.GOMAXPROCS(2)
	}
	mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			if jobs--; active && jobs == 0 {
				runtime.GOMAXPROCS(1)
			}
			mu.Unlock()
		})
	}
}
