package cluster

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
)

// TestMigrateBoltLog moves raft-boltdb logs into raft-wal: one whose head
// a snapshot truncated (entries 5–20), an empty one, one whose earlier
// copy was interrupted (a wal.tmp left behind), and one whose copy was
// complete when the process died before removing log.db.
func TestMigrateBoltLog(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cases := []struct {
		name        string
		first, last uint64
		setup       func(t *testing.T, dir string)
	}{
		{"truncated head", 5, 20, nil},
		{"empty", 0, 0, nil},
		{"interrupted copy", 1, 3, func(t *testing.T, dir string) {
			tmp := filepath.Join(dir, walDir+".tmp")
			if err := mkdirFile(tmp, "junk"); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeBoltLog(t, dir, c.first, c.last)
			if c.setup != nil {
				c.setup(t, dir)
			}
			if err := migrateBoltLog(dir, log); err != nil {
				t.Fatal(err)
			}
			checkWAL(t, dir, c.first, c.last)
			// a second start finds nothing to move
			if err := migrateBoltLog(dir, log); err != nil {
				t.Fatal(err)
			}
			checkWAL(t, dir, c.first, c.last)
		})
	}
	t.Run("copied, log.db left", func(t *testing.T) {
		dir := t.TempDir()
		writeBoltLog(t, dir, 1, 3)
		if err := migrateBoltLog(dir, log); err != nil {
			t.Fatal(err)
		}
		writeBoltLog(t, dir, 1, 1) // as if the removal had not happened
		if err := migrateBoltLog(dir, log); err != nil {
			t.Fatal(err)
		}
		checkWAL(t, dir, 1, 3)
	})
}

func mkdirFile(dir, name string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600)
}

func logData(i uint64) []byte { return []byte(fmt.Sprintf("entry %d", i)) }

// writeBoltLog writes entries first..last (none when last is 0) into
// dir/log.db as an older node did.
func writeBoltLog(t *testing.T, dir string, first, last uint64) {
	t.Helper()
	s, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, boltLogFile)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var logs []*raft.Log
	for i := first; i <= last && last > 0; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: logData(i)})
	}
	if len(logs) > 0 {
		if err := s.StoreLogs(logs); err != nil {
			t.Fatal(err)
		}
	}
}

// checkWAL checks that dir/wal holds entries first..last and log.db is gone.
func checkWAL(t *testing.T, dir string, first, last uint64) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, boltLogFile)); !os.IsNotExist(err) {
		t.Fatalf("log.db still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, walDir+".tmp")); !os.IsNotExist(err) {
		t.Fatalf("wal.tmp still there: %v", err)
	}
	meta := &metadb.BoltMetaDB{}
	w, err := wal.Open(filepath.Join(dir, walDir), wal.WithMetaStore(meta), wal.WithSegmentSize(walSegmentSize), wal.WithLogger(walLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer meta.Close()
	defer w.Close()
	f, _ := w.FirstIndex()
	l, _ := w.LastIndex()
	if f != first || l != last {
		t.Fatalf("wal holds %d..%d, want %d..%d", f, l, first, last)
	}
	for i := first; i <= last && last > 0; i++ {
		var e raft.Log
		if err := w.GetLog(i, &e); err != nil || string(e.Data) != string(logData(i)) {
			t.Fatalf("entry %d: %q %v", i, e.Data, err)
		}
	}
}
