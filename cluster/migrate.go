package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/migrate"
	"go.etcd.io/bbolt"
)

// boltLogFile is where nodes before the WAL kept their Raft log (a
// raft-boltdb store); walDir is where the log lives now.
const (
	boltLogFile = "log.db"
	walDir      = "wal"
)

// migrateBoltLog moves the Raft log of a data dir written by an older
// limitdb (dir/log.db, raft-boltdb) into raft-wal (dir/wal), once, before
// the node opens it: every entry is copied into dir/wal.tmp with every
// write synced, the folder is renamed into place (synced), and only then
// is log.db removed. A crash at any point leaves either log.db alone (the
// copy starts over) or the complete WAL (log.db, if still there, is
// removed). An older binary cannot read the migrated dir.
func migrateBoltLog(dir string, log *slog.Logger) error {
	old := filepath.Join(dir, boltLogFile)
	if _, err := os.Stat(old); errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	final := filepath.Join(dir, walDir)
	if _, err := os.Stat(final); err == nil {
		return removeSynced(old)
	}
	tmp := final + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.Mkdir(tmp, 0o750); err != nil {
		return err
	}
	src, err := raftboltdb.New(raftboltdb.Options{Path: old, BoltOptions: &bbolt.Options{Timeout: time.Second}})
	if err != nil {
		return fmt.Errorf("cluster: opening the old Raft log %s: %w", old, err)
	}
	defer src.Close()
	meta := &metadb.BoltMetaDB{}
	dst, err := wal.Open(tmp, wal.WithMetaStore(meta), wal.WithSegmentSize(walSegmentSize), wal.WithLogger(walLogger()))
	if err != nil {
		return err
	}
	first, _ := src.FirstIndex()
	last, err := src.LastIndex()
	if err == nil && last > 0 {
		err = migrate.CopyLogs(context.Background(), dst, src, 1<<20, nil)
	}
	dst.Close()
	meta.Close()
	if err != nil {
		return fmt.Errorf("cluster: copying the Raft log from %s: %w", old, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	if err := SyncDir(dir); err != nil {
		return err
	}
	log.Info("cluster: the Raft log moved from raft-boltdb to raft-wal", "dir", dir, "first", first, "last", last)
	return removeSynced(old)
}

func removeSynced(path string) error {
	if err := os.Remove(path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir makes a rename or removal in dir durable (Redis's
// fsyncFileDir); a file system that cannot sync a directory is not an
// error. The server's RDB saves use it too.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	d.Close()
	if errors.Is(err, syscall.EINVAL) {
		return nil
	}
	return err
}

func walLogger() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "wal", Level: hclog.Warn, Output: os.Stderr})
}
