package luavm

import (
	"limitdb/engine"
)

// busyStart / busyEnd bracket a script run (runaway-script tracking).
func busyStart(e *engine.Engine, v *vm) {}
func busyEnd(e *engine.Engine, v *vm)   {}
