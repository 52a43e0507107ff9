package cluster

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
)

// sealedReaders wraps raft-wal's segment filer so that a segment, once
// sealed, is read through a plain segment reader (its on-disk index, as
// after a restart) instead of through the writer that filled it.
//
// Why: raft-wal keeps each sealed segment's writer as that segment's
// reader until the segment is deleted, and a writer holds its in-memory
// frame index (a []uint32 made with room for 32,768 entries: 128 KB) and
// its commit buffer (64 KB or more). A node holds every segment since the
// last snapshot's trailing logs, so that was ~190 KB per 16 MB of log:
// after 1,000,000 RL.ALLOW (bench memory mode, 9 sealed segments) 1.7 MB,
// 1.7 B per limiter of RSS. A reader holds an open file and nothing else.
type sealedReaders struct {
	types.SegmentFiler
}

func (f sealedReaders) Create(info types.SegmentInfo) (types.SegmentWriter, error) {
	w, err := f.SegmentFiler.Create(info)
	if err != nil {
		return nil, err
	}
	return newSealingWriter(f.SegmentFiler, info, w), nil
}

func (f sealedReaders) RecoverTail(info types.SegmentInfo) (types.SegmentWriter, error) {
	w, err := f.SegmentFiler.RecoverTail(info)
	if err != nil {
		return nil, err
	}
	return newSealingWriter(f.SegmentFiler, info, w), nil
}

// Open opens a sealed segment. A segment that raft-wal v0.4.0 sealed
// without an index block is read through an index rebuilt by scanning it.
//
// Why: raft-wal#31 (fixed upstream after v0.4.0, the newest version the
// module proxy serves). When Raft clears a follower's conflicting suffix
// (DeleteRange of the tail), raft-wal cuts the open tail segment by
// marking it sealed in its metadata, MaxIndex the last entry kept, and
// starts a new one; it writes no index block into the cut segment
// (IndexStart 0). The process reads it through its writer until it
// stops; the next start opened it with a plain reader, whose every read
// failed ("sealed segment has no index block") and raft.NewRaft panicked:
// a node that lived through a leader change with a conflicting tail
// could never start again. The cut segment's entries up to MaxIndex are
// committed frames in the file (synced at each append under always, by
// the truncation's metadata commit under everysec: syncedMeta), so
// raft-wal's own tail recovery, which scans the file's frames and checks
// the last commit's CRC, rebuilds the index in memory, as it does for the
// open tail at every start. The scan costs
// a read of the segment (16 MB at most) at each start until a snapshot's
// head truncation deletes it; the rebuilt index holds 128 KB.
func (f sealedReaders) Open(info types.SegmentInfo) (types.SegmentReader, error) {
	if info.IndexStart != 0 {
		return f.SegmentFiler.Open(info)
	}
	w, err := f.SegmentFiler.RecoverTail(info)
	if err != nil {
		return nil, fmt.Errorf("cluster: Raft log segment %s has no index block and could not be scanned: %w", segment.FileName(info), err)
	}
	if last := w.LastIndex(); last < info.MaxIndex {
		w.Close()
		return nil, fmt.Errorf("cluster: Raft log segment %s has no index block and holds entries up to %d, not %d: "+
			"the log is damaged; move the node's raft directory away and restart it with --join to a member to copy the data again",
			segment.FileName(info), last, info.MaxIndex)
	}
	return scannedSegment{w, info}, nil
}

// scannedSegment is a sealed segment read through the index its scan
// rebuilt (sealedReaders.Open). The file still holds the entries the
// truncation cut after MaxIndex: they are not found.
type scannedSegment struct {
	types.SegmentReader
	info types.SegmentInfo
}

func (s scannedSegment) GetLog(idx uint64) (*types.PooledBuffer, error) {
	if idx < s.info.MinIndex || idx > s.info.MaxIndex {
		return nil, types.ErrNotFound
	}
	return s.SegmentReader.GetLog(idx)
}

// sealingWriter is a tail segment's writer that swaps itself for a reader
// when the segment seals, dropping the writer. The WAL calls Append and
// Sealed under its write lock, LastIndex and GetLog from any goroutine: mu
// orders the swap (and the writer's Close) with GetLog; LastIndex only
// loads cur.
type sealingWriter struct {
	filer types.SegmentFiler
	info  types.SegmentInfo
	mu    sync.RWMutex
	cur   atomic.Pointer[segState]
}

// segState is a sealingWriter's segment: w until sealed, then r.
type segState struct {
	w          types.SegmentWriter
	r          types.SegmentReader
	last       uint64 // LastIndex, once sealed
	indexStart uint64
}

func newSealingWriter(f types.SegmentFiler, info types.SegmentInfo, w types.SegmentWriter) *sealingWriter {
	s := &sealingWriter{filer: f, info: info}
	s.cur.Store(&segState{w: w})
	return s
}

func (s *sealingWriter) Append(entries []types.LogEntry) error {
	st := s.cur.Load()
	if st.w == nil {
		return types.ErrSealed
	}
	return st.w.Append(entries)
}

func (s *sealingWriter) Sealed() (bool, uint64, error) {
	st := s.cur.Load()
	if st.w == nil {
		return true, st.indexStart, nil
	}
	sealed, indexStart, err := st.w.Sealed()
	if err != nil || !sealed {
		return sealed, indexStart, err
	}
	info := s.info
	info.IndexStart, info.MaxIndex = indexStart, st.w.LastIndex()
	r, err := s.filer.Open(info)
	if err != nil {
		// keep reading through the writer, as raft-wal does
		return sealed, indexStart, nil
	}
	s.mu.Lock()
	s.cur.Store(&segState{r: r, last: info.MaxIndex, indexStart: indexStart})
	s.mu.Unlock()
	st.w.Close()
	return sealed, indexStart, nil
}

func (s *sealingWriter) LastIndex() uint64 {
	st := s.cur.Load()
	if st.w != nil {
		return st.w.LastIndex()
	}
	return st.last
}

func (s *sealingWriter) GetLog(idx uint64) (*types.PooledBuffer, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.cur.Load()
	if st.w != nil {
		return st.w.GetLog(idx)
	}
	return st.r.GetLog(idx)
}

func (s *sealingWriter) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.cur.Load()
	if st.w != nil {
		return st.w.Close()
	}
	return st.r.Close()
}
