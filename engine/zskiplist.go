package engine

import "unsafe"

// The sorted set's ordered index: a skiplist with spans, as Redis's
// zskiplist, ordered by (score, member bytes). Spans make rank queries
// (ZRANK, ZRANGE by index, ZREMRANGEBYRANK) O(log n). Node levels come from
// the set's own deterministic generator, so the structure (never a reply)
// depends only on the sequence of operations.

const (
	zslMaxLevel = 32
	zslP        = 0.25
)

type zslLevel struct {
	forward *zslNode
	span    int // nodes skipped by forward (rank distance)
}

type zslNode struct {
	member   string
	score    float64
	backward *zslNode
	hnext    *zslNode // next node in the member hash chain (zdict)
	nlevel   int      // levels in use; they follow the node in memory
}

// A node's levels are stored right after it, in the same allocation: the
// node types below are a zslNode followed by an array of levels, and lv
// reaches level i by offset. This saves the slice header a []zslLevel
// would cost (a one-level node is 64 bytes).
type zslNode1 struct {
	n zslNode
	l [1]zslLevel
}
type zslNode2 struct {
	n zslNode
	l [2]zslLevel
}
type zslNode4 struct {
	n zslNode
	l [4]zslLevel
}
type zslNode8 struct {
	n zslNode
	l [8]zslLevel
}
type zslNode32 struct {
	n zslNode
	l [zslMaxLevel]zslLevel
}

const (
	zslNodeSize  = unsafe.Sizeof(zslNode{})
	zslLevelSize = unsafe.Sizeof(zslLevel{})
)

// lv returns level i of n (i < n.nlevel).
func (n *zslNode) lv(i int) *zslLevel {
	return (*zslLevel)(unsafe.Add(unsafe.Pointer(n), zslNodeSize+uintptr(i)*zslLevelSize))
}

func newZslNode(level int, score float64, member string) *zslNode {
	var n *zslNode
	switch {
	case level == 1:
		n = &(&zslNode1{}).n
	case level == 2:
		n = &(&zslNode2{}).n
	case level <= 4:
		n = &(&zslNode4{}).n
	case level <= 8:
		n = &(&zslNode8{}).n
	default:
		n = &(&zslNode32{}).n
	}
	n.nlevel = level
	n.score = score
	n.member = member
	return n
}

type zskiplist struct {
	header *zslNode // &head until a taller node needs a bigger header
	head   zslNode1 // the first header, inside the set object
	tail   *zslNode
	length int
	level  int
	seed   uint64 // level generator state (xorshift64)
}

// init prepares an empty list in place (the first header lives inside zsl,
// so a sorted set costs one allocation besides its members).
func (zsl *zskiplist) init() {
	zsl.head.n.nlevel = 1
	zsl.header = &zsl.head.n
	zsl.level = 1
	zsl.seed = 0x9e3779b97f4a7c15
}

// growHeader gives the header at least level levels. Only the header's own
// level pointers refer to it (backward links of first nodes are nil), so
// replacing it is safe between operations.
func (zsl *zskiplist) growHeader(level int) {
	h := zsl.header
	if level <= h.nlevel {
		return
	}
	nh := newZslNode(min(max(level, 2*h.nlevel), zslMaxLevel), 0, "")
	for i := 0; i < h.nlevel; i++ {
		*nh.lv(i) = *h.lv(i)
	}
	zsl.header = nh
}

// randomLevel draws a level with P(level > k) = 0.25^k, like Redis.
func (zsl *zskiplist) randomLevel() int {
	x := zsl.seed
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	zsl.seed = x
	level := 1
	// two bits per level: each pair is 00 with probability 1/4
	for x&3 == 0 && level < zslMaxLevel {
		level++
		x >>= 2
	}
	return level
}

// less reports whether (s1, m1) sorts before (s2, m2).
func zless(s1 float64, m1 string, s2 float64, m2 string) bool {
	return s1 < s2 || (s1 == s2 && m1 < m2)
}

