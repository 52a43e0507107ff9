package server

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"limitdb/cluster"
	"limitdb/engine"
	"limitdb/procs"
)

// RDB files as Redis 7.0 writes them (rdb.c rdbSave, rdbSaveBackground;
// server.c serverCron): dir/dbfilename, written to a temporary file that
// is fsynced, closed and renamed over the old one, then the directory
// fsynced.
//
//   - SAVE writes under the engine lock (engine.WriteSnapshot): every
//     other client waits, as Redis's SAVE blocks its event loop.
//   - BGSAVE takes a copy-on-write capture under the lock
//     (engine.Capture: 1M keys in 23–74 ms, bench/RESULTS.md) and a
//     goroutine writes it while commands go on: the capture is the only
//     time other clients wait, where Redis forks.
//   - The save rules are checked by the cron at hz, as serverCron does,
//     with Redis's 5 s delay before retrying after a failed BGSAVE.
//   - While stop-writes-on-bgsave-error is yes, save rules are set and the
//     last BGSAVE failed, write commands (and PING) get Redis's MISCONF
//     error, and a script's first write too (engine.WriteDenied), until a
//     save succeeds.
//
// With a Raft node (appendonly yes) the log is what makes writes durable;
// the RDB file is an export Redis can load (when it holds no limiter),
// and SAVE and BGSAVE also take a Raft snapshot (log compaction).

const (
	errMISCONFLog       = "MISCONF Errors writing to the AOF file: "
	errMISCONF          = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."
	errBgsaveInProgress = "ERR Background save already in progress"
	// errSave is Redis's shared.err, SAVE's reply when the save failed
	errSave = "ERR"
)

// bgsaveRetryDelay is Redis's CONFIG_BGSAVE_RETRY_DELAY (seconds): after
// a failed BGSAVE the save rules wait this long before trying again.
const bgsaveRetryDelay = 5

// saveRule is one "<seconds> <changes>" pair of the save parameter.
type saveRule struct{ seconds, changes int64 }

// rdbState is the server's persistence state (INFO persistence). Guarded
// by the engine lock.
type rdbState struct {
	rules      []saveRule // the save parameter, parsed by applyConfig
	stopWrites bool       // stop-writes-on-bgsave-error
	// denyWrites: MISCONF is in force (stopWrites, rules set, last failed);
	// dispatch reads it for every command, a field test when false
	denyWrites bool
	denyMsg    string // the MISCONF text in force
	// logFailure: the Raft log's last write failed (the AOF half of
	// Redis's check), refreshed by the cron
	logFailure string
	lastSave   int64 // unix s of the last successful save (LASTSAVE)
	lastFailed bool  // the last BGSAVE failed (rdb_last_bgsave_status:err)
	lastTry    int64 // unix s the last BGSAVE started (the retry delay)
	saves      int64 // rdb_saves: SAVE and BGSAVE started
	lastBgSecs int64 // rdb_last_bgsave_time_sec; -1 before the first
	scheduled  bool  // BGSAVE SCHEDULE, or BGSAVE inside MULTI
	bg         *bgsave
	// the start-up load (rdb_last_load_keys_loaded, _expired)
	loaded, loadExpired int64
}

// bgsave is a background save in progress.
type bgsave struct {
	// snap is the capture being written; nil with a Raft node, whose
	// snapshot the goroutine takes and copies (bgsaveRaft)
	snap  *engine.Snapshot
	start time.Time
	dirty int64 // Stats.Dirty at the capture: what the save covers
	// abort stops the writing (SHUTDOWN, Close): Redis kills its child
	abort atomic.Bool
	// done is closed once the file is written, renamed or removed. The
	// writer of a capture takes the engine lock only after it, so a
	// holder of the lock may wait for it (not so with a Raft node: the
	// Raft snapshot pauses admission under that lock)
	done chan struct{}
}

