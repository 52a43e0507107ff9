package cluster

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"limitdb/door"
)

// TestLeaseCountsSends: the lease's quorum counts the voters whose newest
// acknowledged AppendEntries was sent within the bound, this node (when
// it votes) counted as fresh; non-voters never count.
func TestLeaseCountsSends(t *testing.T) {
	var a peerAcks
	now := door.Nanotime()
	bound := now - int64(leaderLease)
	three := []raft.Server{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "x", Suffrage: raft.Nonvoter}}
	a.setVoters("a", three)
	if a.view.Load().since(bound) {
		t.Fatal("held with no acknowledgement")
	}
	a.acked("x", now) // a non-voter
	a.acked("b", now-int64(300*time.Millisecond))
	if a.view.Load().since(bound) {
		t.Fatal("held with b's acknowledgement of a request sent 300 ms ago")
	}
	a.acked("b", now-int64(400*time.Millisecond)) // an older one arriving late
	a.acked("c", now-int64(100*time.Millisecond))
	if !a.view.Load().since(bound) {
		t.Fatal("not held with c's acknowledgement of a request sent 100 ms ago")
	}
	v := a.view.Load()
	a.setVoters("a", three)
	if a.view.Load() != v {
		t.Error("an unchanged configuration made a new view")
	}
	// five voters: two others must be fresh
	a.setVoters("a", []raft.Server{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}, {ID: "e"}})
	if a.view.Load().since(bound) {
		t.Fatal("held by one of four others in a cluster of five")
	}
	a.acked("e", now)
	if !a.view.Load().since(bound) {
		t.Fatal("not held by two of four others in a cluster of five")
	}
	// this node not a voter (being removed): a majority of the others
	a.setVoters("a", []raft.Server{{ID: "a", Suffrage: raft.Nonvoter}, {ID: "b"}, {ID: "e"}, {ID: "f"}})
	if a.view.Load().since(bound) {
		t.Fatal("held by one of three voters while not voting")
	}
	a.acked("f", now)
	if !a.view.Load().since(bound) {
		t.Fatal("not held by two of three voters while not voting")
	}
}

type fakeFuture struct {
	start time.Time
	resp  raft.AppendEntriesResponse
}

func (f *fakeFuture) Error() error                          { return nil }
func (f *fakeFuture) Start() time.Time                      { return f.start }
func (f *fakeFuture) Request() *raft.AppendEntriesRequest   { return &raft.AppendEntriesRequest{} }
func (f *fakeFuture) Response() *raft.AppendEntriesResponse { return &f.resp }

type fakePipeline struct{ ch chan raft.AppendFuture }

func (p *fakePipeline) AppendEntries(*raft.AppendEntriesRequest, *raft.AppendEntriesResponse) (raft.AppendFuture, error) {
	return nil, nil
}
func (p *fakePipeline) Consumer() <-chan raft.AppendFuture { return p.ch }
func (p *fakePipeline) Close() error                       { return nil }

// TestAckPipelineNotesSendTime: a pipelined reply reaches Raft after its
// request's send time (not its arrival) is noted, a refusal is not.
func TestAckPipelineNotesSendTime(t *testing.T) {
	var a peerAcks
	inner := &fakePipeline{ch: make(chan raft.AppendFuture)}
	p := &ackPipeline{AppendPipeline: inner, id: "b", acks: &a, out: make(chan raft.AppendFuture), done: make(chan struct{})}
	go p.relay()
	defer p.Close()
	pass := func(f *fakeFuture) {
		inner.ch <- f
		select {
		case got := <-p.Consumer():
			if got != f {
				t.Fatal("another future came out")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the reply was not handed on")
		}
	}
	before := door.Nanotime()
	f := &fakeFuture{start: time.Now().Add(-400 * time.Millisecond), resp: raft.AppendEntriesResponse{Success: true}}
	pass(f)
	s := a.slot("b").Load()
	if d := time.Duration(before - s); d < 390*time.Millisecond || d > 2*time.Second {
		t.Fatalf("noted %v before the reply came; want the send time, 400 ms before", d)
	}
	// a refusal is handed on but not noted (and ends the pipeline:
	// TestPipelineClosesAfterRefusal)
	refused := &fakeFuture{start: time.Now()}
	pass(refused)
	if got := a.slot("b").Load(); got != s {
		t.Fatalf("a refusal was noted (%d, was %d)", got, s)
	}
}
