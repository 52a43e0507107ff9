package engine

import "hash/maphash"

// RL.TOP's sketch: the keys of a policy refused (and requested) most over
// a recent window, in bounded memory.
//
// Each policy keeps a ring of rlTopBuckets buckets of rlTopBucketMs; a
// bucket holds two Space-Saving summaries (Metwally, Agrawal, El Abbadi
// 2005) of rlTopCap counters each, one fed with every call under the
// policy (requested) and one with its refusals, shadow ones included
// (denied). A key already counted adds one to its counter; a new key
// takes a free counter, or replaces the smallest, inheriting its count
// (plus one) as its error. So a summary of N items overcounts any key by
// at most its err ≤ min ≤ N/rlTopCap, and every key counted more than
// N/rlTopCap times is in it. A query merges the buckets its window
// overlaps: a key's count is the sum of its counters, plus the smallest
// counter of each full bucket that does not hold it (it may have been
// evicted there), and its err the same sum of errs and minima; the
// merged count overestimates by at most err ≤ N/rlTopCap, N the items of
// those buckets.
//
// Costs: one hash of the key per call and a probe of a small
// open-addressing table per summary it feeds (requested always, denied
// on a refusal: no Go map, whose delete and insert on each replacement
// cost more than the rest of the decision); the counters sorted by count
// keep the smallest at hand, and an increment is a binary search and one
// swap (log rlTopCap steps, ~6). A key's bytes are copied only when it takes a counter,
// into that counter's buffer, which the next key that replaces it reuses
// (keys up to rlTopKeyKeep bytes: a longer key's buffer is dropped when
// it is replaced), so a stream of always-new keys does not allocate.
const (
	rlTopBuckets  = 6
	rlTopBucketMs = 10_000
	// RLTopWindowMax is the longest window RL.TOP answers for (ms).
	RLTopWindowMax = rlTopBuckets * rlTopBucketMs
	rlTopCap       = 64
	rlTopKeyKeep   = 256
)

// rlTop is one policy's ring of buckets.
type rlTop struct {
	b    [rlTopBuckets]rlTopBucket
	last int64 // the latest time counted: time never goes back here
}

type rlTopBucket struct {
	end               int64 // ms, the bucket covers [end-rlTopBucketMs, end); 0: unused
	requested, denied spaceSaving
}

// spaceSaving is one summary: ent holds the counters, slot finds a
// key's (open addressing over the key's hash, linear probing; 0 is an
// empty slot, else the counter's index+1), and cnt/who order them by
// count, smallest first (cnt[p] is the count of counter who[p]; the
// counters of one count are contiguous, so an increment swaps a counter
// with the last of its count and stays sorted: Stream-Summary's
// property, in an array).
type spaceSaving struct {
	slot [rlTopSlots]uint8
	cnt  [rlTopCap]int64
	who  [rlTopCap]uint8
	ent  []ssCounter
	n    int64 // items counted
}

// rlTopSlots: twice the counters, so that probes stay short.
const rlTopSlots = 2 * rlTopCap

type ssCounter struct {
	key  []byte
	hash uint64
	err  int64
	pos  uint8 // its place in cnt and who
}

// rlTopSeed seeds the keys' hashes. It only spreads the slots: which
// counter a key replaces, and so every reply, does not depend on it.
var rlTopSeed = maphash.MakeSeed()

// add counts one call with key at now (ms); refused: it was refused.
func (t *rlTop) add(now int64, key []byte, refused bool) {
	if now < t.last {
		now = t.last
	}
	t.last = now
	end := now - now%rlTopBucketMs + rlTopBucketMs
	b := &t.b[(now/rlTopBucketMs)%rlTopBuckets]
	if b.end != end {
		b.end = end
		b.requested.reset()
		b.denied.reset()
	}
	h := maphash.Bytes(rlTopSeed, key)
	b.requested.add(key, h)
	if refused {
		b.denied.add(key, h)
	}
}

func (s *spaceSaving) reset() {
	s.slot = [rlTopSlots]uint8{}
	s.ent, s.n = s.ent[:0], 0
}

// find returns the counter of key (hash h), -1 when it has none.
func (s *spaceSaving) find(key []byte, h uint64) int {
	for i := h % rlTopSlots; ; i = (i + 1) % rlTopSlots {
		j := s.slot[i]
		if j == 0 {
			return -1
		}
		if c := &s.ent[j-1]; c.hash == h && string(c.key) == string(key) {
			return int(j - 1)
		}
	}
}

