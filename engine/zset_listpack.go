package engine

import (
	"math"
	"unsafe"

	"limitdb/resp"
)

// The listpack encoding of a small sorted set, Redis's own (t_zset.c's
// zzl* functions): while a set is within zset-max-listpack-entries /
// -value (and zsetLPMax members), it is one listpack of member, score,
// member, score … sorted by (score, member bytes), held in its entry's
// words (zset is an lpVal): no object, no per-member node. Members that
// are canonical integers are integer entries, scores that are integers
// within ±2^62 too (double2ll), others d2string's text. A set converts to
// the skiplist (zskip) when it outgrows the limits and, like Redis, back
// only when loaded (RDB, RESTORE, DEBUG RELOAD: zsetOf); the RDB and
// DUMP form is the listpack itself.
//
// Measured at 1,000,000 sliding logs (10 members "<ms time><4 digits>"
// with millisecond scores + PEXPIRE, bench/loadgen -mode memory): the
// listpack is 207 bytes (a 208-byte size class), 262 B live per key with
// the entry and key, 276 B of RSS (appendonly no) against Redis's 337 of
// used_memory; the previous compact encoding (skiplist-shaped 64-byte
// slots, a member string each and a 200-byte object) cost ~1400.
//
// Commands that write (ZADD, ZREM, ZREMRANGEBY*, ZPOP*) work on the bytes
// as Redis does: a linear walk, then one memmove (lpVal.splice). Readers
// written for the skiplist (ranges, lex walks, ZSCAN, ZRANDMEMBER, the
// set operations, SORT) walk a view instead: the members decoded into
// skiplist-shaped slots linked to their neighbours (zsetView), built in
// the engine's scratch, so a read allocates nothing in steady state.

// zsetLPMax bounds the listpack encoding whatever the configured limits,
// so a huge zset-max-listpack-entries cannot make updates quadratic: past
// it a set Redis would still hold as a listpack is a skiplist (zskip.big
// false keeps Redis's listpack behaviour in replies).
const zsetLPMax = 128

// zsetForceSkiplist makes every set a skiplist (tests compare the two
// encodings with it).
var zsetForceSkiplist bool

// zset is a sorted set value: its entry's words (entry.zset), or a value
// being built. The listpack encoding is the lpVal; the skiplist one has
// n == lpOther and p its *zskip.
type zset struct{ lpVal }

// zset returns the sorted set of a KindZSet entry, overlaid on its words.
func (e *entry) zset() *zset { return (*zset)(unsafe.Pointer(&e.p)) }

// setZset makes e hold z.
func (e *entry) setZset(z zset) {
	e.kind, e.enc = KindZSet, 0
	e.p, e.n = z.p, z.n
}

// the overlay needs p and n adjacent in entry
var _ [unsafe.Offsetof(entry{}.n) - unsafe.Offsetof(entry{}.p) - 8]struct{}

func (z *zset) sk() *zskip { return (*zskip)(z.p) }

func (z *zset) len() int {
	if z.isLP() {
		return z.count() / 2
	}
	return z.sk().len()
}

// cowGen is the set's copy-on-write generation (cow.go).
func (z *zset) cowGen() uint32 {
	if z.isLP() {
		return z.gen()
	}
	return z.sk().gen
}

// big reports whether Redis holds the set as a skiplist.
func (z *zset) big() bool { return !z.isLP() && z.sk().big }

// --- the listpack -------------------------------------------------------------------

// zlpScore reads the score entry at p.
func zlpScore(b []byte, p int) (float64, int) {
	s, v, isInt, next := lpDecode(b, p)
	if isInt {
		return float64(v), next
	}
	f, _ := strtod(bstr(s)) // written by zlpAppendScore or checked on load
	return f, next
}

// zlpAppendScore appends a score as zzlInsertAt does: an integer when the
// double is one (double2ll: within ±2^62, so -0 becomes 0), else
// d2string's text ("%.17g", inf, -inf).
func zlpAppendScore(b []byte, f float64) []byte {
	if f >= -(1<<62) && f <= 1<<62 && f == math.Trunc(f) {
		return lpAppendInt(b, int64(f))
	}
	var tmp [32]byte
	return lpAppendStr(b, bstr(resp.AppendDouble(tmp[:0], f)))
}

