package server

import (
	"runtime/debug"

	"limitdb/engine"
)

// errPanicked is the reply of a command whose handler panicked. It is
// limitdb's own (Redis would have crashed): the command was abandoned
// midway, so any change it had begun may stay half done.
func errPanicked(name string) string {
	return "ERR internal error while running '" + name + "': the command was aborted (see the server log)"
}

// containPanic is deferred by call: a panic in a command's handler is
// recovered there, whatever the command had written of its reply is
// dropped and replaced by errPanicked, and the connection goes on with the
// engine lock still held by its batch (released as usual by serveClient).
// Inside EXEC each queued command is contained on its own, so the EXEC
// array keeps one element per command. A deferred call costs ~1–2 ns on
// this path (open-coded defer; BenchmarkServerGet within noise).
func (s *Server) containPanic(cl *client, cmd *engine.Command, before int) {
	r := recover()
	if r == nil {
		return
	}
	s.log.Error("command panic contained", "client", cl.id, "command", cmd.Name, "panic", r, "stack", string(debug.Stack()))
	if len(cl.w.B) > before {
		cl.w.B = cl.w.B[:before]
	}
	if cmd.Name == "exec" {
		cl.ctx.InMulti = false
		cl.resetQueue()
	}
	cl.w.Error(errPanicked(cmd.Name))
}
