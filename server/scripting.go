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
// for more than a couple of milliseconds holds it, this client polls instead
// of blocking, so that once the script passes lua-time-limit it gets BUSY
// (or its SCRIPT KILL is served) like in Redis; short scripts are waited
// for on the mutex as usual. It returns false when it answered without the
// lock.
func (s *Server) lockEngine(cl *client, argv [][]byte) bool {
	if s.door.TryLock() {
		return true
	}
	g := &s.eng.Guard
	for {
		start := g.StartMs.Load()
		if start == 0 || time.Now().UnixMilli()-start < 2 {
			s.door.Lock()
			return true
		}
		if s.scriptBusy(cl, argv) {
			return false
		}
		if s.door.TryLock() {
			return true
		}
		time.Sleep(time.Millisecond)
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
