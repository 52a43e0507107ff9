package cluster

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
	"golang.org/x/sys/unix"
)

// logStore wraps raft-boltdb's log store for two things bolt does not do.
//
// It counts synced writes (appendfsync always: bolt syncs every
// StoreLogs) for INFO's raft_log_fsyncs.
//
// And it keeps the log's memory map out of the process's resident set.
// bolt reads through a shared read-only mmap of the whole file, and its
// compactions (DeleteRange) and page rewrites touch the pages of entries
// long committed: with 640 MB of SETs under maxmemory 64mb the process
// held 76 MB of anonymous memory and 171 MB of mapped log file
// (RssFile), all of it page cache the kernel could drop, but counted in
// RSS. So every 4 MB written and after each compaction the wrapper tells
// the kernel it no longer needs those pages (madvise MADV_DONTNEED drops
// them from this mapping; the page cache keeps them, a later read faults
// them back). The mapping is found in /proc/self/maps; bolt moves it only
// when a write transaction grows the file, and every write transaction of
// this store runs under mu, which the advice holds too.
type logStore struct {
	raft.LogStore
	// failing is the last write's error text ("" when it succeeded); inject
	// makes every write fail (DEBUG RAFT-FAIL-WRITES, tests)
	failing atomic.Pointer[string]
	inject  atomic.Bool
	path    string
	syncs   bool
	fsyncs  *atomic.Int64
	mu      sync.Mutex
	written int64 // bytes stored since the last advice
}

const adviseEvery = 4 << 20

func (s *logStore) StoreLogs(logs []*raft.Log) error {
	s.mu.Lock()
	defer s.mu.Unlock()
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
	s.failing.Store(nil)
	if s.syncs {
		s.fsyncs.Add(1)
	}
	for _, l := range logs {
		s.written += int64(len(l.Data)) + 32
	}
	if s.written >= adviseEvery {
		s.advise()
	}
	return nil
}

func (s *logStore) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

func (s *logStore) DeleteRange(min, max uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.LogStore.DeleteRange(min, max)
	s.advise()
	return err
}

// advise drops the log file's mapped pages from the resident set (mu held).
func (s *logStore) advise() {
	s.written = 0
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasSuffix(line, " "+s.path) {
			continue
		}
		span, _, _ := strings.Cut(line, " ")
		lo, hi, ok := strings.Cut(span, "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		// the raw call: the region is bolt's, not a Go slice of ours
		unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_DONTNEED)
	}
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
