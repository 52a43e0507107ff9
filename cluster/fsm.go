package cluster

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"

	"limitdb/engine"
	"limitdb/procs"
)

// fsm is Raft's state machine: the engine behind the door, plus the
// table of forwarded units already executed.
//
// The leader executes units before they are committed (speculation), so
// Raft hands it entries whose effects its engine already holds: an entry
// of the epoch this node is executing under is only counted, never
// applied again. Every other entry — a follower's, a former leader's, the
// node's own from an epoch it lost — is applied. When the node stops
// being the leader it rebuilds its engine from the newest snapshot and
// the log up to the last applied index (reset), so that effects executed
// and never committed disappear, and entries of its old epoch that the
// next leader commits are then applied like any other.
type fsm struct {
	n *Node

	// mu is the state-machine lock: Apply, Snapshot, Restore, startEpoch,
	// leadershipLost (its rebuild). Lock order: mu before the engine lock
	// (the door), never the other way; and nothing holding the engine
	// lock waits for a goroutine that needs mu — which is why a capture
	// under a snapshot's pause does not take it (Snapshot). applied,
	// ownEpoch and ownSeq are written only by Raft's FSM goroutine or
	// under both locks, and units under the engine lock (seenUnit), so the
	// FSM goroutine may read them all under the engine lock alone (the
	// pause's).
	mu       sync.Mutex
	applied  uint64               // Raft index of the last entry applied or counted
	ownEpoch uint64               // the epoch this node executes under; 0: none
	ownSeq   uint64               // last record sequence of ownEpoch that Raft applied
	units    map[clientKey]uint64 // forwarded clients' last executed unit
	// installed counts snapshots installed from the leader (INFO; read
	// without f.mu, which callers holding the engine lock must not take)
	installed atomic.Int64
}

// clientKey names a follower's client in the table of executed units.
type clientKey struct{ session, client uint64 }

func newFSM(n *Node) *fsm { return &fsm{n: n, units: map[clientKey]uint64{}} }

// errApply stops the node: an effect that fails to apply would leave this
// node's state different from the others', and skipping it is never safe.
type errApply struct {
	index uint64
	err   error
}

func (e *errApply) Error() string {
	return fmt.Sprintf("cluster: log entry %d cannot be applied: %v", e.index, e.err)
}

// Apply implements raft.FSM.
func (f *fsm) Apply(l *raft.Log) interface{} {
	f.mu.Lock()
	err := f.apply(l, false)
	f.mu.Unlock()
	if err != nil {
		f.n.fatal(err)
		return err
	}
	if f.n.cache != nil {
		f.n.cache.noteApplied(l)
	}
	f.n.notifyApplied(l.Index)
	return nil
}

// StoreConfiguration implements raft.ConfigurationStore: hashicorp/raft
// hands the FSM goroutine each committed configuration entry in log order
// (and, without this method, leaves it out of the applied index). Counting
// it keeps raft_applied_index at the commit index once caught up when the
// last entry is a membership change, as waiters on the applied index need
// (a follower's catch-up after a join had no later command to reach it).
func (f *fsm) StoreConfiguration(index uint64, _ raft.Configuration) {
	f.mu.Lock()
	if index > f.applied {
		f.applied = index
	}
	f.mu.Unlock()
	f.n.notifyApplied(index)
}

