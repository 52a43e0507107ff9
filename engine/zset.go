package engine

import (
	"math"
	"strconv"
	"strings"
)

// Sorted sets: small ones as one listpack (zset_listpack.go), larger ones
// a member→node map for O(1) ZSCORE plus a skiplist with spans
// (zskiplist.go) ordered by (score, member bytes) for ranges and ranks.
// Nothing here reads the clock or iterates the map where order matters.

func init() {
	RegisterKind(KindZSet, KindOps{Clone: cloneZset})
	const g = "sorted-set"
	reg := func(name string, arity int, flags string, since, summary string, run func(*Ctx, [][]byte)) {
		Register(&Command{Name: name, Arity: arity, Flags: flags, FirstKey: 1, LastKey: 1, Step: 1,
			Group: g, Since: since, Summary: summary, Run: run})
	}
	reg("zadd", -4, "write denyoom fast", "1.2.0", "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.", cmdZAdd)
	reg("zincrby", 4, "write denyoom fast", "1.2.0", "Increments the score of a member in a sorted set.", cmdZIncrBy)
	reg("zrem", -3, "write fast", "1.2.0", "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.", cmdZRem)
	reg("zcard", 2, "readonly fast", "1.2.0", "Returns the number of members in a sorted set.", cmdZCard)
	reg("zcount", 4, "readonly fast", "2.0.0", "Returns the count of members in a sorted set that have scores within a range.", cmdZCount)
	reg("zlexcount", 4, "readonly fast", "2.8.9", "Returns the number of members in a sorted set within a lexicographical range.", cmdZLexCount)
	reg("zscore", 3, "readonly fast", "1.2.0", "Returns the score of a member in a sorted set.", cmdZScore)
	reg("zmscore", -3, "readonly fast", "6.2.0", "Returns the score of one or more members in a sorted set.", cmdZMScore)
	reg("zrank", 3, "readonly fast", "2.0.0", "Returns the index of a member in a sorted set ordered by ascending scores.", cmdZRank)
	reg("zrevrank", 3, "readonly fast", "2.0.0", "Returns the index of a member in a sorted set ordered by descending scores.", cmdZRevRank)
	reg("zrange", -4, "readonly", "1.2.0", "Returns members in a sorted set within a range of indexes.", cmdZRange)
	reg("zrevrange", -4, "readonly", "1.2.0", "Returns members in a sorted set within a range of indexes in reverse order.", cmdZRevRange)
	reg("zrangebyscore", -4, "readonly", "1.0.5", "Returns members in a sorted set within a range of scores.", cmdZRangeByScore)
	reg("zrevrangebyscore", -4, "readonly", "2.2.0", "Returns members in a sorted set within a range of scores in reverse order.", cmdZRevRangeByScore)
	reg("zrangebylex", -4, "readonly", "2.8.9", "Returns members in a sorted set within a lexicographical range.", cmdZRangeByLex)
	reg("zrevrangebylex", -4, "readonly", "2.8.9", "Returns members in a sorted set within a lexicographical range in reverse order.", cmdZRevRangeByLex)
	reg("zremrangebyscore", 4, "write", "1.2.0", "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed.", cmdZRemRangeByScore)
	reg("zremrangebyrank", 4, "write", "2.0.0", "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed.", cmdZRemRangeByRank)
	reg("zremrangebylex", 4, "write", "2.8.9", "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed.", cmdZRemRangeByLex)
	reg("zpopmin", -2, "write fast", "5.0.0", "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", cmdZPopMin)
	reg("zpopmax", -2, "write fast", "5.0.0", "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", cmdZPopMax)
	reg("zscan", -3, "readonly", "2.8.0", "Iterates over members and scores of a sorted set.", cmdZScan)
}

// zskip is a sorted set in the skiplist encoding (and a listpack set's
// read view, zset_listpack.go).
type zskip struct {
	dict zdict
	zsl  zskiplist
	// big: Redis would hold this set as a skiplist rather than a listpack
	// (it went over 128 members or got a member over 64 bytes; Redis
	// never converts back). A set only over zsetLPMax is a skiplist here
	// but not big.
	big bool
	// view: a listpack set's members decoded into slots (dict is empty)
	view  bool
	gen   uint32 // copy-on-write generation (cow.go)
	slots []zslNode1
	txt   []byte // a view's integer members as text
}

func newZskip() *zskip {
	z := &zskip{}
	z.zsl.init()
	return z
}

func (z *zskip) len() int { return z.zsl.length }

// add inserts member (absent) with score; member is copied. Past the
// limits lim the set becomes big (a skiplist in Redis).
func (z *zskip) add(score float64, member []byte, lim *EncodingLimits) {
	m := string(member)
	if int64(len(m)) > lim.ZsetMaxListpackValue || int64(z.zsl.length) >= lim.ZsetMaxListpackEntries {
		z.big = true
	}
	z.insert(z.norm(score), m)
}

