package engine

import (
	"math"
	"strings"
	"unsafe"
)

// Sorted-set commands over several keys or that store a result:
// ZUNION/ZINTER/ZDIFF(+STORE), ZINTERCARD, ZRANGESTORE, ZMPOP, and
// ZRANDMEMBER.

const (
	errWeightNotFloat = "ERR weight value is not a float"
	errOutOfRange     = "ERR value is out of range"
	errRandCountRange = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
)

func errAtLeastOneKey(cmd string) string {
	return "ERR at least 1 input key is needed for '" + cmd + "' command"
}

func init() {
	const g = "sorted-set"
	Register(
		&Command{Name: "zunionstore", Arity: -4, Flags: "write denyoom", FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "2.0.0", Summary: "Stores the union of multiple sorted sets in a key.", Run: cmdZUnionStore},
		&Command{Name: "zinterstore", Arity: -4, Flags: "write denyoom", FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "2.0.0", Summary: "Stores the intersect of multiple sorted sets in a key.", Run: cmdZInterStore},
		&Command{Name: "zdiffstore", Arity: -4, Flags: "write denyoom", FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "6.2.0", Summary: "Stores the difference of multiple sorted sets in a key.", Run: cmdZDiffStore},
		&Command{Name: "zunion", Arity: -3, Flags: "readonly", Group: g, Since: "6.2.0", Summary: "Returns the union of multiple sorted sets.", Run: cmdZUnion},
		&Command{Name: "zinter", Arity: -3, Flags: "readonly", Group: g, Since: "6.2.0", Summary: "Returns the intersect of multiple sorted sets.", Run: cmdZInter},
		&Command{Name: "zdiff", Arity: -3, Flags: "readonly", Group: g, Since: "6.2.0", Summary: "Returns the difference between multiple sorted sets.", Run: cmdZDiff},
		&Command{Name: "zintercard", Arity: -3, Flags: "readonly", Group: g, Since: "7.0.0", Summary: "Returns the number of members of the intersect of multiple sorted sets.", Run: cmdZInterCard},
		&Command{Name: "zrangestore", Arity: -5, Flags: "write denyoom", FirstKey: 1, LastKey: 2, Step: 1, Group: g, Since: "6.2.0", Summary: "Stores a range of members from sorted set in a key.", Run: cmdZRangeStore},
		&Command{Name: "zmpop", Arity: -4, Flags: "write noeffect", Group: g, Since: "7.0.0", Summary: "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.", Run: cmdZMPop},
		&Command{Name: "zrandmember", Arity: -2, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "6.2.0", Summary: "Returns one or more random members from a sorted set.", Run: cmdZRandMember},
	)
}

const (
	setOpUnion = iota
	setOpInter
	setOpDiff
)

const (
	aggSum = iota
	aggMin
	aggMax
)

// zsrc is one input of a set operation: a sorted set, a plain set
// (members with score 1) or nothing (missing key).
type zsrc struct {
	z      *zskip // a listpack set's own view
	set    *Set
	p      unsafe.Pointer // identity, to spot a key given twice
	weight float64
}

func (s *zsrc) card() int {
	if s.z != nil {
		return s.z.len()
	}
	if s.set != nil {
		return s.set.Len()
	}
	return 0
}

// each calls fn for every member with its score.
func (s *zsrc) each(fn func(m string, score float64)) {
	if s.z != nil {
		for x := s.z.zsl.first(); x != nil; x = x.lv(0).forward {
			fn(x.member, x.score)
		}
		return
	}
	if s.set != nil {
		for i, n := 0, s.set.Len(); i < n; i++ {
			fn(s.set.memberAt(i), 1)
		}
	}
}

func (s *zsrc) score(m string) (float64, bool) {
	if s.z != nil {
		if n := s.z.find(m); n != nil {
			return n.score, true
		}
		return 0, false
	}
	if s.set != nil && s.set.Has(m) {
		return 1, true
	}
	return 0, false
}

func aggregate(agg int, target *float64, v float64) {
	switch agg {
	case aggSum:
		*target += v
		if math.IsNaN(*target) {
			*target = 0
		}
	case aggMin:
		if v < *target {
			*target = v
		}
	case aggMax:
		if v > *target {
			*target = v
		}
	}
}

