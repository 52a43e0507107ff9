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
