// MULTI, EXEC, DISCARD, WATCH and UNWATCH (Redis 7.0 multi.c): the
// connection's side of a transaction. The queue and the watched keys are
// door.Tx (cl.tx); EXEC runs the queue as one unit through the door.
package server

import (
	"bytes"
	"strings"

	"limitdb/engine"
)

// errExecAbort begins EXEC's reply when the transaction was discarded
// (execCommandAbort).
const errExecAbort = "EXECABORT Transaction discarded because of: "

func init() {
	registerConn(&engine.Command{Name: "multi", Arity: 1, Flags: "noscript loading stale fast allow_busy", Group: "transactions", Since: "1.2.0", Summary: "Starts a transaction."}, cmdMulti)
	registerConn(&engine.Command{Name: "exec", Arity: 1, Flags: "noscript loading stale skip_slowlog", Group: "transactions", Since: "1.2.0", Summary: "Executes all commands in a transaction."}, cmdExec)
	registerConn(&engine.Command{Name: "discard", Arity: 1, Flags: "noscript loading stale fast allow_busy", Group: "transactions", Since: "2.0.0", Summary: "Discards a transaction."}, cmdDiscard)
	registerConn(&engine.Command{Name: "watch", Arity: -2, Flags: "noscript loading stale fast allow_busy", FirstKey: 1, LastKey: -1, Step: 1, Group: "transactions", Since: "2.2.0", Summary: "Monitors changes to keys to determine the execution of a transaction."}, cmdWatch)
	registerConn(&engine.Command{Name: "unwatch", Arity: 1, Flags: "noscript loading stale fast allow_busy", Group: "transactions", Since: "2.2.0", Summary: "Forgets about watched keys of a transaction."}, cmdUnwatch)
}

// cmdMulti: MULTI — start queueing commands until EXEC or DISCARD.
func cmdMulti(s *Server, cl *client, argv [][]byte) {
	if cl.tx.Active {
		cl.w.Error(engine.ErrMultiNested)
		return
	}
	cl.tx.Active = true
	cl.w.OK()
}

// cmdDiscard: DISCARD — drop the queue and every WATCH.
func cmdDiscard(s *Server, cl *client, argv [][]byte) { s.discard(cl, true) }

// discard is DISCARD, also served while a script runs past
// busy-reply-threshold (scriptBusy); locked: the engine lock is held
// (endTx).
func (s *Server) discard(cl *client, locked bool) {
	if !cl.tx.Active {
		cl.w.Error(engine.ErrDiscardNoMulti)
		return
	}
	s.endTx(cl, locked)
	cl.w.OK()
}

// endTx ends the connection's transaction (discardTransaction): the queue
// goes at once, it is the connection's own; the WATCHes as dropWatches.
func (s *Server) endTx(cl *client, locked bool) {
	cl.tx.Active, cl.tx.Failed = false, false
	cl.tx.ClearQueue()
	s.dropWatches(cl, locked)
}

// dropWatches forgets the connection's WATCHes (unwatchAllKeys). They are
// entries in the engine's keyspace: without the engine lock (locked false:
// a script runs past busy-reply-threshold, scriptBusy) they go when the
// connection next holds it (dispatch).
func (s *Server) dropWatches(cl *client, locked bool) {
	if !locked {
		cl.unwatchLater = true
		return
	}
	cl.tx.Unwatch()
	s.unwatchForwarded(cl)
}

// cmdExec: EXEC — run the queued commands atomically and reply with an
// array of their replies (errors included, in place). EXECABORT when a
// command was rejected while queueing; a null array when a watched key
// changed or expired since WATCH.
func cmdExec(s *Server, cl *client, argv [][]byte) {
	if !cl.tx.Active {
		cl.w.Error(engine.ErrExecNoMulti)
		return
	}
	if cl.tx.Failed {
		s.endTx(cl, true)
		cl.w.Error(engine.ErrExecAbort)
		return
	}
	switch s.place(cl, cl.ctx.Cmd, argv) { // (cluster_route.go)
	case refused:
		// after a pause, Raft did not confirm this leader in time:
		// CLUSTERDOWN; had it stopped leading, the block would go to the
		// leader
		s.endTx(cl, true)
		return
	case runOnLeader:
		if cl.tx.Watching() {
			// WATCHes taken here while this node led: writes made
			// since by the leader that followed may not be here yet
			s.abortExec(cl)
			return
		}
		if !s.forwardExec(cl) {
			return // a follower's block ran on the leader
		}
	}
	if cl.fwdWatching {
		// WATCHes taken on the leader of the time, and this node leads
		// now: that one no longer checks them, and this one never had them
		s.abortExec(cl)
		return
	}
	// the array header goes first; ExecTx writes nothing when it refuses
	mark := len(cl.w.B)
	cl.w.Array(len(cl.tx.Queue))
	ok := s.door.ExecTx(&cl.ctx, &cl.tx, s.watchEpoch(), func(q [][]byte) {
		cl.ctx.DB = s.eng.DBs[cl.db]
		cmd := cl.ctx.Resolve(q)
		if cmd == nil || !s.execPermitted(cl, cmd, q) {
			return
		}
		s.callContained(cl, cmd, q)
	})
	if !ok {
		cl.w.B = cl.w.B[:mark]
		cl.w.NullArray()
	}
}