// errSaveAborted is what the writer of an aborted BGSAVE meets.
var errSaveAborted = errors.New("background save aborted")

// initRDB sets the state a fresh server has (LASTSAVE is the start time).
func (s *Server) initRDB() {
	s.rdb.lastSave = s.started.Unix()
	s.rdb.lastBgSecs = -1
}

// applyRDBConfig re-reads save and stop-writes-on-bgsave-error, and the
// writer options (applyConfig; the engine lock is held).
func (s *Server) applyRDBConfig() {
	p := s.conf.params
	s.rdb.rules = parseSaveRules(p["save"])
	s.rdb.stopWrites = p["stop-writes-on-bgsave-error"] == "yes"
	s.eng.RDBNoCompression = p["rdbcompression"] == "no"
	s.eng.RDBNoChecksum = p["rdbchecksum"] == "no"
	s.eng.RDBKeySaveDelay, _ = strconv.ParseInt(p["rdb-key-save-delay"], 10, 64)
	s.eng.KeyLoadDelay, _ = strconv.ParseInt(p["key-load-delay"], 10, 64)
	s.updateDenyWrites()
}

func parseSaveRules(v string) []saveRule {
	f := strings.Fields(v)
	var rules []saveRule
	for i := 0; i+1 < len(f); i += 2 {
		sec, _ := strconv.ParseInt(f[i], 10, 64)
		ch, _ := strconv.ParseInt(f[i+1], 10, 64)
		rules = append(rules, saveRule{sec, ch})
	}
	return rules
}

// updateDenyWrites is Redis's writeCommandsDeniedByDiskError: the RDB
// half (the last BGSAVE failed) and the AOF half, whose append-only file
// is limitdb's Raft log (its last write failed: a full disk).
func (s *Server) updateDenyWrites() {
	r := &s.rdb
	r.denyMsg = ""
	switch {
	case r.stopWrites && len(r.rules) > 0 && r.lastFailed:
		r.denyMsg = errMISCONF
	case r.logFailure != "":
		r.denyMsg = errMISCONFLog + r.logFailure
	}
	r.denyWrites = r.denyMsg != ""
	s.eng.WriteDenied = r.denyMsg
}

// refreshLogFailure follows the Raft log's write errors (cron, lock held).
func (s *Server) refreshLogFailure() {
	if !s.replicated() {
		return
	}
	if f := s.node.LogFailure(); f != s.rdb.logFailure {
		s.rdb.logFailure = f
		s.updateDenyWrites()
	}
}

// queueHas reports whether a MULTI queue holds a command with flag f
// (for a script, the flags its shebang or function declares).
func queueHas(c *engine.Ctx, queue [][][]byte, f engine.Flag) bool {
	for _, q := range queue {
		cmd := engine.Lookup(q[0])
		if cmd != nil && len(cmd.Subs) > 0 && len(q) >= 2 {
			if sub := cmd.Sub(q[1]); sub != nil {
				cmd = sub
			}
		}
		if cmd != nil && c.CallFlags(cmd, q)&f != 0 {
			return true
		}
	}
	return false
}

// rdbPath is dir/dbfilename (dir is absolute once the configuration is
// loaded; the binary also works in it, as redis-server does).
func (s *Server) rdbPath() string {
	return filepath.Join(s.conf.params["dir"], s.conf.params["dbfilename"])
}

// tempPath is the temporary file of a save: Redis's temp-<pid>.rdb, and
// for a background save the same with -bg (Redis's child has a pid of
// its own).
func (s *Server) tempPath(bg bool) string {
	name := "temp-" + strconv.Itoa(os.Getpid())
	if bg {
		name += "-bg"
	}
	return filepath.Join(s.conf.params["dir"], name+".rdb")
}

