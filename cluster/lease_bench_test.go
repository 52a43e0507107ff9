package cluster

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"limitdb/door"
)

// BenchmarkLeaseHeld: the check a leader of three makes once per batch of
// a client's commands before it serves them from memory (both followers'
// acknowledgements fresh, as a heartbeat every 10 ms keeps them).
func BenchmarkLeaseHeld(b *testing.B) {
	n := &Node{store: &logStore{}, closing: make(chan struct{}), rid: "a"}
	n.state.Store(uint32(raft.Leader)) // (a follower's ticker waits)
	defer close(n.closing)
	n.peers.Store(true)
	n.acks.setVoters("a", []raft.Server{{ID: "a"}, {ID: "b"}, {ID: "c"}})
	go n.leaseTicker()
	go func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			n.acks.acked("b", door.Nanotime())
			n.acks.acked("c", door.Nanotime())
			select {
			case <-n.closing:
				return
			case <-t.C:
			}
		}
	}()
	time.Sleep(20 * time.Millisecond)
	b.ReportAllocs()
	b.ResetTimer()
	held := 0
	for i := 0; i < b.N; i++ {
		if n.LeaseHeld() {
			held++
		}
	}
	leaseSink = held
}

var leaseSink int
