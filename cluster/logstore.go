package cluster

import (
	"errors"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// logStore wraps the Raft log (raft-wal, see node.go's openStores) to
// follow its write errors: the server refuses writes with MISCONF while
// the last one failed (a full disk), and DEBUG RAFT-FAIL-WRITES injects
// such a failure (tests).
type logStore struct {
	raft.LogStore
	// failing is the last write's error text ("" when it succeeded); inject
	// makes every write fail
	failing atomic.Pointer[string]
	inject  atomic.Bool
}

func (s *logStore) StoreLogs(logs []*raft.Log) error {
	var err error
	if s.inject.Load() {
		err = errInjected
	} else {
		err = s.LogStore.StoreLogs(logs)
	}
	if err != nil {
		msg := err.Error()
		s.failing.Store(&msg)
		return err
	}
	if s.failing.Load() != nil {
		s.failing.Store(nil)
	}
	return nil
}

func (s *logStore) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// GetLog refuses entries below the first index. raft-wal drops a
// truncated head only by whole segments and still reads the rest of the
// head segment; a leader then replicated entries a snapshot had replaced
// to a follower that needed the snapshot (TestClusterSnapshotInstall).
func (s *logStore) GetLog(index uint64, l *raft.Log) error {
	if first, err := s.LogStore.FirstIndex(); err == nil && index < first {
		return raft.ErrLogNotFound
	}
	return s.LogStore.GetLog(index, l)
}

// IsMonotonic passes raft-wal's answer through (raft.MonotonicLogStore):
// the log takes no gaps, so after installing a snapshot Raft empties it
// instead of keeping entries around the snapshot's index.
func (s *logStore) IsMonotonic() bool {
	m, ok := s.LogStore.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}

var errInjected = errors.New("No space left on device (injected by DEBUG RAFT-FAIL-WRITES)")

// LogFailure is the error of the Raft log's last write when it failed
// (a full disk), "" otherwise: the server refuses writes with MISCONF
// meanwhile, and serves reads from what the node has applied.
func (n *Node) LogFailure() string {
	if p := n.store.failing.Load(); p != nil {
		return *p
	}
	return ""
}

// InjectLogFailure makes the log store fail every write (tests).
func (n *Node) InjectLogFailure(on bool) { n.store.inject.Store(on) }
