package server

import (
	"sync"
	"time"
)

// Scripts on the event loop. EVAL, EVALSHA, FCALL and the rest run in the
// loop's turn like any other command: handing a script's connection to a
// goroutine for it (and back after calmBatches) held EVALSHA at P=1 to
// 0.83–1.04 × Redis's throughput at 1.54–1.87 × its p99, on the loop
// 1.09–1.16 × at 0.80–1.05 × (bench/RESULTS.md, "Scripts on the event
// loop"). The loop cannot serve anyone while a script runs, so each loop
// has a watchdog: when the running script passes busy-reply-threshold,
// the watchdog's goroutine hands the loop's other connections to
// goroutines of their own (continueOff), where they get BUSY, or have
// their SCRIPT KILL, FUNCTION KILL or SHUTDOWN NOSAVE served
// (scriptBusy), while the loop goroutine is inside the script.
// Connections accepted or given back to the loop meanwhile go to
// goroutines too (adopt). When the script ends the loop goes on; the
// connections come back as any do (calmBatches).

// loopScript is a loop's watchdog. One timer, armed when a script starts
// with none armed: a loop running scripts back to back pays two uncontended
// lock pairs per script and a timer firing once per threshold, not a timer
// per script.
type loopScript struct {
	mu sync.Mutex
	// cl: the client whose script the loop goroutine runs (nil: none).
	// While it is set the loop goroutine touches none of the loop's
	// state (conns, writes, parked …), so the watchdog may, under mu.
	cl      *client
	armed   bool  // the timer is set
	armedMs int64 // the threshold it was set for
	took    bool  // the watchdog handed the loop's connections off
	timer   *time.Timer
}

// scriptStart is called on the loop goroutine, the engine lock held, as
// cl's script command starts. The turn's replies so far go out first
// (flushWrites): a client served earlier in the turn does not wait for
// the script.
func (lp *evLoop) scriptStart(cl *client) {
	lp.flushWrites(cl)
	limit := lp.s.eng.Guard.Limit()
	ls := &lp.script
	ls.mu.Lock()
	ls.cl = cl
	if !ls.armed || limit < ls.armedMs {
		ls.arm(limit, limit)
	}
	ls.mu.Unlock()
}

// arm sets the timer to fire in ms milliseconds for the threshold limit.
// ls.mu held.
func (ls *loopScript) arm(ms, limit int64) {
	ls.armed, ls.armedMs = true, limit
	d := time.Duration(max(ms, 1)) * time.Millisecond
	if ls.timer == nil {
		ls.timer = time.AfterFunc(d, ls.fired)
		return
	}
	ls.timer.Reset(d)
}

// scriptEnd is called on the loop goroutine when the script command ends
// (or panicked): the loop's state is its own again.
func (lp *evLoop) scriptEnd() {
	ls := &lp.script
	ls.mu.Lock()
	ls.cl = nil
	took := ls.took
	ls.took = false
	ls.mu.Unlock()
	if took {
		lp.mu.Lock()
		lp.taken = false
		lp.mu.Unlock()
	}
}

// fired is the watchdog's timer: a script past the threshold gets the
// loop's connections handed off; one still within it re-arms the timer
// for the rest; with none running the timer stays off until the next
// script starts.
func (ls *loopScript) fired() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.cl == nil || ls.took {
		ls.armed = false
		return
	}
	lp := ls.cl.lc.lp
	g := &lp.s.eng.Guard
	start, now, timedOut := lp.s.scriptTimedOut()
	if !timedOut {
		limit := g.Limit()
		wait := limit // the script's interpreter has not started yet
		if start != 0 {
			wait = start + limit - now
		}
		ls.arm(wait, limit)
		return
	}
	ls.armed, ls.took = false, true
	lp.takeOver(ls.cl)
}

// takeOver hands every connection of the loop that the script does not
// stop from running to a goroutine (continueOff): those that wait for
// their turn, with replies of this turn yet to write (the goroutine writes
// them), or that are new (adopts). It keeps the script's client, the
// parked ones (their replies wait for a commit: the turn's records are
// proposed after the script) and the blocked ones (nothing runs for them
// until their answer). Watchdog goroutine, lp.script.mu held, the loop
// goroutine inside the script.
func (lp *evLoop) takeOver(run *client) {
	lp.mu.Lock()
	lp.taken = true
	adopts := lp.adopts
	lp.adopts = nil
	lp.mu.Unlock()
	for _, cl := range adopts {
		lp.s.offLoopBusy(cl)
	}
	for _, cl := range lp.conns {
		if cl == run || cl.parked || cl.hand.parked || cl.loopBlk != nil {
			continue
		}
		cl.calm = 0 // not back to the loop while the script may run
		lp.handoff(cl)
	}
	keep := lp.writes[:0]
	for _, cl := range lp.writes {
		if lp.conns[cl.lc.lfd] == cl {
			keep = append(keep, cl)
		}
	}
	clear(lp.writes[len(keep):])
	lp.writes = keep
}

// offLoopBusy serves a connection that was to join a loop busy with a
// script past the threshold from a goroutine (continueOff) instead.
func (s *Server) offLoopBusy(cl *client) {
	cl.onLoop, cl.calm = false, 0
	go s.continueOff(cl)
}

// flushWrites writes the replies of the connections served earlier in
// this turn (lp.writes) before cl's script runs, as writeAll would at the
// turn's end: a script that runs long would hold them. cl, the script's
// client, keeps its place: its replies so far are its batch's, written
// after it (against not flushing: 0.93–1.01 × the CPU per EVALSHA, the
// throughput within the noise). A connection whose replies the kernel did
// not take whole, or
// whose write failed, stays listed for writeAll to hand off or drop: both
// may need the engine lock (a blocked client, WATCHed keys), which cl's
// batch holds.
func (lp *evLoop) flushWrites(cl *client) {
	if len(lp.writes) == 0 {
		return
	}
	keep := lp.writes[:0]
	for _, w := range lp.writes {
		if w == cl || !w.flushLoop() || w.handFlush {
			keep = append(keep, w)
		}
	}
	clear(lp.writes[len(keep):])
	lp.writes = keep
}
