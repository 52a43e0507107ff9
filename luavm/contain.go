package luavm

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"

	"limitdb/engine"
)

// finish ends a run (busyEnd) and turns a Go panic that escaped the interpreter while a script ran
// (a bug in a library or the conversions; gopher-lua's PCall already turns
// panics inside the call into errors) into the script's error reply, and
// drops the interpreter so that the next script gets a fresh one: a panic
// may have left its stack or registry half-updated. The server goes on.
func (st *State) finish(c *engine.Ctx, v *vm, mark int) {
	busyEnd(c.E, v)
	r := recover()
	if r == nil {
		return
	}
	if v.fnMode {
		st.fvm = nil // rebuilt, libraries and all, on next use (funcVM)
	} else {
		st.vm = nil
	}
	if v.cancel != nil {
		v.cancel()
	}
	c.W.B = c.W.B[:mark] // drop a reply cut short
	c.W.Error(fmt.Sprintf("ERR Error running script %s, internal error: %v", v.name, r))
}

// heldGrow makes room for n more bytes in b, a buffer an encoder builds
// until it returns, charging the growth to the script's memory budget as
// held bytes (the caller releases cap(b) when done).
func heldGrow(L *lua.LState, b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	old := cap(b)
	nb := make([]byte, len(b), max(2*old, len(b)+n))
	L.ChargeHeld(cap(nb) - old)
	copy(nb, b)
	return nb
}
