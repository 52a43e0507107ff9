package server

import (
	"time"

	"limitdb/engine"
	// The scripting commands (EVAL, EVALSHA, SCRIPT …) register themselves
	// in the engine's command table from luavm's init.
	_ "limitdb/luavm"
)

const (
	errBusy       = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	errUnkillable = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
)

// lockEngine takes the engine lock for argv. While a script that has run
// holds it, this client waits only until the script passes lua-time-limit
// (busy-reply-threshold) and then gets BUSY, or has its SCRIPT KILL served,
// like in Redis. Without a script running it waits for the lock, but stops
// waiting if a script starts meanwhile (engine.ScriptGuard.Started): that
// script may never end, and a client blocked behind it would never get its
// BUSY (a client that arrived within 2 ms of a runaway script's start did
// wait for ever). It returns false when it answered without the lock.
func (s *Server) lockEngine(cl *client, argv [][]byte) bool {
	if s.door.TryLock() {
		return true
	}
	g := &s.eng.Guard
	for {
		start := g.StartMs.Load()
		if start == 0 {
			started := g.Started()
			if g.StartMs.Load() != 0 {
				continue // one started meanwhile
			}
			if s.door.LockOr(started) {
				return true
			}
			continue
		}
		if s.scriptBusy(cl, argv) {
			return false
		}
		wait := time.Duration(start+g.Limit()-time.Now().UnixMilli()) * time.Millisecond
		t := time.NewTimer(max(wait, time.Millisecond))
		ok := s.door.LockOrTimer(t.C)
		t.Stop()
		if ok {
			return true
		}
	}
}

// scriptBusy answers argv without the engine lock when a script has run
// longer than lua-time-limit, as Redis does: SCRIPT KILL stops a script that
// has not written (UNKILLABLE otherwise), everything else gets BUSY. It
// reports whether it answered.
func (s *Server) scriptBusy(cl *client, argv [][]byte) bool {
	g := &s.eng.Guard
	start := g.StartMs.Load()
	if start == 0 || time.Now().UnixMilli()-start < g.Limit() {
		return false
	}
	if engine.EqualFold(argv[0], "shutdown") {
		return s.shutdownBusy(cl, argv)
	}
	if len(argv) == 2 && engine.EqualFold(argv[0], "script") && engine.EqualFold(argv[1], "kill") {
		if g.Wrote.Load() {
			cl.w.Error(errUnkillable)
		} else {
			g.Kill()
			cl.w.OK()
		}
		return true
	}
	cl.w.Error(errBusy)
	return true
}
