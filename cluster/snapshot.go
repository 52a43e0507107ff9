package cluster

import (
	"bufio"
	"errors"
	"io"
	"slices"
	"sync"
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

// takeSnapshot does Snapshot (api.go).
func (n *Node) takeSnapshot() error {
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
//
// The pause holds the engine lock while it waits for Raft's FSM goroutine
// (to count entries, then to capture), so it gives up as soon as Raft
// stops leading, and after pauseWait in any case: leadershipLost then
// holds fsm.mu and waits for the engine lock, and a follower's FSM
// goroutine applies entries under the engine lock, so the FSM goroutine
// could make no progress while the pause lasts. A capture the FSM
// goroutine already took the pause for (n.pause swapped) is waited for:
// it needs no lock and ends at once.
func (n *Node) snapshot() (f raft.SnapshotFuture, persisted func() error, err error) {
	d := n.door
	paused := false
	if n.Serving() {
		d.Lock()
		// serving changes under the engine lock: leadershipLost may have
		// run while this waited for it
		if paused = n.Serving(); !paused {
			d.Unlock()
		}
	}
	if !paused {
		f = n.raft.Snapshot()
		err = f.Error()
		return f, func() error { return err }, err
	}
	leading := func() bool { return n.raft.State() == raft.Leader }
	deadline := time.Now().Add(pauseWait)
	n.prop.cutNow() // a loop turn's records (the turn waits for the lock)
	for n.prop.counted.Load() < n.prop.seq.Load() {
		if time.Now().After(deadline) || !leading() {
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
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
wait:
	for {
		select {
		case <-captured:
			break wait
		case err = <-done:
			finished = true
			break wait
		case <-poll.C:
			if (!leading() || time.Now().After(deadline)) && n.pause.CompareAndSwap(&captured, nil) {
				d.Unlock() // Raft asks the FSM later: it captures as any follower
				return f, func() error { return <-done }, nil
			}
		}
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

// snapshotState does SnapshotState (api.go).
func (n *Node) snapshotState() (rc io.ReadCloser, index uint64, err error) {
	if !n.Serving() {
		if _, err := n.ReadBarrier(); err != nil {
			n.log.Warn("cluster: saving a follower's state without a read barrier (no leader): writes acknowledged in its last moments may be missing", "err", err.Error())
		}
	}
	f, persisted, err := n.snapshot()
	if err == nil {
		err = persisted()
	}
	switch {
	case err == nil:
		_, rc, err = f.Open()
	case errors.Is(err, raft.ErrNothingNewToSnapshot):
		var metas []*raft.SnapshotMeta
		if metas, err = n.snaps.List(); err == nil {
			if len(metas) == 0 {
				return nil, 0, errors.New("cluster: no snapshot to open")
			}
			_, rc, err = n.snaps.Open(metas[0].ID)
		}
	}
	if err != nil {
		return nil, 0, err
	}
	br := bufio.NewReaderSize(rc, 256<<10)
	if index, _, err = readSnapHeader(br); err != nil {
		rc.Close()
		return nil, 0, err
	}
	return struct {
		io.Reader
		io.Closer
	}{br, rc}, index, nil
}

// snapStore is Raft's file snapshot store with its listing kept until a
// snapshot is written (a sink closed or cancelled: a local snapshot, one
// installed from the leader, the reaping of old ones all happen there).
// List reads the directory and decodes every snapshot's meta.json; the
// node's Status called it at every view the map builds and answers
// (every 100 ms per node), 15 % of an idle leader's samples.
type snapStore struct {
	*raft.FileSnapshotStore
	mu    sync.Mutex
	fresh bool // metas is the listing since the last sink closed
	metas []*raft.SnapshotMeta
}

func (s *snapStore) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	sink, err := s.FileSnapshotStore.Create(version, index, term, configuration, configurationIndex, trans)
	if err != nil {
		return nil, err
	}
	return &listedSink{SnapshotSink: sink, s: s}, nil
}

func (s *snapStore) List() ([]*raft.SnapshotMeta, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.fresh {
		metas, err := s.FileSnapshotStore.List()
		if err != nil {
			return nil, err
		}
		s.metas, s.fresh = metas, true
	}
	return slices.Clone(s.metas), nil
}

func (s *snapStore) changed() {
	s.mu.Lock()
	s.fresh = false
	s.mu.Unlock()
}

type listedSink struct {
	raft.SnapshotSink
	s *snapStore
}

func (k *listedSink) Close() error {
	defer k.s.changed()
	return k.SnapshotSink.Close()
}

func (k *listedSink) Cancel() error {
	defer k.s.changed()
	return k.SnapshotSink.Cancel()
}