// insert adds a new node; the member must not be present.
func (zsl *zskiplist) insert(score float64, member string) *zslNode {
	x := newZslNode(zsl.randomLevel(), score, member)
	zsl.insertNode(x)
	return x
}

// insertNode links x (not in the list) at the place of its score/member.
func (zsl *zskiplist) insertNode(node *zslNode) {
	zsl.growHeader(node.nlevel)
	score, member := node.score, node.member
	var update [zslMaxLevel]*zslNode
	var rank [zslMaxLevel]int
	x := zsl.header
	for i := zsl.level - 1; i >= 0; i-- {
		if i != zsl.level-1 {
			rank[i] = rank[i+1]
		}
		for f := x.lv(i).forward; f != nil && zless(f.score, f.member, score, member); f = x.lv(i).forward {
			rank[i] += x.lv(i).span
			x = f
		}
		update[i] = x
	}
	level := node.nlevel
	if level > zsl.level {
		for i := zsl.level; i < level; i++ {
			rank[i] = 0
			update[i] = zsl.header
			update[i].lv(i).span = zsl.length
		}
		zsl.level = level
	}
	x = node
	x.backward = nil
	for i := 0; i < level; i++ {
		x.lv(i).forward = update[i].lv(i).forward
		update[i].lv(i).forward = x
		x.lv(i).span = update[i].lv(i).span - (rank[0] - rank[i])
		update[i].lv(i).span = (rank[0] - rank[i]) + 1
	}
	for i := level; i < zsl.level; i++ {
		update[i].lv(i).span++
	}
	if update[0] != zsl.header {
		x.backward = update[0]
	}
	if x.lv(0).forward != nil {
		x.lv(0).forward.backward = x
	} else {
		zsl.tail = x
	}
	zsl.length++
}

func (zsl *zskiplist) unlink(x *zslNode, update *[zslMaxLevel]*zslNode) {
	for i := 0; i < zsl.level; i++ {
		if update[i].lv(i).forward == x {
			update[i].lv(i).span += x.lv(i).span - 1
			update[i].lv(i).forward = x.lv(i).forward
		} else {
			update[i].lv(i).span--
		}
	}
	if x.lv(0).forward != nil {
		x.lv(0).forward.backward = x.backward
	} else {
		zsl.tail = x.backward
	}
	for zsl.level > 1 && zsl.header.lv(zsl.level-1).forward == nil {
		zsl.level--
	}
	zsl.length--
}

// delete removes the node (score, member) and reports whether it existed.
func (zsl *zskiplist) delete(score float64, member string) bool {
	var update [zslMaxLevel]*zslNode
	x := zsl.header
	for i := zsl.level - 1; i >= 0; i-- {
		for f := x.lv(i).forward; f != nil && zless(f.score, f.member, score, member); f = x.lv(i).forward {
			x = f
		}
		update[i] = x
	}
	x = x.lv(0).forward
	if x != nil && x.score == score && x.member == member {
		zsl.unlink(x, &update)
		return true
	}
	return false
}

// updateScore gives node n the score newScore, moving it if its place
// changes; the node stays the same.
func (zsl *zskiplist) updateScore(n *zslNode, newScore float64) {
	if (n.backward == nil || zless(n.backward.score, n.backward.member, newScore, n.member)) &&
		(n.lv(0).forward == nil || zless(newScore, n.member, n.lv(0).forward.score, n.lv(0).forward.member)) {
		n.score = newScore
		return
	}
	zsl.delete(n.score, n.member)
	n.score = newScore
	zsl.insertNode(n)
}

// rank returns the 1-based rank of (score, member), 0 when absent.
func (zsl *zskiplist) rank(score float64, member string) int {
	r := 0
	x := zsl.header
	for i := zsl.level - 1; i >= 0; i-- {
		for f := x.lv(i).forward; f != nil && !zless(score, member, f.score, f.member); f = x.lv(i).forward {
			r += x.lv(i).span
			x = f
		}
		if x != zsl.header && x.member == member {
			return r
		}
	}
	return 0
}

