package ratelimit

import "testing"

// BenchmarkDecide measures one consuming decision per algorithm on a warm
// key (10 per second, a request every 50 ms so both outcomes occur). It
// must report 0 allocs/op.
func BenchmarkDecide(b *testing.B) {
	for a := GCRA; a < Cell; a++ {
		b.Run(a.String(), func(b *testing.B) {
			p := Params{Algo: a, Limit: 10, Period: 1000}
			var st State
			if a == SlidingLog {
				st.Log = NewLog(&p)
			}
			now := int64(1_700_000_000_000)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				now += int64(i&1) * 100
				Decide(&p, &st, now, 1, true)
			}
		})
	}
	b.Run("cell", func(b *testing.B) {
		p := Params{Algo: Cell, Limit: 10, Period: 1, Burst: 9}
		var st State
		now := int64(1_700_000_000_000)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			now += int64(i&1) * 100
			CellThrottle(&p, &st, now, 1)
		}
	})
}

func TestZeroAllocs(t *testing.T) {
	for a := GCRA; a < Cell; a++ {
		p := Params{Algo: a, Limit: 10, Period: 1000}
		var st State
		if a == SlidingLog {
			st.Log = NewLog(&p)
		}
		now := int64(1_700_000_000_000)
		n := testing.AllocsPerRun(1000, func() {
			now += 37
			Decide(&p, &st, now, 1, true)
			Decide(&p, &st, now, 1, false)
			Refund(&p, &st, now, 1)
		})
		if n != 0 {
			t.Errorf("%s: %v allocs per decision", a, n)
		}
	}
}
