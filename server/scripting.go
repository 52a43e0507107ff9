package server

import (
	"time"

	"limitdb/engine"
	// The scripting commands (EVAL, EVALSHA, SCRIPT, FUNCTION, FCALL …)
	// register themselves in the engine's command table from luavm's init.
	"limitdb/luavm"
)

const (
	errBusy       = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	errBusyFunc   = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
	errUnkillable = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
	errExecAbort  = "EXECABORT Transaction discarded because of: "
)

// busyText is the BUSY reply while a script runs past the threshold: it
// names SCRIPT KILL for an EVAL script and FUNCTION KILL for a function
// (Redis's slowevalerr and slowscripterr).
func (s *Server) busyText() string {
	if s.eng.Guard.IsFunc.Load() {
		return errBusyFunc
	}
	return errBusy
}

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
// longer than lua-time-limit, as Redis's processCommand does while a
// script is timed out: the commands flagged allow_busy that need no
// engine state run (SCRIPT KILL and FUNCTION KILL stop a script that has
// not written, UNKILLABLE otherwise, each only its own kind of script;
// FUNCTION STATS shows the running function; MULTI, DISCARD, UNWATCH and
// QUIT act on the connection, and SHUTDOWN NOSAVE), everything else gets
// BUSY and marks a transaction in progress as failed, EXEC aborting it
// (EXECABORT … BUSY …). WATCH, HELLO, AUTH and RESET, which Redis also
// serves, need the engine lock here and get BUSY. It reports whether it
// answered.
func (s *Server) scriptBusy(cl *client, argv [][]byte) bool {
	g := &s.eng.Guard
	start := g.StartMs.Load()
	now := time.Now().UnixMilli()
	if start == 0 || now-start < g.Limit() {
		return false
	}
	name := argv[0]
	sub := func(want string) bool { return len(argv) == 2 && engine.EqualFold(argv[1], want) }
	switch {
	case engine.EqualFold(name, "shutdown"):
		return s.shutdownBusy(cl, argv)
	case engine.EqualFold(name, "script") && sub("kill"):
		s.killBusy(cl, false)
	case engine.EqualFold(name, "function") && sub("kill"):
		s.killBusy(cl, true)
	case engine.EqualFold(name, "function") && sub("stats"):
		if !g.IsFunc.Load() {
			cl.w.Error(errBusy) // FUNCTION STATS during an EVAL script
			break
		}
		fn, cmd := g.Function()
		luavm.WriteFunctionStats(&cl.w, fn, cmd, now-start, g.Libraries.Load(), g.Functions.Load())
	case engine.EqualFold(name, "multi") && len(argv) == 1:
		if cl.tx.Active {
			cl.w.Error(engine.ErrMultiNested)
			break
		}
		cl.tx.Active = true
		cl.w.OK()
	case engine.EqualFold(name, "discard") && len(argv) == 1:
		if !cl.tx.Active {
			cl.w.Error(engine.ErrDiscardNoMulti)
			break
		}
		cl.discardLater()
		cl.w.OK()
	case engine.EqualFold(name, "unwatch") && len(argv) == 1:
		cl.unwatchLater = true
		cl.w.OK()
	case engine.EqualFold(name, "quit"):
		cl.w.OK()
		cl.closeNow = true
	case engine.EqualFold(name, "exec") && len(argv) == 1:
		// rejectCommand on EXEC: execCommandAbort, in MULTI or not
		cl.discardLater()
		cl.w.Error(errExecAbort + s.busyText())
	default:
		if cl.tx.Active {
			cl.tx.Failed = true // flagTransaction
		}
		cl.w.Error(s.busyText())
	}
	return true
}

// killBusy is scriptKill for a running script: UNKILLABLE once it has
// written, BUSY for the other kind's KILL, else stop it.
func (s *Server) killBusy(cl *client, function bool) {
	g := &s.eng.Guard
	switch {
	case g.Wrote.Load():
		cl.w.Error(errUnkillable)
	case function != g.IsFunc.Load():
		cl.w.Error(s.busyText())
	default:
		g.Kill()
		cl.w.OK()
	}
}

// discardLater ends the connection's transaction without the engine lock
// (discardTransaction): the queue is the connection's own, its WATCHes
// are dropped when it next holds the lock (dispatch).
func (cl *client) discardLater() {
	cl.tx.Active, cl.tx.Failed = false, false
	cl.tx.ClearQueue()
	cl.unwatchLater = true
}
