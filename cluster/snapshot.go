package cluster

import (
	"bufio"
	"errors"
	"io"
	"time"

	"github.com/hashicorp/raft"
)

// The leader cannot count on Raft's own snapshot timer: under load its
// engine nearly always holds executed units not yet applied, and the FSM
// refuses to snapshot then (fsm.Snapshot). So the leader checks the log's
// growth itself and, past the threshold, pauses admission (it holds the
// engine lock: no unit executes), waits until every executed unit is
// applied, and asks Raft for a snapshot; the FSM captures the engine
// under the lock the leader holds (copy-on-write, engine.Capture), and
// admission resumes as soon as the capture is taken, while Raft persists
// it in the background. Followers never speculate: Raft's timer serves
// them.

// pauseWait bounds how long admission may stay paused waiting for the
// units in flight to be applied.
const pauseWait = 2 * time.Second

var errPauseTimeout = errors.New("cluster: units in flight were not applied in time; snapshot postponed")

// snapshotLoop runs on every node; only a serving leader acts.
func (n *Node) snapshotLoop(threshold uint64, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-n.closing:
			return
		case <-t.C:
		}
		if !n.Serving() {
			continue
		}
		last := uint64(0)
		if metas, err := n.snaps.List(); err == nil && len(metas) > 0 {
			last = metas[0].Index
		}
		if n.raft.AppliedIndex()-last < threshold {
			continue
		}
		if err := n.Snapshot(); err != nil {
			n.log.Warn("cluster: leader snapshot failed", "err", err.Error())
		}
	}
}

// Snapshot takes a Raft snapshot now (SAVE, the leader's loop): it
// returns once the capture is taken; Raft writes it in the background.
func (n *Node) Snapshot() error {
	_, _, err := n.snapshot()
	if err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return err
	}
	return nil
}

// snapshot asks Raft for a snapshot; a serving leader first pauses
// admission until every executed unit is applied, and resumes it once
// the FSM has taken its capture. persisted waits until Raft has written
// the snapshot (the future's Error, which must not be called from two
// goroutines at once: raft's deferError is not synchronised).
func (n *Node) snapshot() (f raft.SnapshotFuture, persisted func() error, err error) {
	if !n.Serving() {
		f = n.raft.Snapshot()
		err = f.Error()
		return f, func() error { return err }, err
	}
	d := n.door
	d.Lock()
	deadline := time.Now().Add(pauseWait)
	n.prop.cutNow() // a loop turn's records (the turn waits for the lock)
	for n.prop.counted.Load() < n.prop.seq.Load() {
		if time.Now().After(deadline) || !n.Serving() {
			d.Unlock()
			return nil, func() error { return errPauseTimeout }, errPauseTimeout
		}
		time.Sleep(100 * time.Microsecond)
	}
	captured := make(chan struct{})
	n.pause.Store(&captured)
	f = n.raft.Snapshot()
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	finished := false
	select {
	case <-captured:
	case err = <-done:
		finished = true
	}
	n.pause.Store(nil)
	d.Unlock()
	persisted = func() error {
		if !finished {
			return <-done
		}
		return err
	}
	return f, persisted, err
}

// SnapshotState takes a Raft snapshot as Snapshot does, waits until Raft
// has persisted it and opens its engine part: an RDB stream, which the
// caller closes. BGSAVE in cluster mode writes dump.rdb from it, so the
// state is captured and encoded once for both files (a separate capture
// doubled the stall and the CPU of every BGSAVE). When nothing was applied
// since the last snapshot, that one is the state and is opened.
func (n *Node) SnapshotState() (io.ReadCloser, error) {
	f, persisted, err := n.snapshot()
	if err == nil {
		err = persisted()
	}
	var rc io.ReadCloser
	switch {
	case err == nil:
		_, rc, err = f.Open()
	case errors.Is(err, raft.ErrNothingNewToSnapshot):
		var metas []*raft.SnapshotMeta
		if metas, err = n.snaps.List(); err == nil {
			if len(metas) == 0 {
				return nil, errors.New("cluster: no snapshot to open")
			}
			_, rc, err = n.snaps.Open(metas[0].ID)
		}
	}
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(rc, 256<<10)
	if _, _, err := readSnapHeader(br); err != nil {
		rc.Close()
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{br, rc}, nil
}
