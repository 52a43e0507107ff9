package cluster

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/segment"

	"limitdb/door"
)

// logStore is the Raft log: raft-wal (openStores), with three things it
// does not do.
//
// It follows write errors: the server refuses writes with MISCONF while
// the last one failed (a full disk), and serves reads.
//
// It recovers from them. raft-wal counts an entry in its index before
// writing it and keeps a sealed segment whose successor it could not
// create, so after a failed write every later one fails too; bolt rolled
// the transaction back and the next write could succeed. So after a
// failure the next write first reopens the log, which recovers the tail
// from the file as a restart would (DEBUG RAFT-FAIL-WRITES fails the
// segment files' writes: TestClusterLogWriteFailure writes again after).
//
// And it answers "not found" below the first index: raft-wal truncates
// the head by whole segments and still reads the rest of the first one; a
// leader then sent entries a snapshot had replaced to a follower that
// needed the snapshot (TestClusterSnapshotInstall).
type logStore struct {
	mu     sync.RWMutex // writers of w: a reopen; every call holds it to read
	w      *wal.WAL
	meta   *syncedMeta
	open   func() (*wal.WAL, *syncedMeta, error)
	broken bool // the last write failed: reopen before the next (raft's goroutine only)
	closed bool // by the node (guarded by mu)
	// failing is the last write's error text ("" when it succeeded)
	failing atomic.Pointer[string]
	// writing: when the running write started (door.Nanotime; 0: none). Raft's
	// leader loop makes the writes and checks the leader's lease between
	// them, so a stalled write suspends that check (LeaseHeld)
	writing atomic.Int64
	mem     *logMem // the log's memory: raft-wal's copies (nil in tests)
}

// openWAL opens the raft-wal log in dir on logFS (the node's, and the
// tests' with small segments).
func openWAL(dir string, logFS *syncFS, segmentSize int) func() (*wal.WAL, *syncedMeta, error) {
	return func() (*wal.WAL, *syncedMeta, error) {
		meta := &syncedMeta{MetaStore: &metadb.BoltMetaDB{}, fs: logFS}
		w, err := wal.Open(dir, wal.WithSegmentFiler(sealedReaders{segment.NewFiler(dir, logFS)}), wal.WithMetaStore(meta),
			wal.WithSegmentSize(segmentSize), wal.WithLogger(walLogger()))
		if err != nil {
			meta.Close()
			return nil, nil, err
		}
		return w, meta, nil
	}
}

func newLogStore(open func() (*wal.WAL, *syncedMeta, error)) (*logStore, error) {
	s := &logStore{open: open}
	var err error
	s.w, s.meta, err = open()
	return s, err
}

func (s *logStore) FirstIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.w == nil {
		return 0, errLogClosed
	}
	return s.w.FirstIndex()
}

func (s *logStore) LastIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.w == nil {
		return 0, errLogClosed
	}
	return s.w.LastIndex()
}

func (s *logStore) GetLog(index uint64, l *raft.Log) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.w == nil {
		return errLogClosed
	}
	if first, err := s.w.FirstIndex(); err == nil && index < first {
		return raft.ErrLogNotFound
	}
	return s.w.GetLog(index, l)
}

func (s *logStore) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

func (s *logStore) StoreLogs(logs []*raft.Log) error {
	s.writing.Store(door.Nanotime())
	defer s.writing.Store(0)
	if s.broken {
		if err := s.reopen(); err != nil {
			return s.failed(err)
		}
	}
	s.mu.RLock()
	err := errLogClosed
	if s.w != nil {
		err = s.w.StoreLogs(logs)
	}
	s.mu.RUnlock()
	if err != nil {
		s.broken = true
		return s.failed(err)
	}
	if s.failing.Load() != nil {
		s.failing.Store(nil)
	}
	if s.mem != nil {
		// raft-wal encoded each entry into a buffer of its own and copied
		// it into its commit buffer: the copies are garbage now
		var n int64
		for _, l := range logs {
			n += int64(len(l.Data))
		}
		s.mem.stored(n)
	}
	return nil
}

func (s *logStore) DeleteRange(min, max uint64) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.w == nil {
		return errLogClosed
	}
	return s.w.DeleteRange(min, max)
}

// IsMonotonic is raft.MonotonicLogStore: the log takes no gaps, so after
// installing a snapshot Raft empties it instead of keeping entries
// around the snapshot's index.
func (s *logStore) IsMonotonic() bool { return true }

func (s *logStore) failed(err error) error {
	msg := err.Error()
	s.failing.Store(&msg)
	return err
}

// reopen closes the log and opens it again from its files.
func (s *logStore) reopen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errLogClosed
	}
	if s.w != nil {
		s.w.Close()
		s.meta.Close()
		s.w, s.meta = nil, nil
	}
	w, meta, err := s.open()
	if err != nil {
		return err
	}
	s.w, s.meta, s.broken = w, meta, false
	return nil
}

// close syncs (everysec) and closes the log; raft-wal's Close leaves its
// metadata file open, closed here.
func (s *logStore) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.w != nil {
		s.w.Close()
		s.meta.Close()
		s.w, s.meta = nil, nil
	}
}

// errLogClosed answers while the log is closed: a reopen failed (the next
// write tries again), or the node closed it.
var errLogClosed = errors.New("cluster: the Raft log is closed")

// errInjected is the failure DEBUG RAFT-FAIL-WRITES gives the log's file
// writes (syncFS).
var errInjected = errors.New("No space left on device (injected by DEBUG RAFT-FAIL-WRITES)")
