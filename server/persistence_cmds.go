package server

import "limitdb/engine"

// Persistence commands (Redis 7.0 rdb.c).

func init() {
	registerConn(&engine.Command{Name: "lastsave", Arity: 1, Flags: "loading stale fast", Group: "server", Since: "1.0.0",
		Summary: "Returns the Unix timestamp of the last successful save to disk."}, cmdLastSave)
}

// cmdLastSave: LASTSAVE — the unix time of the last successful save;
// limitdb saves no RDB file, so it is the server's start time (what Redis
// reports before its first save, and what INFO's rdb_last_save_time says).
func cmdLastSave(s *Server, cl *client, argv [][]byte) {
	cl.w.Int(s.started.Unix())
}