// insert adds member m (absent, already copied) with score, without
// touching the encoding limits (callers set big themselves).
func (z *zskip) insert(score float64, m string) {
	z.dict.insert(z.zsl.insert(score, m))
}

// updateScore gives n (a node of z) the score s.
func (z *zskip) updateScore(n *zslNode, s float64) { z.zsl.updateScore(n, s) }

// setBig marks the set as one Redis would hold as a skiplist.
func (z *zskip) setBig() { z.big = true }

// norm turns -0 into 0 for a small set: Redis's listpack stores the score
// "-0" as the integer 0, so only a skiplist-encoded set keeps -0.
func (z *zskip) norm(score float64) float64 {
	if score == 0 && !z.big {
		return 0
	}
	return score
}

// remove deletes member and reports whether it was there.
func (z *zskip) remove(member string) bool {
	n := z.dict.remove(member)
	if n == nil {
		return false
	}
	z.zsl.delete(n.score, n.member)
	return true
}

func (z *zskip) delNode(n *zslNode) { z.dict.remove(n.member) }

// lookupZset returns the live sorted set at key (nil when missing); ok is
// false after WRONGTYPE was written.
func (c *Ctx) lookupZset(key []byte, read bool) (*entry, *zset, bool) {
	e, ok := c.lookupKind(key, KindZSet, read)
	if !ok || e == nil {
		return nil, nil, ok
	}
	return e, e.zset(), true
}

// zview is z as a skiplist for one reader: a listpack set is decoded into
// the engine's scratch view.
func (c *Ctx) zview(z *zset) *zskip { return z.view(&c.E.zv) }

// zsetDeleteIfEmpty removes key when its set became empty and reports
// whether it did. (z is overlaid on e's words, which the removal zeroes:
// its length then reads 0.)
func (c *Ctx) zsetDeleteIfEmpty(e *entry, z *zset) bool {
	if z.len() == 0 {
		c.DB.removeEntry(e)
		return true
	}
	return false
}

// --- parsing ---------------------------------------------------------------------

// strtod parses like C's strtod used by Redis's range parsing: leading
// white space allowed, the whole string must be consumed, "" is 0,
// overflow gives ±inf, NaN is refused.
func strtod(s string) (float64, bool) {
	if s == "" {
		return 0, true
	}
	t := s
	for len(t) > 0 && isSpaceByte(t[0]) {
		t = t[1:]
	}
	if t == "" || strings.IndexByte(t, '_') >= 0 {
		return 0, false
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true
		}
		u := strings.TrimLeft(t, "+-")
		if len(u) > 2 && u[0] == '0' && (u[1] == 'x' || u[1] == 'X') && strings.IndexAny(u, "pP") < 0 {
			f, err = strconv.ParseFloat(t+"p0", 64)
			if err == nil || err.(*strconv.NumError).Err == strconv.ErrRange {
				return f, true
			}
		}
		return 0, false
	}
	if math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// parseScore parses a ZADD/ZINCRBY score as Redis's getDoubleFromObject:
// strtod over the whole argument, no leading space, hex accepted, NaN and
// overflow (or underflow to zero) refused.
func parseScore(b []byte) (float64, bool) {
	s := bstr(b)
	if s == "" || isSpaceByte(s[0]) {
		return 0, false
	}
	f, ok := strtod(s)
	if !ok || math.IsInf(f, 0) && !isInfWord(s) {
		return 0, false
	}
	if f == 0 {
		// an underflow to zero is refused: accept only literal zeros
		for i := 0; i < len(s); i++ {
			if c := s[i]; c >= '1' && c <= '9' {
				if strings.IndexAny(s[:i], "eEpP") < 0 {
					return 0, false
				}
				break
			}
		}
	}
	return f, true
}

func isInfWord(s string) bool {
	s = strings.ToLower(strings.TrimLeft(s, "+-"))
	return s == "inf" || s == "infinity"
}

func parseRangeItem(b []byte) (v float64, ex, ok bool) {
	s := bstr(b)
	if len(s) > 0 && s[0] == '(' {
		v, ok = strtod(s[1:])
		return v, true, ok
	}
	v, ok = strtod(s)
	return v, false, ok
}

// parseScoreRange parses min and max; false means ErrMinMaxNotFloat.
func parseScoreRange(min, max []byte) (r scoreRange, ok bool) {
	if r.min, r.minEx, ok = parseRangeItem(min); !ok {
		return r, false
	}
	r.max, r.maxEx, ok = parseRangeItem(max)
	return r, ok
}

