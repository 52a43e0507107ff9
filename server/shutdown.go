package server

import (
	"errors"
	"strings"

	"limitdb/engine"
)

// SHUTDOWN and the signals (Redis 7.0 db.c shutdownCommand, server.c
// prepareForShutdown / finishShutdown): abort a BGSAVE in progress, save
// when save rules are set (or SAVE is given, never with NOSAVE), and only
// then stop; a failed save keeps the server running unless FORCE. limitdb
// has no replicas to wait for, so NOW changes nothing and a shutdown is
// never left pending (ABORT finds none).

const (
	errShutdownFailed = "ERR Errors trying to SHUTDOWN. Check logs."
	errNoShutdown     = "ERR No shutdown in progress."
)

// ShutdownFlags are SHUTDOWN's options.
type ShutdownFlags struct {
	NoSave, Save, Now, Force bool
}

// ErrShutdownFailed: the final save failed and FORCE was not given; the
// server keeps running.
var ErrShutdownFailed = errors.New("errors trying to shut down the server")

func init() {
	registerConn(&engine.Command{Name: "shutdown", Arity: -1, Flags: "admin noscript loading stale no_multi allow_busy", Group: "server", Since: "1.0.0",
		Summary: "Synchronously saves the database(s) to disk and shuts down the Redis server."}, cmdShutdown)
}

// parseShutdown reads SHUTDOWN's arguments; it returns the error to
// answer ("" when valid).
func parseShutdown(argv [][]byte) (f ShutdownFlags, abort bool, errText string) {
	for _, a := range argv[1:] {
		switch strings.ToLower(string(a)) {
		case "nosave":
			f.NoSave = true
		case "save":
			f.Save = true
		case "now":
			f.Now = true
		case "force":
			f.Force = true
		case "abort":
			abort = true
		default:
			return f, false, engine.ErrSyntax
		}
	}
	if abort && (f != ShutdownFlags{}) || f.NoSave && f.Save {
		return f, false, engine.ErrSyntax
	}
	return f, abort, ""
}

// cmdShutdown: SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]. On success
// there is no reply: the connection closes and the server stops (the
// binary exits 0). A failed save answers -ERR Errors trying to SHUTDOWN.
// Check logs. and the server goes on.
func cmdShutdown(s *Server, cl *client, argv [][]byte) {
	f, abort, e := parseShutdown(argv)
	switch {
	case e != "":
		cl.w.Error(e)
		return
	case abort:
		cl.w.Error(errNoShutdown)
		return
	}
	if !s.shutdownMu.TryLock() {
		// another shutdown (a signal) is saving; Redis answers a client
		// blocked on it once it is over, and this one ends with it
		cl.closeNow = true
		return
	}
	defer s.shutdownMu.Unlock()
	if err := s.prepareShutdown(f); err != nil {
		cl.w.Error(errShutdownFailed)
		return
	}
	cl.closeNow = true
	go s.Close() // it waits for this client, whose batch ends here
}

// prepareShutdown is finishShutdown up to the exit, with the engine lock
// held: abort a BGSAVE, save if asked to, and on success set down, after
// which no client runs anything more.
func (s *Server) prepareShutdown(f ShutdownFlags) error {
	s.log.Warn("User requested shutdown...")
	if s.stopBgsave() {
		s.log.Warn("There is a child saving an .rdb. Killing it!")
	}
	if len(s.rdb.rules) > 0 && !f.NoSave || f.Save {
		s.log.Info("Saving the final RDB snapshot before exiting.")
		if err := s.saveLocked(); err != nil {
			if !f.Force {
				s.log.Warn("Error trying to save the DB, can't exit.")
				s.log.Warn("Errors trying to shut down the server. Check the logs for more information.")
				return ErrShutdownFailed
			}
			s.log.Warn("Error trying to save the DB. Exit anyway.")
		}
	}
	s.down.Store(true)
	s.log.Warn("limitdb is now ready to exit, bye bye...")
	return nil
}

// Shutdown is SHUTDOWN from outside a client (SIGTERM, SIGINT: the binary
// calls it with no flags, so it saves when save rules are set): on
// success the server is closed when it returns; on ErrShutdownFailed it
// keeps serving, as Redis does after a failed save.
func (s *Server) Shutdown(f ShutdownFlags) error {
	s.shutdownMu.Lock()
	s.door.Lock()
	var err error
	if !s.down.Load() { // else a SHUTDOWN has saved and Close is under way
		err = s.prepareShutdown(f)
	}
	s.door.Unlock()
	s.shutdownMu.Unlock()
	if err != nil {
		return err
	}
	return s.Close()
}

// shutdownBusy serves SHUTDOWN while a script runs past the busy
// threshold, without the engine lock the script holds (Redis allows it,
// flag allow_busy, and only with NOSAVE: its BUSY text says so). It
// reports whether it answered. With NOSAVE nothing is saved and nothing
// the script did persists: the node stops proposing before the script is
// killed (Redis exits at once, before the script's effects are written).
func (s *Server) shutdownBusy(cl *client, argv [][]byte) bool {
	f, abort, e := parseShutdown(argv)
	switch {
	case e != "":
		cl.w.Error(e)
	case abort:
		cl.w.Error(errNoShutdown)
	case !f.NoSave:
		cl.w.Error(s.busyText())
	default:
		s.log.Warn("User requested shutdown...")
		s.down.Store(true)
		if s.replicated() {
			s.node.Halt()
		}
		s.eng.Guard.Kill()
		s.log.Warn("limitdb is now ready to exit, bye bye...")
		cl.closeNow = true
		go s.Close()
	}
	return true
}