// saveLocked is Redis's rdbSave, with the engine lock held: the whole
// state is written as it is now. On success the dirty counter restarts
// and LASTSAVE moves; a failure leaves rdb_last_bgsave_status alone, as
// in Redis (only a failed BGSAVE sets it).
func (s *Server) saveLocked() error {
	err := s.writeRDBFile(s.tempPath(false), s.rdbPath(), nil, func(w io.Writer) error {
		return s.eng.WriteSnapshot(w)
	})
	if err != nil {
		return err
	}
	s.log.Info("DB saved on disk")
	s.eng.Stats.Dirty = 0
	s.rdb.lastSave = time.Now().Unix()
	s.rdb.lastFailed = false
	s.updateDenyWrites()
	return nil
}

// writeRDBFile writes a snapshot to tmp, syncs and closes it, renames it
// to path and syncs the directory; on any failure tmp is removed and the
// failure logged with Redis's texts. A save aborted (abort set, may be
// nil) before the rename leaves path alone.
func (s *Server) writeRDBFile(tmp, path string, abort *atomic.Bool, write func(io.Writer) error) error {
	cwd := filepath.Dir(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		s.log.Warn(fmt.Sprintf("Failed opening the temp RDB file %s (in server root dir %s) for saving: %s",
			filepath.Base(tmp), cwd, errnoText(err)))
		return err
	}
	op := "rdbSaveRio"
	err = write(f)
	if err == nil {
		op = "fsync"
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		op, err = "fclose", cerr
	}
	if err == nil && abort != nil && abort.Load() {
		err = errSaveAborted
	}
	if err == nil {
		if rerr := os.Rename(tmp, path); rerr != nil {
			s.log.Warn(fmt.Sprintf("Error moving temp DB file %s on the final destination %s (in server root dir %s): %s",
				filepath.Base(tmp), filepath.Base(path), cwd, errnoText(rerr)))
			os.Remove(tmp)
			return rerr
		}
		op, err = "fsyncFileDir", cluster.SyncDir(filepath.Dir(path))
		if err == nil {
			return nil
		}
	}
	if !errors.Is(err, errSaveAborted) {
		s.log.Warn(fmt.Sprintf("Write error saving DB on disk(%s): %s", op, errnoText(err)))
	}
	os.Remove(tmp)
	return err
}

// abortWriter fails once the save is aborted, which ends WriteTo within
// one 64 KB write.
type abortWriter struct {
	w     io.Writer
	abort *atomic.Bool
}

func (a abortWriter) Write(p []byte) (int, error) {
	if a.abort.Load() {
		return 0, errSaveAborted
	}
	return a.w.Write(p)
}

// bgsaveStart is rdbSaveBackground (engine lock held, no BGSAVE running):
// without a Raft node the capture is taken here, at the command, as
// Redis forks there; a goroutine writes the file.
func (s *Server) bgsaveStart() {
	r := &s.rdb
	r.saves++
	r.lastTry = time.Now().Unix()
	t0 := time.Now()
	bg := &bgsave{start: t0, dirty: s.eng.Stats.Dirty, done: make(chan struct{})}
	r.bg = bg
	if !s.replicated() {
		bg.snap = s.eng.Capture()
		s.log.Info("Background saving started", "capture_ms", float64(time.Since(t0).Microseconds())/1000)
	} else {
		s.log.Info("Background saving started (from a Raft snapshot)")
	}
	tmp, path := s.tempPath(true), s.rdbPath()
	s.wg.Add(1)
	go s.bgsaveRun(bg, tmp, path)
}