func parseLexItem(b []byte) (lb lexBound, ok bool) {
	if len(b) == 0 {
		return lb, false
	}
	switch b[0] {
	case '+':
		lb.inf = 1
		return lb, len(b) == 1
	case '-':
		lb.inf = -1
		return lb, len(b) == 1
	case '(':
		lb.ex = true
		lb.s = string(b[1:])
		return lb, true
	case '[':
		lb.s = string(b[1:])
		return lb, true
	}
	return lb, false
}

// parseLexRange parses min and max; false means ErrMinMaxNotString.
func parseLexRange(min, max []byte) (r lexRange, ok bool) {
	if r.min, ok = parseLexItem(min); !ok {
		return r, false
	}
	r.max, ok = parseLexItem(max)
	return r, ok
}

// --- ZADD / ZINCRBY ----------------------------------------------------------------

const (
	zaddNX = 1 << iota
	zaddXX
	zaddGT
	zaddLT
	zaddCH
	zaddIncr
)

// zaddGeneric is ZADD and ZINCRBY (flags preset to zaddIncr).
func zaddGeneric(c *Ctx, argv [][]byte, flags int) {
	i := 2
	for ; i < len(argv); i++ {
		a := argv[i]
		switch {
		case EqualFold(a, "nx"):
			flags |= zaddNX
		case EqualFold(a, "xx"):
			flags |= zaddXX
		case EqualFold(a, "gt"):
			flags |= zaddGT
		case EqualFold(a, "lt"):
			flags |= zaddLT
		case EqualFold(a, "ch"):
			flags |= zaddCH
		case EqualFold(a, "incr"):
			flags |= zaddIncr
		default:
			goto done
		}
	}
done:
	elems := len(argv) - i
	if elems%2 != 0 || elems == 0 {
		c.W.Error(ErrSyntax)
		return
	}
	elems /= 2
	nx, xx, gt, lt := flags&zaddNX != 0, flags&zaddXX != 0, flags&zaddGT != 0, flags&zaddLT != 0
	incr := flags&zaddIncr != 0
	if nx && xx {
		c.W.Error(ErrZAddXXNX)
		return
	}
	if (gt && nx) || (lt && nx) || (gt && lt) {
		c.W.Error(ErrZAddGTLTNX)
		return
	}
	if incr && elems > 1 {
		c.W.Error(ErrZAddIncrPair)
		return
	}
	// every score is checked before anything changes
	var few [16]float64
	scores := few[:0]
	if elems > len(few) {
		scores = make([]float64, 0, elems)
	}
	for j := 0; j < elems; j++ {
		f, ok := parseScore(argv[i+2*j])
		if !ok {
			c.W.Error(ErrNotFloat)
			return
		}
		scores = append(scores, f)
	}
	key := argv[1]
	e, z, ok := c.lookupZset(key, false)
	if !ok {
		return
	}
	if z == nil {
		if xx {
			if incr {
				c.W.Null()
			} else {
				c.W.Int(0)
			}
			return
		}
		e = c.create(key)
		e.setZset(zset{c.newLP()})
		z = e.zset()
		if int64(elems) > c.E.Enc.ZsetMaxListpackEntries {
			z.setBig()
		}
	}
	if elems > 1 && !xx && z.isLP() {
		z.reserveFor(argv[i:], scores, &c.E.Enc)
	}
	added, updated, processed := 0, 0, 0
	var score float64
	for j := 0; j < elems; j++ {
		s := scores[j]
		member := argv[i+2*j+1]
		if cur, found := z.score(bstr(member)); found {
			if nx {
				continue
			}
			if incr {
				s += cur
				if math.IsNaN(s) {
					c.W.Error(ErrZAddNaN)
					goto finish
				}
			}
			if (lt && s >= cur) || (gt && s <= cur) {
				continue
			}
			score = s
			processed++
			if s != cur {
				z.setScore(bstr(member), s)
				updated++
			}
		} else {
			if xx {
				continue
			}
			z.add(s, member, &c.E.Enc)
			score = s
			added++
			processed++
		}
	}
	if incr {
		if processed > 0 {
			c.W.Double(score)
		} else {
			c.W.Null()
		}
	} else if flags&zaddCH != 0 {
		c.W.Int(int64(added + updated))
	} else {
		c.W.Int(int64(added))
	}
finish:
	if added+updated > 0 {
		c.touched(key)
		if incr {
			c.notify(NotifyZSet, "zincr", key)
		} else {
			c.notify(NotifyZSet, "zadd", key)
		}
	}
	c.zsetDeleteIfEmpty(e, z)
}

// cmdZAdd: ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member …]
// — adds members or updates their scores. Reply: the number of members
// added (added+updated with CH); with INCR the new score (double), or nil
// when NX/XX/GT/LT prevented the update. Errors: ErrSyntax for an odd or
// empty score/member list, ErrZAddXXNX, ErrZAddGTLTNX, ErrZAddIncrPair,
// ErrNotFloat, ErrZAddNaN (INCR giving NaN), WRONGTYPE.
func cmdZAdd(c *Ctx, argv [][]byte) { zaddGeneric(c, argv, 0) }

