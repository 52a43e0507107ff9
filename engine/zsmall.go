package engine

import (
	"sort"
	"unsafe"
)

// The compact encoding of a small sorted set (limitdb's counterpart of
// Redis's listpack). While a set is within zset-max-listpack-entries /
// -value (and zsmallCap), its members live in one contiguous array z.lp,
// sorted by (score, member), with a 32-bit member hash per slot in z.lph;
// z.dict is empty. Each slot is a one-level skiplist node linked to its
// array neighbours, so every reader written for the skiplist (first, tail,
// forward/backward walks, firstInRange, lex ranges …) works unchanged on
// it; only mutations go through the methods here, which shift the array
// and rewrite the links of the slots they moved. Lookups are a linear pass
// over the hashes, ordering changes a binary search and a memmove: no
// pointer chasing across scattered nodes. A set converts to the skiplist
// when it outgrows the limits (z.setBig) and never back, like Redis.
//
// Invariant: a node pointer into z.lp is valid only until the next
// mutation of z (the slot's content moves).

// zsmallCap bounds the compact encoding whatever the configured limits,
// so a huge zset-max-listpack-entries cannot make updates quadratic.
const zsmallCap = 256

// zsetForceSkiplist makes newZset start every set in the skiplist (tests
// compare the two encodings with it).
var zsetForceSkiplist bool

func zhash32(m string) uint32 {
	h := zhash(m)
	return uint32(h) ^ uint32(h>>32)
}

// link rewrites the links of slots lo..hi (clamped) and the list's header,
// tail and length from the array.
func (z *zset) link(lo, hi int) {
	n := len(z.lp)
	lo = max(lo, 0)
	hi = min(hi, n-1)
	for i := lo; i <= hi; i++ {
		x := &z.lp[i].n
		x.nlevel = 1
		x.hnext = nil
		if i > 0 {
			x.backward = &z.lp[i-1].n
		} else {
			x.backward = nil
		}
		l := &z.lp[i].l[0]
		if i < n-1 {
			l.forward, l.span = &z.lp[i+1].n, 1
		} else {
			l.forward, l.span = nil, 0
		}
	}
	h := z.zsl.header.lv(0)
	if n > 0 {
		h.forward, h.span = &z.lp[0].n, 1
		z.zsl.tail = &z.lp[n-1].n
	} else {
		h.forward, h.span = nil, 0
		z.zsl.tail = nil
	}
	z.zsl.length = n
}

// slotOf returns the array index of node x of a compact set.
func (z *zset) slotOf(x *zslNode) int {
	return int((uintptr(unsafe.Pointer(x)) - uintptr(unsafe.Pointer(&z.lp[0]))) / unsafe.Sizeof(zslNode1{}))
}

// smallFind returns the slot of member, -1 when absent.
func (z *zset) smallFind(m string) int {
	h := zhash32(m)
	for i, v := range z.lph {
		if v == h && z.lp[i].n.member == m {
			return i
		}
	}
	return -1
}

// smallPos is the slot where (score, m) belongs.
func (z *zset) smallPos(score float64, m string) int {
	return sort.Search(len(z.lp), func(i int) bool {
		x := &z.lp[i].n
		return !zless(x.score, x.member, score, m)
	})
}

// smallInsert adds (score, m) (m absent) at its place.
func (z *zset) smallInsert(score float64, m string) {
	p := z.smallPos(score, m)
	n := len(z.lp)
	moved := false
	if n == cap(z.lp) || n == cap(z.lph) {
		// grow by an eighth (a quarter past 32), not append's doubling,
		// so a small set's array stays close to its size
		c := n + 1 + n/8
		if n >= 32 {
			c = n + n/4
		}
		lp := make([]zslNode1, n, c)
		copy(lp, z.lp)
		lph := make([]uint32, n, c)
		copy(lph, z.lph)
		z.lp, z.lph = lp, lph
		moved = true
	}
	z.lp = z.lp[:n+1]
	z.lph = z.lph[:n+1]
	copy(z.lp[p+1:], z.lp[p:n])
	copy(z.lph[p+1:], z.lph[p:n])
	z.lp[p] = zslNode1{n: zslNode{member: m, score: score}}
	z.lph[p] = zhash32(m)
	if moved {
		z.link(0, n) // reallocated: every slot moved
	} else {
		z.link(p-1, n)
	}
}