// zlpFind returns the offset of member k's entry and its score.
func zlpFind(b []byte, k *elemKey) (off int, score float64, ok bool) {
	for p := lpFirst; !lpEnd(b, p); {
		eq, q := lpIs(b, p, k)
		if eq {
			s, _ := zlpScore(b, q)
			return p, s, true
		}
		p = lpNext(b, q)
	}
	return 0, 0, false
}

// lpInsert adds (score, m), m absent, at its place (zzlInsert).
func (z *zset) lpInsert(score float64, m string) {
	b := z.bytes()
	var tmp [24]byte
	p := lpFirst
	for !lpEnd(b, p) {
		// the member's text only on a tie: the sliding log's 100-member
		// request (BenchmarkSlidingLog) took 17.7 µs formatting every integer
		// member, 4.3 µs not
		q := lpNext(b, p)
		s, next := zlpScore(b, q)
		if s > score {
			break
		}
		if s == score {
			if mt, _ := lpText(b, p, tmp[:]); bstr(mt) > m {
				break
			}
		}
		p = next
	}
	var ebuf [96]byte
	enc := zlpAppendScore(lpAppendString(ebuf[:0], m), score)
	b = z.splice(p, 0, len(enc), 2)
	copy(b[p:], enc)
}

// reserveFor makes room at once for the (score, member) pairs of a ZADD
// (score, member, score, member … in pairs, the scores parsed) that stay
// within the listpack limits, as if all were new (lpVal.reserve).
func (z *zset) reserveFor(pairs [][]byte, scores []float64, lim *EncodingLimits) {
	n, extra := z.len(), 0
	for j, s := range scores {
		m := pairs[2*j+1]
		if int64(len(m)) > lim.ZsetMaxListpackValue || int64(n+j) >= lim.ZsetMaxListpackEntries || n+j >= zsetLPMax {
			return // it becomes a skiplist
		}
		var tmp [32]byte
		extra += lpStringSize(m) + len(zlpAppendScore(tmp[:0], s))
	}
	z.reserve(extra)
}

// lpDeletePairs removes the entries from off to end, pairs members.
func (z *zset) lpDeletePairs(off, end, pairs int) {
	if pairs > 0 {
		z.splice(off, end-off, 0, -2*pairs)
	}
}

// lpSkipPairs is the offset n pairs after p (or the terminator's).
func lpSkipPairs(b []byte, p, n int) int {
	for ; n > 0 && !lpEnd(b, p); n-- {
		p = lpNext(b, lpNext(b, p))
	}
	return p
}

// toSkip converts a listpack set to the skiplist; big says whether Redis
// holds it as one too.
func (z *zset) toSkip(big bool) {
	sk := newZskip()
	sk.big = big
	sk.gen = z.gen()
	b := z.bytes()
	var tmp [24]byte
	for p := lpFirst; !lpEnd(b, p); {
		mt, q := lpText(b, p, tmp[:])
		s, next := zlpScore(b, q)
		sk.dict.insert(sk.zsl.insert(s, string(mt)))
		p = next
	}
	z.p, z.n = unsafe.Pointer(sk), lpOther
}

// zsetOf is the value of a set built as a skiplist (a command's result, a
// loaded set): a listpack when Redis would hold it as one (!sk.big) and
// it fits zsetLPMax, as Redis's zsetConvertToListpackIfNeeded; scores of
// -0 become 0 there, as in Redis's listpack.
func zsetOf(sk *zskip) zset {
	if sk.big || sk.len() > zsetLPMax || zsetForceSkiplist {
		if !sk.big {
			for x := sk.zsl.first(); x != nil; x = x.lv(0).forward {
				if x.score == 0 {
					x.score = 0
				}
			}
		}
		return zset{lpVal{p: unsafe.Pointer(sk), n: lpOther}}
	}
	var w lpWriter
	var z zset
	if sk.len() > 0 {
		z.setBytes(append([]byte(nil), w.zset(sk)...))
	}
	return z
}