// cmdZIncrBy: ZINCRBY key increment member — adds increment to member's
// score (0 when absent) and replies the new score. Errors: ErrNotFloat,
// ErrZAddNaN, WRONGTYPE.
func cmdZIncrBy(c *Ctx, argv [][]byte) { zaddGeneric(c, argv, zaddIncr) }

// cmdZRem: ZREM key member [member …] — removes members; replies how many
// existed. The key is deleted when the set becomes empty.
func cmdZRem(c *Ctx, argv [][]byte) {
	e, z, ok := c.lookupZset(argv[1], false)
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	n := 0
	for _, m := range argv[2:] {
		if z.remove(bstr(m)) {
			n++
			if z.len() == 0 {
				break
			}
		}
	}
	if n > 0 {
		c.touched(argv[1])
		c.zsetDeleteIfEmpty(e, z)
		c.notify(NotifyZSet, "zrem", argv[1])
		if z.len() == 0 {
			c.notify(NotifyGeneric, "del", argv[1])
		}
	}
	c.W.Int(int64(n))
}

// cmdZCard: ZCARD key — the number of members (0 for a missing key).
func cmdZCard(c *Ctx, argv [][]byte) {
	_, z, ok := c.lookupZset(argv[1], true)
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(z.len()))
}

// cmdZCount: ZCOUNT key min max — members with a score in [min, max]
// ("(" makes an end exclusive, -inf/+inf allowed). ErrMinMaxNotFloat is
// checked before the key's type.
func cmdZCount(c *Ctx, argv [][]byte) {
	r, ok := parseScoreRange(argv[2], argv[3])
	if !ok {
		c.W.Error(ErrMinMaxNotFloat)
		return
	}
	_, z, ok := c.lookupZset(argv[1], true)
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(z.countInRange(&r)))
}

// first/last in a lex range: listpack-sized sets walk linearly as Redis's
// listpack code does (the results only differ from the skiplist descent
// when members are not sorted, i.e. scores differ).
func (z *zskip) firstInLex(r *lexRange) *zslNode {
	if z.big {
		return z.zsl.firstInLexRange(r)
	}
	if !z.zsl.isInLexRange(r) {
		return nil
	}
	for x := z.zsl.first(); x != nil; x = x.lv(0).forward {
		if r.gteMin(x.member) {
			if r.lteMax(x.member) {
				return x
			}
			return nil
		}
	}
	return nil
}

func (z *zskip) lastInLex(r *lexRange) *zslNode {
	if z.big {
		return z.zsl.lastInLexRange(r)
	}
	if !z.zsl.isInLexRange(r) {
		return nil
	}
	for x := z.zsl.tail; x != nil; x = x.backward {
		if r.lteMax(x.member) {
			if r.gteMin(x.member) {
				return x
			}
			return nil
		}
	}
	return nil
}

// cmdZLexCount: ZLEXCOUNT key min max — members between two lex bounds
// ("[x" inclusive, "(x" exclusive, "-", "+"). ErrMinMaxNotString first.
func cmdZLexCount(c *Ctx, argv [][]byte) {
	r, ok := parseLexRange(argv[2], argv[3])
	if !ok {
		c.W.Error(ErrMinMaxNotString)
		return
	}
	_, zs, ok := c.lookupZset(argv[1], true)
	if !ok {
		return
	}
	if zs == nil {
		c.W.Int(0)
		return
	}
	z := c.zview(zs)
	count := 0
	if !z.big {
		for x := z.firstInLex(&r); x != nil && r.lteMax(x.member); x = x.lv(0).forward {
			count++
		}
	} else if n := z.zsl.firstInLexRange(&r); n != nil {
		zsl := &z.zsl
		rank := z.rankOf(n)
		count = zsl.length - (rank - 1)
		if n = zsl.lastInLexRange(&r); n != nil {
			rank = z.rankOf(n)
			count -= zsl.length - rank
		}
	}
	c.W.Int(int64(count))
}

// cmdZScore: ZSCORE key member — the score (double), nil when absent.
func cmdZScore(c *Ctx, argv [][]byte) {
	_, z, ok := c.lookupZset(argv[1], true)
	if !ok {
		return
	}
	if z != nil {
		if s, ok := z.score(bstr(argv[2])); ok {
			c.W.Double(s)
			return
		}
	}
	c.W.Null()
}

// cmdZMScore: ZMSCORE key member [member …] — an array of scores with nil
// for absent members (all nil for a missing key).
func cmdZMScore(c *Ctx, argv [][]byte) {
	_, z, ok := c.lookupZset(argv[1], true)
	if !ok {
		return
	}
	c.W.Array(len(argv) - 2)
	for _, m := range argv[2:] {
		if z != nil {
			if s, ok := z.score(bstr(m)); ok {
				c.W.Double(s)
				continue
			}
		}
		c.W.Null()
	}
}

