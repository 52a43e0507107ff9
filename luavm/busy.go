package luavm

import (
	"context"
	"time"

	"limitdb/engine"
)

// Runaway scripts. The interpreter runs with a context; SCRIPT KILL (served
// by the connection layer without the engine lock, see engine.ScriptGuard)
// cancels it and the VM stops at its next instruction. The start time is
// wall-clock time: it only decides when other clients get BUSY, never a
// reply or the state of a script, so it stays outside the determinism
// boundary.

// busyStart marks a script as running: an EVAL script (fn "") or the
// function fn called by argv.
func busyStart(e *engine.Engine, v *vm, fn string, argv [][]byte) {
	if v.ctx == nil || v.ctx.Err() != nil {
		v.ctx, v.cancel = context.WithCancel(context.Background())
		v.L.SetContext(v.ctx)
	}
	// each interpreter has its context: SCRIPT/FUNCTION KILL stops this one
	e.Guard.SetKill(v.cancel)
	e.Guard.Wrote.Store(false)
	if fn != "" {
		e.Guard.SetFunction(fn, argv)
	}
	if e.Guard.IsFunc.Load() != (fn != "") { // a load, not a store, on EVALSHA's path
		e.Guard.IsFunc.Store(fn != "")
	}
	e.Guard.StartMs.Store(time.Now().UnixMilli())
	e.Guard.NoteStart()
}

// busyEnd marks the script as finished.
func busyEnd(e *engine.Engine, v *vm) {
	e.Guard.StartMs.Store(0)
	if v.fnMode {
		e.Guard.ClearFunction()
	}
}

// killed reports whether the running script was stopped by SCRIPT KILL.
func (v *vm) killed() bool { return v.ctx != nil && v.ctx.Err() != nil }
