package engine

import "math/bits"

// slotBits is a set of hash slots, one bit each (2 KiB): the slots a
// group owns. A membership test is one shift and mask, which is what
// cluster mode's check before every keyed command costs.
type slotBits [NumSlots / 64]uint64

// has reports whether slot is in the set; slots out of range are not.
func (b *slotBits) has(slot int) bool {
	return uint(slot) < NumSlots && b[slot>>6]&(1<<(slot&63)) != 0
}

func (b *slotBits) set(slot int) { b[slot>>6] |= 1 << (slot & 63) }

// rangeMask is the bits of word w that lie in [s, e].
func rangeMask(w, s, e int) uint64 {
	m := ^uint64(0)
	if lo := w << 6; s > lo {
		m <<= uint(s - lo)
	}
	if hi := w<<6 + 63; e < hi {
		m &= ^uint64(0) >> uint(hi-e)
	}
	return m
}

// first returns the first slot of [s, e] (0 <= s <= e < NumSlots) that is
// in the set (in true) or not (in false), or -1: a word at a time, so a
// LIMITDB.SLOTS of many whole-range arguments stays cheap.
func (b *slotBits) first(s, e int, in bool) int {
	for w := s >> 6; w <= e>>6; w++ {
		x := b[w]
		if !in {
			x = ^x
		}
		if x &= rangeMask(w, s, e); x != 0 {
			return w<<6 + bits.TrailingZeros64(x)
		}
	}
	return -1
}

// setRange adds (on) or removes every slot of [s, e].
func (b *slotBits) setRange(s, e int, on bool) {
	for w := s >> 6; w <= e>>6; w++ {
		if on {
			b[w] |= rangeMask(w, s, e)
		} else {
			b[w] &^= rangeMask(w, s, e)
		}
	}
}

// count is the number of slots in the set.
func (b *slotBits) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// ranges returns the set as sorted, disjoint, non-adjacent [start, end]
// ranges.
func (b *slotBits) ranges() [][2]int {
	var out [][2]int
	for s := 0; s < NumSlots; {
		if b[s>>6]>>(s&63) == 0 {
			s = (s | 63) + 1 // the rest of the word is empty
			continue
		}
		if !b.has(s) {
			s++
			continue
		}
		e := s
		for e+1 < NumSlots && b.has(e+1) {
			e++
		}
		out = append(out, [2]int{s, e})
		s = e + 1
	}
	return out
}