// byRank returns the node at 1-based rank r, nil when out of range.
func (zsl *zskiplist) byRank(r int) *zslNode {
	if r < 1 || r > zsl.length {
		return nil
	}
	t := 0
	x := zsl.header
	for i := zsl.level - 1; i >= 0; i-- {
		for x.lv(i).forward != nil && t+x.lv(i).span <= r {
			t += x.lv(i).span
			x = x.lv(i).forward
		}
		if t == r {
			return x
		}
	}
	return nil
}

// first returns the lowest node (nil when empty).
func (zsl *zskiplist) first() *zslNode { return zsl.header.lv(0).forward }

// --- score ranges ----------------------------------------------------------------

// scoreRange is a parsed [min, max] score interval; minEx/maxEx make an
// end exclusive.
type scoreRange struct {
	min, max     float64
	minEx, maxEx bool
}

func (r *scoreRange) gteMin(v float64) bool {
	if r.minEx {
		return v > r.min
	}
	return v >= r.min
}

func (r *scoreRange) lteMax(v float64) bool {
	if r.maxEx {
		return v < r.max
	}
	return v <= r.max
}

// isInRange reports whether some part of the list is in r.
func (zsl *zskiplist) isInRange(r *scoreRange) bool {
	if r.min > r.max || (r.min == r.max && (r.minEx || r.maxEx)) {
		return false
	}
	if zsl.tail == nil || !r.gteMin(zsl.tail.score) {
		return false
	}
	return r.lteMax(zsl.first().score)
}

// nodeRange is a score or lex range as the skiplist walks see it: whether
// a node is at or above the range's minimum, and at or below its maximum.
// The descent is the same for both kinds; a lex walk assumes the members
// share one score, as Redis's does.
type nodeRange interface {
	minOK(n *zslNode) bool
	maxOK(n *zslNode) bool
}

// Value receivers: the walks take the range by value, so it does not
// escape to the heap through the interface (the sliding-window path
// allocates nothing for it).
func (r scoreRange) minOK(n *zslNode) bool { return r.gteMin(n.score) }
func (r scoreRange) maxOK(n *zslNode) bool { return r.lteMax(n.score) }
func (r lexRange) minOK(n *zslNode) bool   { return r.gteMin(n.member) }
func (r lexRange) maxOK(n *zslNode) bool   { return r.lteMax(n.member) }

// lastBelowMin descends the levels to the last node under r's minimum (the
// header when none), filling update with each level's last such node when
// update is not nil.
func lastBelowMin[R nodeRange](zsl *zskiplist, r R, update *[zslMaxLevel]*zslNode) *zslNode {
	x := zsl.header
	for i := zsl.level - 1; i >= 0; i-- {
		for f := x.lv(i).forward; f != nil && !r.minOK(f); f = x.lv(i).forward {
			x = f
		}
		if update != nil {
			update[i] = x
		}
	}
	return x
}

// firstIn returns the lowest node in r, or nil.
func firstIn[R nodeRange](zsl *zskiplist, r R) *zslNode {
	x := lastBelowMin(zsl, r, nil).lv(0).forward
	if x == nil || !r.maxOK(x) {
		return nil
	}
	return x
}

// lastIn returns the highest node in r, or nil.
func lastIn[R nodeRange](zsl *zskiplist, r R) *zslNode {
	x := zsl.header
	for i := zsl.level - 1; i >= 0; i-- {
		for f := x.lv(i).forward; f != nil && r.maxOK(f); f = x.lv(i).forward {
			x = f
		}
	}
	if x == zsl.header || !r.minOK(x) {
		return nil
	}
	return x
}

// deleteIn removes the nodes in r, calling del for each, and returns how
// many it removed.
func deleteIn[R nodeRange](zsl *zskiplist, r R, del func(*zslNode)) int {
	var update [zslMaxLevel]*zslNode
	x := lastBelowMin(zsl, r, &update).lv(0).forward
	n := 0
	for x != nil && r.maxOK(x) {
		next := x.lv(0).forward
		zsl.unlink(x, &update)
		del(x)
		n++
		x = next
	}
	return n
}

