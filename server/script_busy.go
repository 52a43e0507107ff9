// A script past busy-reply-threshold (Redis's busy script, script.c's
// scriptIsTimedout): the others' commands are answered without the engine
// lock, as processCommand does while a script is timed out.

package server

import (
	"encoding/binary"
	"time"

	"limitdb/acl"
	"limitdb/cluster"
	"limitdb/resp"

	"limitdb/engine"
	// The scripting commands (EVAL, EVALSHA, SCRIPT, FUNCTION, FCALL …)
	// register themselves in the engine's command table from luavm's init.
	"limitdb/luavm"
)

const (
	errBusy       = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	errBusyFunc   = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
	errUnkillable = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
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

// scriptBusy answers argv without the engine lock when a script has run
// longer than lua-time-limit, in the order of Redis's processCommand while
// a script is timed out: unknown commands and arity errors, NOAUTH and a
// no_multi command inside MULTI (earlyRefusal, as dispatch), NOPERM
// (without an ACL LOG entry here: the log is the script's to write), then
// BUSY for every command not flagged allow_busy, which also marks a
// transaction in progress as failed (EXEC itself aborts it: EXECABORT …
// BUSY …). Refusals go through fail, not dispatch's reject, whose counts
// need the lock. An allow_busy command is queued inside MULTI like any
// other; else the ones that need no engine state run: SCRIPT KILL and
// FUNCTION KILL (each stops its own kind of script if it has not written),
// FUNCTION STATS, SHUTDOWN NOSAVE, and dispatch's MULTI, DISCARD, UNWATCH
// and QUIT, without the lock (locked false: the WATCHes go when the
// connection next holds it). WATCH, HELLO, AUTH and RESET, which Redis
// also serves, need the engine lock here and get BUSY. It reports whether
// it answered.
func (s *Server) scriptBusy(cl *client, argv [][]byte) bool {
	start, now, timedOut := s.scriptTimedOut()
	if !timedOut {
		return false
	}
	g := &s.eng.Guard
	cmd := cl.ctx.Resolve(argv)
	fail := func(msg string) {
		if cl.tx.Active {
			cl.tx.Failed = true // flagTransaction
		}
		if msg != "" {
			cl.w.Error(msg)
		}
	}
	if cmd == nil {
		fail("") // Resolve answered
		cl.execArityAbort(argv)
		return true
	}
	if msg := s.earlyRefusal(cl, cmd); msg != "" {
		fail(msg)
		return true
	}
	if !cl.user.Free() {
		if res, _ := cl.user.Check(cmd, argv); res != acl.OK {
			fail(noPermText(res, cmd))
			return true
		}
	}
	if !cmd.Has(engine.FlagAllowBusy) {
		if cmd.Name == "exec" {
			// rejectCommand on EXEC: execCommandAbort, in MULTI or not
			s.endTx(cl, false)
			cl.w.Error(errExecAbort + s.busyText())
			return true
		}
		fail(s.busyText())
		return true
	}
	if cl.tx.Active && !isTxnControl(cmd.Name) {
		cl.tx.Enqueue(argv)
		if cl.queued() {
			cl.w.Status("QUEUED")
		}
		return true
	}
	switch cmd.Name {
	case "shutdown":
		return s.shutdownBusy(cl, argv)
	case "script|kill":
		s.killBusy(&cl.w, false)
	case "function|kill":
		s.killBusy(&cl.w, true)
	case "function|stats":
		if !g.IsFunc.Load() {
			cl.w.Error(errBusy) // FUNCTION STATS during an EVAL script
			break
		}
		fn, cmdArgv := g.Function()
		luavm.WriteFunctionStats(&cl.w, fn, cmdArgv, now-start, g.Libraries.Load(), g.Functions.Load())
	case "multi":
		cmdMulti(s, cl, argv)
	case "discard":
		s.discard(cl, false)
	case "unwatch":
		s.unwatch(cl, false)
	case "quit":
		cmdQuit(s, cl, argv)
	default:
		fail(s.busyText()) // WATCH, HELLO, AUTH, RESET: see above
	}
	return true
}

// scriptTimedOut reports whether a script has run past busy-reply-threshold
// (lua-time-limit), with its start and now (unix ms).
func (s *Server) scriptTimedOut() (start, now int64, timedOut bool) {
	g := &s.eng.Guard
	start = g.StartMs.Load()
	if start == 0 {
		return 0, 0, false
	}
	now = time.Now().UnixMilli()
	return start, now, now-start >= g.Limit()
}

// killBusy is scriptKill for a running script: UNKILLABLE once it has
// written, BUSY for the other kind's KILL, else stop it.
func (s *Server) killBusy(w *resp.Writer, function bool) {
	g := &s.eng.Guard
	switch {
	case g.Wrote.Load():
		w.Error(errUnkillable)
	case function != g.IsFunc.Load():
		w.Error(s.busyText())
	default:
		g.Kill()
		w.OK()
	}
}

// busyForwarded is LockForwarded's answer while a script is past
// busy-reply-threshold (nil otherwise).
func (s *Server) busyForwarded(u *cluster.Unit) []byte {
	if _, _, timedOut := s.scriptTimedOut(); !timedOut || len(u.Cmds) == 0 {
		return nil
	}
	w := resp.Writer{Proto: u.Proto}
	argv := u.Cmds[len(u.Cmds)-1]
	switch {
	case len(u.Cmds) > 1: // MULTI … EXEC: rejectCommand on EXEC
		w.Error(errExecAbort + s.busyText())
	case isSubcommand(argv, "script", "kill"):
		s.killBusy(&w, false)
	case isSubcommand(argv, "function", "kill"):
		s.killBusy(&w, true)
	default:
		w.Error(s.busyText()) // WATCH too, as in scriptBusy
	}
	return append(binary.AppendUvarint(nil, uint64(u.DB)), w.B...)
}

// isSubcommand reports whether argv is the command name's subcommand sub.
func isSubcommand(argv [][]byte, name, sub string) bool {
	return len(argv) == 2 && engine.EqualFold(argv[0], name) && engine.EqualFold(argv[1], sub)
}
