package cluster

import (
	"os"
	"sort"
	"sync"
	"syscall"
	"time"
)

// A power cut, simulated (DEBUG RAFT-POWER-CUT): the node's files are
// left as a machine that lost power would find them, then the process
// dies at once, as on SIGKILL.
//
// What a power cut loses is what the kernel had not written to disk: the
// writes to a file since its last completed fsync. The node's files are:
//
//   - the log's segment files (raft-wal, through syncFS): synced as
//     appendfsync says. Each syncFile records the range written since its
//     last fsync began (cur) and the range an fsync in progress covers
//     (flight), and the cut overwrites both with zeros.
//   - raft-wal's metadata and the stable store (term and vote): bolt
//     files synced at every commit; nothing to lose.
//   - the snapshots: hashicorp/raft's FileSnapshotStore syncs state.bin
//     and meta.json and the parent directory before a snapshot counts; an
//     unfinished one is a .tmp directory that the next start ignores.
//     Nothing to lose.
//
// Why zeros: raft-wal creates each segment as a new file preallocated
// with fallocate (unwritten extents: they read as zeros until written
// data reaches the disk), fills it front to back and never reuses it, so
// a range whose writes never reached the disk reads back as zeros — as
// the end of the log, to raft-wal's recovery, which stops at the first
// frame that is not one, and checks the last commit's CRC. Pages the
// kernel happened to write back before the cut (its own writeback after
// ~30 s, sync_file_range under everysec) would have survived; the cut
// assumes none did: the worst case the mode allows, and the same loss on
// every run, so a test can count it.
//
// Why a range per file is exact: raft-wal's writer only appends (one
// pwrite of its commit buffer at the write offset, then the next at the
// end of that), so what was written since a point in time is one range,
// and the range in flight and the one written after it touch. The one
// write that goes back is the first after raft-wal reopens a tail (a
// failed write's reopen, a restart): it starts at the end of the last
// commit frame, below what was written before; the hull then also covers
// bytes past it that may have been synced, which are past the last
// commit (garbage to the recovery) — lost either way.
//
// What the cut does not know: what an earlier process wrote to a file
// and left in the page cache (a kill -9, then a restart) counts as on
// disk. A test cuts a node whose log this process wrote since its last
// sync.
//
// The cost when no cut comes: an uncontended mutex around each write and
// each fsync of a segment (one pwrite per batch of entries), and two
// int64s to widen (BenchmarkTurnCommit: within noise; the bookkeeping
// ~15 ns beside a 3-5 µs write, ../bench/RESULTS.md, "Cluster measurements").

// span is a byte range [from, to) of a file; empty when to <= from.
type span struct{ from, to int64 }

func (s span) empty() bool { return s.to <= s.from }

// hull is the smallest span holding both.
func (s span) hull(o span) span {
	switch {
	case s.empty():
		return o
	case o.empty():
		return s
	}
	return span{min(s.from, o.from), max(s.to, o.to)}
}

// add is s widened by n bytes written at off.
func (s span) add(off, n int64) span { return s.hull(span{off, off + n}) }

// unsynced is what a syncFile wrote that a power cut would lose.
type unsynced struct {
	mu     sync.Mutex
	cur    span // written since the last fsync began
	flight span // written before the fsync in progress began
}

// lost is what a power cut would lose now.
func (u *unsynced) lost() span {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.cur.hull(u.flight)
}

// sync fsyncs the file: what was written before it began is on disk once
// it returns (a failed fsync leaves it all at risk).
func (f *syncFile) sync() error {
	u := &f.un
	u.mu.Lock()
	u.flight, u.cur = u.flight.hull(u.cur), span{}
	u.mu.Unlock()
	t0 := time.Now()
	err := f.WritableFile.Sync()
	f.fs.syncNs.Add(int64(time.Since(t0)))
	u.mu.Lock() // a cut during the fsync holds it for good (and counted flight as lost)
	if err != nil {
		u.cur = u.cur.hull(u.flight)
	}
	u.flight = span{}
	u.mu.Unlock()
	return err
}

// powerCutLoss is one file's loss at a power cut.
type powerCutLoss struct {
	path string
	span
}

// powerCut stops every write to the log's files, overwrites with zeros
// what was written since each file's last fsync, and returns what it
// overwrote. It never lets go of the files: the caller kills the
// process. An error is a zero fill that failed (the loss is then only
// partly applied; the caller dies anyway).
func (s *syncFS) powerCut() ([]powerCutLoss, error) {
	s.mu.Lock() // held for good: no file opens, closes or syncs again
	s.cut = true
	var losses []powerCutLoss
	var open []*syncFile
	for f := range s.open {
		open = append(open, f)
	}
	for _, f := range open {
		// held for good: a write in progress is done first, and every
		// later write or fsync of the file waits on it until the kill
		f.un.mu.Lock()
		if l := f.un.cur.hull(f.un.flight); !l.empty() {
			losses = append(losses, powerCutLoss{f.path, l})
		}
	}
	for p, l := range s.closed {
		losses = append(losses, powerCutLoss{p, l})
	}
	sort.Slice(losses, func(i, j int) bool { return losses[i].path < losses[j].path })
	for _, l := range losses {
		if err := zeroRange(l.path, l.span); err != nil {
			return losses, err
		}
	}
	return losses, nil
}

// zeroRange overwrites the file's span with zeros (through a descriptor
// of its own: the node's are held by the cut). The page cache keeps them;
// the next process reads them as the disk would have them.
func zeroRange(path string, s span) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	zeros := make([]byte, 1<<20)
	for off := s.from; off < s.to; {
		n := min(int64(len(zeros)), s.to-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return err
		}
		off += n
	}
	return nil
}

// powerCut does PowerCut (api.go).
func (n *Node) powerCut() {
	losses, err := n.logFS.powerCut()
	var total int64
	for _, l := range losses {
		total += l.to - l.from
		n.log.Warn("cluster: power cut: dropped what was written since the last fsync",
			"file", l.path, "from", l.from, "to", l.to)
	}
	if err != nil {
		n.log.Error("cluster: power cut: zero fill failed", "err", err.Error())
	}
	n.log.Warn("cluster: power cut (DEBUG RAFT-POWER-CUT): exiting as on SIGKILL",
		"files", len(losses), "bytes_dropped", total, "appendfsync", n.cfg.AppendFsync)
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}
