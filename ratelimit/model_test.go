package ratelimit

import (
	"fmt"
	"math/big"
	"math/rand"
	"testing"
)

// Reference models: straightforward, slow formulations of each algorithm
// (logs of grants, explicit refill loops, exact rationals). retry and
// reset are found by brute force, stepping time one ms at a time, so the
// closed forms of the real code are checked independently.

type model interface {
	// eval decides at now without changing anything: allowed, remaining.
	eval(now, cost int64) (bool, int64)
	grant(now, cost int64)
	// refund gives n units back at now and returns how much was given back,
	// in the unit that bound() uses.
	refund(now, n int64) int64
	full(now int64) bool
}

// --- GCRA / leaky bucket: credit X in ns, refills 1 per ns, capped at C*T.
type creditModel struct {
	T, C  int64
	x     int64
	at    int64 // ns of x
	fresh bool
}

func (m *creditModel) credit(now int64) int64 {
	if m.fresh {
		return m.C * m.T
	}
	return min(m.C*m.T, m.x+(now*1e6-m.at))
}
func (m *creditModel) eval(now, cost int64) (bool, int64) {
	x := m.credit(now)
	return x >= cost*m.T, x / m.T
}
func (m *creditModel) grant(now, cost int64) {
	m.x = m.credit(now) - cost*m.T
	m.at = now * 1e6
	m.fresh = false
}
func (m *creditModel) refund(now, n int64) int64 {
	x := m.credit(now)
	nx := min(m.C*m.T, x+n*m.T)
	m.x, m.at, m.fresh = nx, now*1e6, false
	return nx - x
}
func (m *creditModel) full(now int64) bool { return m.credit(now) == m.C*m.T }

// --- token bucket: explicit refill loop.
type tbModel struct {
	L, P, C      int64
	tokens, base int64
}

func (m *tbModel) at(now int64) (tokens, base int64) {
	tokens, base = m.tokens, m.base
	for tokens < m.C && now >= base+m.P {
		tokens = min(m.C, tokens+m.L)
		base += m.P
	}
	if tokens == m.C {
		base = now
	}
	return
}
func (m *tbModel) eval(now, cost int64) (bool, int64) {
	t, _ := m.at(now)
	return t >= cost, t
}
func (m *tbModel) grant(now, cost int64) {
	m.tokens, m.base = m.at(now)
	m.tokens -= cost
}
func (m *tbModel) refund(now, n int64) int64 {
	t, b := m.at(now)
	nt := min(m.C, t+n)
	m.tokens, m.base = nt, b
	return nt - t
}
func (m *tbModel) full(now int64) bool { t, _ := m.at(now); return t == m.C }

// --- fixed window.
type fwModel struct {
	L, P         int64
	count, start int64
}

func (m *fwModel) cur(now int64) int64 {
	if now >= m.start+m.P {
		return 0
	}
	return m.count
}
func (m *fwModel) eval(now, cost int64) (bool, int64) {
	c := m.cur(now)
	return c+cost <= m.L, m.L - c
}
func (m *fwModel) grant(now, cost int64) {
	if m.cur(now) == 0 {
		m.count, m.start = 0, now
	}
	m.count += cost
}
func (m *fwModel) refund(now, n int64) int64 {
	c := m.cur(now)
	k := min(c, n)
	m.count = c - k
	return k
}
func (m *fwModel) full(now int64) bool { return m.cur(now) == 0 }

// --- grant log (sliding window and sliding log).
type grantEv struct{ t, units int64 }

type logModel struct {
	L, P    int64
	window  bool // sliding-window counter; else sliding log
	g       []grantEv
	removed int64
}

func (m *logModel) sumIn(from, to int64) int64 { // [from, to)
	s := int64(0)
	for _, e := range m.g {
		if e.t >= from && e.t < to {
			s += e.units
		}
	}
	return s
}