// unslot removes counter j's slot, shifting back the ones probed past it.
func (s *spaceSaving) unslot(j int) {
	i := s.ent[j].hash % rlTopSlots
	for int(s.slot[i]) != j+1 {
		i = (i + 1) % rlTopSlots
	}
	s.slot[i] = 0
	for k := (i + 1) % rlTopSlots; s.slot[k] != 0; k = (k + 1) % rlTopSlots {
		home := s.ent[s.slot[k]-1].hash % rlTopSlots
		// the counter at k stays unless the hole at i lies between its home
		// and k (cyclically)
		if (k > i && (home <= i || home > k)) || (k < i && home <= i && home > k) {
			s.slot[i], s.slot[k] = s.slot[k], 0
			i = k
		}
	}
}

func (s *spaceSaving) add(key []byte, h uint64) {
	s.n++
	if i := s.find(key, h); i >= 0 {
		s.incr(int(s.ent[i].pos))
		return
	}
	var i int
	if n := len(s.ent); n < rlTopCap {
		i = n
		if n < cap(s.ent) {
			s.ent = s.ent[:i+1] // reuse the counter's buffer
		} else {
			s.ent = append(s.ent, ssCounter{})
		}
		// a new counter of 0 goes first (every count is at least 1)
		copy(s.cnt[1:n+1], s.cnt[:n])
		copy(s.who[1:n+1], s.who[:n])
		for p := 1; p <= n; p++ {
			s.ent[s.who[p]].pos = uint8(p)
		}
		s.cnt[0], s.who[0] = 0, uint8(i)
		s.ent[i].pos, s.ent[i].err = 0, 0
	} else {
		// the smallest counter goes to the new key
		i = int(s.who[0])
		s.unslot(i)
		c := &s.ent[i]
		c.err = s.cnt[0]
		if cap(c.key) > rlTopKeyKeep {
			c.key = nil
		}
	}
	c := &s.ent[i]
	c.key = append(c.key[:0], key...)
	c.hash = h
	k := h % rlTopSlots
	for s.slot[k] != 0 {
		k = (k + 1) % rlTopSlots
	}
	s.slot[k] = uint8(i + 1)
	s.incr(0)
}

// incr adds one to the counter at position p: it changes places with
// the last counter of its count first, so that cnt stays sorted.
func (s *spaceSaving) incr(p int) {
	v := s.cnt[p]
	n := len(s.ent)
	lo, hi := p+1, n // the first position past p with a count above v
	switch {
	case lo == n || s.cnt[lo] > v: // alone with its count (a heavy key)
		hi = lo
	case s.cnt[n-1] <= v: // every count from p on is v (an even stream)
		lo = n
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.cnt[m] <= v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	q := lo - 1
	if q != p {
		a, b := s.who[p], s.who[q]
		s.who[p], s.who[q] = b, a
		s.ent[b].pos, s.ent[a].pos = uint8(p), uint8(q)
	}
	s.cnt[q] = v + 1
}

// min is the smallest counter of a full summary (what a key it does not
// hold may have been counted and evicted with), 0 otherwise.
func (s *spaceSaving) min() int64 {
	if len(s.ent) < rlTopCap {
		return 0
	}
	return s.cnt[0]
}

// query merges the buckets that overlap the windowMs before now (whole
// buckets: the window is rounded up to them).
func (t *rlTop) query(windowMs int64, requested bool, now int64) []RLTopEntry {
	now = max(now, t.last)
	from := now - windowMs
	var sel []*spaceSaving
	for i := range t.b {
		b := &t.b[i]
		if b.end == 0 || b.end-rlTopBucketMs > now || b.end <= from {
			continue
		}
		if requested {
			sel = append(sel, &b.requested)
		} else {
			sel = append(sel, &b.denied)
		}
	}
	at := map[string]int{}
	var out []RLTopEntry
	for _, s := range sel {
		for _, c := range s.ent {
			if _, ok := at[string(c.key)]; !ok {
				at[string(c.key)] = len(out)
				out = append(out, RLTopEntry{Key: string(c.key)})
			}
		}
	}
	for _, s := range sel {
		m := s.min()
		for i := range out {
			e := &out[i]
			k := []byte(e.Key)
			if j := s.find(k, maphash.Bytes(rlTopSeed, k)); j >= 0 {
				e.Count += s.cnt[s.ent[j].pos]
				e.Err += s.ent[j].err
			} else {
				e.Count += m
				e.Err += m
			}
		}
	}
	return out
}
