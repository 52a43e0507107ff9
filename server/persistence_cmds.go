package server

import (
	"strings"

	"limitdb/engine"
)

// Persistence commands (Redis 7.0 rdb.c, db.c): SAVE, BGSAVE, LASTSAVE;
// SHUTDOWN is in shutdown.go, the saving itself in rdb_save.go.

func init() {
	registerConn(&engine.Command{Name: "save", Arity: 1, Flags: "admin noscript no_async_loading no_multi", Group: "server", Since: "1.0.0",
		Summary: "Synchronously saves the database(s) to disk."}, cmdSave)
	registerConn(&engine.Command{Name: "bgsave", Arity: -1, Flags: "admin noscript no_async_loading", Group: "server", Since: "1.0.0",
		Summary: "Asynchronously saves the database(s) to disk."}, cmdBgsave)
	registerConn(&engine.Command{Name: "bgrewriteaof", Arity: 1, Flags: "admin noscript no_async_loading", Group: "server", Since: "1.0.0",
		Summary: "Asynchronously rewrites the append-only file to disk."}, cmdBgrewriteaof)
	registerConn(&engine.Command{Name: "lastsave", Arity: 1, Flags: "loading stale fast", Group: "server", Since: "1.0.0",
		Summary: "Returns the Unix timestamp of the last successful save to disk."}, cmdLastSave)
}

// cmdSave: SAVE — writes dir/dbfilename now, with every other client
// waiting (Redis's saveCommand). +OK; -ERR when the file could not be
// written (the log says why); refused while a BGSAVE runs. With a Raft
// node a Raft snapshot follows, in the background. On a follower a read
// barrier comes first (cluster.Node.SnapshotState says why): the file
// holds every write acknowledged before SAVE was sent.
func cmdSave(s *Server, cl *client, argv [][]byte) {
	if s.follower() {
		s.door.Unlock() // the barrier waits for entries applied under the engine lock
		_, err := s.node.ReadBarrier()
		s.door.Lock()
		if err != nil {
			s.log.Warn("SAVE on a follower without a read barrier (no leader): writes acknowledged in its last moments may be missing", "err", err.Error())
		}
	}
	if s.rdb.bg != nil {
		cl.w.Error(errBgsaveInProgress)
		return
	}
	s.rdb.saves++
	if err := s.saveLocked(); err != nil {
		cl.w.Error(errSave)
		return
	}
	if s.replicated() {
		go s.raftSnapshot() // it takes the engine lock this command holds
	}
	cl.w.OK()
}

// cmdBgsave: BGSAVE [SCHEDULE] — Redis's bgsaveCommand: +Background saving
// started; an error while one runs; inside MULTI the save is scheduled
// (+Background saving scheduled) and the cron starts it after EXEC, as
// Redis does while in_exec. limitdb has no AOF rewrite child, so SCHEDULE
// otherwise starts at once.
func cmdBgsave(s *Server, cl *client, argv [][]byte) {
	if len(argv) > 1 {
		if len(argv) != 2 || !strings.EqualFold(string(argv[1]), "schedule") {
			cl.w.Error(engine.ErrSyntax)
			return
		}
	}
	switch {
	case s.rdb.bg != nil:
		cl.w.Error(errBgsaveInProgress)
	case cl.ctx.InMulti:
		s.rdb.scheduled = true
		cl.w.Status("Background saving scheduled")
	default:
		s.bgsaveStart()
		cl.w.Status("Background saving started")
	}
}

// cmdLastSave: LASTSAVE — the unix time of the last successful save (the
// start time before the first, as in Redis).
func cmdLastSave(s *Server, cl *client, argv [][]byte) {
	cl.w.Int(s.rdb.lastSave)
}

// cmdBgrewriteaof: BGREWRITEAOF — limitdb's append-only file is its Raft
// log, and rewriting it is compacting it: a durable node takes a Raft
// snapshot in the background, as after SAVE; without a log there is
// nothing to rewrite. Either way the reply is Redis's
// +Background append only file rewriting started (INFO's
// aof_rewrite_in_progress stays 0: the snapshot does not hold up clients).
func cmdBgrewriteaof(s *Server, cl *client, argv [][]byte) {
	if s.replicated() {
		go s.raftSnapshot() // it takes the engine lock this command holds
	}
	cl.w.Status("Background append only file rewriting started")
}
