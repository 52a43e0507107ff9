package cluster

import (
	"sync"
	"sync/atomic"

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
