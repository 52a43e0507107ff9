package cluster

import (
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/raft-wal/types"
)

// syncFS is the file system under the Raft log (raft-wal's segment
// files) with appendfsync's policy. raft-wal syncs the tail segment after
// every append; here that call only does what the policy says:
//
//   - always: it syncs (and counts, INFO's raft_log_fsyncs);
//   - everysec: it marks the file dirty, and syncLoop syncs the dirty
//     files once a second (syncAll) — a process crash loses nothing (the
//     data is in the page cache), a power cut up to the last second;
//   - no: nothing (the OS decides).
//
// Under everysec, syncAll also runs before the WAL commits its metadata
// (a segment sealed, the log truncated: syncedMeta), so the metadata never
// names a sealed segment whose data is not on disk.
//
// Under every policy each file also keeps the range written since its
// last fsync: what a power cut would lose (DEBUG RAFT-POWER-CUT,
// powercut.go).
type syncFS struct {
	types.VFS
	policy string // appendfsync: always, everysec or no
	fsyncs *atomic.Int64
	// syncNs is the time spent in the log files' fsyncs (each one, failed
	// or not), ns: with fsyncs, the metrics' mean fsync latency
	syncNs atomic.Int64
	onErr  func(error)  // a failed background sync (logged)
	inject atomic.Bool  // every write fails (DEBUG RAFT-FAIL-WRITES)
	stall  atomic.Int64 // every write first sleeps this long, ns (DEBUG RAFT-STALL-WRITES)

	mu   sync.Mutex // guards open, closed and cut, and holds a file open while syncAll syncs it
	open map[*syncFile]struct{}
	// closed: files closed with writes not yet synced (appendfsync no,
	// or a failed sync at Close), by path: a power cut loses those too
	// (powercut.go); a deleted file leaves the map
	closed map[string]span
	cut    bool // the power is cut (powercut.go): no file opens again
}

func newSyncFS(vfs types.VFS, policy string, fsyncs *atomic.Int64, onErr func(error)) *syncFS {
	return &syncFS{VFS: vfs, policy: policy, fsyncs: fsyncs, onErr: onErr,
		open: map[*syncFile]struct{}{}, closed: map[string]span{}}
}

func (s *syncFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	f, err := s.VFS.Create(dir, name, size)
	if err != nil {
		return nil, err
	}
	return s.track(f, filepath.Join(dir, name)), nil
}

func (s *syncFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := s.VFS.OpenWriter(dir, name)
	if err != nil {
		return nil, err
	}
	return s.track(f, filepath.Join(dir, name)), nil
}

func (s *syncFS) Delete(dir, name string) error {
	err := s.VFS.Delete(dir, name)
	if err == nil {
		s.mu.Lock()
		delete(s.closed, filepath.Join(dir, name))
		s.mu.Unlock()
	}
	return err
}

func (s *syncFS) track(f types.WritableFile, path string) *syncFile {
	sf := &syncFile{WritableFile: f, fs: s, fd: -1, path: path}
	if s.policy == "everysec" {
		if fd, ok := f.(interface{ Fd() uintptr }); ok {
			sf.fd = int(fd.Fd())
		}
	}
	s.mu.Lock()
	if s.cut {
		s.mu.Unlock()
		select {} // the power is off: the process is about to die
	}
	s.open[sf] = struct{}{}
	s.mu.Unlock()
	return sf
}

// syncAll syncs every file written since its last sync (everysec: once a
// second, before a metadata commit, and at close).
func (s *syncFS) syncAll() error {
	if s.policy != "everysec" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	for f := range s.open {
		if !f.dirty.Swap(false) {
			continue
		}
		if err := f.sync(); err != nil {
			f.dirty.Store(true)
			if first == nil {
				first = err
			}
			continue
		}
		s.fsyncs.Add(1)
	}
	return first
}

// syncFile is one writable segment file of a syncFS.
type syncFile struct {
	types.WritableFile
	fs    *syncFS
	path  string
	dirty atomic.Bool // written since its last sync (everysec)
	// un is what a power cut would lose of this file (powercut.go): what
	// was written since the last fsync that completed. Its mutex is held
	// across each write, so a cut sees every write done or not begun
	un unsynced
	// everysec: the range written since its writeback was last started
	// (startWriteback; raft-wal's writer only); fd -1: not started
	fd           int
	wbFrom, wbTo int64
}

// writebackChunk: under everysec, each time this much has been written to
// a segment, its writeback is started (sync_file_range, which does not
// wait). The fsync that must precede a metadata commit — a segment
// sealed, every 16 MB — runs with raft-wal's write lock held, so every
// write waits for it; with the whole segment dirty it took 15–130 ms at
// SET P=16 (about twice a second; measured around StoreLogs), and the
// background sync of a second's data up to 190 ms. Started early, the
// data is mostly on disk when the fsync comes.
const writebackChunk = 1 << 20

func (f *syncFile) WriteAt(p []byte, off int64) (int, error) {
	if d := f.fs.stall.Load(); d > 0 {
		time.Sleep(time.Duration(d))
	}
	if f.fs.inject.Load() {
		return 0, errInjected
	}
	var n int
	var err error
	f.un.mu.Lock() // a power cut holds it for good (powercut.go)
	if f.fd >= 0 { // everysec, raft-wal's writer: a page-cache copy
		n, err = pwriteAll(f.fd, p, off)
	} else {
		n, err = f.WritableFile.WriteAt(p, off)
	}
	if n > 0 {
		f.un.cur = f.un.cur.add(off, int64(n))
	}
	f.un.mu.Unlock()
	if f.fd >= 0 && n > 0 {
		if off < f.wbFrom || off > f.wbTo {
			f.wbFrom, f.wbTo = off, off // not an append: a new range
		}
		f.wbTo = max(f.wbTo, off+int64(n))
		if f.wbTo-f.wbFrom >= writebackChunk {
			startWriteback(f.fd, f.wbFrom, f.wbTo-f.wbFrom)
			f.wbFrom = f.wbTo
		}
	}
	return n, err
}

func (f *syncFile) Sync() error {
	switch f.fs.policy {
	case "always":
		if err := f.sync(); err != nil {
			return err
		}
		f.fs.fsyncs.Add(1)
	case "everysec":
		f.dirty.Store(true)
	}
	return nil
}

func (f *syncFile) Close() error {
	f.fs.mu.Lock()
	delete(f.fs.open, f)
	if f.dirty.Swap(false) {
		// a file raft-wal lets go of (the log closed, a segment deleted):
		// what was written to it is synced now rather than never
		if err := f.sync(); err == nil {
			f.fs.fsyncs.Add(1)
		} else if f.fs.onErr != nil {
			f.fs.onErr(err)
		}
	}
	if lost := f.un.lost(); !lost.empty() {
		f.fs.closed[f.path] = lost.hull(f.fs.closed[f.path])
	}
	f.fs.mu.Unlock()
	return f.WritableFile.Close()
}

// syncedMeta is raft-wal's metadata store (a bolt file, always synced),
// syncing the segments first under everysec (see syncFS).
type syncedMeta struct {
	types.MetaStore
	fs *syncFS
}

func (m *syncedMeta) CommitState(st types.PersistentState) error {
	if err := m.fs.syncAll(); err != nil {
		return err
	}
	return m.MetaStore.CommitState(st)
}

// pwriteAll writes all of p at off (pwrite until done).
func pwriteAll(fd int, p []byte, off int64) (int, error) {
	done := 0
	for done < len(p) {
		n, err := pwrite(fd, p[done:], off+int64(done))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}