// zset builds the listpack of sk's members and scores (in w's buffer).
func (w *lpWriter) zset(sk *zskip) []byte {
	w.reset()
	for x := sk.zsl.first(); x != nil; x = x.lv(0).forward {
		w.appendString(x.member)
		w.b = zlpAppendScore(w.b, x.score)
		w.n++
	}
	return w.finish()
}

func cloneZset(p unsafe.Pointer, n int64) (unsafe.Pointer, int64) {
	src := zset{lpVal{p, n}}
	c := src.clone(0)
	return c.p, c.n
}

// clone is a copy of z with copy-on-write generation g.
func (z *zset) clone(g uint32) zset {
	if z.isLP() {
		return zset{z.lpVal.clone(g)}
	}
	src := z.sk()
	dst := newZskip()
	dst.big, dst.gen = src.big, g
	for x := src.zsl.first(); x != nil; x = x.lv(0).forward {
		dst.dict.insert(dst.zsl.insert(x.score, x.member))
	}
	return zset{lpVal{p: unsafe.Pointer(dst), n: lpOther}}
}

// --- encoding-independent access used by the commands -------------------------------

// score returns member's score.
func (z *zset) score(m string) (float64, bool) {
	if z.isLP() {
		k := keyOfString(m)
		_, s, ok := zlpFind(z.bytes(), &k)
		return s, ok
	}
	if n := z.sk().dict.find(m); n != nil {
		return n.score, true
	}
	return 0, false
}

// rank returns member's 0-based rank.
func (z *zset) rank(m string) (int, bool) {
	if !z.isLP() {
		sk := z.sk()
		n := sk.dict.find(m)
		if n == nil {
			return 0, false
		}
		return sk.zsl.rank(n.score, n.member) - 1, true
	}
	b := z.bytes()
	k := keyOfString(m)
	for p, r := lpFirst, 0; !lpEnd(b, p); r++ {
		eq, q := lpIs(b, p, &k)
		if eq {
			return r, true
		}
		p = lpNext(b, q)
	}
	return 0, false
}

// add inserts member (absent) with score; member is copied. Past the
// limits lim the set becomes big (a skiplist in Redis).
func (z *zset) add(score float64, member []byte, lim *EncodingLimits) {
	if z.isLP() {
		n := z.len()
		switch {
		case int64(len(member)) > lim.ZsetMaxListpackValue || int64(n) >= lim.ZsetMaxListpackEntries:
			z.toSkip(true)
		case n >= zsetLPMax || zsetForceSkiplist:
			z.toSkip(false)
		default:
			z.lpInsert(score, bstr(member))
			return
		}
	}
	z.sk().add(score, member, lim)
}

// setScore gives member (present) the score s.
func (z *zset) setScore(m string, s float64) {
	if !z.isLP() {
		sk := z.sk()
		sk.zsl.updateScore(sk.dict.find(m), sk.norm(s))
		return
	}
	// delete and insert again, as zsetAdd does
	k := keyOfString(m)
	b := z.bytes()
	off, _, _ := zlpFind(b, &k)
	z.lpDeletePairs(off, lpSkipPairs(b, off, 1), 1)
	z.lpInsert(s, m)
}

// remove deletes member and reports whether it was there.
func (z *zset) remove(m string) bool {
	if !z.isLP() {
		return z.sk().remove(m)
	}
	k := keyOfString(m)
	b := z.bytes()
	off, _, ok := zlpFind(b, &k)
	if ok {
		z.lpDeletePairs(off, lpSkipPairs(b, off, 1), 1)
	}
	return ok
}

// countInRange is the number of members with a score in r.
func (z *zset) countInRange(r *scoreRange) int {
	if !z.isLP() {
		return z.sk().countInRange(r)
	}
	b := z.bytes()
	n := 0
	for p := lpFirst; !lpEnd(b, p); {
		s, next := zlpScore(b, lpNext(b, p))
		if r.gteMin(s) {
			if !r.lteMax(s) {
				break
			}
			n++
		}
		p = next
	}
	return n
}