// estimate*P for the window counter; live units for the log.
func (m *logModel) usedScaled(now int64) *big.Rat {
	if !m.window {
		return big.NewRat(m.sumIn(now-m.P+1, now+1), 1)
	}
	start := now - now%m.P
	prev := m.sumIn(start-m.P, start)
	cur := m.sumIn(start, start+m.P)
	e := now - start
	r := big.NewRat(prev*(m.P-e), m.P)
	return r.Add(r, big.NewRat(cur, 1))
}
func (m *logModel) eval(now, cost int64) (bool, int64) {
	u := m.usedScaled(now)
	lim := big.NewRat(m.L-cost, 1)
	ok := u.Cmp(lim) <= 0
	rem := new(big.Rat).Sub(big.NewRat(m.L, 1), u)
	// floor
	q := new(big.Int).Quo(rem.Num(), rem.Denom())
	if rem.Sign() < 0 {
		q.SetInt64(0)
	}
	return ok, q.Int64()
}
func (m *logModel) grant(now, cost int64) { m.g = append(m.g, grantEv{now, cost}) }
func (m *logModel) refund(now, n int64) int64 {
	from := now - m.P + 1
	if m.window {
		from = now - now%m.P
	}
	given := int64(0)
	for i := len(m.g) - 1; i >= 0 && given < n; i-- {
		if m.g[i].t < from {
			break
		}
		k := min(m.g[i].units, n-given)
		m.g[i].units -= k
		given += k
	}
	return given
}
func (m *logModel) full(now int64) bool { return m.usedScaled(now).Sign() == 0 }

func newModel(p *Params) model {
	switch p.Algo {
	case GCRA, LeakyBucket:
		return &creditModel{T: p.emission(), C: p.Capacity(), fresh: true}
	case TokenBucket:
		return &tbModel{L: p.Limit, P: p.Period, C: p.Capacity(), tokens: p.Capacity()}
	case FixedWindow:
		return &fwModel{L: p.Limit, P: p.Period}
	case SlidingWindow:
		return &logModel{L: p.Limit, P: p.Period, window: true}
	case SlidingLog:
		return &logModel{L: p.Limit, P: p.Period}
	}
	panic("no model")
}

// scan finds the first d >= 0 at which pred(now+d) holds.
func scan(now, limit int64, pred func(int64) bool) int64 {
	for d := int64(0); d <= limit; d++ {
		if pred(now + d) {
			return d
		}
	}
	return -2
}

type event struct {
	t, net int64 // net units granted (refunds negative), in bound units
}

// boundOK checks the algorithm's promise on the net grants: for every
// interval [t1, t2], granted - refunded <= bound(t2-t1).
func boundOK(p *Params, evs []event) (bool, string) {
	for i := range evs {
		sum := int64(0)
		for j := i; j < len(evs); j++ {
			sum += evs[j].net
			w := evs[j].t - evs[i].t
			var lim int64
			switch p.Algo {
			case GCRA, LeakyBucket: // units of ns: C*T + w
				lim = p.Capacity()*p.emission() + w*1e6
			case TokenBucket:
				lim = p.Capacity() + p.Limit*(w/p.Period+1)
			case SlidingLog:
				if w >= p.Period {
					continue
				}
				lim = p.Limit
			case SlidingWindow:
				if w >= p.Period {
					continue
				}
				lim = p.Limit + (p.Limit*w+p.Period-1)/p.Period
			case FixedWindow:
				if w >= p.Period {
					continue
				}
				lim = 2 * p.Limit
			}
			if sum > lim {
				return false, fmt.Sprintf("interval [%d,%d]: %d > %d", evs[i].t, evs[j].t, sum, lim)
			}
		}
	}
	return true, ""
}

func randParams(r *rand.Rand, a Algo) Params {
	p := Params{Algo: a, Limit: 1 + r.Int63n(8), Period: 50 + r.Int63n(400)}
	if a == GCRA || a == TokenBucket || a == LeakyBucket {
		if r.Intn(2) == 0 {
			p.Burst = r.Int63n(5)
		}
	}
	if r.Intn(5) == 0 {
		p.Period = 1000 + 1000*r.Int63n(3)
		p.Limit = 1 + r.Int63n(30)
	}
	return p
}

