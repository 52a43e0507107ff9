package server

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"limitdb/engine"
)

// Loading at start-up (Redis's loadDataFromDisk). Which file wins:
//
//   - appendonly no: dir/dbfilename, when present, is the state (Redis
//     without AOF). A file that does not load stops the start.
//   - appendonly yes (a Raft node): the Raft store in dir/raft is the
//     state, as Redis prefers its AOF to the RDB file. Only when that
//     store holds nothing yet (cluster.Node.HoldsNoData: a first start)
//     is dir/dbfilename imported, as the new cluster's first Raft
//     snapshot; from then on the store wins and later saves overwrite the
//     file.

// StartPersistence loads the data set as the configuration says and, with
// appendonly yes, starts the cluster node (StartCluster). The binary
// calls it after Listen and before Serve.
func (s *Server) StartPersistence() error {
	if s.conf.params["appendonly"] != "yes" {
		if err := s.StartCluster(); err != nil { // checks raft-addr/join
			return err
		}
		return s.loadRDB()
	}
	if err := s.StartCluster(); err != nil {
		return err
	}
	return s.importRDB()
}

// errLoad wraps a file that did not load: the start stops with it.
func errLoad(path string, err error) error {
	return fmt.Errorf("Fatal error loading the DB (%s): %v. Exiting.", path, err)
}

// loadRDB loads dir/dbfilename into the engine (no node).
func (s *Server) loadRDB() error {
	path := s.rdbPath()
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errLoad(path, err)
	}
	defer f.Close()
	start := time.Now()
	s.door.Lock()
	defer s.door.Unlock()
	if err := s.eng.LoadSnapshot(bufio.NewReaderSize(f, 256<<10)); err != nil {
		s.log.Warn("Short read or OOM loading DB. Unrecoverable error, aborting now.", "err", err.Error())
		return errLoad(path, err)
	}
	s.loaded(start)
	return nil
}

// loaded logs and records what a load brought (engine lock held): keys
// alive and keys already past their deadline (kept, as a follower must;
// expiry reclaims them, where Redis skips them while loading).
func (s *Server) loaded(start time.Time) {
	now, _ := s.door.Now()
	var alive, expired int64
	for _, db := range s.eng.DBs {
		a, e := db.CountExpired(now)
		alive += a
		expired += e
	}
	s.rdb.loaded, s.rdb.loadExpired = alive, expired
	s.log.Info(fmt.Sprintf("Done loading RDB, keys loaded: %d, keys expired: %d.", alive, expired))
	s.log.Info(fmt.Sprintf("DB loaded from disk: %.3f seconds", time.Since(start).Seconds()))
}

// importRDB gives a Raft store that holds nothing yet the state of
// dir/dbfilename, if there is one: the file is checked by loading it
// into a scratch engine (Raft cannot refuse a snapshot half way), then
// installed through the node as the cluster's first snapshot.
func (s *Server) importRDB() error {
	path := s.rdbPath()
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errLoad(path, err)
	}
	empty, err := s.node.HoldsNoData()
	if err != nil {
		return fmt.Errorf("reading the Raft store: %w", err)
	}
	if !empty {
		s.log.Info("The Raft store holds the data set: " + path + " is not loaded")
		return nil
	}
	start := time.Now()
	check := engine.New()
	s.door.Lock()
	check.Enc, check.RDBNoChecksum = s.eng.Enc, s.eng.RDBNoChecksum
	s.door.Unlock()
	if err := loadFile(check, path); err != nil {
		s.log.Warn("Short read or OOM loading DB. Unrecoverable error, aborting now.", "err", err.Error())
		return errLoad(path, err)
	}
	check = nil
	for deadline := time.Now().Add(leadWait); !s.gated(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return errors.New("the node did not become the leader of its new cluster: cannot import " + path)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return errLoad(path, err)
	}
	defer f.Close()
	if err := s.node.Import(bufio.NewReaderSize(f, 256<<10), st.Size()); err != nil {
		return fmt.Errorf("importing %s into the Raft store: %w", path, err)
	}
	s.log.Info("The Raft store was empty: " + path + " imported as its first snapshot")
	s.door.Lock()
	s.loaded(start)
	s.door.Unlock()
	return nil
}

// loadFile loads an RDB file into e, an engine nobody else sees (so its
// lock is not needed).
func loadFile(e *engine.Engine, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return e.LoadSnapshot(bufio.NewReaderSize(f, 256<<10))
}

// leadWait bounds the wait for a new cluster of one to elect its node
// (about a second: one election timeout, then the Barrier).
const leadWait = 10 * time.Second
