package engine

import "unsafe"

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
// Costs: one map lookup per call (requested), a second per refusal; a
// min-heap over the counters keeps the smallest at hand (log rlTopCap
// steps when a count passes its neighbours'). A key's bytes are copied
// only when it takes a counter, into that counter's buffer, which is
// reused by the next key that replaces it (keys up to rlTopKeyKeep
// bytes: a longer key's buffer is dropped when it is replaced), so a
// stream of always-new keys does not allocate.
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

// spaceSaving is one summary: ent holds the counters, idx finds a key's,
// heap orders them by count (smallest first).
type spaceSaving struct {
	idx  map[string]int32
	ent  []ssCounter
	heap []int32 // indexes of ent
	n    int64   // items counted
}

type ssCounter struct {
	key        string // over buf's bytes (see add)
	buf        []byte
	count, err int64
	pos        int32 // its place in heap
}

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
	b.requested.add(key)
	if refused {
		b.denied.add(key)
	}
}

func (s *spaceSaving) reset() {
	clear(s.idx)
	s.ent, s.heap, s.n = s.ent[:0], s.heap[:0], 0
}

func (s *spaceSaving) add(key []byte) {
	s.n++
	if i, ok := s.idx[string(key)]; ok {
		s.ent[i].count++
		s.down(int(s.ent[i].pos))
		return
	}
	if s.idx == nil {
		s.idx = make(map[string]int32, rlTopCap)
	}
	var i int32
	if len(s.ent) < rlTopCap {
		i = int32(len(s.ent))
		if len(s.ent) < cap(s.ent) {
			s.ent = s.ent[:i+1] // reuse the counter's buffer
		} else {
			s.ent = append(s.ent, ssCounter{})
		}
		s.heap = append(s.heap, i)
		s.ent[i].pos = int32(len(s.heap) - 1)
		s.ent[i].count, s.ent[i].err = 0, 0
	} else {
		// the smallest counter goes to the new key
		i = s.heap[0]
		c := &s.ent[i]
		delete(s.idx, c.key) // before its bytes are overwritten
		c.err = c.count
		if cap(c.buf) > rlTopKeyKeep {
			c.buf = nil
		}
	}
	c := &s.ent[i]
	c.count++
	c.buf = append(c.buf[:0], key...)
	// the map and the counter share the copy: the key is deleted from
	// the map before the buffer is reused
	c.key = unsafe.String(unsafe.SliceData(c.buf), len(c.buf))
	s.idx[c.key] = i
	s.up(int(c.pos))
	s.down(int(c.pos))
}

func (s *spaceSaving) less(a, b int) bool {
	return s.ent[s.heap[a]].count < s.ent[s.heap[b]].count
}

func (s *spaceSaving) swap(a, b int) {
	h := s.heap
	h[a], h[b] = h[b], h[a]
	s.ent[h[a]].pos, s.ent[h[b]].pos = int32(a), int32(b)
}

func (s *spaceSaving) up(j int) {
	for j > 0 {
		p := (j - 1) / 2
		if !s.less(j, p) {
			return
		}
		s.swap(j, p)
		j = p
	}
}

func (s *spaceSaving) down(j int) {
	n := len(s.heap)
	for {
		l := 2*j + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && s.less(r, l) {
			m = r
		}
		if !s.less(m, j) {
			return
		}
		s.swap(j, m)
		j = m
	}
}

// min is the smallest counter of a full summary (what a key it does not
// hold may have been counted and evicted with), 0 otherwise.
func (s *spaceSaving) min() int64 {
	if len(s.ent) < rlTopCap {
		return 0
	}
	return s.ent[s.heap[0]].count
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
			if _, ok := at[c.key]; !ok {
				at[c.key] = len(out)
				out = append(out, RLTopEntry{Key: string([]byte(c.key))})
			}
		}
	}
	for _, s := range sel {
		m := s.min()
		for i := range out {
			e := &out[i]
			if j, ok := s.idx[e.Key]; ok {
				e.Count += s.ent[j].count
				e.Err += s.ent[j].err
			} else {
				e.Count += m
				e.Err += m
			}
		}
	}
	return out
}