// TestModels drives every algorithm and its reference model with the same
// random sequences of allows, peeks and refunds at random times and checks
// every reply field, that peeks change nothing, and the window promise.
func TestModels(t *testing.T) {
	for a := GCRA; a < Cell; a++ {
		t.Run(a.String(), func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(a) + 1))
			seqs := 150
			if testing.Short() {
				seqs = 30
			}
			for seq := 0; seq < seqs; seq++ {
				p := randParams(r, a)
				if msg := p.Validate(); msg != "" {
					t.Fatal(msg)
				}
				m := newModel(&p)
				var st State
				if a == SlidingLog {
					st.Log = NewLog(&p)
				}
				now := int64(1_700_000_000_000) + r.Int63n(1000)
				var evs []event
				unit := int64(1)
				if a == GCRA || a == LeakyBucket {
					unit = p.emission()
				}
				for op := 0; op < 80; op++ {
					now += r.Int63n(p.Period/3 + 2)
					if r.Intn(8) == 0 {
						now += r.Int63n(2 * p.Period)
					}
					cost := 1 + r.Int63n(p.Capacity())
					if r.Intn(2) == 0 {
						cost = 1
					}
					switch k := r.Intn(10); {
					case k < 7 || k == 9: // allow (k==9: peek first)
						if k == 9 {
							before := st
							Decide(&p, &st, now, cost, false)
							if st.A != before.A || st.B != before.B {
								t.Fatalf("peek changed the state")
							}
						}
						got := Decide(&p, &st, now, cost, true)
						ok, rem := m.eval(now, cost)
						if got.Allowed != ok {
							t.Fatalf("%+v op %d t=%d cost %d: allowed %v, model %v", p, op, now, cost, got.Allowed, ok)
						}
						if ok {
							m.grant(now, cost)
							evs = append(evs, event{now, cost * unit})
							_, rem = m.eval(now, 1)
							if got.RetryAfter != -1 {
								t.Fatalf("retry %d on allow", got.RetryAfter)
							}
						} else {
							want := scan(now, 4*p.Period*p.Capacity(), func(x int64) bool { ok, _ := m.eval(x, cost); return ok })
							if got.RetryAfter != want {
								t.Fatalf("%+v op %d t=%d cost %d: retry %d, model %d", p, op, now, cost, got.RetryAfter, want)
							}
						}
						if got.Remaining != rem {
							t.Fatalf("%+v op %d t=%d: remaining %d, model %d", p, op, now, got.Remaining, rem)
						}
						wantReset := scan(now, 4*p.Period*p.Capacity(), m.full)
						if got.ResetAfter != wantReset {
							t.Fatalf("%+v op %d t=%d: reset %d, model %d", p, op, now, got.ResetAfter, wantReset)
						}
						if got.Limit != p.Capacity() {
							t.Fatalf("limit %d", got.Limit)
						}
					case k == 7: // refund
						n := 1 + r.Int63n(p.Capacity())
						rem := Refund(&p, &st, now, n)
						given := m.refund(now, n)
						evs = append(evs, event{now, -given})
						_, mrem := m.eval(now, 1)
						if rem != mrem {
							t.Fatalf("%+v refund %d at %d: remaining %d, model %d", p, n, now, rem, mrem)
						}
						if Full(&p, &st, now) != m.full(now) {
							t.Fatalf("full mismatch after refund")
						}
					case k == 8: // pure peek
						got := Decide(&p, &st, now, cost, false)
						ok, rem := m.eval(now, cost)
						if got.Allowed != ok || got.Remaining != rem {
							t.Fatalf("peek: %+v, model %v %d", got, ok, rem)
						}
					}
				}
				if ok, why := boundOK(&p, evs); !ok {
					t.Fatalf("%+v: promise broken: %s", p, why)
				}
			}
		})
	}
}