// firstInRange returns the lowest node in r, or nil.
func (zsl *zskiplist) firstInRange(r *scoreRange) *zslNode {
	if !zsl.isInRange(r) {
		return nil
	}
	return firstIn(zsl, *r)
}

// lastInRange returns the highest node in r, or nil.
func (zsl *zskiplist) lastInRange(r *scoreRange) *zslNode {
	if !zsl.isInRange(r) {
		return nil
	}
	return lastIn(zsl, *r)
}

// deleteRangeByScore removes the nodes in r, calling del for each, and
// returns how many it removed.
func (zsl *zskiplist) deleteRangeByScore(r *scoreRange, del func(*zslNode)) int {
	return deleteIn(zsl, *r, del)
}

// deleteRangeByRank removes the nodes of 1-based ranks start..end.
func (zsl *zskiplist) deleteRangeByRank(start, end int, del func(*zslNode)) int {
	var update [zslMaxLevel]*zslNode
	t := 0
	x := zsl.header
	for i := zsl.level - 1; i >= 0; i-- {
		for x.lv(i).forward != nil && t+x.lv(i).span < start {
			t += x.lv(i).span
			x = x.lv(i).forward
		}
		update[i] = x
	}
	t++
	x = x.lv(0).forward
	n := 0
	for x != nil && t <= end {
		next := x.lv(0).forward
		zsl.unlink(x, &update)
		del(x)
		n++
		t++
		x = next
	}
	return n
}

// --- lex ranges ----------------------------------------------------------------------

// lexBound is one end of a lex range: -inf ("-"), +inf ("+") or a member
// with its inclusiveness.
type lexBound struct {
	s   string
	inf int8 // -1 = "-", +1 = "+", 0 = s
	ex  bool
}

// cmpLex compares a member with a bound the way Redis's sdscmplex does.
func cmpLex(v string, b *lexBound) int {
	switch b.inf {
	case -1:
		return 1
	case 1:
		return -1
	}
	switch {
	case v < b.s:
		return -1
	case v > b.s:
		return 1
	}
	return 0
}

type lexRange struct{ min, max lexBound }

func (r *lexRange) gteMin(v string) bool {
	c := cmpLex(v, &r.min)
	if r.min.ex {
		return c > 0
	}
	return c >= 0
}

func (r *lexRange) lteMax(v string) bool {
	c := cmpLex(v, &r.max)
	if r.max.ex {
		return c < 0
	}
	return c <= 0
}

// empty reports whether the range can contain nothing (Redis's check on
// min > max, with "-" and "+" as the extremes).
func (r *lexRange) empty() bool {
	var c int
	a, b := &r.min, &r.max
	switch {
	case a.inf != 0 && a.inf == b.inf:
		c = 0
	case a.inf == -1 || b.inf == 1:
		c = -1
	case a.inf == 1 || b.inf == -1:
		c = 1
	default:
		switch {
		case a.s < b.s:
			c = -1
		case a.s > b.s:
			c = 1
		}
	}
	return c > 0 || (c == 0 && (a.ex || b.ex))
}

func (zsl *zskiplist) isInLexRange(r *lexRange) bool {
	if r.empty() || zsl.tail == nil {
		return false
	}
	return r.gteMin(zsl.tail.member) && r.lteMax(zsl.first().member)
}

// firstInLexRange returns the first node >= min (descending the levels, as
// Redis does), or nil when that node is beyond max.
func (zsl *zskiplist) firstInLexRange(r *lexRange) *zslNode {
	if !zsl.isInLexRange(r) {
		return nil
	}
	return firstIn(zsl, *r)
}

// lastInLexRange returns the last node <= max, or nil when it is below min.
func (zsl *zskiplist) lastInLexRange(r *lexRange) *zslNode {
	if !zsl.isInLexRange(r) {
		return nil
	}
	return lastIn(zsl, *r)
}

// deleteRangeByLex removes the nodes from the first >= min while <= max.
func (zsl *zskiplist) deleteRangeByLex(r *lexRange, del func(*zslNode)) int {
	return deleteIn(zsl, *r, del)
}
