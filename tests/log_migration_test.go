package tests

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestBoltLogMigration starts on a data dir written by a limitdb whose
// Raft log was raft-boltdb's (testdata/bolt-log-dir.tar.gz: a cluster of
// one killed with SIGKILL after SET greeting hello, INCR counter twice,
// INCRBY counter 40, RPUSH list a b c, HSET h f1 v1 f2 v2, ZADD z 1 one
// 2 two, SET later x EXAT 4102444800; no snapshot, so the log alone holds
// them). The node moves the log into raft-wal and keeps every key, and
// keeps them, and what it writes next, across a SIGKILL and a restart.
func TestBoltLogMigration(t *testing.T) {
	dir := t.TempDir()
	untarGz(t, "testdata/bolt-log-dir.tar.gz", dir)
	p := mustProc(t, dir)
	p.waitServing()
	ctx := context.Background()
	check := func(counter string) {
		t.Helper()
		c := p.cli
		if v, err := c.Get(ctx, "greeting").Result(); v != "hello" {
			t.Fatalf("GET greeting = %q, %v\n%s", v, err, p.output())
		}
		if v, _ := c.Get(ctx, "counter").Result(); v != counter {
			t.Fatalf("GET counter = %q, want %s", v, counter)
		}
		if v, _ := c.LRange(ctx, "list", 0, -1).Result(); !reflect.DeepEqual(v, []string{"a", "b", "c"}) {
			t.Fatalf("LRANGE list = %q", v)
		}
		if v, _ := c.HGetAll(ctx, "h").Result(); !reflect.DeepEqual(v, map[string]string{"f1": "v1", "f2": "v2"}) {
			t.Fatalf("HGETALL h = %q", v)
		}
		if v, _ := c.ZRange(ctx, "z", 0, -1).Result(); !reflect.DeepEqual(v, []string{"one", "two"}) {
			t.Fatalf("ZRANGE z = %q", v)
		}
		if v, _ := c.Do(ctx, "EXPIRETIME", "later").Int64(); v != 4102444800 {
			t.Fatalf("EXPIRETIME later = %d", v)
		}
	}
	check("42")
	if _, err := os.Stat(filepath.Join(dir, "raft", "log.db")); !os.IsNotExist(err) {
		t.Fatalf("raft/log.db still there after the migration: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "raft", "wal")); err != nil {
		t.Fatalf("no raft/wal after the migration: %v", err)
	}
	if err := p.cli.Incr(ctx, "counter").Err(); err != nil {
		t.Fatal(err)
	}
	p.kill()
	p.start()
	p.waitServing()
	check("43")
}

// untarGz extracts the gzipped tar archive src into dir.
func untarGz(t *testing.T, src, dir string) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o750)
		case tar.TypeReg:
			var out *os.File
			if out, err = os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600); err == nil {
				_, err = io.Copy(out, tr)
				out.Close()
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
