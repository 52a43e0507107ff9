package server

import "limitdb/engine"

func init() {
	registerConn(&engine.Command{Name: "ping", Arity: -1, Flags: "fast", Group: "connection", Since: "1.0.0", Summary: "Returns the server's liveliness response."}, cmdPing)
	registerConn(&engine.Command{Name: "echo", Arity: 2, Flags: "loading stale fast", Group: "connection", Since: "1.0.0", Summary: "Returns the given string."}, cmdEcho)
	registerConn(&engine.Command{Name: "quit", Arity: -1, Flags: "allow_busy noscript loading stale fast no_auth", Group: "connection", Since: "1.0.0", Summary: "Closes the connection."}, cmdQuit)
	registerConn(&engine.Command{Name: "select", Arity: 2, Flags: "loading stale fast", Group: "connection", Since: "1.0.0", Summary: "Changes the selected database."}, cmdSelect)
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
	if s.clusterMode && n != 0 {
		cl.w.Error(errSelectCluster)
		return
	}
	if n < 0 || n >= engine.NumDBs {
		cl.w.Error(engine.ErrDBIndex)
		return
	}
	cl.db = int(n)
	cl.w.OK()
}
