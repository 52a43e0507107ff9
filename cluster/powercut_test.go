package cluster

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/hashicorp/raft-wal/fs"
)

// TestPowerCutDropsUnsynced: the cut zeroes exactly what was written
// since the file's last completed fsync, under each policy, also in a
// file closed unsynced (appendfsync no), and not in one deleted.
func TestPowerCutDropsUnsynced(t *testing.T) {
	a, b := bytes.Repeat([]byte{'a'}, 3000), bytes.Repeat([]byte{'b'}, 5000)
	for _, tc := range []struct {
		policy string
		lost   span // of the open file: a at 0, Sync, b after it
	}{
		{"always", span{3000, 8000}},   // Sync fsynced a
		{"everysec", span{3000, 8000}}, // syncAll fsynced a
		{"no", span{0, 8000}},          // nothing fsynced
	} {
		t.Run(tc.policy, func(t *testing.T) {
			dir := t.TempDir()
			s := newSyncFS(fs.New(), tc.policy, &atomic.Int64{}, nil)
			f, err := s.Create(dir, "seg", 1<<16)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(a, 0); err != nil {
				t.Fatal(err)
			}
			f.Sync()
			if err := s.syncAll(); err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(b, 3000); err != nil {
				t.Fatal(err)
			}
			// a closed file, and a closed one deleted since
			for _, name := range []string{"closed", "deleted"} {
				g, err := s.Create(dir, name, 1<<16)
				if err != nil {
					t.Fatal(err)
				}
				g.WriteAt(a, 0)
				g.Sync()
				if err := g.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Delete(dir, "deleted"); err != nil {
				t.Fatal(err)
			}
			losses, err := s.powerCut()
			if err != nil {
				t.Fatal(err)
			}
			want := []powerCutLoss{{filepath.Join(dir, "seg"), tc.lost}}
			if tc.policy == "no" {
				want = append([]powerCutLoss{{filepath.Join(dir, "closed"), span{0, 3000}}}, want...)
			}
			if fmt.Sprint(losses) != fmt.Sprint(want) {
				t.Fatalf("losses %v, want %v", losses, want)
			}
			seg, _ := os.ReadFile(filepath.Join(dir, "seg"))
			exp := append(append([]byte{}, a...), b...)
			clear(exp[tc.lost.from:tc.lost.to])
			if !bytes.Equal(seg[:8000], exp) {
				t.Fatalf("seg after the cut: not what was synced followed by zeros")
			}
			closed, _ := os.ReadFile(filepath.Join(dir, "closed"))
			if kept := bytes.Equal(closed[:3000], a); kept != (tc.policy != "no") {
				t.Fatalf("closed file kept its data: %v", kept)
			}
		})
	}
}

// TestPowerCutWALRecovers: raft-wal reopens a log cut after a sync with
// the entries synced and none after (the zeros read as the log's end),
// and appends again; under always nothing is lost. Under no, whose
// segments were never synced while raft-wal's metadata (bolt) was, the
// log does not open at all: a node cut before the kernel wrote its
// segments back must be wiped and rejoin (README, "Durability").
func TestPowerCutWALRecovers(t *testing.T) {
	for _, policy := range []string{"everysec", "always", "no"} {
		t.Run(policy, func(t *testing.T) {
			dir := t.TempDir()
			open := func() (*logStore, *syncFS) {
				t.Helper()
				lfs := newSyncFS(fs.New(), policy, &atomic.Int64{}, nil)
				s, err := newLogStore(openWAL(dir, lfs, 64<<10))
				if err != nil {
					t.Fatal(err)
				}
				return s, lfs
			}
			store := func(s *logStore, from, to uint64) {
				t.Helper()
				for i := from; i <= to; i++ {
					if err := s.StoreLogs([]*raft.Log{{Index: i, Term: 1, Data: bytes.Repeat([]byte{byte(i)}, 700)}}); err != nil {
						t.Fatal(err)
					}
				}
			}
			s, lfs := open()
			store(s, 1, 200) // several 64 KB segments: sealed ones synced at their metadata commit
			if err := lfs.syncAll(); err != nil {
				t.Fatal(err)
			}
			store(s, 201, 230)
			losses, err := lfs.powerCut()
			if err != nil {
				t.Fatal(err)
			}
			s.meta.Close() // bolt's file lock; the cut WAL itself is left as it is (its files are held)
			if policy == "no" {
				lfs := newSyncFS(fs.New(), policy, &atomic.Int64{}, nil)
				s2, err := newLogStore(openWAL(dir, lfs, 64<<10))
				if err == nil {
					last, _ := s2.LastIndex()
					t.Fatalf("no: the log cut with nothing synced opened, last index %d (losses %v)", last, losses)
				}
				t.Logf("no: %v", err)
				return
			}
			want := uint64(200)
			if policy == "always" {
				want = 230
				if len(losses) != 0 {
					t.Fatalf("always: the cut dropped %v", losses)
				}
			}
			s2, _ := open()
			defer s2.close()
			if last, _ := s2.LastIndex(); last != want {
				t.Fatalf("after the cut the log ends at %d, want %d (losses %v)", last, want, losses)
			}
			var l raft.Log
			if err := s2.GetLog(want, &l); err != nil || l.Data[0] != byte(want) {
				t.Fatalf("entry %d: %v", want, err)
			}
			store(s2, want+1, want+10)
			if last, _ := s2.LastIndex(); last != want+10 {
				t.Fatalf("appended to %d", last)
			}
		})
	}
}

// BenchmarkSyncFileWrite is a raft-wal commit-buffer write (4 KB, an
// append) through syncFS under everysec: the pwrite into the page cache
// and the power-cut bookkeeping around it (BenchmarkPowerCutBookkeeping
// alone).
func BenchmarkSyncFileWrite(b *testing.B) {
	s := newSyncFS(fs.New(), "everysec", &atomic.Int64{}, nil)
	f, err := s.Create(b.TempDir(), "seg", 16<<20)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	p := bytes.Repeat([]byte{1}, 4096)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.WriteAt(p, int64(i%4096)*4096); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPowerCutBookkeeping is what each segment write pays for the
// power cut to know what is unsynced: the lock and the widened range.
func BenchmarkPowerCutBookkeeping(b *testing.B) {
	var u unsynced
	for i := 0; i < b.N; i++ {
		u.mu.Lock()
		u.cur = u.cur.add(int64(i)*4096, 4096)
		u.mu.Unlock()
	}
}
