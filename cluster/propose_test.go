package cluster

import (
	"testing"
	"time"
)

// TestLostRanges: a ticket executed under an epoch that ended before its
// commit is ErrUnknown even after later epochs commit past it; tickets
// committed before are acknowledged.
func TestLostRanges(t *testing.T) {
	p := newProposer(nil)
	p.seq.Store(10)
	p.done.Store(6)
	p.mu.Lock()
	p.epoch = 1
	p.mu.Unlock()
	p.abort() // 7..10 lost
	p.seq.Store(20)
	p.done.Store(20) // a later epoch committed 11..20
	for ticket, want := range map[uint64]error{5: nil, 6: nil, 7: ErrUnknown, 10: ErrUnknown, 11: nil, 20: nil} {
		if got := p.Wait(ticket, time.Second); got != want {
			t.Errorf("ticket %d: %v, want %v", ticket, got, want)
		}
	}
	if err := p.Wait(21, 50*time.Millisecond); err != ErrUnknown {
		t.Errorf("ticket past done: %v, want a timeout (ErrUnknown)", err)
	}
}

// TestAckRefusedGap: an entry acknowledged while an earlier entry of its
// epoch never reached the log (Raft refused it) settles nothing: its
// tickets and the refused entry's stay unsettled until the epoch ends,
// and the ones before the gap are acknowledged.
func TestAckRefusedGap(t *testing.T) {
	p := newProposer(nil)
	p.seq.Store(15)
	p.mu.Lock()
	p.epoch = 1
	p.cuts = []uint64{5, 10, 15} // three entries: 1..5, 6..10 (refused), 11..15
	p.mu.Unlock()
	p.ack(1, 5, 1)
	p.ack(11, 15, 2) // the FSM counts 11..15 next: 6..10 is missing
	if d := p.done.Load(); d != 5 {
		t.Fatalf("done %d after the gap, want 5", d)
	}
	// the log store's batch holding both (stored) reports a gap inside it
	p = newProposer(nil)
	p.mu.Lock()
	p.epoch = 1
	p.cuts = []uint64{5, 10, 15}
	p.mu.Unlock()
	p.ack(5+2, 15, 2)
	if d := p.done.Load(); d != 0 {
		t.Fatalf("done %d after a batch with a gap, want 0", d)
	}
	p.ack(1, 5, 1)
	p.ack(6, 10, 2)
	p.ack(11, 15, 3)
	if d := p.done.Load(); d != 15 {
		t.Fatalf("done %d after contiguous entries, want 15", d)
	}
}
