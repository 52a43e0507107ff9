// Package ratelimit holds limitdb's rate-limiting algorithms as pure
// functions: each decision takes the parameters, the key's state and the
// command's time (now, unix milliseconds) and returns the decision. Nothing
// here reads the clock, draws random numbers or allocates while deciding;
// the engine stores the state words in a key and calls these functions.
package ratelimit

import "math"

// Algo is a rate-limiting algorithm.
type Algo uint8

const (
	GCRA          Algo = iota // generic cell rate algorithm (default)
	TokenBucket               // discrete refill: Limit tokens every Period
	LeakyBucket               // leaky bucket as a meter (level drains continuously)
	FixedWindow               // counter per window that starts at the first hit
	SlidingWindow             // two-window counter approximation
	SlidingLog                // exact log of grant times
	Cell                      // redis-cell's GCRA (CL.THROTTLE), ns resolution
	numAlgos
)

var algoNames = [numAlgos]string{"gcra", "token-bucket", "leaky-bucket", "fixed-window", "sliding-window", "sliding-log", "cell"}

func (a Algo) String() string {
	if a < numAlgos {
		return algoNames[a]
	}
	return "unknown"
}

// ParseAlgo finds an algorithm by its name (case-insensitive). The
// internal Cell algorithm is not selectable by name.
func ParseAlgo(b []byte) (Algo, bool) {
	for a := Algo(0); a < Cell; a++ {
		if equalFold(b, algoNames[a]) {
			return a, true
		}
	}
	return 0, false
}

func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// Params are a limiter's parameters. They are immutable once a limiter
// uses them, so many keys can share one *Params.
type Params struct {
	Algo   Algo
	Limit  int64 // units per Period (Cell: count per period)
	Period int64 // milliseconds (Cell: seconds)
	Burst  int64 // extra capacity above Limit (gcra, token-bucket, leaky-bucket; Cell: max_burst)
}

// Limits on parameters keep every computation inside int64.
const (
	MaxPeriod     = 1 << 40 // ms, about 34 years
	MaxCapacity   = 1 << 40
	MaxLogLimit   = 1 << 16 // sliding-log keeps one timestamp per unit
	MaxWindowUnit = 1 << 31 // sliding-window packs two counters in one word
)

// Validation errors (the engine turns them into replies).
const (
	ErrLimit     = "ERR limit must be a positive integer"
	ErrPeriod    = "ERR period must be a positive integer (milliseconds)"
	ErrBurst     = "ERR burst must be a non-negative integer"
	ErrBurstAlgo = "ERR BURST is only supported by gcra, token-bucket and leaky-bucket"
	ErrTooLarge  = "ERR limit, burst or period is too large for this algorithm"
	ErrCost      = "ERR cost must be a positive integer"
	ErrCostCap   = "ERR cost exceeds the limiter's capacity"
)

// Validate checks p and returns an error text, or "".
func (p *Params) Validate() string {
	if p.Limit <= 0 {
		return ErrLimit
	}
	if p.Period <= 0 {
		return ErrPeriod
	}
	if p.Burst < 0 {
		return ErrBurst
	}
	if p.Burst != 0 && p.Algo != GCRA && p.Algo != TokenBucket && p.Algo != LeakyBucket && p.Algo != Cell {
		return ErrBurstAlgo
	}
	if p.Period > MaxPeriod || p.Limit > MaxCapacity || p.Burst > MaxCapacity {
		return ErrTooLarge
	}
	switch p.Algo {
	case GCRA, LeakyBucket:
		// time per unit in ns times capacity must fit
		t := p.emission()
		if c := p.Capacity(); c > math.MaxInt64/4/t {
			return ErrTooLarge
		}
	case TokenBucket:
		// the time to refill the whole bucket must fit
		if ceilDiv(p.Capacity(), p.Limit) > (1<<61)/p.Period {
			return ErrTooLarge
		}
	case SlidingWindow:
		if p.Limit >= MaxWindowUnit || p.Period >= MaxWindowUnit {
			return ErrTooLarge
		}
	case SlidingLog:
		if p.Limit > MaxLogLimit {
			return ErrTooLarge
		}
	}
	return ""
}

// Capacity is the most units the limiter can grant at once.
func (p *Params) Capacity() int64 {
	switch p.Algo {
	case GCRA, TokenBucket, LeakyBucket:
		return p.Limit + p.Burst
	case Cell:
		return p.Burst + 1
	}
	return p.Limit
}