func zrankGeneric(c *Ctx, argv [][]byte, rev bool) {
	_, z, ok := c.lookupZset(argv[1], true)
	if !ok {
		return
	}
	if z != nil {
		if r, ok := z.rank(bstr(argv[2])); ok {
			if rev {
				c.W.Int(int64(z.len() - 1 - r))
			} else {
				c.W.Int(int64(r))
			}
			return
		}
	}
	c.W.Null()
}

// cmdZRank: ZRANK key member — 0-based rank by ascending score, nil when
// absent.
func cmdZRank(c *Ctx, argv [][]byte) { zrankGeneric(c, argv, false) }

// cmdZRevRank: ZREVRANK key member — 0-based rank by descending score.
func cmdZRevRank(c *Ctx, argv [][]byte) { zrankGeneric(c, argv, true) }

// --- ZRANGE family --------------------------------------------------------------------

const (
	rangeAuto = iota
	rangeRank
	rangeScore
	rangeLex
)

// emitRange writes n nodes starting at x, walking forward or backward.
// With scores: flat member/score pairs in RESP2, [member, score] arrays in
// RESP3.
func emitRange(c *Ctx, x *zslNode, n int, rev, withScores bool) {
	nested := withScores && c.W.Proto > 2
	if withScores && !nested {
		c.W.Array(2 * n)
	} else {
		c.W.Array(n)
	}
	for ; n > 0 && x != nil; n-- {
		if nested {
			c.W.Array(2)
		}
		c.W.BulkString(x.member)
		if withScores {
			c.W.Double(x.score)
		}
		if rev {
			x = x.backward
		} else {
			x = x.lv(0).forward
		}
	}
}