// deleteRangeByScore removes the members in r and returns how many
// (zzlDeleteRangeByScore).
func (z *zset) deleteRangeByScore(r *scoreRange) int {
	if !z.isLP() {
		sk := z.sk()
		return sk.zsl.deleteRangeByScore(r, sk.delNode)
	}
	b := z.bytes()
	lo := lpFirst
	for !lpEnd(b, lo) {
		s, next := zlpScore(b, lpNext(b, lo))
		if r.gteMin(s) {
			break
		}
		lo = next
	}
	hi, n := lo, 0
	for !lpEnd(b, hi) {
		s, next := zlpScore(b, lpNext(b, hi))
		if !r.lteMax(s) {
			break
		}
		hi = next
		n++
	}
	z.lpDeletePairs(lo, hi, n)
	return n
}

// deleteRangeByRank removes the members of 1-based ranks start..end.
func (z *zset) deleteRangeByRank(start, end int) int {
	if !z.isLP() {
		sk := z.sk()
		return sk.zsl.deleteRangeByRank(start, end, sk.delNode)
	}
	b := z.bytes()
	lo := lpSkipPairs(b, lpFirst, start-1)
	n := min(end, z.len()) - (start - 1)
	if n <= 0 {
		return 0
	}
	z.lpDeletePairs(lo, lpSkipPairs(b, lo, n), n)
	return n
}

// deleteRangeByLex removes the members in r and returns how many
// (zzlDeleteRangeByLex: from the first member in the range, found by a
// walk, while members stay below its maximum).
func (z *zset) deleteRangeByLex(r *lexRange) int {
	if !z.isLP() {
		sk := z.sk()
		if sk.big {
			return sk.zsl.deleteRangeByLex(r, sk.delNode)
		}
		n := 0
		for x := sk.firstInLex(r); x != nil && r.lteMax(x.member); {
			next := x.lv(0).forward
			sk.remove(x.member)
			n++
			x = next
		}
		return n
	}
	b := z.bytes()
	var tmp [24]byte
	lo, found := z.firstInLex(r)
	if !found {
		return 0
	}
	hi, n := lo, 0
	for !lpEnd(b, hi) {
		mt, q := lpText(b, hi, tmp[:])
		if !r.lteMax(bstr(mt)) {
			break
		}
		hi = lpNext(b, q)
		n++
	}
	z.lpDeletePairs(lo, hi, n)
	return n
}

// firstInLex is the offset of the first member of a listpack set in r
// (zzlFirstInLexRange).
func (z *zset) firstInLex(r *lexRange) (int, bool) {
	b := z.bytes()
	var tmp [24]byte
	if lpEnd(b, lpFirst) {
		return 0, false
	}
	// the range must overlap [first, last] (zzlIsInLexRange)
	if r.empty() {
		return 0, false
	}
	last, _ := lpText(b, lpPrev(b, lpPrev(b, len(b)-1)), tmp[:])
	if !r.gteMin(bstr(last)) {
		return 0, false
	}
	first, _ := lpText(b, lpFirst, tmp[:])
	if !r.lteMax(bstr(first)) {
		return 0, false
	}
	for p := lpFirst; !lpEnd(b, p); {
		mt, q := lpText(b, p, tmp[:])
		if r.gteMin(bstr(mt)) {
			return p, r.lteMax(bstr(mt))
		}
		p = lpNext(b, q)
	}
	return 0, false
}

// edge is the first (or, max, last) member and its score; an integer
// member is written into tmp.
func (z *zset) edge(max bool, tmp []byte) (string, float64) {
	if !z.isLP() {
		sk := z.sk()
		x := sk.zsl.first()
		if max {
			x = sk.zsl.tail
		}
		return x.member, x.score
	}
	b := z.bytes()
	p := lpFirst
	if max {
		p = lpPrev(b, lpPrev(b, len(b)-1))
	}
	mt, q := lpText(b, p, tmp)
	s, _ := zlpScore(b, q)
	return bstr(mt), s
}

// popEdge removes the first (or, max, last) member.
func (z *zset) popEdge(max bool) {
	if !z.isLP() {
		sk := z.sk()
		x := sk.zsl.first()
		if max {
			x = sk.zsl.tail
		}
		sk.remove(x.member)
		return
	}
	b := z.bytes()
	if max {
		p := lpPrev(b, lpPrev(b, len(b)-1))
		z.lpDeletePairs(p, len(b)-1, 1)
		return
	}
	z.lpDeletePairs(lpFirst, lpSkipPairs(b, lpFirst, 1), 1)
}

