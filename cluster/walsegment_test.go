package cluster

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/segment"
)

// TestSealedReaders fills several small segments through sealedReaders,
// reads every entry back while they seal (through the swapped readers),
// truncates the head, reads the log again after a reopen, then truncates
// the tail and reopens.
func TestSealedReaders(t *testing.T) {
	dir := t.TempDir()
	var meta *metadb.BoltMetaDB
	open := func() *wal.WAL {
		meta = &metadb.BoltMetaDB{}
		w, err := wal.Open(dir, wal.WithSegmentFiler(sealedReaders{segment.NewFiler(dir, fs.New())}),
			wal.WithMetaStore(meta), wal.WithSegmentSize(64<<10))
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	closeWAL := func(w *wal.WAL) {
		t.Helper()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := meta.Close(); err != nil {
			t.Fatal(err)
		}
	}
	data := func(i uint64) []byte { return bytes.Repeat([]byte(fmt.Sprint(i%10)), 1000+int(i%7)) }
	check := func(w *wal.WAL, first, last uint64) {
		t.Helper()
		if f, _ := w.FirstIndex(); f != first {
			t.Fatalf("first index %d, want %d", f, first)
		}
		if l, _ := w.LastIndex(); l != last {
			t.Fatalf("last index %d, want %d", l, last)
		}
		for i := first; i <= last; i++ {
			var l raft.Log
			if err := w.GetLog(i, &l); err != nil {
				t.Fatalf("entry %d: %v", i, err)
			}
			if l.Index != i || !bytes.Equal(l.Data, data(i)) {
				t.Fatalf("entry %d: got index %d, %d bytes", i, l.Index, len(l.Data))
			}
		}
	}
	w := open()
	const n = 400 // ~400 KB: six or seven segments
	for i := uint64(1); i <= n; i += 4 {
		var logs []*raft.Log
		for j := i; j < i+4; j++ {
			logs = append(logs, &raft.Log{Index: j, Term: 1, Data: data(j)})
		}
		if err := w.StoreLogs(logs); err != nil {
			t.Fatal(err)
		}
		check(w, 1, i+3)
	}
	if ids, err := segment.NewFiler(dir, fs.New()).List(); err != nil || len(ids) < 4 {
		t.Fatalf("%d segment files (%v): the test seals too few", len(ids), err)
	}
	if err := w.DeleteRange(1, 150); err != nil { // head: whole segments go
		t.Fatal(err)
	}
	check(w, 151, n)
	closeWAL(w)
	w = open()
	check(w, 151, n)
	if err := w.DeleteRange(391, n); err != nil {
		t.Fatal(err)
	}
	check(w, 151, 390)
	closeWAL(w)
	w = open() // the cut segment has no index block (sealedReaders.Open)
	check(w, 151, 390)
	closeWAL(w)
}