// cmdWatch: WATCH key [key …] — EXEC will fail if any of these keys
// changes (or expires) before it.
func cmdWatch(s *Server, cl *client, argv [][]byte) {
	if cl.tx.Active {
		cl.w.Error(engine.ErrWatchInMulti)
		return
	}
	if s.place(cl, cl.ctx.Cmd, argv) == runOnLeader {
		// a follower's WATCH is taken on the leader, where EXEC runs
		mark := len(cl.w.B)
		if !s.forward(cl, [][][]byte{argv}) {
			if r := cl.w.B[mark:]; len(r) > 0 && r[0] == '+' {
				cl.fwdWatching = true
			} else if bytes.HasPrefix(r, []byte("-UNCERTAIN")) {
				// the leader may have taken it, and it cannot be
				// checked: EXEC aborts, as if a key had changed
				cl.tx.Lose()
			}
			return
		}
	}
	cl.tx.Watch(&cl.ctx, s.eng.DBs[cl.db], argv[1:], s.watchEpoch())
	cl.w.OK()
}

// watchEpoch is the generation of the engine's history WATCH and EXEC
// run in (door.Tx): the leadership epoch this node serves under, which
// changes whenever this engine may have missed writes (another node led)
// or reverted some (leadership lost, the engine rebuilt from the log).
// Without a node it never changes.
func (s *Server) watchEpoch() uint64 {
	if !s.replicated() {
		return 0
	}
	return s.node.Epoch()
}

// abortExec answers EXEC as when a watched key changed (a null reply),
// the transaction and every WATCH dropped.
func (s *Server) abortExec(cl *client) {
	s.endTx(cl, true)
	cl.w.NullArray()
}

// cmdUnwatch: UNWATCH — forget every WATCH of this connection.
func cmdUnwatch(s *Server, cl *client, argv [][]byte) { s.unwatch(cl, true) }

// unwatch is UNWATCH, also served while a script runs past
// busy-reply-threshold (scriptBusy); locked as for dropWatches.
func (s *Server) unwatch(cl *client, locked bool) {
	s.dropWatches(cl, locked)
	cl.w.OK()
}

// execArityAbort reproduces a Redis 7.0 quirk: EXEC with arguments is
// rejected as "-EXECABORT Transaction discarded because of: wrong number
// of arguments for 'exec' command", in or out of MULTI, and a transaction
// in progress is discarded. Called after Resolve has written the plain
// arity error, which is replaced.
func (cl *client) execArityAbort(argv [][]byte) {
	if len(argv) == 1 || !strings.EqualFold(string(argv[0]), "exec") {
		return
	}
	msg := engine.ErrWrongArgs("exec")
	if n := len(msg) + 3; len(cl.w.B) >= n {
		cl.w.B = cl.w.B[:len(cl.w.B)-n]
	}
	cl.w.Error(errExecAbort + strings.TrimPrefix(msg, "ERR "))
	if cl.tx.Active {
		cl.tx.Reset()
	} else {
		cl.tx.Unwatch()
	}
}

// queued checks the MULTI queue after a request was added (Tx.Enqueue). The
// queue is input that has been parsed but not yet run, so limitdb counts
// its bytes (argument lengths plus 16 per argument for the slice header)
// together with the unparsed input against client-query-buffer-limit:
// past it the client is closed as one whose query buffer overflowed.
// Redis 7.0 bounds neither (a MULTI queue only counts toward the client's
// memory in CLIENT LIST multi-mem and maxmemory-clients). It returns false
// when the client is being closed.
func (cl *client) queued() bool {
	buffered := 0
	if cl.rd != nil { // a forwarded client has no reader: its block came whole
		buffered = cl.rd.Buffered()
	}
	if cl.tx.Size+int64(buffered) <= cl.s.limits.MaxQuery.Load() {
		return true
	}
	cl.s.log.Warn("closing client whose MULTI queue reached the max query buffer length", "client", cl.id, "queued", cl.tx.Size)
	cl.tx.Queue = nil
	cl.tx.Size = 0
	cl.closeNow = true
	return false
}
