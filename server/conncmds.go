package server

import (
	"limitdb/engine"
)

func init() {
	registerConn(&engine.Command{Name: "ping", Arity: -1, Flags: "fast", Group: "connection", Since: "1.0.0", Summary: "Returns the server's liveliness response."}, cmdPing)
	registerConn(&engine.Command{Name: "echo", Arity: 2, Flags: "loading stale fast", Group: "connection", Since: "1.0.0", Summary: "Returns the given string."}, cmdEcho)
	registerConn(&engine.Command{Name: "quit", Arity: -1, Flags: "allow_busy noscript loading stale fast no_auth", Group: "connection", Since: "1.0.0", Summary: "Closes the connection."}, cmdQuit)
	registerConn(&engine.Command{Name: "select", Arity: 2, Flags: "loading stale fast", Group: "connection", Since: "1.0.0", Summary: "Changes the selected database."}, cmdSelect)
	registerConn(&engine.Command{Name: "multi", Arity: 1, Flags: "noscript loading stale fast allow_busy", Group: "transactions", Since: "1.2.0", Summary: "Starts a transaction."}, cmdMulti)
	registerConn(&engine.Command{Name: "exec", Arity: 1, Flags: "noscript loading stale skip_slowlog", Group: "transactions", Since: "1.2.0", Summary: "Executes all commands in a transaction."}, cmdExec)
	registerConn(&engine.Command{Name: "discard", Arity: 1, Flags: "noscript loading stale fast allow_busy", Group: "transactions", Since: "2.0.0", Summary: "Discards a transaction."}, cmdDiscard)
	registerConn(&engine.Command{Name: "watch", Arity: -2, Flags: "noscript loading stale fast allow_busy", FirstKey: 1, LastKey: -1, Step: 1, Group: "transactions", Since: "2.2.0", Summary: "Monitors changes to keys to determine the execution of a transaction."}, cmdWatch)
	registerConn(&engine.Command{Name: "unwatch", Arity: 1, Flags: "noscript loading stale fast allow_busy", Group: "transactions", Since: "2.2.0", Summary: "Forgets about watched keys of a transaction."}, cmdUnwatch)
}

// cmdPing: PING [message] — PONG, or the message as a bulk string.
func cmdPing(s *Server, cl *client, argv [][]byte) {
	if len(argv) > 2 {
		cl.w.Error(engine.ErrWrongArgs("ping"))
		return
	}
	if cl.w.Proto == 2 && cl.subscribed() {
		cl.w.B = appendPingSubscribed(cl.w.B, argv) // pubsub_cmds.go
		return
	}
	if len(argv) == 2 {
		cl.w.Bulk(argv[1])
		return
	}
	cl.w.Status("PONG")
}

// cmdEcho: ECHO message — the message.
func cmdEcho(s *Server, cl *client, argv [][]byte) { cl.w.Bulk(argv[1]) }

// cmdQuit: QUIT — OK, then the connection closes once replies are written.
func cmdQuit(s *Server, cl *client, argv [][]byte) {
	cl.w.OK()
	cl.closeNow = true
}

// cmdSelect: SELECT index — switch this connection to database 0..15.
func cmdSelect(s *Server, cl *client, argv [][]byte) {
	n, ok := engine.ParseIntB(argv[1])
	if !ok {
		cl.w.Error(engine.ErrNotInt)
		return
	}
	if n < 0 || n >= engine.NumDBs {
		cl.w.Error(engine.ErrDBIndex)
		return
	}
	cl.db = int(n)
	cl.w.OK()
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
func cmdDiscard(s *Server, cl *client, argv [][]byte) {
	if !cl.tx.Active {
		cl.w.Error(engine.ErrDiscardNoMulti)
		return
	}
	cl.tx.Reset()
	s.unwatchForwarded(cl)
	cl.w.OK()
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
		cl.tx.Reset()
		s.unwatchForwarded(cl)
		cl.w.Error(engine.ErrExecAbort)
		return
	}
	if s.node != nil && s.node.Serving() && !s.node.LeaseHeld() && !s.leaseConfirmed(cl) && s.node.Serving() {
		// after a pause, Raft did not confirm this leader in time: CLUSTERDOWN
		// (route); had it stopped leading, the block is forwarded below
		cl.tx.Reset()
		return
	}
	if s.node != nil && !s.node.Serving() && !s.forwardExec(cl) {
		return // a follower's block ran on the leader
	}
	// the array header goes first; ExecTx writes nothing when it refuses
	mark := len(cl.w.B)
	cl.w.Array(len(cl.tx.Queue))
	ok := s.door.ExecTx(&cl.ctx, &cl.tx, func(q [][]byte) {
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
	if s.node != nil && !s.node.Serving() {
		// a follower's WATCH is taken on the leader, where EXEC runs
		mark := len(cl.w.B)
		if !s.forward(cl, [][][]byte{argv}) {
			if len(cl.w.B) > mark && cl.w.B[mark] == '+' {
				cl.fwdWatching = true
			}
			return
		}
	}
	cl.tx.Watch(&cl.ctx, s.eng.DBs[cl.db], argv[1:])
	cl.w.OK()
}

// cmdUnwatch: UNWATCH — forget every WATCH of this connection.
func cmdUnwatch(s *Server, cl *client, argv [][]byte) {
	cl.tx.Unwatch()
	s.unwatchForwarded(cl)
	cl.w.OK()
}