// smallDelete removes slots lo..hi-1.
func (z *zset) smallDelete(lo, hi int) {
	if lo >= hi {
		return
	}
	n := len(z.lp)
	copy(z.lp[lo:], z.lp[hi:])
	copy(z.lph[lo:], z.lph[hi:])
	k := n - (hi - lo)
	clear(z.lp[k:n])
	z.lp = z.lp[:k]
	z.lph = z.lph[:k]
	if cap(z.lp) >= 32 && 4*k <= cap(z.lp) {
		z.lp = append(make([]zslNode1, 0, 2*k), z.lp...)
		z.lph = append(make([]uint32, 0, 2*k), z.lph...)
		z.link(0, k-1)
		return
	}
	z.link(lo-1, k-1)
}

// smallUpdate gives slot i the score s, moving it to its new place.
func (z *zset) smallUpdate(i int, s float64) {
	x := z.lp[i]
	h := z.lph[i]
	m := x.n.member
	x.n.score = s
	// slots [0, p) sort below (score, m); slot i is among them when its
	// old score was lower, and leaves its place
	p := z.smallPos(s, m)
	if p > i {
		p--
	}
	switch {
	case p < i:
		copy(z.lp[p+1:i+1], z.lp[p:i])
		copy(z.lph[p+1:i+1], z.lph[p:i])
	case p > i:
		copy(z.lp[i:p], z.lp[i+1:p+1])
		copy(z.lph[i:p], z.lph[i+1:p+1])
	}
	z.lp[p] = x
	z.lph[p] = h
	z.link(min(i, p), max(i, p))
}

// toSkiplist converts a compact set to the skiplist and member table.
func (z *zset) toSkiplist() {
	if !z.compact {
		return
	}
	lp := z.lp
	z.compact = false
	z.lp, z.lph = nil, nil
	z.zsl = zskiplist{}
	z.zsl.init()
	for i := range lp {
		z.dict.insert(z.zsl.insert(lp[i].n.score, lp[i].n.member))
	}
}

// setBig marks the set as one Redis would hold as a skiplist, converting
// a compact one.
func (z *zset) setBig() {
	z.big = true
	z.toSkiplist()
}

// --- encoding-independent access used by the commands -----------------------

// find returns member's node, nil when absent.
func (z *zset) find(m string) *zslNode {
	if z.compact {
		if i := z.smallFind(m); i >= 0 {
			return &z.lp[i].n
		}
		return nil
	}
	return z.dict.find(m)
}

// insert adds member m (absent, already copied) with score, without
// touching the encoding limits (callers set big themselves).
func (z *zset) insert(score float64, m string) {
	if z.compact && len(z.lp) >= zsmallCap {
		z.toSkiplist()
	}
	if z.compact {
		z.smallInsert(score, m)
		return
	}
	z.dict.insert(z.zsl.insert(score, m))
}

// updateScore gives n (a node of z) the score s.
func (z *zset) updateScore(n *zslNode, s float64) {
	if z.compact {
		z.smallUpdate(z.slotOf(n), s)
		return
	}
	z.zsl.updateScore(n, s)
}

// rankOf is n's 1-based rank.
func (z *zset) rankOf(n *zslNode) int {
	if z.compact {
		return z.slotOf(n) + 1
	}
	return z.zsl.rank(n.score, n.member)
}

// byRank is the node of 1-based rank r, nil when out of range.
func (z *zset) byRank(r int) *zslNode {
	if z.compact {
		if r < 1 || r > len(z.lp) {
			return nil
		}
		return &z.lp[r-1].n
	}
	return z.zsl.byRank(r)
}

// deleteRangeByScore removes the members in r and returns how many.
func (z *zset) deleteRangeByScore(r *scoreRange) int {
	if !z.compact {
		return z.zsl.deleteRangeByScore(r, z.delNode)
	}
	lo := 0
	for lo < len(z.lp) && !r.gteMin(z.lp[lo].n.score) {
		lo++
	}
	hi := lo
	for hi < len(z.lp) && r.lteMax(z.lp[hi].n.score) {
		hi++
	}
	z.smallDelete(lo, hi)
	return hi - lo
}

// deleteRangeByRank removes the members of 1-based ranks start..end.
func (z *zset) deleteRangeByRank(start, end int) int {
	if !z.compact {
		return z.zsl.deleteRangeByRank(start, end, z.delNode)
	}
	lo, hi := max(start-1, 0), min(end, len(z.lp))
	if lo >= hi {
		return 0
	}
	z.smallDelete(lo, hi)
	return hi - lo
}
