package cluster

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/hashicorp/raft-wal/fs"
)

// TestLogStoreTailTruncationReopen is hashicorp/raft-wal#31: Raft clears
// a follower's conflicting suffix (DeleteRange of the tail), raft-wal
// marks the cut tail segment sealed without writing its index block, and
// the next open failed every read of it ("sealed segment has no index
// block": raft.NewRaft panicked). Each case truncates, reopens, reads
// every entry, appends the new leader's entries, and reopens again.
func TestLogStoreTailTruncationReopen(t *testing.T) {
	for _, tc := range []struct {
		name      string
		last, cut uint64 // entries 1..last, then DeleteRange(cut, last)
	}{
		// 44 entries a segment: 400 entries are segments from 1, 45, ...,
		// 353 and the open tail from 397
		{"one segment", 40, 31},
		{"open tail of several", 400, 398},
		{"sealed segment, later ones deleted", 400, 200},
		{"last entry", 400, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			open := func() *logStore {
				t.Helper()
				s, err := newLogStore(openWAL(dir, newSyncFS(fs.New(), "everysec", &atomic.Int64{}, nil), 64<<10))
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			data := func(i, term uint64) []byte {
				return bytes.Repeat([]byte(fmt.Sprint(i%10, term)), 500+int(i%7))
			}
			store := func(s *logStore, from, to, term uint64) {
				t.Helper()
				for i := from; i <= to; i += 4 {
					var logs []*raft.Log
					for j := i; j < i+4 && j <= to; j++ {
						logs = append(logs, &raft.Log{Index: j, Term: term, Data: data(j, term)})
					}
					if err := s.StoreLogs(logs); err != nil {
						t.Fatal(err)
					}
				}
			}
			// check reads 1..last: entries below newFrom of term 1, the rest of term 2
			check := func(s *logStore, last, newFrom uint64) {
				t.Helper()
				if f, _ := s.FirstIndex(); f != 1 {
					t.Fatalf("first index %d, want 1", f)
				}
				if l, _ := s.LastIndex(); l != last {
					t.Fatalf("last index %d, want %d", l, last)
				}
				for i := uint64(1); i <= last; i++ {
					term := uint64(1)
					if i >= newFrom {
						term = 2
					}
					var l raft.Log
					if err := s.GetLog(i, &l); err != nil {
						t.Fatalf("entry %d: %v", i, err)
					}
					if l.Index != i || l.Term != term || !bytes.Equal(l.Data, data(i, term)) {
						t.Fatalf("entry %d: got index %d term %d, %d bytes", i, l.Index, l.Term, len(l.Data))
					}
				}
			}
			s := open()
			store(s, 1, tc.last, 1)
			if err := s.DeleteRange(tc.cut, tc.last); err != nil {
				t.Fatal(err)
			}
			check(s, tc.cut-1, tc.cut)
			s.close()
			s = open()
			check(s, tc.cut-1, tc.cut)
			store(s, tc.cut, tc.cut+99, 2)
			check(s, tc.cut+99, tc.cut)
			s.close()
			s = open()
			check(s, tc.cut+99, tc.cut)
			// a second cut, in what the new leader wrote
			if err := s.DeleteRange(tc.cut+50, tc.cut+99); err != nil {
				t.Fatal(err)
			}
			s.close()
			s = open()
			check(s, tc.cut+49, tc.cut)
			s.close()
		})
	}
}

// TestLogStoreDamagedCutSegment: a cut segment (no index block) whose file
// lacks entries its metadata counts fails the open with an error saying
// how to recover, not a panic in raft.NewRaft.
func TestLogStoreDamagedCutSegment(t *testing.T) {
	dir := t.TempDir()
	open := func() (*logStore, error) {
		return newLogStore(openWAL(dir, newSyncFS(fs.New(), "everysec", &atomic.Int64{}, nil), 64<<10))
	}
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(1); i <= 20; i++ {
		if err := s.StoreLog(&raft.Log{Index: i, Term: 1, Data: bytes.Repeat([]byte{'x'}, 1000)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteRange(16, 20); err != nil {
		t.Fatal(err)
	}
	s.close()
	seg := filepath.Join(dir, "00000000000000000001-0000000000000000.wal")
	if err := os.Truncate(seg, 5000); err != nil { // about 4 entries left
		t.Fatal(err)
	}
	if _, err := open(); err == nil || !strings.Contains(err.Error(), "--join") {
		t.Fatalf("open: %v, want the damaged segment's error", err)
	}
}