// bgsaveRaft writes dump.rdb from a Raft snapshot taken now (cluster
// mode): one pause and capture, one encoding, for both the Raft snapshot
// (log compaction) and the file, which gets the snapshot's RDB bytes.
// The state is the one when the goroutine pauses admission, just after
// the command; on a follower, the one after a read barrier (every write
// acknowledged before the command). Should Raft refuse (a snapshot of its own under way), the
// engine is captured directly.
func (s *Server) bgsaveRaft(bg *bgsave, w io.Writer) error {
	aw := abortWriter{w, &bg.abort}
	if bg.abort.Load() {
		return errSaveAborted
	}
	rc, index, err := s.node.SnapshotState()
	if err == nil {
		defer rc.Close()
		s.log.Info("BGSAVE: writing the state at Raft index", "raft_index", index)
		_, err = io.Copy(aw, rc)
		return err
	}
	s.log.Warn("BGSAVE: no Raft snapshot; capturing the engine for the file", "err", err.Error())
	s.door.Lock()
	snap := s.eng.Capture()
	s.door.Unlock()
	defer snap.Release()
	_, err = snap.WriteTo(aw)
	return err
}

// bgsaveRun writes the file and records the outcome (Redis's
// backgroundSaveDoneHandlerDisk).
func (s *Server) bgsaveRun(bg *bgsave, tmp, path string) {
	defer s.wg.Done()
	end := procs.Background() // as Redis's forked child: a CPU of its own
	err := s.writeRDBFile(tmp, path, &bg.abort, func(w io.Writer) error {
		if bg.snap == nil {
			return s.bgsaveRaft(bg, w)
		}
		_, err := bg.snap.WriteTo(abortWriter{w, &bg.abort})
		return err
	})
	if bg.snap != nil {
		bg.snap.Release()
	}
	end()
	close(bg.done)
	aborted := bg.abort.Load()
	s.door.Lock()
	r := &s.rdb
	r.bg = nil
	r.lastBgSecs = int64(time.Since(bg.start) / time.Second)
	switch {
	case aborted:
		// Redis kills its child with SIGUSR1, which leaves the status
		s.log.Warn("Background saving terminated by signal 10")
	case err == nil:
		s.log.Info("Background saving terminated with success", "seconds", time.Since(bg.start).Seconds())
		s.eng.Stats.Dirty = max(s.eng.Stats.Dirty-bg.dirty, 0)
		r.lastSave = time.Now().Unix()
		r.lastFailed = false
	default:
		s.log.Warn("Background saving error")
		r.lastFailed = true
	}
	s.updateDenyWrites()
	s.door.Unlock()
}

// raftSnapshot takes a Raft snapshot (cluster mode, after SAVE): the log
// is compacted up to now. Called without the engine lock.
func (s *Server) raftSnapshot() {
	if !s.replicated() || s.closing.Load() {
		return
	}
	if err := s.node.Snapshot(); err != nil {
		s.log.Warn("Raft snapshot after a save failed", "err", err.Error())
	}
}

// stopBgsave aborts the BGSAVE in progress, if any (engine lock held):
// the writer of a capture stops within one write and is waited for (it
// needs no lock until then); with a Raft node the goroutine may be
// waiting for the lock, so it is not, and its abort keeps it from
// renaming its file over dump.rdb. It reports whether there was one.
func (s *Server) stopBgsave() bool {
	bg := s.rdb.bg
	if bg == nil {
		return false
	}
	bg.abort.Store(true)
	if bg.snap != nil {
		<-bg.done
	}
	return true
}

// rdbCron is serverCron's persistence part (engine lock not held): start
// a scheduled BGSAVE, or one a save rule asks for.
func (s *Server) rdbCron() {
	s.door.Lock()
	defer s.door.Unlock()
	r := &s.rdb
	if r.bg != nil || s.down.Load() {
		return
	}
	now := time.Now().Unix()
	retryOK := now-r.lastTry > bgsaveRetryDelay || !r.lastFailed
	for _, sp := range r.rules {
		if s.eng.Stats.Dirty >= sp.changes && now-r.lastSave > sp.seconds && retryOK {
			s.log.Info(fmt.Sprintf("%d changes in %d seconds. Saving...", sp.changes, sp.seconds))
			s.bgsaveStart()
			return
		}
	}
	if r.scheduled && retryOK {
		r.scheduled = false
		s.bgsaveStart()
	}
}