// zrangeGeneric implements ZRANGE and its older forms; argv[1] is the key,
// argv[2], argv[3] the range, options follow. kind and rev are preset by
// the older forms (rangeAuto / false for ZRANGE).
//
// With dst set (ZRANGESTORE, argv shifted by one) the result is stored in
// dst instead of replied, and WITHSCORES is a syntax error.
func zrangeGeneric(c *Ctx, argv [][]byte, kind int, rev bool, dst []byte) {
	withScores := false
	offset, limit := int64(0), int64(-1)
	revOK := kind == rangeAuto // only ZRANGE takes REV
	for j := 4; j < len(argv); j++ {
		a := argv[j]
		left := len(argv) - j - 1
		switch {
		case dst == nil && EqualFold(a, "withscores"):
			withScores = true
		case EqualFold(a, "limit") && left >= 2:
			var ok1, ok2 bool
			offset, ok1 = ParseIntB(argv[j+1])
			if ok1 {
				limit, ok2 = ParseIntB(argv[j+2])
			}
			if !ok1 || !ok2 {
				c.W.Error(ErrNotInt)
				return
			}
			j += 2
		case revOK && !rev && EqualFold(a, "rev"):
			rev = true
		case kind == rangeAuto && EqualFold(a, "bylex"):
			kind = rangeLex
		case kind == rangeAuto && EqualFold(a, "byscore"):
			kind = rangeScore
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}
	if kind == rangeAuto {
		kind = rangeRank
	}
	if limit != -1 && kind == rangeRank {
		c.W.Error(ErrLimitWithoutBy)
		return
	}
	if withScores && kind == rangeLex {
		c.W.Error(ErrWithScoresByLex)
		return
	}
	minArg, maxArg := argv[2], argv[3]
	if rev && kind != rangeRank {
		minArg, maxArg = maxArg, minArg
	}
	var start, end int64
	var sr scoreRange
	var lr lexRange
	switch kind {
	case rangeRank:
		var ok1, ok2 bool
		start, ok1 = ParseIntB(minArg)
		if ok1 {
			end, ok2 = ParseIntB(maxArg)
		}
		if !ok1 || !ok2 {
			c.W.Error(ErrNotInt)
			return
		}
	case rangeScore:
		var ok bool
		if sr, ok = parseScoreRange(minArg, maxArg); !ok {
			c.W.Error(ErrMinMaxNotFloat)
			return
		}
	case rangeLex:
		var ok bool
		if lr, ok = parseLexRange(minArg, maxArg); !ok {
			c.W.Error(ErrMinMaxNotString)
			return
		}
	}
	_, zs, ok := c.lookupZset(argv[1], true)
	if !ok {
		return
	}
	out := func(x *zslNode, n int) {
		if dst == nil {
			emitRange(c, x, n, rev, withScores)
			return
		}
		res := newZskip()
		for ; n > 0 && x != nil; n-- {
			res.add(x.score, memberBytes(x.member), &c.E.Enc)
			if rev {
				x = x.backward
			} else {
				x = x.lv(0).forward
			}
		}
		c.storeZset(dst, res)
	}
	if zs == nil {
		out(nil, 0)
		return
	}
	z := c.zview(zs)
	zsl := &z.zsl
	length := int64(zsl.length)
	if kind == rangeRank {
		if start < 0 {
			start += length
		}
		if end < 0 {
			end += length
		}
		if start < 0 {
			start = 0
		}
		if start > end || start >= length {
			out(nil, 0)
			return
		}
		if end >= length {
			end = length - 1
		}
		n := int(end - start + 1)
		var x *zslNode
		if rev {
			x = z.byRank(int(length - start))
		} else {
			x = z.byRank(int(start + 1))
		}
		out(x, n)
		return
	}
	if offset < 0 || (offset > 0 && offset >= length) {
		out(nil, 0)
		return
	}
	var x *zslNode
	var in func(*zslNode) bool
	switch {
	case kind == rangeScore && !rev:
		x = zsl.firstInRange(&sr)
		in = func(n *zslNode) bool { return sr.lteMax(n.score) }
	case kind == rangeScore:
		x = zsl.lastInRange(&sr)
		in = func(n *zslNode) bool { return sr.gteMin(n.score) }
	case !rev:
		x = z.firstInLex(&lr)
		in = func(n *zslNode) bool { return lr.lteMax(n.member) }
	default:
		x = z.lastInLex(&lr)
		in = func(n *zslNode) bool { return lr.gteMin(n.member) }
	}
	step := func(n *zslNode) *zslNode {
		if rev {
			return n.backward
		}
		return n.lv(0).forward
	}
	for ; x != nil && offset > 0; offset-- {
		x = step(x)
	}
	n := 0
	for y := x; y != nil && (limit < 0 || int64(n) < limit) && in(y); y = step(y) {
		n++
	}
	out(x, n)
}

// cmdZRange: ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset
// count] [WITHSCORES] — members by index (default), score or lex range.
// Reply: array of members; WITHSCORES adds scores (flat pairs in RESP2,
// [member, score] arrays in RESP3). Errors: ErrNotInt (index or LIMIT),
// ErrMinMaxNotFloat, ErrMinMaxNotString, ErrSyntax, ErrLimitWithoutBy,
// ErrWithScoresByLex, WRONGTYPE.
func cmdZRange(c *Ctx, argv [][]byte) { zrangeGeneric(c, argv, rangeAuto, false, nil) }

// cmdZRevRange: ZREVRANGE key start stop [WITHSCORES] — ZRANGE … REV.
func cmdZRevRange(c *Ctx, argv [][]byte) { zrangeGeneric(c, argv, rangeRank, true, nil) }

// cmdZRangeByScore: ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset
// count] — ZRANGE … BYSCORE.
func cmdZRangeByScore(c *Ctx, argv [][]byte) { zrangeGeneric(c, argv, rangeScore, false, nil) }

// cmdZRevRangeByScore: ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT
// offset count] — ZRANGE … BYSCORE REV.
func cmdZRevRangeByScore(c *Ctx, argv [][]byte) { zrangeGeneric(c, argv, rangeScore, true, nil) }

// cmdZRangeByLex: ZRANGEBYLEX key min max [LIMIT offset count] — ZRANGE …
// BYLEX.
func cmdZRangeByLex(c *Ctx, argv [][]byte) { zrangeGeneric(c, argv, rangeLex, false, nil) }

// cmdZRevRangeByLex: ZREVRANGEBYLEX key max min [LIMIT offset count] —
// ZRANGE … BYLEX REV.
func cmdZRevRangeByLex(c *Ctx, argv [][]byte) { zrangeGeneric(c, argv, rangeLex, true, nil) }

// --- ZREMRANGEBY* ------------------------------------------------------------------------

// cmdZRemRangeByScore: ZREMRANGEBYSCORE key min max — removes the members
// in the score range, replies how many. ErrMinMaxNotFloat before WRONGTYPE.
func cmdZRemRangeByScore(c *Ctx, argv [][]byte) {
	r, ok := parseScoreRange(argv[2], argv[3])
	if !ok {
		c.W.Error(ErrMinMaxNotFloat)
		return
	}
	e, z, ok := c.lookupZset(argv[1], false)
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	n := z.deleteRangeByScore(&r)
	c.zremDone(argv[1], e, z, n)
}

func (c *Ctx) zremDone(key []byte, e *entry, z *zset, n int) {
	if n > 0 {
		c.touched(key)
		c.zsetDeleteIfEmpty(e, z)
		c.notify(NotifyZSet, c.Cmd.Name, key) // zremrangebyscore|rank|lex
		if z.len() == 0 {
			c.notify(NotifyGeneric, "del", key)
		}
	}
	c.W.Int(int64(n))
}

// cmdZRemRangeByRank: ZREMRANGEBYRANK key start stop — removes members by
// 0-based index range (negative from the end), replies how many.
// ErrNotInt before WRONGTYPE.
func cmdZRemRangeByRank(c *Ctx, argv [][]byte) {
	start, ok1 := ParseIntB(argv[2])
	end, ok2 := ParseIntB(argv[3])
	if !ok1 || !ok2 {
		c.W.Error(ErrNotInt)
		return
	}
	e, z, ok := c.lookupZset(argv[1], false)
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	length := int64(z.len())
	if start < 0 {
		start += length
	}
	if end < 0 {
		end += length
	}
	if start < 0 {
		start = 0
	}
	if start > end || start >= length {
		c.W.Int(0)
		return
	}
	if end >= length {
		end = length - 1
	}
	n := z.deleteRangeByRank(int(start+1), int(end+1))
	c.zremDone(argv[1], e, z, n)
}

// cmdZRemRangeByLex: ZREMRANGEBYLEX key min max — removes the members in
// the lex range, replies how many. ErrMinMaxNotString before WRONGTYPE.
func cmdZRemRangeByLex(c *Ctx, argv [][]byte) {
	r, ok := parseLexRange(argv[2], argv[3])
	if !ok {
		c.W.Error(ErrMinMaxNotString)
		return
	}
	e, z, ok := c.lookupZset(argv[1], false)
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	c.zremDone(argv[1], e, z, z.deleteRangeByLex(&r))
}

// --- ZPOPMIN / ZPOPMAX ------------------------------------------------------------------------

func zpopGeneric(c *Ctx, argv [][]byte, max bool) {
	if len(argv) > 3 {
		c.W.Error(ErrSyntax)
		return
	}
	count := int64(1)
	hasCount := len(argv) == 3
	if hasCount {
		var ok bool
		count, ok = ParseIntB(argv[2])
		if !ok || count < 0 {
			c.W.Error(ErrNotPositive)
			return
		}
	}
	e, z, ok := c.lookupZset(argv[1], false)
	if !ok {
		return
	}
	if z == nil || count == 0 {
		c.W.EmptyArray()
		return
	}
	n := int(min(count, int64(z.len())))
	nested := hasCount && c.W.Proto > 2
	if nested {
		c.W.Array(n)
	} else {
		c.W.Array(2 * n)
	}
	c.zpop(argv[1], z, n, max, nested)
	c.touched(argv[1])
	if c.zsetDeleteIfEmpty(e, z) {
		c.notify(NotifyGeneric, "del", argv[1])
	}
}

// zpop raises zpopmin / zpopmax on key (after the reply's array header,
// before its first element, as Redis does) and pops n members (zpopReply).
func (c *Ctx) zpop(key []byte, z *zset, n int, max, nested bool) {
	if n > 0 {
		c.notify(NotifyZSet, zpopEvent(max), key)
	}
	c.zpopReply(z, n, max, nested)
}

// zpopReply replies and removes the n first (max: last) members of z,
// each pair in an array of its own when nested.
func (c *Ctx) zpopReply(z *zset, n int, max, nested bool) {
	var tmp [24]byte
	for i := 0; i < n; i++ {
		m, s := z.edge(max, tmp[:])
		if nested {
			c.W.Array(2)
		}
		c.W.BulkString(m)
		c.W.Double(s)
		z.popEdge(max)
	}
}

// zpopFirst pops from the first existing sorted set of keys (count -1:
// one member, flat reply with the key; else ZMPOP's nested reply). It
// reports whether it answered (a pop or WRONGTYPE).
func (c *Ctx) zpopFirst(keys [][]byte, min bool, count int64) bool {
	for _, key := range keys {
		e, z, ok := c.lookupZset(key, false)
		if !ok {
			return true
		}
		if z != nil {
			c.zpopFrom(e, z, bstr(key), min, count, c.own)
			return true
		}
	}
	return false
}

// zpopFrom pops from the sorted set z at key in c.DB as Redis's
// genericZpopCommand with the key emitted: count -1 pops one member,
// [key, member, score]; else up to count, [key, [[member, score] …]]. The
// zpopmin|zpopmax event comes after the reply's header, del after the
// last member when the set was emptied (their order in a RESP3 client's
// own stream); dirty counts each member. The effect, ZPOPMIN|ZPOPMAX key
// [popped], goes through rec (c.own for the command's own rewrite,
// c.also for a served waiter). It reports whether the key was deleted.
func (c *Ctx) zpopFrom(e *entry, z *zset, key string, min bool, count int64, rec func(int) *Effects) bool {
	nested := count != -1
	n := 1
	if nested {
		n = int(minInt64(count, int64(z.len())))
		c.W.Array(2)
		c.W.BulkString(key)
		c.W.Array(n)
	} else {
		c.W.Array(3)
		c.W.BulkString(key)
	}
	if n > 0 {
		c.notifyKey(c.DB, NotifyZSet, zpopEvent(!min), key)
	}
	c.zpopReply(z, n, !min, nested)
	c.signal(c.DB, key)
	c.E.Stats.Dirty += int64(n) - 1
	if nested {
		if f := rec(3); f != nil {
			f.argStr(zpopName(min))
			f.argStr(key)
			f.argInt(int64(n))
		}
	} else if f := rec(2); f != nil {
		f.argStr(zpopName(min))
		f.argStr(key)
	}
	if z.len() == 0 {
		c.DB.removeEntry(e)
		c.notifyKey(c.DB, NotifyGeneric, "del", key)
		return true
	}
	return false
}

func minInt64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}

