package engine

import (
	"bytes"
	"math"
	"math/big"
	"strings"
	"unsafe"
)

// SORT and SORT_RO, as Redis 7.0.15's sort.c: the option parser, the
// vector of elements to sort (with the shortcuts that decide the order
// of unsorted results), the BY/GET pattern lookups, the comparison and
// the two sort algorithms whose treatment of ties shows in replies.

// SORT's error texts.
const (
	errSortScores = "ERR One or more scores can't be converted into double"
	errSortByACL  = "ERR BY option of SORT denied due to insufficient ACL permissions."
	errSortGetACL = "ERR GET option of SORT denied due to insufficient ACL permissions."
	// in cluster mode (EnableSlots), Redis 7.0's refusals: the pattern's
	// keys may live in any slot
	errSortByCluster  = "ERR BY option of SORT denied in Cluster mode."
	errSortGetCluster = "ERR GET option of SORT denied in Cluster mode."
)

func init() {
	Register(
		&Command{Name: "sort", Arity: -2, Flags: "write denyoom", FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "1.0.0", Summary: "Sort the elements in a list, set or sorted set", Run: cmdSort, GetKeys: sortGetKeys},
		&Command{Name: "sort_ro", Arity: -2, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "7.0.0", Summary: "Sort the elements in a list, set or sorted set. Read-only variant of SORT.", Run: cmdSortRO, GetKeys: sortROGetKeys},
	)
}

// sortGetKeys is Redis's sortGetKeys: the sorted key, and the argument
// after the last STORE (LIMIT, GET and BY skip their arguments, anything
// else is taken for a flag). BY/GET patterns are not keys here: ACL
// checks them as a whole (UnrestrictedKeyAccess).
func sortGetKeys(argv [][]byte, dst *[2]KeyRef) int {
	dst[0] = KeyRef{1, KeyRO | KeyAccess}
	n := 1
	for i := 2; i < len(argv); i++ {
		switch a := cbytes(argv[i]); { // strcasecmp: up to a NUL
		case EqualFold(a, "limit"):
			i += 2
		case EqualFold(a, "get"), EqualFold(a, "by"):
			i++
		case EqualFold(a, "store") && i+1 < len(argv):
			// the word after STORE is not skipped: "STORE STORE k" stores in k
			dst[1] = KeyRef{i + 1, KeyOW | KeyUpdate}
			n = 2
		}
	}
	return n
}

// sortROGetKeys: SORT_RO has no STORE, its only key is the sorted one.
func sortROGetKeys(argv [][]byte, dst *[2]KeyRef) int {
	dst[0] = KeyRef{1, KeyRO | KeyAccess}
	return 1
}

// cmdSort: SORT key [BY pattern] [LIMIT offset count] [GET pattern …]
// [ASC|DESC] [ALPHA] [STORE destination]. Reply: the sorted elements (or
// their GET values, null for a missing one), or with STORE the length of
// the list stored. See commands.md.
func cmdSort(c *Ctx, argv [][]byte) { c.sortGeneric(argv, false) }

// cmdSortRO: SORT_RO, SORT without STORE (a syntax error there).
func cmdSortRO(c *Ctx, argv [][]byte) { c.sortGeneric(argv, true) }

// sortItem is one element of the vector to sort (Redis's
// redisSortObject).
type sortItem struct {
	obj lelem // the element
	// key is what ALPHA compares: the element or its BY value, cut at
	// the first NUL unless STORE (strcoll sees C strings, STORE's binary
	// comparison the whole value)
	key   string
	score float64 // numeric: the element's value or its BY value's
	null  bool    // ALPHA BY: the BY key or field is missing (sorts first)
}

// sortScratch is what SORT reuses between calls (Engine.sort): the
// vector, the merge buffer, the pattern key and the digits of integer
// elements compared as strings.
type sortScratch struct {
	items, tmp []sortItem
	gets       [][]byte
	key        []byte
	arena      []byte
}

// sortMaxKeep bounds the vectors SORT keeps for the next call.
const sortMaxKeep = 4096

