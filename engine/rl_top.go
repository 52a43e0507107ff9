package engine

import "hash/maphash"

// RL.TOP's sketch: the keys of a policy refused (and requested) most over
// a recent window, in bounded memory.
//
// Each policy keeps a ring of rlTopBuckets buckets of rlTopBucketMs; a
// bucket holds two summaries of rlTopCap counters each, one fed with
// the calls under the policy that were allowed and one with its
// refusals, shadow ones included (denied): each call feeds one, and the
// requested keys are the two merged. A summary is Filtered Space-Saving
// (Homem, Carvalho 2010; Space-Saving: Metwally, Agrawal, El Abbadi
// 2005): a key already counted adds one to its counter; a new key adds
// one to its filter counter (one of 1<<rlTopFilterBits, by hash) unless
// that has reached the smallest counter, and then takes the smallest
// counter with that count plus one, the count as its err; the evicted
// key's filter counter keeps its count. A filter counter never passes
// the smallest counter, so the counters add up to at most N, the items
// counted, and the smallest is at most N/rlTopCap. Hence, for every key:
// a count overestimates by at most its err ≤ N/rlTopCap (count − err is
// a lower bound), a key not held was counted at most its filter count,
// and every key counted more than N/rlTopCap times is held. The filter
// spares a stream of many equally rare keys the replacement on every
// call (Space-Saving's worst case: 10,000 keys in turn replaced a
// counter on 22 % of calls with the filter, on all of them without).
//
// A query merges the summaries of the buckets its window overlaps (whole
// buckets: the window is rounded up to them; the denied ones, or with
// REQUESTED both): a key's count is the sum of its counters, plus its
// filter count in each summary that does not hold it, and its err the
// same sum of errs and filter counts; the merged count overestimates by
// at most err ≤ N/rlTopCap, N the items of those summaries.
//
// Costs per call: one hash of the key, a probe of the small
// open-addressing table of the summary it feeds (no Go map, whose delete
// and insert on each replacement cost more than the rest of the
// decision; one summary a call, not a requested one besides the denied:
// two cost 35 ns a refused call, one 20), an increment (the counters sorted by count keep
// the smallest at hand: a binary search and one swap) or a filter
// increment. A key's bytes are copied only when it takes a counter, into
// that counter's buffer, which the next key to take it reuses (keys up to
// rlTopKeyKeep bytes: a longer key's buffer is dropped when it is
// replaced), so a stream of always-new keys does not allocate.
//
// Memory per policy: rlTopBuckets × 2 summaries of 128 slots (1 B),
// 256 filter counters (4 B), 64 counts (8 B) and positions (1 B), and 64
// counters (48 B and the key's bytes): about 5 KB per summary, 60 KB per
// policy plus the held keys' bytes (at most 768 keys), allocated at the
// policy's first counted call.
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
	end             int64 // ms, the bucket covers [end-rlTopBucketMs, end); 0: unused
	allowed, denied spaceSaving
}

// spaceSaving is one summary: ent holds the counters, slot finds a
// key's (open addressing over the key's hash, linear probing; 0 is an
// empty slot, else the counter's index+1), and cnt/who order them by
// count, smallest first (cnt[p] is the count of counter who[p]; the
// counters of one count are contiguous, so an increment swaps a counter
// with the last of its count and stays sorted: Stream-Summary's
// property, in an array).
type spaceSaving struct {
	slot  [rlTopSlots]uint8
	alpha [1 << rlTopFilterBits]uint32 // the filter: see add
	cnt   [rlTopCap]int64
	who   [rlTopCap]uint8
	ent   []ssCounter
	n     int64 // items counted
}

// rlTopSlots: twice the counters, so that probes stay short.
// rlTopFilterBits: the filter's counters, 4 per counter (a key's filter
// counter is picked by the top bits of its hash, its slot by the low).
const (
	rlTopSlots      = 2 * rlTopCap
	rlTopFilterBits = 8
)

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
		b.allowed.reset()
		b.denied.reset()
	}
	h := maphash.Bytes(rlTopSeed, key)
	if refused {
		b.denied.add(key, h)
	} else {
		b.allowed.add(key, h)
	}
}

func (s *spaceSaving) reset() {
	s.slot = [rlTopSlots]uint8{}
	s.alpha = [1 << rlTopFilterBits]uint32{}
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
		// the filter: the key stays out until its filter counter reaches
		// the smallest counter
		a := &s.alpha[h>>(64-rlTopFilterBits)]
		if int64(*a) < s.cnt[0] {
			*a++
			return
		}
		// (a filter counter never passes the smallest counter, so here it
		// equals it): it takes the smallest counter, whose count the
		// evicted key's filter counter keeps as a bound on its count
		i = int(s.who[0])
		c := &s.ent[i]
		s.alpha[c.hash>>(64-rlTopFilterBits)] = uint32(s.cnt[0])
		s.unslot(i)
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
		sel = append(sel, &b.denied)
		if requested {
			sel = append(sel, &b.allowed)
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
		for i := range out {
			e := &out[i]
			k := []byte(e.Key)
			h := maphash.Bytes(rlTopSeed, k)
			if j := s.find(k, h); j >= 0 {
				e.Count += s.cnt[s.ent[j].pos]
				e.Err += s.ent[j].err
			} else {
				// not held there: counted at most its filter count
				a := int64(s.alpha[h>>(64-rlTopFilterBits)])
				e.Count += a
				e.Err += a
			}
		}
	}
	return out
}