func zpopEvent(max bool) string {
	if max {
		return "zpopmax"
	}
	return "zpopmin"
}

// cmdZPopMin: ZPOPMIN key [count] — removes and returns the count (default
// 1) lowest members with their scores: a flat member/score array, except
// in RESP3 with an explicit count, where each pair is a [member, score]
// array. A missing key or count 0 gives an empty array. Errors:
// ErrNotPositive for a negative or non-integer count, ErrSyntax for extra
// arguments, WRONGTYPE.
func cmdZPopMin(c *Ctx, argv [][]byte) { zpopGeneric(c, argv, false) }

// cmdZPopMax: ZPOPMAX key [count] — as ZPOPMIN, highest scores first.
func cmdZPopMax(c *Ctx, argv [][]byte) { zpopGeneric(c, argv, true) }

// --- ZSCAN ------------------------------------------------------------------------------------------

// cmdZScan: ZSCAN key cursor [MATCH pattern] [COUNT count] — iterates
// members and scores: [next cursor, [member, score, …]], scores as bulk
// strings in both protocols. A set Redis would keep as a listpack (at most
// 128 members of at most 64 bytes) is returned whole, in order, with
// cursor 0, as Redis does; a larger one is scanned by member-hash bucket
// with a reverse-binary cursor (Redis's guarantees, another order). Errors: ErrInvalidCursor, ErrNotInt or
// ErrSyntax for COUNT < 1, ErrSyntax for unknown options, WRONGTYPE.
func cmdZScan(c *Ctx, argv [][]byte) {
	cursor, ok := parseScanCursor(argv[2])
	if !ok {
		c.W.Error(ErrInvalidCursor)
		return
	}
	_, zs, ok := c.lookupZset(argv[1], true)
	if !ok {
		return
	}
	if zs == nil {
		c.W.Array(2)
		c.W.BulkString("0")
		c.W.EmptyArray()
		return
	}
	z := c.zview(zs)
	o, ok := c.parseScanOpts(argv, 3, false)
	if !ok {
		return
	}
	pat, usePat, count := o.pat, o.usePat, o.count

	if z.big {
		zscanBig(c, z, cursor, count, pat, usePat)
		return
	}
	n := z.len()
	if usePat {
		n = 0
		for x := z.zsl.first(); x != nil; x = x.lv(0).forward {
			if Match(pat, x.member, false) {
				n++
			}
		}
	}
	c.W.Array(2)
	c.W.BulkString("0")
	c.W.Array(2 * n)
	var buf [32]byte
	for x := z.zsl.first(); x != nil; x = x.lv(0).forward {
		if usePat && !Match(pat, x.member, false) {
			continue
		}
		c.W.BulkString(x.member)
		c.W.Bulk(appendScore(buf[:0], x.score))
	}
}