// CheckCost validates a request's cost against p.
func (p *Params) CheckCost(cost int64) string {
	if cost <= 0 {
		return ErrCost
	}
	if cost > p.Capacity() {
		return ErrCostCap
	}
	return ""
}

// emission is GCRA's time per unit in ns, rounded up so the limiter never
// grants more than Limit per Period.
func (p *Params) emission() int64 {
	ns := p.Period * 1e6
	return (ns + p.Limit - 1) / p.Limit
}

// State is one key's state: two words (A, B) and, for sliding-log, the
// ring of grant times (A = head index, B = count). Its zero value (Log
// aside) is a fresh, full limiter.
type State struct {
	A, B int64
	Log  []int64
}

// Result is one decision.
type Result struct {
	Allowed    bool
	Limit      int64 // capacity
	Remaining  int64 // units that could be granted now (after this request)
	RetryAfter int64 // ms until a request of this cost could pass; -1 when allowed
	ResetAfter int64 // ms until the limiter is back to full (0 = full)
}

// NewLog returns a sliding-log buffer for p (the only allocation, made
// once when the key is created).
func NewLog(p *Params) []int64 { return make([]int64, p.Limit) }

// Decide decides a request of cost units at now. With consume it updates
// s when the request is allowed; without it (peek) s is never changed.
// A refused request never changes s. The caller has validated p and cost.
func Decide(p *Params, s *State, now, cost int64, consume bool) Result {
	r := decide(p, s, now, cost, consume)
	if r.Remaining < 0 { // state from larger parameters
		r.Remaining = 0
	}
	return r
}

func decide(p *Params, s *State, now, cost int64, consume bool) Result {
	switch p.Algo {
	case GCRA:
		return gcra(p, s, now, cost, consume)
	case TokenBucket:
		return tokenBucket(p, s, now, cost, consume)
	case LeakyBucket:
		return leakyBucket(p, s, now, cost, consume)
	case FixedWindow:
		return fixedWindow(p, s, now, cost, consume)
	case SlidingWindow:
		return slidingWindow(p, s, now, cost, consume)
	case SlidingLog:
		return slidingLog(p, s, now, cost, consume)
	}
	return Result{}
}

// Refund gives n units back at now, never beyond full, and reports the
// remaining units afterwards.
func Refund(p *Params, s *State, now, n int64) int64 {
	switch p.Algo {
	case GCRA:
		nowNs := now * 1e6
		t := p.emission()
		if s.A > nowNs {
			if n >= (s.A-nowNs)/t+1 {
				s.A = 0
			} else {
				s.A -= n * t
				if s.A < nowNs {
					s.A = 0
				}
			}
		}
	case Cell:
		nowNs := now * 1e6
		t := CellEmission(p)
		if s.A > nowNs {
			if n >= (s.A-nowNs)/t+1 {
				s.A = 0
			} else {
				s.A -= n * t
				if s.A < nowNs {
					s.A = 0
				}
			}
		}
	case TokenBucket:
		tbRefill(p, s, now) // s.A is now the tokens
		s.A = min(p.Capacity(), s.A+n)
		tbStore(p, s)
	case LeakyBucket:
		lbDrain(p, s, now)
		t := p.emission()
		if n >= s.A/t+1 {
			s.A = 0
		} else {
			s.A = max(0, s.A-n*t)
		}
	case FixedWindow:
		if now >= s.B+p.Period {
			s.A = 0
		}
		s.A = max(0, s.A-n)
	case SlidingWindow:
		swShift(p, s, now)
		prev, cur := swUnpack(s.B)
		cur = max(0, cur-n)
		s.B = swPack(prev, cur)
	case SlidingLog:
		a, b := s.A, s.B
		slPrune(p, s, now)
		k := min(n, s.B)
		s.B -= k
		// zero what the prune dropped and the k newest (see slClear)
		slClear(s.Log, a, b-s.B-k)
		slClear(s.Log, s.A+s.B, k)
	}
	if p.Algo == Cell {
		return CellThrottle(p, s, now, 0).Remaining
	}
	return Decide(p, s, now, 1, false).Remaining
}