// str returns v as a string; an integer's digits go to the arena, which
// stays valid for the command (a full arena is replaced, not reused).
func (s *sortScratch) str(v lelem) string {
	if v.p != nil {
		return unsafe.String((*byte)(v.p), int(v.n))
	}
	if cap(s.arena)-len(s.arena) < 20 {
		s.arena = make([]byte, 0, max(4096, 2*cap(s.arena)))
	}
	n := len(s.arena)
	s.arena = appendInt(s.arena, v.n)
	return unsafe.String(&s.arena[n], len(s.arena)-n)
}

// release drops what the vector references (deleted values must not stay
// reachable) and oversized buffers.
func (s *sortScratch) release() {
	clear(s.items)
	clear(s.tmp)
	clear(s.gets)
	if cap(s.items) > sortMaxKeep {
		s.items, s.tmp = nil, nil
	}
	s.items, s.tmp, s.gets = s.items[:0], s.tmp[:0], s.gets[:0]
	if cap(s.arena) > 16*sortMaxKeep {
		s.arena = nil
	}
	if cap(s.key) > 16*sortMaxKeep {
		s.key = nil
	}
	s.arena = s.arena[:0]
}

// strElem views s as an element (no copy, never stored as is).
func strElem(s string) lelem {
	if len(s) == 0 {
		return lelem{p: unsafe.Pointer(&emptyElem)}
	}
	return lelem{p: unsafe.Pointer(unsafe.StringData(s)), n: int64(len(s))}
}