// zsetOpGeneric is ZUNION/ZINTER/ZDIFF, their STORE forms and ZINTERCARD.
// numkeysIdx is where numkeys is; dst is nil unless storing.
func zsetOpGeneric(c *Ctx, argv [][]byte, numkeysIdx int, dst []byte, op int, cardOnly bool) {
	setnum, ok := ParseIntB(argv[numkeysIdx])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	if setnum < 1 {
		c.W.Error(errAtLeastOneKey(c.Cmd.Name))
		return
	}
	if setnum > int64(len(argv)-(numkeysIdx+1)) {
		c.W.Error(ErrSyntax)
		return
	}
	src := make([]zsrc, setnum)
	j := numkeysIdx + 1
	for i := range src {
		// read lookups also for a store (Redis's lookupKeyRead: keyspace
		// hits and misses, keymiss events); the inputs are not changed
		e := c.lookupRead(argv[j])
		src[i].weight = 1
		if e != nil {
			switch {
			case e.kind == KindZSet:
				src[i].z = e.zset().view(new(zskip))
			case e.kind == KindSet:
				src[i].set = e.set()
			default:
				c.W.Error(ErrWrongType)
				return
			}
			src[i].p = e.p
		}
		j++
	}
	agg := aggSum
	withScores := false
	limit := int64(0)
	for j < len(argv) {
		remaining := len(argv) - j
		a := argv[j]
		switch {
		case op != setOpDiff && !cardOnly && remaining >= int(setnum)+1 && EqualFold(a, "weights"):
			j++
			for i := range src {
				w, ok := parseScore(argv[j])
				if !ok {
					c.W.Error(errWeightNotFloat)
					return
				}
				src[i].weight = w
				j++
			}
		case op != setOpDiff && !cardOnly && remaining >= 2 && EqualFold(a, "aggregate"):
			switch v := argv[j+1]; {
			case EqualFold(v, "sum"):
				agg = aggSum
			case EqualFold(v, "min"):
				agg = aggMin
			case EqualFold(v, "max"):
				agg = aggMax
			default:
				c.W.Error(ErrSyntax)
				return
			}
			j += 2
		case dst == nil && !cardOnly && EqualFold(a, "withscores"):
			withScores = true
			j++
		case cardOnly && remaining >= 2 && EqualFold(a, "limit"):
			l, ok := ParseIntB(argv[j+1])
			if !ok || l < 0 {
				c.W.Error(errLimitNegative)
				return
			}
			limit = l
			j += 2
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}
	// smallest first, as Redis (a stable sort keeps key order on ties)
	if op != setOpDiff {
		for i := 1; i < len(src); i++ {
			for k := i; k > 0 && src[k].card() < src[k-1].card(); k-- {
				src[k], src[k-1] = src[k-1], src[k]
			}
		}
	}
	res := newZskip()
	maxLen := 0
	add := func(m string, s float64) {
		res.insert(s, strings.Clone(m)) // m may alias a listpack
		maxLen = max(maxLen, len(m))
	}
	count := int64(0)
	switch op {
	case setOpUnion:
		for i := range src {
			w := src[i].weight
			src[i].each(func(m string, s float64) {
				v := w * s
				if math.IsNaN(v) {
					v = 0
				}
				if n := res.find(m); n != nil {
					ns := n.score
					aggregate(agg, &ns, v)
					if ns == n.score {
						n.score = ns // same place; keeps the sign of a zero
					} else {
						res.updateScore(n, ns)
					}
				} else {
					add(m, v)
				}
			})
		}
	case setOpInter:
		if src[0].card() == 0 {
			break
		}
		src[0].each(func(m string, s float64) {
			if cardOnly && limit > 0 && count >= limit {
				return
			}
			score := src[0].weight * s
			if math.IsNaN(score) {
				score = 0
			}
			for k := 1; k < len(src); k++ {
				v, ok := s, true
				if src[k].p != src[0].p {
					v, ok = src[k].score(m)
				}
				if !ok {
					return
				}
				aggregate(agg, &score, v*src[k].weight)
			}
			if cardOnly {
				count++
				return
			}
			add(m, score)
		})
	case setOpDiff:
		if src[0].card() == 0 {
			break
		}
		src[0].each(func(m string, s float64) {
			for k := 1; k < len(src); k++ {
				if _, ok := src[k].score(m); ok {
					return
				}
			}
			add(m, s)
		})
	}
	if cardOnly {
		c.W.Int(count)
		return
	}
	if dst == nil {
		emitRange(c, res.zsl.first(), res.len(), false, withScores)
		return
	}
	if int64(res.len()) > c.E.Enc.ZsetMaxListpackEntries || int64(maxLen) > c.E.Enc.ZsetMaxListpackValue {
		res.setBig()
	}
	c.storeZset(dst, res)
}

// storeZset replaces key with z (deleting it when z is empty), signals it,
// and replies z's length. A small result gets Redis's listpack score
// normalisation (-0 becomes 0).
func (c *Ctx) storeZset(key []byte, z *zskip) {
	old := c.lookupWrite(key)
	if z.len() == 0 {
		c.W.Int(0)
		if old != nil {
			c.DB.removeEntry(old)
			c.touched(key)
			c.notify(NotifyGeneric, "del", key)
		}
		return
	}
	e := c.overwrite(old, key)
	e.setZset(zsetOf(z))
	c.touched(key)
	c.W.Int(int64(z.len()))
	c.notify(NotifyZSet, c.Cmd.Name, key) // zunionstore, zinterstore, zdiffstore, zrangestore
}

// cmdZUnionStore: ZUNIONSTORE destination numkeys key [key …] [WEIGHTS w
// …] [AGGREGATE SUM|MIN|MAX] — stores the union (scores times weights,
// aggregated; NaN becomes 0) and replies its size; an empty result deletes
// destination. Errors: ErrNotInt (numkeys), "at least 1 input key…",
// ErrSyntax (numkeys beyond the arguments, bad option),
// "weight value is not a float", WRONGTYPE for an input that is neither a
// sorted set nor a set.
func cmdZUnionStore(c *Ctx, argv [][]byte) { zsetOpGeneric(c, argv, 2, argv[1], setOpUnion, false) }

// cmdZInterStore: ZINTERSTORE — as ZUNIONSTORE for the intersection.
func cmdZInterStore(c *Ctx, argv [][]byte) { zsetOpGeneric(c, argv, 2, argv[1], setOpInter, false) }

// cmdZDiffStore: ZDIFFSTORE destination numkeys key [key …] — members of
// the first set in none of the others, with their scores (no options).
func cmdZDiffStore(c *Ctx, argv [][]byte) { zsetOpGeneric(c, argv, 2, argv[1], setOpDiff, false) }

// cmdZUnion: ZUNION numkeys key [key …] [WEIGHTS …] [AGGREGATE …]
// [WITHSCORES] — the union as ZRANGE would reply it.
func cmdZUnion(c *Ctx, argv [][]byte) { zsetOpGeneric(c, argv, 1, nil, setOpUnion, false) }

// cmdZInter: ZINTER — as ZUNION for the intersection.
func cmdZInter(c *Ctx, argv [][]byte) { zsetOpGeneric(c, argv, 1, nil, setOpInter, false) }

// cmdZDiff: ZDIFF numkeys key [key …] [WITHSCORES].
func cmdZDiff(c *Ctx, argv [][]byte) { zsetOpGeneric(c, argv, 1, nil, setOpDiff, false) }

// cmdZInterCard: ZINTERCARD numkeys key [key …] [LIMIT limit] — the size
// of the intersection, counting stops at limit (0 = no limit). Errors as
// ZINTER, and "LIMIT can't be negative".
func cmdZInterCard(c *Ctx, argv [][]byte) { zsetOpGeneric(c, argv, 1, nil, setOpInter, true) }

// cmdZRangeStore: ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT
// offset count] — stores what ZRANGE would return and replies its size;
// an empty result deletes dst. Errors as ZRANGE (WITHSCORES is a syntax
// error here).
func cmdZRangeStore(c *Ctx, argv [][]byte) {
	// shift the arguments so ZRANGE's parser sees "zrange src min max …"
	zrangeGeneric(c, argv[1:], rangeAuto, false, argv[1])
}

// --- ZMPOP ------------------------------------------------------------------------------------

// cmdZMPop: ZMPOP numkeys key [key …] MIN|MAX [COUNT count] — pops from
// the first non-empty sorted set: [key, [[member, score], …]], or a null
// array when every key is missing. Errors: "numkeys should be greater than
// 0", ErrSyntax (numkeys beyond the arguments, bad MIN/MAX or options),
// "count should be greater than 0", WRONGTYPE on the first existing key of
// another type. Effect: ZPOPMIN|ZPOPMAX key <number popped>.
func cmdZMPop(c *Ctx, argv [][]byte) {
	keys, min, count, ok := c.parseMPop(argv, 1, true)
	if !ok {
		return
	}
	if !c.zpopFirst(keys, min, count) {
		c.W.NullArray()
	}
}

// --- ZRANDMEMBER ----------------------------------------------------------------------------

// cmdZRandMember: ZRANDMEMBER key [count [WITHSCORES]] — without count a
// random member (null for a missing key); a positive count gives distinct
// members (the whole set, highest score first, when count >= its size), a negative one |count|
// members that may repeat; WITHSCORES as ZRANGE. Randomness comes from the
// engine's generator, so the picks differ from Redis's. Errors: ErrNotInt,
// "value is out of range, value must between …" (LLONG_MIN), ErrSyntax,
// "value is out of range" (WITHSCORES with |count| > LLONG_MAX/2).
func cmdZRandMember(c *Ctx, argv [][]byte) {
	if len(argv) == 2 {
		_, zs, ok := c.lookupZset(argv[1], true)
		if !ok {
			return
		}
		if zs == nil {
			c.W.Null()
			return
		}
		z := c.zview(zs)
		x := z.byRank(1 + c.rng().Intn(z.len()))
		c.W.BulkString(x.member)
		return
	}
	l, ok := ParseIntB(argv[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	if l == math.MinInt64 {
		c.W.Error(errRandCountRange)
		return
	}
	withScores := false
	if len(argv) > 4 || (len(argv) == 4 && !EqualFold(argv[3], "withscores")) {
		c.W.Error(ErrSyntax)
		return
	} else if len(argv) == 4 {
		withScores = true
		if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
			c.W.Error(errOutOfRange)
			return
		}
	}
	_, zs, ok := c.lookupZset(argv[1], true)
	if !ok {
		return
	}
	if zs == nil || l == 0 {
		c.W.EmptyArray()
		return
	}
	z := c.zview(zs)
	size := z.len()
	emit := func(x *zslNode) {
		if withScores && c.W.Proto > 2 {
			c.W.Array(2)
		}
		c.W.BulkString(x.member)
		if withScores {
			c.W.Double(x.score)
		}
	}
	per := 1
	if withScores && c.W.Proto == 2 {
		per = 2
	}
	if l < 0 { // with repetitions
		if c.randCountTooLarge(l) {
			return
		}
		n := -l
		start := len(c.W.B)
		c.W.Array(int(n) * per)
		for ; n > 0; n-- {
			if n&1023 == 0 && c.randReplyTooLarge(start) {
				return
			}
			emit(z.byRank(1 + c.rng().Intn(size)))
		}
		return
	}
	if l >= int64(size) {
		c.W.Array(size * per)
		for x := z.zsl.tail; x != nil; x = x.backward { // Redis walks from the tail
			emit(x)
		}
		return
	}
	// distinct ranks: a partial Fisher-Yates over 1..size kept sparse
	n := int(l)
	swapped := make(map[int]int, n)
	c.W.Array(n * per)
	for i := 0; i < n; i++ {
		j := i + c.rng().Intn(size-i)
		vj, ok := swapped[j]
		if !ok {
			vj = j
		}
		vi, ok := swapped[i]
		if !ok {
			vi = i
		}
		swapped[j] = vi
		emit(z.byRank(vj + 1))
	}
}
