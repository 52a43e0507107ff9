package cluster

import (
	"io"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// TestFollowerLearnsCommitAtOnce: with the log otherwise idle and Raft's
// CommitTimeout at its default (50 ms, randomized to 50-100 ms), a
// follower applies an entry within 20 ms of its commit on the leader.
// Upstream hashicorp/raft v1.7.3 tells a follower of a new commit index
// only with the next entries or on the CommitTimeout tick, so the median
// was ~75 ms and a write through a follower waited that long; the leader
// now owes it every advance and sends it within CommitNotifyDelay (1 ms)
// when no other send carries it (third_party/raft/commit_notify.go).
// Both of Raft's replication paths: the pipelined one, and the plain one
// (a transport without pipelines). "told": with CommitTimeout and
// CommitNotifyDelay an hour, only TellCommit (what the forwarding server
// calls for a follower that waits for an index) tells the follower it
// names, and the other learns nothing.
func TestFollowerLearnsCommitAtOnce(t *testing.T) {
	for _, mode := range []string{"pipelined", "plain", "told"} {
		t.Run(mode, func(t *testing.T) { followerCommitDelay(t, mode) })
	}
}

func followerCommitDelay(t *testing.T, mode string) {
	const nodes = 3
	var (
		rafts  []*raft.Raft
		fsms   []*indexFSM
		trans  []raft.Transport
		config raft.Configuration
	)
	for i := 0; i < nodes; i++ {
		tt, err := raft.NewTCPTransport("127.0.0.1:0", nil, 3, time.Second, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		defer tt.Close()
		var tr raft.Transport = tt
		if mode == "plain" {
			tr = noPipeline{tt}
		}
		trans = append(trans, tr)
		id := raft.ServerID(string(rune('a' + i)))
		config.Servers = append(config.Servers, raft.Server{ID: id, Address: tt.LocalAddr()})
	}
	for i := 0; i < nodes; i++ {
		rc := raft.DefaultConfig() // CommitTimeout: 50 ms
		if mode == "told" {
			rc.CommitTimeout, rc.CommitNotifyDelay = time.Hour, time.Hour
		}
		rc.LocalID = config.Servers[i].ID
		rc.Logger = hclog.NewNullLogger()
		if i > 0 {
			// the first node leads: the others wait long before standing
			rc.HeartbeatTimeout = 5 * time.Second
			rc.ElectionTimeout = 5 * time.Second
		}
		f := newIndexFSM()
		store := raft.NewInmemStore()
		r, err := raft.NewRaft(rc, f, store, store, raft.NewInmemSnapshotStore(), trans[i])
		if err != nil {
			t.Fatal(err)
		}
		defer r.Shutdown()
		if err := r.BootstrapCluster(config).Error(); err != nil {
			t.Fatal(err)
		}
		rafts = append(rafts, r)
		fsms = append(fsms, f)
	}
	leader := rafts[0]
	deadline := time.Now().Add(10 * time.Second)
	for leader.State() != raft.Leader {
		if time.Now().After(deadline) {
			t.Fatal("no leader")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if mode == "told" {
		f := leader.Apply([]byte("x"), 5*time.Second)
		if err := f.Error(); err != nil {
			t.Fatal(err)
		}
		if fsms[2].wait(f.Index(), 300*time.Millisecond) {
			// the first sends after the election may carry it; then
			// the log idles, and only TellCommit can tell
			t.Logf("index %d reached the follower untold", f.Index())
		}
		f = leader.Apply([]byte("y"), 5*time.Second)
		if err := f.Error(); err != nil {
			t.Fatal(err)
		}
		leader.TellCommit(config.Servers[1].ID)
		if !fsms[1].wait(f.Index(), 5*time.Second) {
			t.Fatalf("the follower told did not apply index %d", f.Index())
		}
		if fsms[2].wait(f.Index(), 200*time.Millisecond) {
			t.Fatalf("the follower not told applied index %d: something else sends the commit index", f.Index())
		}
		return
	}
	var delays []time.Duration
	for round := 0; round < 9; round++ {
		f := leader.Apply([]byte("x"), 5*time.Second)
		if err := f.Error(); err != nil {
			t.Fatal(err)
		}
		committed := time.Now()
		if !fsms[1].wait(f.Index(), 5*time.Second) || !fsms[2].wait(f.Index(), 5*time.Second) {
			t.Fatalf("the followers did not apply index %d", f.Index())
		}
		delays = append(delays, time.Since(committed))
		// let the log idle past a CommitTimeout tick or two
		time.Sleep(120 * time.Millisecond)
	}
	sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
	t.Logf("followers applied a committed entry after %v (median), %v (max)", delays[len(delays)/2], delays[len(delays)-1])
	if d := delays[len(delays)/2]; d > 20*time.Millisecond {
		t.Fatalf("followers learnt a commit after %v (median of %d), want ≤ 20 ms", d, len(delays))
	}
}

// noPipeline is a transport without pipelines: Raft replicates with one
// AppendEntries at a time.
type noPipeline struct{ *raft.NetworkTransport }

func (noPipeline) AppendEntriesPipeline(raft.ServerID, raft.ServerAddress) (raft.AppendPipeline, error) {
	return nil, raft.ErrPipelineReplicationNotSupported
}

// indexFSM records the last index applied.
type indexFSM struct {
	mu    sync.Mutex
	cond  *sync.Cond
	index uint64
}

func newIndexFSM() *indexFSM {
	f := &indexFSM{}
	f.cond = sync.NewCond(&f.mu)
	return f
}

func (f *indexFSM) Apply(l *raft.Log) interface{} {
	f.mu.Lock()
	f.index = l.Index
	f.mu.Unlock()
	f.cond.Broadcast()
	return nil
}

func (f *indexFSM) wait(index uint64, timeout time.Duration) bool {
	t := time.AfterFunc(timeout, func() { f.mu.Lock(); f.mu.Unlock(); f.cond.Broadcast() })
	defer t.Stop()
	end := time.Now().Add(timeout)
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.index < index && time.Now().Before(end) {
		f.cond.Wait()
	}
	return f.index >= index
}

func (f *indexFSM) Snapshot() (raft.FSMSnapshot, error) { return nil, io.ErrUnexpectedEOF }
func (f *indexFSM) Restore(io.ReadCloser) error         { return nil }