// cstr is s as C's string functions see it: up to the first NUL.
func cstr(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// cbytes is cstr for a []byte.
func cbytes(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

func (c *Ctx) sortGeneric(argv [][]byte, readonly bool) {
	var (
		desc, alpha, dontsort  bool
		limitStart, limitCount int64 = 0, -1
		by, store              []byte
		hasBy, hasStore        bool
		access                 int8 // UnrestrictedKeyAccess: 0 not asked yet, 1 yes, -1 no
	)
	s := &c.E.sort
	defer s.release()
	// Redis asks the ACL before parsing; asked on first need here, the
	// answer is the same
	fullAccess := func() bool {
		if access == 0 {
			access = -1
			if c.ACL == nil || c.ACL.UnrestrictedKeyAccess(c.Cmd, argv) {
				access = 1
			}
		}
		return access > 0
	}
	gets := s.gets[:0]
	for j := 2; j < len(argv); j++ {
		// options compare as C strings (strcasecmp): "desc\0x" is DESC
		a, left := cbytes(argv[j]), len(argv)-j-1
		switch {
		case EqualFold(a, "asc"):
			desc = false
		case EqualFold(a, "desc"):
			desc = true
		case EqualFold(a, "alpha"):
			alpha = true
		case EqualFold(a, "limit") && left >= 2:
			var ok bool
			if limitStart, ok = ParseIntB(argv[j+1]); !ok {
				c.W.Error(ErrNotInt)
				return
			}
			if limitCount, ok = ParseIntB(argv[j+2]); !ok {
				c.W.Error(ErrNotInt)
				return
			}
			j += 2
		case !readonly && EqualFold(a, "store") && left >= 1:
			store, hasStore = argv[j+1], true
			j++
		case EqualFold(a, "by") && left >= 1:
			by, hasBy = argv[j+1], true
			// a pattern without '*' names no key per element: nothing
			// to sort by (and, once seen, never sorted: Redis's
			// dontsort stays set whatever BY comes later)
			if bytes.IndexByte(cbytes(by), '*') < 0 {
				dontsort = true
			} else if c.E.SlotsEnabled() {
				// the pattern's keys may be in any slot, another
				// group's (Redis's sortCommandGeneric)
				c.W.Error(errSortByCluster)
				return
			} else if !fullAccess() {
				c.W.Error(errSortByACL)
				return
			}
			j++
		case EqualFold(a, "get") && left >= 1:
			if c.E.SlotsEnabled() {
				c.W.Error(errSortGetCluster)
				return
			}
			if !fullAccess() {
				c.W.Error(errSortGetACL)
				return
			}
			gets = append(gets, argv[j+1])
			s.gets = gets // so that release drops the argv it references
			j++
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}

	e := c.lookupRead(argv[1])
	kind := KindList // a missing key sorts as an empty list
	if e != nil {
		kind = e.kind
		if kind != KindList && kind != KindSet && kind != KindZSet {
			c.W.Error(ErrWrongType)
			return
		}
	}
	// An unsorted set would come out in hash-table order, which replicas
	// and scripts must not see: STORE and scripts sort it (ALPHA).
	if dontsort && kind == KindSet && (hasStore || c.InScript) {
		dontsort, alpha, hasBy = false, true, false
	}
	var z *zskip
	if kind == KindZSet {
		z = c.sortZset(e)
	}
	var vlen int64
	switch {
	case e == nil:
	case kind == KindList:
		vlen = int64(e.list().Len())
	case kind == KindSet:
		vlen = int64(e.set().Len())
	default:
		vlen = int64(z.len())
	}

	// LIMIT, clamped to the vector as Redis does
	start := min(max(limitStart, 0), vlen)
	limitCount = min(max(limitCount, -1), vlen)
	end := vlen - 1
	if limitCount >= 0 {
		end = start + limitCount - 1
	}
	if start >= vlen {
		start, end = vlen-1, vlen-2
	}
	if end >= vlen {
		end = vlen - 1
	}
	// unsorted lists and sorted sets load only the range asked for
	if kind != KindSet && dontsort && (start != 0 || end != vlen-1) {
		vlen = end - start + 1
	}

	items := s.items[:0]
	if int64(cap(items)) < vlen {
		items = make([]sortItem, 0, vlen)
	}
	switch {
	case e == nil:
	case kind == KindList && dontsort:
		// the list's own order (reversed by DESC), from start
		if end >= start {
			l := e.list()
			i, step := start, int64(1)
			if desc {
				i, step = int64(l.Len())-start-1, -1
			}
			if i >= 0 && i < int64(l.Len()) {
				it := l.iter(int(i), desc)
				for ; int64(len(items)) < vlen && i >= 0 && i < int64(l.Len()); i += step {
					items = append(items, sortItem{obj: it.next()})
				}
			}
			end -= start
			start = 0
		}
	case kind == KindList:
		l := e.list()
		it := l.iter(0, false)
		for i := 0; i < l.Len(); i++ {
			items = append(items, sortItem{obj: it.next()})
		}
	case kind == KindSet:
		st := e.set()
		if st.ht {
			for _, m := range st.members {
				items = append(items, sortItem{obj: strElem(m)})
			}
		} else {
			for _, n := range st.ints {
				items = append(items, sortItem{obj: lelem{n: n}})
			}
		}
	case dontsort:
		// the sorted set's order (reversed by DESC), from start
		var x *zslNode
		if desc {
			x = z.zsl.tail
			if start > 0 {
				x = z.byRank(z.len() - int(start))
			}
		} else {
			x = z.zsl.first()
			if start > 0 {
				x = z.byRank(int(start) + 1)
			}
		}
		for n := vlen; n > 0 && x != nil; n-- {
			items = append(items, sortItem{obj: strElem(x.member)})
			if desc {
				x = x.backward
			} else {
				x = x.lv(0).forward
			}
		}
		end -= start
		start = 0
	default:
		// Redis walks the member dict (hash-table order); the skiplist's
		// order differs only where ALPHA BY values tie
		for x := z.zsl.first(); x != nil; x = x.lv(0).forward {
			items = append(items, sortItem{obj: strElem(x.member)})
		}
	}
	s.items = items

	badScore := false
	if !dontsort {
		for j := range items {
			it := &items[j]
			v := it.obj
			if hasBy {
				var found bool
				if v, found = c.sortLookup(by, it.obj); !found {
					it.null = alpha
					continue
				}
			}
			switch {
			case alpha:
				it.key = s.str(v)
				if !hasStore {
					it.key = cstr(it.key)
				}
			case v.p == nil:
				it.score = float64(v.n)
			default:
				f, ok := sortStrtod(unsafe.String((*byte)(v.p), int(v.n)))
				it.score = f
				badScore = badScore || !ok
			}
		}
		if !badScore {
			o := &sortOrder{alpha: alpha, byPattern: hasBy, sign: 1}
			if desc {
				o.sign = -1
			}
			if hasBy && (start != 0 || end != int64(len(items))-1) {
				// BY with LIMIT: Redis's partial quicksort, whose order
				// of ties is its own
				pqsort(items, o, int(start), int(end))
			} else {
				// glibc's qsort is a stable merge sort
				s.tmp = mergeSort(items, s.tmp, o)
			}
		}
	}

	outLen := end - start + 1
	if len(gets) > 0 {
		outLen *= int64(len(gets))
	}
	switch {
	case badScore:
		c.W.Error(errSortScores)
	case !hasStore:
		c.W.Array(int(outLen))
		for j := start; j <= end; j++ {
			if len(gets) == 0 {
				items[j].obj.write(c.W)
			}
			for _, g := range gets {
				if v, ok := c.sortLookup(g, items[j].obj); ok {
					v.write(c.W)
				} else {
					c.W.Null()
				}
			}
		}
	case outLen == 0:
		c.sortStore(store, nil, nil, 0)
	default:
		c.sortStore(store, items[start:end+1], gets, int(outLen))
	}
}

// sortZset returns the sorted set of e after Redis's "destructive"
// conversion: SORT turns a listpack sorted set into a skiplist (OBJECT
// ENCODING shows it), even SORT_RO, which replicas never see.
func (c *Ctx) sortZset(e *entry) *zskip {
	if !e.zset().big() {
		if c.E.cow.active.Load() != 0 {
			c.E.cowEntry(e) // a capture may share it
		}
		e.zset().setBig()
	}
	return e.zset().sk()
}

// sortStore makes the result (the elements, or their GET values with ""
// for a missing one) the list at dst, replacing any value and its TTL,
// or deletes dst when the result is empty, and replies its length.
func (c *Ctx) sortStore(dst []byte, items []sortItem, gets [][]byte, n int) {
	if n == 0 {
		// Redis's dbDelete: an expired dst is deleted as a change too
		if e := c.DB.dict.find(bstr(dst)); e != nil {
			c.DB.removeEntry(e)
			c.touched(dst)
			c.notify(NotifyGeneric, "del", dst)
		}
		c.W.Int(0)
		return
	}
	l := &listRing{buf: make([]lelem, 0, n)}
	add := func(v lelem) {
		if v.p != nil {
			// The bytes are copied: a hash value may be a listpack's,
			// which changes in place. elemOfString makes an integer
			// inline, as every list element holding one must be.
			v = elemOfString(strings.Clone(unsafe.String((*byte)(v.p), int(v.n))))
		}
		l.buf = append(l.buf, v)
	}
	for i := range items {
		if len(gets) == 0 {
			add(items[i].obj)
		}
		for _, g := range gets {
			v, ok := c.sortLookup(g, items[i].obj)
			if !ok {
				v = lelem{p: unsafe.Pointer(&emptyElem)}
			}
			add(v)
		}
	}
	l.n = len(l.buf)
	e := c.overwrite(c.lookupWrite(dst), dst) // Redis's setKey: "new" only for a new key
	e.setList(listOfRing(l))
	c.touched(dst)
	c.E.Stats.Dirty += int64(n) - 1 // Redis counts one change per element
	c.notify(NotifyList, "sortstore", dst)
	c.W.Int(int64(n))
}

// sortLookup is Redis's lookupKeyByPattern: "#" is the element itself;
// otherwise the first '*' of the pattern is replaced by the element and
// the key read: a string's value, or with "->field" after the '*' that
// field of a hash. ok is false for a pattern without '*', a missing key
// or field, or a key of another type. The searches stop at a NUL, as
// Redis's strchr/strstr do.
func (c *Ctx) sortLookup(pat []byte, elem lelem) (v lelem, ok bool) {
	cs := cbytes(pat)
	if len(cs) == 1 && cs[0] == '#' {
		return elem, true
	}
	star := bytes.IndexByte(cs, '*')
	if star < 0 {
		return lelem{}, false
	}
	postEnd, field := len(pat), []byte(nil)
	if f := bytes.Index(cs[star+1:], []byte("->")); f >= 0 {
		// "->" ending the pattern is part of the key name
		if f += star + 1; f+2 < len(cs) {
			postEnd, field = f, pat[f+2:]
		}
	}
	s := &c.E.sort
	k := append(s.key[:0], pat[:star]...)
	if elem.p == nil {
		k = appendInt(k, elem.n)
	} else {
		k = append(k, unsafe.String((*byte)(elem.p), int(elem.n))...)
	}
	k = append(k, pat[star+1:postEnd]...)
	s.key = k
	e := c.lookupRead(k)
	switch {
	case e == nil:
		return lelem{}, false
	case field != nil:
		if e.kind != KindHash {
			return lelem{}, false
		}
		return e.hash().Get(bstr(field))
	case e.kind != KindString:
		return lelem{}, false
	case e.enc == encInt:
		return lelem{n: e.n}, true
	default:
		return strElem(e.str()), true
	}
}

// sortOrder is Redis's sortCompare for the options given. Numeric: by
// score, ties by the elements' bytes (so the result is deterministic).
// ALPHA: the keys' bytes (a missing BY value first). DESC negates. A
// struct with a method rather than a closure, so the sorts inline it.
type sortOrder struct {
	alpha, byPattern bool
	sign             int // -1 for DESC
}

func (o *sortOrder) cmp(a, b *sortItem) int {
	if !o.alpha {
		if a.score > b.score {
			return o.sign
		}
		if a.score < b.score {
			return -o.sign
		}
		return o.sign * cmpElems(a.obj, b.obj)
	}
	if o.byPattern && (a.null || b.null) {
		if a.null == b.null {
			return 0
		}
		if a.null {
			return -o.sign
		}
		return o.sign
	}
	return o.sign * strings.Compare(a.key, b.key)
}

// cmpElems compares two elements' bytes (integers as their digits).
func cmpElems(a, b lelem) int {
	var ta, tb [24]byte
	as, bs := a.bytes(ta[:0]), b.bytes(tb[:0])
	return bytes.Compare(as, bs)
}

// bytes returns the element's bytes, an integer's digits appended to tmp.
func (x lelem) bytes(tmp []byte) []byte {
	if x.p == nil {
		return appendInt(tmp, x.n)
	}
	return unsafe.Slice((*byte)(x.p), int(x.n))
}

// sortStrtod is how SORT reads a score: C's strtod on the value as a C
// string (up to a NUL), all of which must be read, refused on NaN and on
// ERANGE, which glibc raises for an overflow and for an inexact result
// below the normal range (1e-310, 1e-400 are errors; "inf" is not).
func sortStrtod(s string) (float64, bool) {
	s = cstr(s)
	f, ok := strtod(s)
	if !ok {
		return 0, false
	}
	t := s
	for len(t) > 0 && isSpaceByte(t[0]) {
		t = t[1:]
	}
	switch {
	case math.IsInf(f, 0):
		return f, isInfWord(t)
	case f == 0:
		return 0, !nonzeroMantissa(t)
	case math.Abs(f) < 0x1p-1022:
		b, _, err := big.ParseFloat(t, 0, 2200, big.ToNearestEven)
		return f, err == nil && b.Cmp(big.NewFloat(f)) == 0
	}
	return f, true
}

// nonzeroMantissa reports whether the number t (sign, digits, exponent)
// has a nonzero digit before its exponent: a zero result is then an
// underflow.
func nonzeroMantissa(t string) bool {
	t = strings.TrimLeft(t, "+-")
	hex := len(t) > 1 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')
	if hex {
		t = t[2:]
	}
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c >= '1' && c <= '9':
			return true
		case hex && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'):
			return true
		case !hex && (c == 'e' || c == 'E'), hex && (c == 'p' || c == 'P'):
			return false
		}
	}
	return false
}

// mergeSort sorts v stably with o (what glibc's qsort, a merge sort,
// gives), using tmp as the buffer; it returns the buffer for reuse.
func mergeSort(v, tmp []sortItem, o *sortOrder) []sortItem {
	const run = 12
	n := len(v)
	for lo := 0; lo < n; lo += run {
		hi := min(lo+run, n)
		for i := lo + 1; i < hi; i++ {
			for j := i; j > lo && o.cmp(&v[j-1], &v[j]) > 0; j-- {
				v[j], v[j-1] = v[j-1], v[j]
			}
		}
	}
	if n <= run {
		return tmp
	}
	if cap(tmp) < n {
		tmp = make([]sortItem, n)
	}
	tmp = tmp[:n]
	src, dst := v, tmp
	for width := run; width < n; width *= 2 {
		for lo := 0; lo < n; lo += 2 * width {
			mid, hi := min(lo+width, n), min(lo+2*width, n)
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				// take the left one on a tie: stable
				if o.cmp(&src[i], &src[j]) <= 0 {
					dst[k] = src[i]
					i++
				} else {
					dst[k] = src[j]
					j++
				}
				k++
			}
			k += copy(dst[k:], src[i:mid])
			copy(dst[k:], src[j:hi])
		}
		src, dst = dst, src
	}
	if &src[0] != &v[0] {
		copy(v, src)
	}
	return tmp
}