// zscanBig is ZSCAN of a set Redis would hold as a skiplist: the member
// table's buckets from cursor on, as Redis's dictScan, until count
// members were collected (at most 10*count buckets).
func zscanBig(c *Ctx, z *zskip, cursor uint64, count int64, pat string, usePat bool) {
	var found []*zslNode
	maxIter := count * 10
	for {
		cursor = z.dict.scan(cursor, func(n *zslNode) { found = append(found, n) })
		maxIter--
		if cursor == 0 || maxIter <= 0 || int64(len(found)) >= count {
			break
		}
	}
	if usePat { // filtered after collecting, as Redis does
		kept := found[:0]
		for _, n := range found {
			if Match(pat, n.member, false) {
				kept = append(kept, n)
			}
		}
		found = kept
	}
	var buf [32]byte
	c.W.Array(2)
	c.W.Bulk(strconv.AppendUint(buf[:0], cursor, 10))
	c.W.Array(2 * len(found))
	for _, n := range found {
		c.W.BulkString(n.member)
		c.W.Bulk(appendScore(buf[:0], n.score))
	}
}

// appendScore formats a score as Redis's d2string (ZSCAN's score text).
func appendScore(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case f == 0:
		if math.Signbit(f) {
			return append(b, "-0"...)
		}
		return append(b, '0')
	}
	return strconv.AppendFloat(b, f, 'g', 17, 64)
}
