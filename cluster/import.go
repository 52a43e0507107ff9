package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"time"

	"github.com/hashicorp/raft"
)

// A node's state lives in its Raft store; a dump.rdb in its dir matters
// only when that store holds nothing yet (the server imports it then, see
// server/rdb_load.go). These two methods are all the cluster offers for it.

// holdsNoData does HoldsNoData (api.go).
func (n *Node) holdsNoData() (bool, error) {
	if n.cfg.Join != "" {
		return false, nil
	}
	metas, err := n.snaps.List()
	if err != nil || len(metas) > 0 {
		return false, err
	}
	cf := n.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return false, err
	}
	servers := cf.Configuration().Servers
	if len(servers) != 1 || servers[0].ID != n.rid {
		return false, nil
	}
	first, err := n.logs.FirstIndex()
	if err != nil {
		return false, err
	}
	last, err := n.logs.LastIndex()
	if err != nil {
		return false, err
	}
	// a first start holds the bootstrap configuration and the leader's
	// no-op; a store with data has a command near its start, so the walk
	// is short either way
	for i := max(first, 1); i <= last; i++ {
		var l raft.Log
		if err := n.logs.GetLog(i, &l); err != nil {
			return false, err
		}
		if l.Type == raft.LogCommand {
			return false, nil
		}
	}
	return true, nil
}

// importWait bounds an import: the snapshot is copied into the store and
// loaded once (1M keys: ~52 MB, about a second).
const importWait = 5 * time.Minute

// importSnapshot does Import (api.go).
func (n *Node) importSnapshot(r io.Reader, size int64) error {
	if !n.Serving() {
		return errors.New("cluster: importing a snapshot needs this node to lead")
	}
	// raft.Restore labels the snapshot with the index after the last one
	// (meta.Index 0); nothing is appended meanwhile, as no unit executes
	index := n.raft.LastIndex() + 1
	hdr := append([]byte(snapMagic), snapVersion)
	hdr = binary.AppendUvarint(hdr, index)
	hdr = binary.AppendUvarint(hdr, 0) // no forwarded units yet
	meta := &raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Size: int64(len(hdr)) + size}
	if err := n.raft.Restore(meta, io.MultiReader(bytes.NewReader(hdr), r), importWait); err != nil {
		return err
	}
	// should the label differ after all, the FSM takes Raft's (under both
	// locks, as every write of f.applied outside the FSM goroutine: fsm.mu)
	f := n.fsm
	f.mu.Lock()
	n.door.Lock()
	if metas, err := n.snaps.List(); err == nil && len(metas) > 0 && f.applied < metas[0].Index {
		f.applied = metas[0].Index
	}
	n.door.Unlock()
	f.mu.Unlock()
	n.snapshotTaken()
	return nil
}
