package server

import (
	"os"
	"runtime/debug"
)

// gcFloor is the garbage the collector may let accumulate before a
// collection when the live heap is small: GOGC is raised so that the heap
// goal is max(2 × live, live + gcFloor). A write leaves garbage of its own
// (the log entry and its encodings, the replaced value), and with the
// default GOGC the heap of a small data set was collected several times a
// second: at SET/INCR P=16 on 10,000 keys the collector (mark workers,
// sweeping, assists) took 8–10 % of the CPU; GOGC=400 measured 0.89–0.92
// of the default's CPU per command. Above gcFloor of live data GOGC stays
// at 100, so the memory per key of large data sets does not change, and
// an idle server returns the garbage (scavenge.go).
//
// Not while any server has maxmemory set: used_memory counts garbage, and
// eviction would then evict for it (setGoMemoryLimit keeps the heap near
// maxmemory instead). Not when the environment sets GOGC: the operator's
// choice stands.
const gcFloor = 64 << 20

// gcPercentMax bounds GOGC while the live heap is tiny (a fresh server):
// Go's minimum heap goal is 4 MB × GOGC/100, so 1600 makes it gcFloor.
const gcPercentMax = 1600

// paceGC sets GOGC from the live heap measured by the last collection
// (the cron passes it every tick; setGoMemoryLimit passes 0 to re-apply
// the last). Called with goMem held.
func paceGC(live uint64) {
	if goMem.envGOGC == nil {
		_, set := os.LookupEnv("GOGC")
		goMem.envGOGC = &set
	}
	if *goMem.envGOGC {
		return
	}
	if live != 0 {
		goMem.live = live
	}
	pct := 100
	if len(goMem.users) == 0 && goMem.live < gcFloor {
		pct = int(min(gcFloor*100/max(goMem.live, 1), gcPercentMax))
	}
	// a change under an eighth is not worth a call (each takes the heap
	// lock): the goal moves by less than that
	if d := pct - goMem.gcPercent; goMem.gcPercent != 0 && d < goMem.gcPercent/8 && -d < goMem.gcPercent/8 && (pct == 100) == (goMem.gcPercent == 100) {
		return
	}
	goMem.gcPercent = pct
	debug.SetGCPercent(pct)
}