// apply applies or counts one log entry; f.mu is held, and the engine
// lock too when locked (the rebuild holds it throughout). An entry of the
// epoch this node executes under is counted without the engine lock,
// which a long script or a snapshot's pause may hold.
func (f *fsm) apply(l *raft.Log, locked bool) error {
	f.applied = l.Index
	if l.Type != raft.LogCommand {
		return nil
	}
	h, _, err := decodeEntryHeader(l.Data)
	if err != nil {
		return &errApply{l.Index, err}
	}
	if h.epoch != 0 && h.epoch == f.ownEpoch {
		f.ownSeq = h.firstSeq + uint64(h.nrec) - 1
		f.n.prop.applied(h.firstSeq, f.ownSeq, l.Index)
		return nil
	}
	h, recs, err := decodeEntry(l.Data)
	if err != nil {
		return &errApply{l.Index, err}
	}
	d := f.n.door
	if !locked {
		d.Lock()
		defer d.Unlock()
	}
	for _, rec := range recs {
		if err := d.Apply(rec); err != nil {
			return &errApply{l.Index, err}
		}
	}
	if h.now > d.E.ClockMs {
		d.E.ClockMs = h.now
	}
	for _, id := range h.ids {
		f.markUnit(id)
	}
	for _, id := range h.forget {
		f.forgetUnits(id.session, id.client)
	}
	return nil
}

// seenUnit reports whether a forwarded unit was already executed. The
// table is guarded by the engine lock (apply, Snapshot, restore and the
// leader's execution all hold it).
func (f *fsm) seenUnit(id unitID) bool {
	return id.seq <= f.units[clientKey{id.session, id.client}]
}

// markUnit records a forwarded unit the leader executes.
func (f *fsm) markUnit(id unitID) {
	k := clientKey{id.session, id.client}
	if id.seq > f.units[k] {
		f.units[k] = id.seq
	}
}

// forgetUnits drops a client that went away (client 0: every client of
// the session), so the table stays as big as the clients alive.
func (f *fsm) forgetUnits(session, client uint64) {
	if client != 0 {
		delete(f.units, clientKey{session, client})
		return
	}
	for k := range f.units {
		if k.session == session {
			delete(f.units, k)
		}
	}
}

var errSpeculating = errors.New("cluster: the leader has executed units not yet applied; snapshot refused (it pauses and retries)")

// Snapshot implements raft.FSM. The capture must equal the state at the
// last applied index: a leader whose engine holds executed units not yet
// applied refuses (Raft only logs the error); Node.snapshot pauses the
// leader and asks again.
//
// Under a pause (Node.snapshot holds the engine lock for this capture)
// it takes no lock: the pause's hold guards everything read here (see
// fsm.mu), and waiting for f.mu would wait for leadershipLost, which holds
// it and waits for the engine lock the pause holds — the deadlock that
// hung a leader losing its quorum during SAVE.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	d := f.n.door
	paused := f.n.pause.Swap(nil) // one capture per pause
	if paused != nil {
		defer close(*paused)
	} else {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.ownEpoch != 0 {
			// Raft's own timer on a leader: the engine lock may be held by
			// Node.snapshot waiting for this goroutine to count entries,
			// so do not wait for it (the leader snapshots through its pause)
			if !d.TryLock() {
				return nil, errSpeculating
			}
		} else {
			d.Lock()
		}
		defer d.Unlock()
	}
	if f.ownEpoch != 0 && f.n.prop.seq.Load() != f.ownSeq {
		return nil, errSpeculating
	}
	s := &fsmSnapshot{applied: f.applied, state: d.E.Capture()}
	s.units = make([]unitID, 0, len(f.units))
	for k, v := range f.units {
		s.units = append(s.units, unitID{k.session, k.client, v})
	}
	sort.Slice(s.units, func(i, j int) bool {
		a, b := s.units[i], s.units[j]
		return a.session < b.session || a.session == b.session && a.client < b.client
	})
	f.n.snapshotTaken()
	return s, nil
}

// A snapshot is a short cluster header, then the engine's snapshot (RDB):
//
//	"LDBRAFT" byte(version) uvarint(applied index)
//	uvarint(n) n × (uvarint session, uvarint client, uvarint seq)
const snapMagic = "LDBRAFT"
const snapVersion = 1