// Full reports whether s is back to full at now (the key may vanish).
func Full(p *Params, s *State, now int64) bool {
	if p.Algo == Cell {
		return s.A <= now*1e6
	}
	return Decide(p, s, now, 1, false).ResetAfter <= 0
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

// --- GCRA ---------------------------------------------------------------
//
// State A is the theoretical arrival time (TAT) in ns; 0 or a time in the
// past means full. A request of cost c is allowed when
// max(TAT, now) + c*T - now <= C*T, where T = Period/Limit and C = Limit +
// Burst. Promise: in any interval of length w, at most C + floor(w/T)
// units are granted.

func gcra(p *Params, s *State, now, cost int64, consume bool) Result {
	t := p.emission()
	c := p.Capacity()
	tau := c * t
	nowNs := now * 1e6
	tat := max(s.A, nowNs)
	newTat := tat + cost*t
	r := Result{Limit: c}
	if newTat-nowNs > tau {
		r.RetryAfter = ceilDiv(newTat-tau-nowNs, 1e6)
		r.Remaining = (tau - (tat - nowNs)) / t
		r.ResetAfter = ceilDiv(tat-nowNs, 1e6)
		return r
	}
	r.Allowed = true
	r.RetryAfter = -1
	if !consume {
		r.Remaining = (tau - (tat - nowNs)) / t
		r.ResetAfter = ceilDiv(tat-nowNs, 1e6)
		return r
	}
	s.A = newTat
	r.Remaining = (tau - (newTat - nowNs)) / t
	r.ResetAfter = ceilDiv(newTat-nowNs, 1e6)
	return r
}

// --- token bucket ----------------------------------------------------------
//
// State: A = tokens used (0 = full), B = time of the last refill step (ms).
// Every Period, Limit tokens come back at once (the seed script
// 001-token-bucket.lua with add = Limit, interval = Period), up to C =
// Limit + Burst. Promise: in any interval of length w, at most C +
// Limit*floor(w/Period) units are granted... plus one refill step when
// the interval straddles one: C + Limit*ceil(w/Period).

func tbRefill(p *Params, s *State, now int64) {
	// convert the stored "used" into tokens for the caller: A becomes tokens
	c := p.Capacity()
	used := s.A
	if used <= 0 {
		s.A, s.B = c, now
		return
	}
	if now > s.B {
		k := (now - s.B) / p.Period
		if k > 0 {
			if k >= ceilDiv(used, p.Limit) {
				used = 0
			} else {
				used -= k * p.Limit
			}
			s.B += k * p.Period
		}
	}
	if used <= 0 {
		s.A, s.B = c, now
		return
	}
	s.A = c - used
}

// tbStore converts tokens back to the stored "used" form.
func tbStore(p *Params, s *State) {
	s.A = p.Capacity() - s.A
}

func tokenBucket(p *Params, s *State, now, cost int64, consume bool) Result {
	c := p.Capacity()
	st := *s
	tbRefill(p, &st, now)
	tokens := st.A
	r := Result{Limit: c}
	resetFrom := func(tokens int64) int64 {
		if tokens >= c {
			return 0
		}
		return st.B + ceilDiv(c-tokens, p.Limit)*p.Period - now
	}
	if tokens < cost {
		r.Remaining = tokens
		r.RetryAfter = st.B + ceilDiv(cost-tokens, p.Limit)*p.Period - now
		r.ResetAfter = resetFrom(tokens)
		return r
	}
	r.Allowed = true
	r.RetryAfter = -1
	if !consume {
		r.Remaining = tokens
		r.ResetAfter = resetFrom(tokens)
		return r
	}
	tokens -= cost
	st.A = tokens
	tbStore(p, &st)
	*s = st
	r.Remaining = tokens
	r.ResetAfter = resetFrom(tokens)
	return r
}

// --- leaky bucket ------------------------------------------------------------
//
// State: A = level in ns of drain time (each unit adds T ns), B = time of
// the last update (ms). The level drains one ns per ns. A request fits
// when level + c*T <= C*T. Same promise as GCRA.

func lbDrain(p *Params, s *State, now int64) {
	if now > s.B {
		s.A = max(0, s.A-(now-s.B)*1e6)
		s.B = now
	}
}

func leakyBucket(p *Params, s *State, now, cost int64, consume bool) Result {
	t := p.emission()
	c := p.Capacity()
	cap := c * t
	st := *s
	lbDrain(p, &st, now)
	r := Result{Limit: c}
	if st.A+cost*t > cap {
		r.Remaining = (cap - st.A) / t
		r.RetryAfter = ceilDiv(st.A+cost*t-cap, 1e6)
		r.ResetAfter = ceilDiv(st.A, 1e6)
		return r
	}
	r.Allowed = true
	r.RetryAfter = -1
	if !consume {
		r.Remaining = (cap - st.A) / t
		r.ResetAfter = ceilDiv(st.A, 1e6)
		return r
	}
	st.A += cost * t
	st.B = now
	*s = st
	r.Remaining = (cap - st.A) / t
	r.ResetAfter = ceilDiv(st.A, 1e6)
	return r
}

// --- fixed window --------------------------------------------------------------
//
// State: A = units granted in the window, B = the window's start (ms),
// which is the first hit after the previous window ended (like
// 001-counter.lua: INCR, EXPIRE on the first hit). Promise: at most Limit
// units per window; across a window edge up to 2*Limit in a short time.

func fixedWindow(p *Params, s *State, now, cost int64, consume bool) Result {
	count, start := s.A, s.B
	if count == 0 || now >= start+p.Period {
		count, start = 0, now
	}
	r := Result{Limit: p.Limit}
	reset := func(count int64) int64 {
		if count == 0 {
			return 0
		}
		return start + p.Period - now
	}
	if count+cost > p.Limit {
		r.Remaining = p.Limit - count
		r.RetryAfter = start + p.Period - now
		r.ResetAfter = reset(count)
		return r
	}
	r.Allowed = true
	r.RetryAfter = -1
	if !consume {
		r.Remaining = p.Limit - count
		r.ResetAfter = reset(count)
		return r
	}
	count += cost
	s.A, s.B = count, start
	r.Remaining = p.Limit - count
	r.ResetAfter = reset(count)
	return r
}

// --- sliding window (counter approximation) ------------------------------------------
//
// Windows are aligned on multiples of Period. State: A = start of the
// current window (ms), B = previous window's count << 32 | current
// window's count. A request of cost c is allowed when
// prev*(Period-elapsed)/Period + cur + c <= Limit (compared exactly in
// integers). Promise (error bound): in every aligned window at most Limit
// units; in any interval of length w <= Period at most
// Limit + ceil(Limit*w/Period) units — never the fixed window's 2*Limit
// within a few ms; over a full Period the worst case approaches 2*Limit
// only when the previous window's units all came at its very end.

func swUnpack(b int64) (prev, cur int64) { return int64(uint64(b) >> 32), b & 0xffffffff }
func swPack(prev, cur int64) int64       { return prev<<32 | cur }

func swShift(p *Params, s *State, now int64) {
	start := now - now%p.Period
	prev, cur := swUnpack(s.B)
	switch {
	case s.A == start:
	case s.A+p.Period == start:
		prev, cur = cur, 0
	default:
		prev, cur = 0, 0
	}
	if s.A > start { // time went backwards: keep the state as is
		return
	}
	s.A, s.B = start, swPack(prev, cur)
}

// swWait is the ms from now until prev*(P-e) + (cur+cost)*P <= L*P holds,
// where e is the time elapsed in the window that starts at start.
func swWait(p *Params, start, prev, cur, cost, now int64) int64 {
	P, L := p.Period, p.Limit
	if cur+cost <= L {
		if prev == 0 {
			return 0
		}
		// need e >= P - (L-cur-cost)*P/prev
		e := P - ((L-cur-cost)*P)/prev
		if e < 0 {
			e = 0
		}
		if start+e <= now {
			return 0
		}
		return start + e - now
	}
	// next window: prev' = cur, cur' = 0
	start2 := start + P
	e := int64(0)
	if cur > 0 {
		e = P - ((L-cost)*P)/cur
		if e < 0 {
			e = 0
		}
	}
	return start2 + e - now
}

func slidingWindow(p *Params, s *State, now, cost int64, consume bool) Result {
	P, L := p.Period, p.Limit
	st := *s
	swShift(p, &st, now)
	prev, cur := swUnpack(st.B)
	e := now - st.A
	if e < 0 {
		e = 0
	}
	used := prev*(P-e) + cur*P // in units*ms
	r := Result{Limit: L}
	reset := func(prev, cur int64) int64 {
		switch {
		case cur > 0:
			return st.A + 2*P - now
		case prev > 0:
			return st.A + P - now
		}
		return 0
	}
	if used+cost*P > L*P {
		r.Remaining = max(0, (L*P-used)/P)
		r.RetryAfter = max(1, swWait(p, st.A, prev, cur, cost, now))
		r.ResetAfter = reset(prev, cur)
		return r
	}
	r.Allowed = true
	r.RetryAfter = -1
	if !consume {
		r.Remaining = (L*P - used) / P
		r.ResetAfter = reset(prev, cur)
		return r
	}
	cur += cost
	st.B = swPack(prev, cur)
	*s = st
	r.Remaining = (L*P - used - cost*P) / P
	r.ResetAfter = reset(prev, cur)
	return r
}

// --- sliding log -----------------------------------------------------------------
//
// State: Log is a ring of grant times (one per unit), A = index of the
// oldest, B = number of live entries. An entry is live while
// now < t + Period. Promise: in any interval of length Period, at most
// Limit units (exact).

func slPrune(p *Params, s *State, now int64) {
	n := int64(len(s.Log))
	for s.B > 0 && s.Log[s.A] <= now-p.Period {
		s.A++
		if s.A == n {
			s.A = 0
		}
		s.B--
	}
}

// slClear zeroes k slots of a sliding log's ring from index from on (the
// entries being dropped). Slots outside the live window are always zero, so a state is
// its live entries and ring position alone: an effect (the engine's
// RL.SET) carries only those and rebuilds the very same ring, digest
// included. Only consuming and refunding calls write the ring; a peek
// never does.
func slClear(log []int64, from, k int64) {
	n := int64(len(log))
	for i := int64(0); i < k; i++ {
		log[(from+i)%n] = 0
	}
}

func slAt(s *State, i int64) int64 {
	n := int64(len(s.Log))
	j := s.A + i
	if j >= n {
		j -= n
	}
	return s.Log[j]
}

func slidingLog(p *Params, s *State, now, cost int64, consume bool) Result {
	L := p.Limit
	st := *s
	slPrune(p, &st, now)
	r := Result{Limit: L}
	reset := func() int64 {
		if st.B == 0 {
			return 0
		}
		return slAt(&st, st.B-1) + p.Period - now
	}
	if st.B+cost > L {
		k := st.B + cost - L // entries that must expire first
		r.Remaining = L - st.B
		r.RetryAfter = slAt(&st, k-1) + p.Period - now
		r.ResetAfter = reset()
		return r
	}
	r.Allowed = true
	r.RetryAfter = -1
	if !consume {
		r.Remaining = L - st.B
		r.ResetAfter = reset()
		return r
	}
	n := int64(len(st.Log))
	slClear(s.Log, s.A, s.B-st.B) // the entries the prune dropped
	for i := int64(0); i < cost; i++ {
		j := st.A + st.B
		if j >= n {
			j -= n
		}
		st.Log[j] = now
		st.B++
	}
	*s = st
	r.Remaining = L - st.B
	r.ResetAfter = reset()
	return r
}

// --- redis-cell ---------------------------------------------------------------------
//
// CL.THROTTLE's GCRA, with redis-cell's arithmetic: T = trunc(period*1e9 /
// count) ns, tolerance (max_burst+1)*T, TAT in ns (state A). Params: Limit
// = count, Period = seconds, Burst = max_burst.

// CellEmission is redis-cell's emission interval in ns.
func CellEmission(p *Params) int64 {
	return int64(float64(p.Period*1e9) / float64(p.Limit))
}

// CellResult is CL.THROTTLE's decision, durations in ns.
type CellResult struct {
	Limited    bool
	Limit      int64
	Remaining  int64
	RetryAfter int64 // ns; -1 s when allowed (or when the request can never pass)
	ResetAfter int64 // ns
}

// CellThrottle decides quantity units at now (ms); quantity 0 peeks.
func CellThrottle(p *Params, s *State, now, quantity int64) CellResult {
	t := CellEmission(p)
	dvt := t * (p.Burst + 1)
	r := CellResult{Limit: p.Burst + 1, RetryAfter: -1e9, ResetAfter: -1e9}
	nowNs := now * 1e6
	tat := s.A
	if tat == 0 {
		tat = nowNs
	}
	inc := t * quantity
	newTat := tat + inc
	if nowNs > tat {
		newTat = nowNs + inc
	}
	diff := nowNs - (newTat - dvt)
	var ttl int64
	if diff < 0 {
		if inc <= dvt {
			r.RetryAfter = -diff
		}
		r.Limited = true
		ttl = tat - nowNs
	} else {
		ttl = newTat - nowNs
		if quantity != 0 {
			s.A = newTat
		}
	}
	next := dvt - ttl
	if next > -t && t >= 1000 {
		r.Remaining = int64(float64(next/1000) / float64(t/1000))
	}
	r.ResetAfter = ttl
	return r
}

// CellSeconds rounds a duration in ns to whole seconds as redis-cell does:
// truncate, then add one when the sub-second part has whole milliseconds.
func CellSeconds(ns int64) int64 {
	s := ns / 1e9
	if (ns%1e9)/1e6 > 0 {
		s++
	}
	return s
}
