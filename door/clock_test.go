package door

import (
	"testing"
	"time"

	"limitdb/engine"
)

// TestNowMaxLead: a floor ahead of the node's clock holds Now still for at
// most the max lead; one further ahead (a clock that was wrong wrote it)
// is cut to clock + lead, on the executing node and on a follower (the
// floor is lowered, so it holds time no longer than the lead from then).
func TestNowMaxLead(t *testing.T) {
	for _, follower := range []bool{false, true} {
		e := engine.New()
		e.NoLazyDelete = follower
		d := New(e, nil)
		d.SetMaxLead(500)
		own := time.Now().UnixMilli()
		d.Lock()
		e.ClockMs = own + 300 // within the lead: held
		if ms, _ := d.Now(); ms != own+300 {
			t.Fatalf("follower %v: floor 300 ms ahead: Now %d ms off the clock, want the floor", follower, ms-own)
		}
		e.ClockMs = own + 3600000 // an hour ahead: cut to the lead
		ms, _ := d.Now()
		if off := ms - own; off < 500 || off > 600 {
			t.Fatalf("follower %v: floor an hour ahead: Now %d ms off the clock, want about 500", follower, off)
		}
		if e.ClockMs != ms {
			t.Fatalf("follower %v: floor %d ms ahead after Now, want it cut to %d", follower, e.ClockMs-own, ms-own)
		}
		d.Unlock()
	}
}

// TestReadTimeMonotonic: a time ReadTime gave out is not followed by a
// lower Now or ReadTime, unless the clock stepped back past the max lead;
// a step (SetSkew) moves both.
func TestReadTimeMonotonic(t *testing.T) {
	e := engine.New()
	d := New(e, nil)
	d.SetMaxLead(500)
	d.SetSkew(400)
	r := d.ReadTime()
	d.SetSkew(0) // a step back within the lead
	d.Lock()
	if ms, _ := d.Now(); ms < r {
		t.Fatalf("Now %d below the earlier ReadTime %d", ms, r)
	}
	d.Unlock()
	if r2 := d.ReadTime(); r2 < r {
		t.Fatalf("ReadTime %d below the earlier %d", r2, r)
	}
	d.SetSkew(-3600000) // a step back of an hour: bounded, time goes back
	own := time.Now().UnixMilli() - 3600000
	d.Lock()
	ms, _ := d.Now()
	d.Unlock()
	if off := ms - own; off < 0 || off > 600 {
		t.Fatalf("an hour's step back: Now %d ms off the stepped clock, want at most the lead", off)
	}
	if off := d.ReadTime() - own; off < 0 || off > 600 {
		t.Fatalf("an hour's step back: ReadTime %d ms off the stepped clock", off)
	}
}