type fsmSnapshot struct {
	applied uint64
	units   []unitID
	state   *engine.Snapshot
}

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	defer procs.Background()() // written while the node serves
	w := bufio.NewWriterSize(sink, 256<<10)
	b := append([]byte(snapMagic), snapVersion)
	b = binary.AppendUvarint(b, s.applied)
	b = binary.AppendUvarint(b, uint64(len(s.units)))
	for _, u := range s.units {
		b = binary.AppendUvarint(b, u.session)
		b = binary.AppendUvarint(b, u.client)
		b = binary.AppendUvarint(b, u.seq)
	}
	_, err := w.Write(b)
	if err == nil {
		_, err = s.state.WriteTo(w)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *fsmSnapshot) Release() { s.state.Release() }

// Restore implements raft.FSM: the engine is replaced by the snapshot's.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	defer procs.Background()() // a follower serves reads meanwhile
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.n.door
	d.Lock()
	err := f.restore(rc)
	d.Unlock()
	if err != nil {
		return err
	}
	f.installed.Add(1)
	f.n.notifyApplied(f.applied)
	return nil
}

// readSnapHeader reads a snapshot's cluster header, leaving br at the
// engine's snapshot (RDB).
func readSnapHeader(br *bufio.Reader) (applied uint64, units map[clientKey]uint64, err error) {
	magic := make([]byte, len(snapMagic)+1)
	if _, err := io.ReadFull(br, magic); err != nil {
		return 0, nil, fmt.Errorf("cluster: snapshot header: %w", err)
	}
	if string(magic[:len(snapMagic)]) != snapMagic {
		return 0, nil, errors.New("cluster: not a limitdb cluster snapshot")
	}
	if magic[len(snapMagic)] != snapVersion {
		return 0, nil, fmt.Errorf("cluster: snapshot format version %d, this binary reads %d: upgrade it", magic[len(snapMagic)], snapVersion)
	}
	if applied, err = binary.ReadUvarint(br); err != nil {
		return 0, nil, err
	}
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return 0, nil, err
	}
	units = map[clientKey]uint64{}
	for i := uint64(0); i < n; i++ {
		s, err1 := binary.ReadUvarint(br)
		c, err2 := binary.ReadUvarint(br)
		v, err3 := binary.ReadUvarint(br)
		if err1 != nil || err2 != nil || err3 != nil {
			return 0, nil, errors.New("cluster: truncated snapshot header")
		}
		units[clientKey{s, c}] = v
	}
	return applied, units, nil
}

// restore loads a snapshot into a fresh engine; f.mu and the engine lock
// are held.
func (f *fsm) restore(r io.Reader) error {
	br := bufio.NewReaderSize(r, 256<<10)
	applied, units, err := readSnapHeader(br)
	if err != nil {
		return err
	}
	d := f.n.door
	if err := d.E.Reset(br); err != nil {
		return err
	}
	f.units = units
	f.applied = applied
	return nil
}

// reset rebuilds the engine from the newest snapshot and the log up to
// the last applied index, dropping effects executed under an epoch that
// ended. The caller holds f.mu and the engine lock, from the moment it
// stopped execution (ownEpoch 0) until the rebuild ends: nothing reads
// the engine between, when it would show effects never committed, then
// the snapshot's older state, then each replayed entry's.
func (f *fsm) reset() error {
	target := f.applied
	d := f.n.door
	from := uint64(0)
	metas, err := f.n.snaps.List()
	if err != nil {
		return err
	}
	if len(metas) > 0 {
		_, rc, err := f.n.snaps.Open(metas[0].ID)
		if err != nil {
			return err
		}
		err = f.restore(rc)
		rc.Close()
		if err != nil {
			return err
		}
		from = metas[0].Index
	} else {
		err := d.E.Reset(nil)
		f.units = map[clientKey]uint64{}
		if err != nil {
			return err
		}
	}
	for i := from + 1; i <= target; i++ {
		var l raft.Log
		if err := f.n.logs.GetLog(i, &l); err != nil {
			return fmt.Errorf("cluster: rebuilding from the log, entry %d: %w", i, err)
		}
		if err := f.apply(&l, true); err != nil {
			return err
		}
	}
	f.applied = target
	return nil
}