// TestEdgeBurst shows the fixed window's 2x burst across a window edge
// and its absence in GCRA, sliding window and sliding log.
func TestEdgeBurst(t *testing.T) {
	for _, a := range []Algo{FixedWindow, GCRA, SlidingWindow, SlidingLog} {
		p := Params{Algo: a, Limit: 10, Period: 1000}
		var st State
		if a == SlidingLog {
			st.Log = NewLog(&p)
		}
		granted := 0
		// a first hit opens the fixed window at t=0; then 10 requests at
		// t=999 and 10 at t=1000: the fixed window grants 9+10
		base := int64(1_700_000_000_000)
		base -= base % 1000
		Decide(&p, &st, base, 1, true)
		for _, at := range []int64{999, 1000} {
			for i := 0; i < 10; i++ {
				if Decide(&p, &st, base+at, 1, true).Allowed {
					granted++
				}
			}
		}
		t.Logf("%s: %d granted within 2 ms", a, granted)
		if a == FixedWindow && granted != 19 {
			t.Fatalf("fixed window should show the 2x edge burst, got %d", granted)
		}
		if a != FixedWindow && granted > 11 {
			t.Fatalf("%s let %d through within 2 ms", a, granted)
		}
	}
}

// TestCell checks redis-cell's own test table (limit 5, 1 per second).
func TestCell(t *testing.T) {
	p := Params{Algo: Cell, Burst: 4, Limit: 1, Period: 1}
	var st State
	start := int64(1_700_000_000_000)
	cases := []struct {
		at, qty, remaining, reset, retry int64
		limited                          bool
	}{
		{0, 6, 5, 0, -1000, true},
		{0, 1, 4, 1000, -1000, false},
		{0, 1, 3, 2000, -1000, false},
		{0, 1, 2, 3000, -1000, false},
		{0, 1, 1, 4000, -1000, false},
		{0, 1, 0, 5000, -1000, false},
		{0, 1, 0, 5000, 1000, true},
		{3000, 1, 2, 3000, -1000, false},
		{3100, 1, 1, 3900, -1000, false},
		{4000, 1, 1, 4000, -1000, false},
		{8000, 1, 4, 1000, -1000, false},
		{9500, 1, 4, 1000, -1000, false},
		{9500, 0, 4, 1000, -1000, false},
		{9500, 2, 2, 3000, -1000, false},
		{9500, 5, 2, 3000, 3000, true},
	}
	for i, c := range cases {
		r := CellThrottle(&p, &st, start+c.at, c.qty)
		if r.Limited != c.limited || r.Remaining != c.remaining || r.ResetAfter != c.reset*1e6 || r.RetryAfter != c.retry*1e6 || r.Limit != 5 {
			t.Fatalf("case %d: %+v", i, r)
		}
	}
	if CellSeconds(1500e6) != 2 || CellSeconds(-1e9) != -1 || CellSeconds(1e9+5e5) != 1 || CellSeconds(0) != 0 {
		t.Fatal("CellSeconds rounding")
	}
}

// Extreme parameters either validate and decide without overflow, or are
// refused.
func TestExtremes(t *testing.T) {
	now := int64(1_700_000_000_000)
	for a := GCRA; a < Cell; a++ {
		for _, p := range []Params{
			{Limit: 1, Period: MaxPeriod},
			{Limit: MaxCapacity, Period: 1},
			{Limit: 1, Period: MaxPeriod, Burst: MaxCapacity},
			{Limit: MaxCapacity, Period: MaxPeriod},
			{Limit: 3, Period: 1},
		} {
			p.Algo = a
			if p.Burst != 0 && a != GCRA && a != TokenBucket && a != LeakyBucket {
				continue
			}
			if p.Validate() != "" {
				continue
			}
			var st State
			if a == SlidingLog {
				st.Log = NewLog(&p)
			}
			for i := 0; i < 5; i++ {
				r := Decide(&p, &st, now+int64(i), p.Capacity(), true)
				if r.Remaining < 0 || r.ResetAfter < 0 || (r.RetryAfter < 0 && r.RetryAfter != -1) {
					t.Fatalf("%+v: %+v", p, r)
				}
			}
		}
	}
}