// pqsort is Redis's pqsort.c (Bentley & McIlroy's quicksort that only
// recurses into parts overlapping [lrange, rrange]), step for step: with
// BY and LIMIT, equal ALPHA keys come out in its order, not a stable one.
func pqsort(v []sortItem, o *sortOrder, lrange, rrange int) {
	cmp := o.cmp
	swap := func(i, j int) { v[i], v[j] = v[j], v[i] }
	vecswap := func(i, j, n int) {
		for ; n > 0; n-- {
			swap(i, j)
			i++
			j++
		}
	}
	med3 := func(a, b, c int) int {
		if cmp(&v[a], &v[b]) < 0 {
			if cmp(&v[b], &v[c]) < 0 {
				return b
			}
			if cmp(&v[a], &v[c]) < 0 {
				return c
			}
			return a
		}
		if cmp(&v[b], &v[c]) > 0 {
			return b
		}
		if cmp(&v[a], &v[c]) < 0 {
			return a
		}
		return c
	}
	// outside: the part [lo, lo+n) does not overlap the wanted range
	outside := func(lo, n int) bool {
		hi := lo + n - 1
		return (lrange < lo && rrange < lo) || (lrange > hi && rrange > hi)
	}
	var sortPart func(a, n int)
	sortPart = func(a, n int) {
		for {
			if n < 7 {
				for pm := a + 1; pm < a+n; pm++ {
					for pl := pm; pl > a && cmp(&v[pl-1], &v[pl]) > 0; pl-- {
						swap(pl, pl-1)
					}
				}
				return
			}
			pm := a + n/2
			if n > 7 {
				pl, pn := a, a+n-1
				if n > 40 {
					d := n / 8
					pl = med3(pl, pl+d, pl+2*d)
					pm = med3(pm-d, pm, pm+d)
					pn = med3(pn-2*d, pn-d, pn)
				}
				pm = med3(pl, pm, pn)
			}
			swap(a, pm)
			pa, pb := a+1, a+1
			pc, pd := a+n-1, a+n-1
			for {
				for pb <= pc {
					r := cmp(&v[pb], &v[a])
					if r > 0 {
						break
					}
					if r == 0 {
						swap(pa, pb)
						pa++
					}
					pb++
				}
				for pb <= pc {
					r := cmp(&v[pc], &v[a])
					if r < 0 {
						break
					}
					if r == 0 {
						swap(pc, pd)
						pd--
					}
					pc--
				}
				if pb > pc {
					break
				}
				swap(pb, pc)
				pb++
				pc--
			}
			pn := a + n
			r := min(pa-a, pb-pa)
			vecswap(a, pb-r, r)
			r = min(pd-pc, pn-pd-1)
			vecswap(pb, pn-r, r)
			if r = pb - pa; r > 1 && !outside(a, r) {
				sortPart(a, r)
			}
			if r = pd - pc; r <= 1 {
				return
			}
			// iterate rather than recurse, as pqsort.c
			a, n = pn-r, r
			if outside(a, n) {
				return
			}
		}
	}
	sortPart(0, len(v))
}
