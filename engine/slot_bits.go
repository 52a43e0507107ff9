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

func (b *slotBits) set(slot int)   { b[slot>>6] |= 1 << (slot & 63) }
func (b *slotBits) clear(slot int) { b[slot>>6] &^= 1 << (slot & 63) }

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
