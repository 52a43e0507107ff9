package cluster

import (
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestPipelineClosesAfterRefusal: once Raft has been handed a pipelined
// reply that is not a success, its decoder reads no more replies, and
// with hashicorp/raft's unbuffered pipeline a later send parked for good
// (the follower then got heartbeats and never another entry). The relay
// closes the pipeline instead, so a send after the refusal fails.
func TestPipelineClosesAfterRefusal(t *testing.T) {
	follower, err := raft.NewTCPTransport("127.0.0.1:0", nil, 3, time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer follower.Close()
	go func() { // a follower whose log never matches
		for rpc := range follower.Consumer() {
			rpc.Respond(&raft.AppendEntriesResponse{Term: 1, Success: false}, nil)
		}
	}()
	leader, err := raft.NewTCPTransport("127.0.0.1:0", nil, 3, time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer leader.Close()
	p, err := leader.AppendEntriesPipeline("f", follower.LocalAddr())
	if err != nil {
		t.Fatal(err)
	}
	ap := &ackPipeline{AppendPipeline: p, id: "f", out: make(chan raft.AppendFuture), done: make(chan struct{})}
	go ap.relay()
	defer ap.Close()
	req := func() *raft.AppendEntriesRequest {
		return &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax}, Term: 1}
	}
	if _, err := ap.AppendEntries(req(), new(raft.AppendEntriesResponse)); err != nil {
		t.Fatal(err)
	}
	// Raft's decoder: the first reply is a refusal, and it returns
	select {
	case f := <-ap.Consumer():
		if f.Response().Success {
			t.Fatal("the follower's reply was a success")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no reply")
	}
	// Raft's send loop goes on until it sees the decoder's end
	failed := make(chan error, 1)
	go func() {
		for i := 0; i < 6; i++ {
			if _, err := ap.AppendEntries(req(), new(raft.AppendEntriesResponse)); err != nil {
				failed <- err
				return
			}
		}
		failed <- nil
	}()
	select {
	case err := <-failed:
		if err == nil {
			t.Fatal("6 sends after the refusal went through: the pipeline was not closed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a send after the refusal parked for good (the pipeline deadlock)")
	}
}
