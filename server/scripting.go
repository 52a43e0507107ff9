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
	if cl.onLoop {
		s.endTurn()
	}
	return s.lockOrBusy(func() bool { return s.scriptBusy(cl, argv) })
}

// lockOrBusy is lockEngine's wait: busy answers without the lock once a
// script has run past busy-reply-threshold, and reports whether it did.
func (s *Server) lockOrBusy(busy func() bool) bool {
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
		if busy() {
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

// lockDoor takes the engine lock, ending a loop turn's hold on its
// records first when it has to wait (endTurn).
func (s *Server) lockDoor() {
	if !s.door.TryLock() {
		s.endTurn()
		s.door.Lock()
	}
}

// endTurn proposes the running event-loop turn's records before a wait
// for the engine lock (a script or a snapshot's pause holds it): they are
// proposed when the turn ends (cluster.Node.TurnStart), and a turn that
// waits would hold them back meanwhile, or forever for a pause that waits
// for them.
func (s *Server) endTurn() {
	if s.node != nil {
		s.node.TurnEnd()
	}
}

// scriptBusy answers argv without the engine lock when a script has run
// longer than lua-time-limit, in the order of Redis's processCommand while
// a script is timed out: unknown commands and arity errors, NOAUTH, a
// no_multi command inside MULTI, NOPERM (without an ACL LOG entry here:
// the log is the script's to write), then BUSY for every command not
// flagged allow_busy, which also marks a transaction in progress as failed
// (EXEC itself aborts it: EXECABORT … BUSY …). An allow_busy command is
// queued inside MULTI like any other; else the ones that need no engine
// state run: SCRIPT KILL and FUNCTION KILL (each stops its own kind of
// script if it has not written), FUNCTION STATS, MULTI, DISCARD, UNWATCH,
// QUIT and SHUTDOWN NOSAVE. WATCH, HELLO, AUTH and RESET, which Redis also
// serves, need the engine lock here and get BUSY. It reports whether it
// answered.
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
	switch {
	case cmd == nil:
		fail("") // Resolve answered
		cl.execArityAbort(argv)
		return true
	case !cl.authed && s.auth.needAuth.Load() && !cmd.Has(engine.FlagNoAuth):
		fail(errNoAuth)
		return true
	case cl.tx.Active && cmd.Has(engine.FlagNoMulti):
		fail(errNoMulti)
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
			cl.discardLater()
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
		if cl.tx.Active {
			cl.w.Error(engine.ErrMultiNested)
			break
		}
		cl.tx.Active = true
		cl.w.OK()
	case "discard":
		if !cl.tx.Active {
			cl.w.Error(engine.ErrDiscardNoMulti)
			break
		}
		cl.discardLater()
		cl.w.OK()
	case "unwatch":
		cl.unwatchLater = true
		cl.w.OK()
	case "quit":
		cl.w.OK()
		cl.closeNow = true
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

// LockForwarded implements cluster.Executor: it takes the engine lock for
// a follower's unit as lockEngine does for a client's command, or, once a
// script has run past busy-reply-threshold, answers the unit without the
// lock and without running it (the leader records nothing of it, so the
// follower's client gets a refusal, not an unknown outcome). The answer is
// ExecForwarded's (the database, then the reply of the unit's last
// command): BUSY, EXECABORT … BUSY for a MULTI block, or SCRIPT KILL /
// FUNCTION KILL served on the running script. The follower checked the
// command, AUTH and ACL before forwarding it: those of Redis's checks
// that come before BUSY (scriptBusy) are done. It returns nil with the
// lock held.
func (s *Server) LockForwarded(u *cluster.Unit) []byte {
	if s.door.TryLock() {
		return nil
	}
	var out []byte
	if s.lockOrBusy(func() bool { out = s.busyForwarded(u); return out != nil }) {
		return nil
	}
	return out
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

// discardLater ends the connection's transaction without the engine lock
// (discardTransaction): the queue is the connection's own, its WATCHes
// are dropped when it next holds the lock (dispatch).
func (cl *client) discardLater() {
	cl.tx.Active, cl.tx.Failed = false, false
	cl.tx.ClearQueue()
	cl.unwatchLater = true
}