// setBig makes the set one Redis holds as a skiplist (SORT's conversion).
func (z *zset) setBig() {
	if z.isLP() {
		z.toSkip(true)
		return
	}
	z.sk().big = true
}

// keyOfString is keyOf for a string argument.
func keyOfString(s string) elemKey {
	return keyOf(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// --- views: a listpack set read as a skiplist ----------------------------------------

// view returns z as a skiplist for reading: the set itself when it is
// one, else v filled with its members (v is the engine's scratch for a
// command's one view, or a fresh zskip where several sets are read at
// once). A view is valid until the set changes or v is reused; its
// members alias the listpack or v's text buffer, so whatever keeps one
// copies it.
func (z *zset) view(v *zskip) *zskip {
	if !z.isLP() {
		return z.sk()
	}
	b := z.bytes()
	n := z.len()
	if cap(v.slots) < n {
		v.slots = make([]zslNode1, n)
	}
	v.slots = v.slots[:n]
	if cap(v.txt) < 21*n {
		v.txt = make([]byte, 0, 21*n)
	}
	v.txt = v.txt[:0]
	v.view, v.big = true, false
	v.zsl.init()
	for i, p := 0, lpFirst; i < n; i++ {
		s, iv, isInt, q := lpDecode(b, p)
		var m string
		if isInt {
			st := len(v.txt)
			v.txt = appendInt(v.txt, iv)
			m = unsafe.String(&v.txt[st], len(v.txt)-st)
		} else {
			m = bstr(s)
		}
		score, next := zlpScore(b, q)
		v.slots[i] = zslNode1{n: zslNode{member: m, score: score}}
		p = next
	}
	v.link()
	return v
}

// link links the view's slots in order and sets the list's header, tail
// and length from them.
func (z *zskip) link() {
	n := len(z.slots)
	for i := range z.slots {
		x := &z.slots[i].n
		x.nlevel = 1
		if i > 0 {
			x.backward = &z.slots[i-1].n
		}
		if i < n-1 {
			z.slots[i].l[0] = zslLevel{forward: &z.slots[i+1].n, span: 1}
		}
	}
	h := z.zsl.header.lv(0)
	*h = zslLevel{}
	z.zsl.tail = nil
	if n > 0 {
		*h = zslLevel{forward: &z.slots[0].n, span: 1}
		z.zsl.tail = &z.slots[n-1].n
	}
	z.zsl.length = n
}

// slotOf returns the index of node x of a view.
func (z *zskip) slotOf(x *zslNode) int {
	return int((uintptr(unsafe.Pointer(x)) - uintptr(unsafe.Pointer(&z.slots[0]))) / unsafe.Sizeof(zslNode1{}))
}

// find returns member's node, nil when absent.
func (z *zskip) find(m string) *zslNode {
	if z.view {
		for i := range z.slots {
			if z.slots[i].n.member == m {
				return &z.slots[i].n
			}
		}
		return nil
	}
	return z.dict.find(m)
}

// rankOf is n's 1-based rank.
func (z *zskip) rankOf(n *zslNode) int {
	if z.view {
		return z.slotOf(n) + 1
	}
	return z.zsl.rank(n.score, n.member)
}

// byRank is the node of 1-based rank r, nil when out of range.
func (z *zskip) byRank(r int) *zslNode {
	if z.view {
		if r < 1 || r > len(z.slots) {
			return nil
		}
		return &z.slots[r-1].n
	}
	return z.zsl.byRank(r)
}

// countInRange is the number of members with a score in r.
func (z *zskip) countInRange(r *scoreRange) int {
	zsl := &z.zsl
	count := 0
	if n := zsl.firstInRange(r); n != nil {
		count = zsl.length - (z.rankOf(n) - 1)
		if n = zsl.lastInRange(r); n != nil {
			count -= zsl.length - z.rankOf(n)
		}
	}
	return count
}

// memberBytes is a member as an argument (for zskip.add).
func memberBytes(m string) []byte { return unsafe.Slice(unsafe.StringData(m), len(m)) }
