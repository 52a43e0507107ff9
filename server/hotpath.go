package server

import (
	_ "unsafe" // go:linkname
)

// nanotime is the runtime's monotonic clock (one vDSO read, no wall-clock
// read): call() times every command with it, where time.Now would read the
// clock twice.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64
