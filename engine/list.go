package engine

import (
	"unsafe"

	"limitdb/resp"
)

// List error texts not shared with other files.
const (
	errLposRank   = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
	errLposCount  = "ERR COUNT can't be negative"
	errLposMaxlen = "ERR MAXLEN can't be negative"
)

func init() {
	Register(
		&Command{Name: "lpush", Arity: -3, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0", Summary: "Prepends one or more elements to a list. Creates the key if it doesn't exist.", Run: cmdLPush},
		&Command{Name: "rpush", Arity: -3, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0", Summary: "Appends one or more elements to a list. Creates the key if it doesn't exist.", Run: cmdRPush},
		&Command{Name: "lpushx", Arity: -3, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "2.2.0", Summary: "Prepends one or more elements to a list only when the list exists.", Run: cmdLPushX},
		&Command{Name: "rpushx", Arity: -3, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "2.2.0", Summary: "Appends an element to a list only when the list exists.", Run: cmdRPushX},
		&Command{Name: "lpop", Arity: -2, Flags: "write fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0", Summary: "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.", Run: cmdLPop},
		&Command{Name: "rpop", Arity: -2, Flags: "write fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0", Summary: "Returns and removes the last elements of a list. Deletes the list if the last element was popped.", Run: cmdRPop},
		&Command{Name: "llen", Arity: 2, Flags: "readonly fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0", Summary: "Returns the length of a list.", Run: cmdLLen},
		&Command{Name: "lrange", Arity: 4, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0", Summary: "Returns a range of elements from a list.", Run: cmdLRange},
		&Command{Name: "lindex", Arity: 3, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0", Summary: "Returns an element from a list by its index.", Run: cmdLIndex},
		&Command{Name: "lset", Arity: 4, Flags: "write denyoom", FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0", Summary: "Sets the value of an element in a list by its index.", Run: cmdLSet},
		&Command{Name: "ltrim", Arity: 4, Flags: "write", FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0", Summary: "Removes elements from both ends a list. Deletes the list if all elements were trimmed.", Run: cmdLTrim},
		&Command{Name: "lrem", Arity: 4, Flags: "write", FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0", Summary: "Removes elements from a list. Deletes the list if the last element was removed.", Run: cmdLRem},
		&Command{Name: "lpos", Arity: -3, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "6.0.6", Summary: "Returns the index of matching elements in a list.", Run: cmdLPos},
		&Command{Name: "linsert", Arity: 5, Flags: "write denyoom", FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "2.2.0", Summary: "Inserts an element before or after another element in a list.", Run: cmdLInsert},
	)
	RegisterKind(KindList, KindOps{Clone: func(p unsafe.Pointer, n int64) (unsafe.Pointer, int64) {
		src := List{lpVal{p, n}}
		c := src.clone(0)
		return c.p, c.n
	}})
}

// listRing is a big list (list_listpack.go: a small one is a listpack): a
// ring-buffer deque of elements, so pushes and pops at both ends are O(1)
// (amortized) and indexing is O(1). The deque shrinks when it is mostly
// empty.
type listRing struct {
	buf  []lelem
	head int // index in buf of element 0
	n    int
	gen  uint32 // copy-on-write generation (cow.go)
}

// lelem is one list element in 16 bytes, encoded like a string key's value:
// an element that is an integer in canonical form (Redis's string2ll, e.g. a
// timestamp) is stored inline (p nil, n the value) and costs no allocation;
// any other element is p → its bytes, n its length (p is &emptyElem for the
// empty string). Lists of timestamps cost 16 bytes per element.
type lelem struct {
	p unsafe.Pointer
	n int64
}

var emptyElem byte

// elemOfString makes an element of s, which the element may keep.
func elemOfString(s string) lelem {
	if len(s) <= 20 {
		if n, ok := ParseInt(s); ok {
			return lelem{n: n}
		}
	}
	if len(s) == 0 {
		return lelem{p: unsafe.Pointer(&emptyElem)}
	}
	return lelem{p: unsafe.Pointer(unsafe.StringData(s)), n: int64(len(s))}
}

// elemOf makes an element of a copy of b.
func elemOf(b []byte) lelem {
	if len(b) <= 20 {
		if n, ok := ParseIntB(b); ok {
			return lelem{n: n}
		}
	}
	return elemOfString(string(b))
}

// String returns the element's value.
func (x lelem) String() string {
	if x.p == nil {
		var tmp [24]byte
		return string(appendInt(tmp[:0], x.n))
	}
	return unsafe.String((*byte)(x.p), int(x.n))
}

// write replies the element as a bulk string.
func (x lelem) write(w *resp.Writer) {
	if x.p == nil {
		var tmp [24]byte
		w.Bulk(appendInt(tmp[:0], x.n)) // BulkInt would allocate
		return
	}
	w.BulkString(unsafe.String((*byte)(x.p), int(x.n)))
}

// elemKey is an argument prepared for comparison with elements: a
// canonical integer only ever equals an inline integer element, anything
// else only a string element.
type elemKey struct {
	s     string
	n     int64
	isInt bool
}

func keyOf(b []byte) elemKey {
	if len(b) <= 20 {
		if n, ok := ParseIntB(b); ok {
			return elemKey{n: n, isInt: true}
		}
	}
	return elemKey{s: bstr(b)}
}

// is reports whether x equals k.
func (x lelem) is(k elemKey) bool {
	if x.p == nil {
		return k.isInt && x.n == k.n
	}
	return !k.isInt && unsafe.String((*byte)(x.p), int(x.n)) == k.s
}

func (l *listRing) pos(i int) int {
	p := l.head + i
	if p >= len(l.buf) {
		p -= len(l.buf)
	}
	return p
}

func (l *listRing) at(i int) lelem { return l.buf[l.pos(i)] }

func (l *listRing) set(i int, x lelem) { l.buf[l.pos(i)] = x }

// resize copies the elements into a buffer of capacity c (c >= n).
func (l *listRing) resize(c int) {
	nb := make([]lelem, c)
	if l.n > 0 {
		k := copy(nb, l.buf[l.head:min(len(l.buf), l.head+l.n)])
		if k < l.n {
			copy(nb[k:], l.buf[:l.n-k])
		}
	}
	l.buf, l.head = nb, 0
}

func (l *listRing) grow() {
	if l.n == len(l.buf) {
		l.resize(max(4, 2*len(l.buf)))
	}
}

func (l *listRing) maybeShrink() {
	if len(l.buf) > 16 && l.n*4 < len(l.buf) {
		l.resize(max(4, l.n*2))
	}
}

// PushFront prepends s.
func (l *listRing) PushFront(s lelem) {
	l.grow()
	l.head--
	if l.head < 0 {
		l.head += len(l.buf)
	}
	l.buf[l.head] = s
	l.n++
}

// PushBack appends s.
func (l *listRing) PushBack(s lelem) {
	l.grow()
	l.buf[l.pos(l.n)] = s
	l.n++
}

// PopFront removes and returns the first element (the list is not empty).
func (l *listRing) PopFront() lelem {
	s := l.buf[l.head]
	l.buf[l.head] = lelem{}
	l.head++
	if l.head == len(l.buf) {
		l.head = 0
	}
	l.n--
	l.maybeShrink()
	return s
}

// PopBack removes and returns the last element (the list is not empty).
func (l *listRing) PopBack() lelem {
	p := l.pos(l.n - 1)
	s := l.buf[p]
	l.buf[p] = lelem{}
	l.n--
	l.maybeShrink()
	return s
}

// linear returns the elements as one slice in order (compacting the ring);
// the slice aliases the buffer.
func (l *listRing) linear() []lelem {
	if l.head+l.n > len(l.buf) {
		l.resize(len(l.buf))
	}
	return l.buf[l.head : l.head+l.n]
}

// replace makes s (owned by the list) the elements.
func (l *listRing) replace(s []lelem) {
	l.buf, l.head, l.n = s, 0, len(s)
	l.maybeShrink()
}

// clone copies the list without touching it (a capture may be reading
// it: cow.go).
func (l *listRing) clone() *listRing {
	c := &listRing{buf: make([]lelem, max(l.n, 1)), n: l.n}
	k := copy(c.buf, l.buf[l.head:min(len(l.buf), l.head+l.n)])
	copy(c.buf[k:l.n], l.buf[:l.n-k])
	return c
}

// lookupList returns the live list at key (nil when missing); WRONGTYPE is
// written and ok=false when the key holds another type.
func (c *Ctx) lookupList(key []byte, read bool) (*entry, bool) {
	return c.lookupKind(key, KindList, read)
}

// push adds argv[2:] at the head or the tail of the list at key. With
// onlyIfExists (LPUSHX/RPUSHX) a missing key is left missing and 0 is
// replied. Reply: the list's length after the push.
func (c *Ctx) push(argv [][]byte, front, onlyIfExists bool) {
	key := argv[1]
	e, ok := c.lookupList(key, false)
	if !ok {
		return
	}
	if e == nil {
		if onlyIfExists {
			c.W.Int(0)
			return
		}
		e = c.create(key)
		e.setList(List{c.newLP()})
	}
	l := e.list()
	l.reserveFor(argv[2:])
	for _, a := range argv[2:] {
		if front {
			l.PushFront(elemOf(a))
		} else {
			l.PushBack(elemOf(a))
		}
	}
	c.touched(key)
	c.W.Int(int64(l.Len()))
	c.notify(NotifyList, pushEvent(front), key)
}

// pushEvent and popEvent name a list end's events.
func pushEvent(front bool) string {
	if front {
		return "lpush"
	}
	return "rpush"
}

func popEvent(front bool) string {
	if front {
		return "lpop"
	}
	return "rpop"
}

// notifyPopped raises Redis's listElementsRemoved events: lpop or rpop,
// then del when the list was emptied (after the reply, as Redis).
func (c *Ctx) notifyPopped(key []byte, front, emptied bool) {
	c.notify(NotifyList, popEvent(front), key)
	if emptied {
		c.notify(NotifyGeneric, "del", key)
	}
}

// cmdLPush: LPUSH key element [element ...] — insert each element at the
// head, in argument order; creates the list. Reply: integer, new length.
// Errors: WRONGTYPE.
func cmdLPush(c *Ctx, argv [][]byte) { c.push(argv, true, false) }

// cmdRPush: RPUSH key element [element ...] — append; see LPUSH.
func cmdRPush(c *Ctx, argv [][]byte) { c.push(argv, false, false) }

// cmdLPushX: LPUSHX key element [element ...] — LPUSH only when the list
// exists; 0 when it does not.
func cmdLPushX(c *Ctx, argv [][]byte) { c.push(argv, true, true) }

// cmdRPushX: RPUSHX key element [element ...] — RPUSH only when the list
// exists; 0 when it does not.
func cmdRPushX(c *Ctx, argv [][]byte) { c.push(argv, false, true) }

// removeIfEmpty deletes the list/hash/set key e when its collection became
// empty. The caller signals the key.
func (c *Ctx) removeIfEmpty(e *entry, empty bool) {
	if empty {
		c.DB.removeEntry(e)
	}
}

// pop implements LPOP/RPOP key [count]. Without count: the element, or null
// when the key is missing. With count (>= 0, else "must be positive"): an
// array of up to count elements, an empty array for count 0, and the null
// array when the key is missing. More than one count argument is an arity
// error. The list is deleted when emptied.
func (c *Ctx) pop(argv [][]byte, front bool) {
	if len(argv) > 3 {
		c.W.Error(ErrWrongArgs(c.Cmd.Name))
		return
	}
	hasCount := len(argv) == 3
	var count int64
	if hasCount {
		n, ok := ParseIntB(argv[2])
		if !ok || n < 0 {
			c.W.Error(ErrNotPositive)
			return
		}
		count = n
	}
	key := argv[1]
	e, ok := c.lookupList(key, false)
	if !ok {
		return
	}
	if e == nil {
		if hasCount {
			c.W.NullArray()
		} else {
			c.W.Null()
		}
		return
	}
	l := e.list()
	if !hasCount {
		var s lelem
		if front {
			s = l.PopFront()
		} else {
			s = l.PopBack()
		}
		c.removeIfEmpty(e, l.Len() == 0)
		c.touched(key)
		s.write(c.W)
		c.notifyPopped(key, front, l.Len() == 0)
		return
	}
	if count == 0 {
		c.W.EmptyArray()
		return
	}
	n := int(min(count, int64(l.Len())))
	c.W.Array(n)
	for i := 0; i < n; i++ {
		if front {
			l.PopFront().write(c.W)
		} else {
			l.PopBack().write(c.W)
		}
	}
	c.removeIfEmpty(e, l.Len() == 0)
	c.touched(key)
	c.E.Stats.Dirty += int64(n) - 1 // listElementsRemoved: dirty += count
	c.notifyPopped(key, front, l.Len() == 0)
}

// cmdLPop: LPOP key [count] — remove and return the first element(s); see pop.
func cmdLPop(c *Ctx, argv [][]byte) { c.pop(argv, true) }

// cmdRPop: RPOP key [count] — remove and return the last element(s); see pop.
func cmdRPop(c *Ctx, argv [][]byte) { c.pop(argv, false) }

// cmdLLen: LLEN key — the list's length, 0 when missing. Errors: WRONGTYPE.
func cmdLLen(c *Ctx, argv [][]byte) {
	e, ok := c.lookupList(argv[1], true)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(e.list().Len()))
}

// listRange normalizes Redis's inclusive start/end (negative from the end)
// against length n; it returns an empty range as start > end.
func listRange(start, end int64, n int) (int, int) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if end < 0 {
		end += ln
	}
	if start < 0 {
		start = 0
	}
	if start > end || start >= ln {
		return 1, 0
	}
	if end >= ln {
		end = ln - 1
	}
	return int(start), int(end)
}

// cmdLRange: LRANGE key start stop — the elements from start to stop
// inclusive (negative indexes count from the end). Reply: array (empty when
// the key is missing). Errors: not an integer (checked before the key),
// WRONGTYPE.
func cmdLRange(c *Ctx, argv [][]byte) {
	start, ok1 := ParseIntB(argv[2])
	end, ok2 := ParseIntB(argv[3])
	if !ok1 || !ok2 {
		c.W.Error(ErrNotInt)
		return
	}
	e, ok := c.lookupList(argv[1], true)
	if !ok {
		return
	}
	if e == nil {
		c.W.EmptyArray()
		return
	}
	l := e.list()
	s, t := listRange(start, end, l.Len())
	if s > t {
		c.W.EmptyArray()
		return
	}
	c.W.Array(t - s + 1)
	it := l.iter(s, false)
	for i := s; i <= t; i++ {
		it.next().write(c.W)
	}
}

// cmdLIndex: LINDEX key index — the element at index (negative from the
// end), null when out of range or the key is missing. The key is looked up
// before the index is parsed, as Redis does. Errors: WRONGTYPE, not an
// integer.
func cmdLIndex(c *Ctx, argv [][]byte) {
	e, ok := c.lookupList(argv[1], true)
	if !ok {
		return
	}
	if e == nil {
		c.W.Null()
		return
	}
	idx, ok := ParseIntB(argv[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	l := e.list()
	if idx < 0 {
		idx += int64(l.Len())
	}
	if idx < 0 || idx >= int64(l.Len()) {
		c.W.Null()
		return
	}
	l.at(int(idx)).write(c.W)
}

// cmdLSet: LSET key index element — replace the element at index.
// Reply: OK. Errors: "no such key", WRONGTYPE, not an integer, "index out
// of range".
func cmdLSet(c *Ctx, argv [][]byte) {
	e, ok := c.lookupList(argv[1], false)
	if !ok {
		return
	}
	if e == nil {
		c.W.Error(ErrNoSuchKey)
		return
	}
	idx, ok := ParseIntB(argv[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	l := e.list()
	if idx < 0 {
		idx += int64(l.Len())
	}
	if idx < 0 || idx >= int64(l.Len()) {
		c.W.Error(ErrIndexOutOfRange)
		return
	}
	l.set(int(idx), elemOf(argv[3]))
	c.touched(argv[1])
	c.W.OK()
	c.notify(NotifyList, "lset", argv[1])
}

// cmdLTrim: LTRIM key start stop — keep only the elements from start to
// stop inclusive; the key is deleted when nothing remains. Reply: OK (also
// for a missing key). Errors: not an integer (before the key), WRONGTYPE.
func cmdLTrim(c *Ctx, argv [][]byte) {
	start, ok1 := ParseIntB(argv[2])
	end, ok2 := ParseIntB(argv[3])
	if !ok1 || !ok2 {
		c.W.Error(ErrNotInt)
		return
	}
	e, ok := c.lookupList(argv[1], false)
	if !ok {
		return
	}
	if e == nil {
		c.W.OK()
		return
	}
	l := e.list()
	s, t := listRange(start, end, l.Len())
	n := l.Len()
	if s > t {
		c.DB.removeEntry(e)
	} else {
		l.trim(s, t)
	}
	if n != l.Len() || s > t {
		c.touched(argv[1])
	} else {
		// Redis signals the key (WATCH) but counts no change: a trim
		// that removes nothing propagates nothing
		c.touchWatches(c.DB, bstr(argv[1]))
	}
	c.notify(NotifyList, "ltrim", argv[1])
	if s > t || l.Len() == 0 {
		c.notify(NotifyGeneric, "del", argv[1])
	}
	c.W.OK()
}

// cmdLRem: LREM key count element — remove the first count occurrences of
// element (count > 0 from the head, count < 0 from the tail, 0 all).
// Reply: the number removed (0 for a missing key). Errors: not an integer
// (before the key), WRONGTYPE.
func cmdLRem(c *Ctx, argv [][]byte) {
	count, ok := ParseIntB(argv[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	e, ok := c.lookupList(argv[1], false)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	l := e.list()
	el := keyOf(argv[3])
	s := l.linear()
	removed := int64(0)
	if count >= 0 {
		j := 0
		for i, v := range s {
			if v.is(el) && (count == 0 || removed < count) {
				removed++
				continue
			}
			s[j] = s[i]
			j++
		}
		clear(s[j:])
		s = s[:j]
	} else {
		lim := -count
		j := len(s) - 1
		for i := len(s) - 1; i >= 0; i-- {
			if s[i].is(el) && removed < lim {
				removed++
				continue
			}
			s[j] = s[i]
			j--
		}
		clear(s[:j+1])
		s = s[j+1:]
	}
	if removed == 0 {
		l.maybeListpack() // linear made a listpack list a ring
	} else {
		l.replace(s)
		c.removeIfEmpty(e, l.Len() == 0)
		c.touched(argv[1])
		c.notify(NotifyList, "lrem", argv[1])
		if l.Len() == 0 {
			c.notify(NotifyGeneric, "del", argv[1])
		}
	}
	c.W.Int(removed)
}

// cmdLPos: LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len] —
// the index of the rank-th match (negative rank searches from the tail),
// comparing at most MAXLEN elements (0 = all). Without COUNT: an integer or
// null; with COUNT: an array of up to COUNT indexes (0 = all matches), empty
// when the key is missing. Errors (options are parsed before the key):
// syntax error, RANK not an integer or 0, COUNT or MAXLEN not an integer
// or negative ("can't be negative" for both),
// WRONGTYPE.
func cmdLPos(c *Ctx, argv [][]byte) {
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for j := 3; j < len(argv); j++ {
		more := len(argv) - 1 - j
		switch {
		case EqualFold(argv[j], "rank") && more > 0:
			j++
			v, ok := ParseIntB(argv[j])
			if !ok {
				c.W.Error(ErrNotInt)
				return
			}
			if v == 0 {
				c.W.Error(errLposRank)
				return
			}
			rank = v
		case EqualFold(argv[j], "count") && more > 0:
			j++
			v, ok := ParseIntB(argv[j])
			if !ok || v < 0 {
				c.W.Error(errLposCount)
				return
			}
			count = v
		case EqualFold(argv[j], "maxlen") && more > 0:
			j++
			v, ok := ParseIntB(argv[j])
			if !ok || v < 0 {
				c.W.Error(errLposMaxlen)
				return
			}
			maxlen = v
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}
	e, ok := c.lookupList(argv[1], true)
	if !ok {
		return
	}
	if e == nil {
		if count != -1 {
			c.W.EmptyArray()
		} else {
			c.W.Null()
		}
		return
	}
	l := e.list()
	fromTail := rank < 0
	if fromTail {
		rank = -rank // -MinInt64 stays negative: every match qualifies, as in Redis
	}
	el := keyOf(argv[2])
	var found []int64
	var matches int64
	n := l.Len()
	start := 0
	if fromTail {
		start = n - 1
	}
	it := l.iter(start, fromTail)
	for k := 0; k < n && (maxlen == 0 || int64(k) < maxlen); k++ {
		i := k
		if fromTail {
			i = n - 1 - k
		}
		if !it.next().is(el) {
			continue
		}
		matches++
		if matches >= rank {
			if count == -1 {
				c.W.Int(int64(i))
				return
			}
			found = append(found, int64(i))
			if count != 0 && matches-rank+1 >= count {
				break
			}
		}
	}
	if count == -1 {
		c.W.Null()
		return
	}
	c.W.Array(len(found))
	for _, i := range found {
		c.W.Int(i)
	}
}

// cmdLInsert: LINSERT key BEFORE|AFTER pivot element — insert element next
// to the first occurrence of pivot. Reply: the new length, -1 when pivot is
// not found, 0 when the key is missing. Errors: syntax error (checked
// first), WRONGTYPE.
func cmdLInsert(c *Ctx, argv [][]byte) {
	var after bool
	switch {
	case EqualFold(argv[2], "after"):
		after = true
	case EqualFold(argv[2], "before"):
	default:
		c.W.Error(ErrSyntax)
		return
	}
	e, ok := c.lookupList(argv[1], false)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	l := e.list()
	pivot := keyOf(argv[3])
	s := l.linear()
	at := -1
	for i, v := range s {
		if v.is(pivot) {
			at = i
			break
		}
	}
	if at < 0 {
		l.maybeListpack() // linear made a listpack list a ring
		c.W.Int(-1)
		return
	}
	if after {
		at++
	}
	ns := make([]lelem, len(s)+1)
	copy(ns, s[:at])
	ns[at] = elemOf(argv[4])
	copy(ns[at+1:], s[at:])
	l.replace(ns)
	c.touched(argv[1])
	c.notify(NotifyList, "linsert", argv[1])
	c.W.Int(int64(l.Len()))
}

// Moving between lists.

func init() {
	Register(
		&Command{Name: "lmove", Arity: 5, Flags: "write denyoom", FirstKey: 1, LastKey: 2, Step: 1, Group: "list", Since: "6.2.0", Summary: "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved.", Run: cmdLMove},
		&Command{Name: "rpoplpush", Arity: 3, Flags: "write denyoom", FirstKey: 1, LastKey: 2, Step: 1, Group: "list", Since: "1.2.0", Summary: "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped.", Run: cmdRPopLPush},
		&Command{Name: "lmpop", Arity: -4, Flags: "write noeffect", FirstKey: 0, LastKey: 0, Step: 0, Group: "list", Since: "7.0.0", Summary: "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.", Run: cmdLMPop},
	)
}

// parseWhere parses LEFT/RIGHT (front = LEFT); a syntax error otherwise.
func (c *Ctx) parseWhere(b []byte) (front, ok bool) {
	switch {
	case EqualFold(b, "left"):
		return true, true
	case EqualFold(b, "right"):
		return false, true
	}
	c.W.Error(ErrSyntax)
	return false, false
}

// lmove pops from src's end (fromFront) and pushes onto dst's end
// (toFront), creating dst. Reply: the element, null when src is missing.
// WRONGTYPE for src, then for dst (only when src has elements). src == dst
// rotates the list.
func (c *Ctx) lmove(srcKey, dstKey []byte, fromFront, toFront bool) {
	src, ok := c.lookupList(srcKey, false)
	if !ok {
		return
	}
	if src == nil {
		c.W.Null()
		return
	}
	dst, ok := c.lookupList(dstKey, false)
	if !ok {
		return
	}
	sl := src.list()
	var v lelem
	if fromFront {
		v = sl.PopFront()
	} else {
		v = sl.PopBack()
	}
	if dst == nil {
		dst = c.create(dstKey)
		dst.setList(List{c.newLP()})
	}
	if toFront {
		dst.list().PushFront(v)
	} else {
		dst.list().PushBack(v)
	}
	c.touched(dstKey)
	c.notify(NotifyList, pushEvent(toFront), dstKey)
	v.write(c.W)
	c.removeIfEmpty(src, sl.Len() == 0)
	c.touched(srcKey)
	c.notifyPopped(srcKey, fromFront, sl.Len() == 0)
}

// cmdLMove: LMOVE source destination LEFT|RIGHT LEFT|RIGHT — atomically
// pop from source and push to destination. Errors: syntax error (checked
// first), WRONGTYPE. See lmove.
func cmdLMove(c *Ctx, argv [][]byte) {
	from, ok := c.parseWhere(argv[3])
	if !ok {
		return
	}
	to, ok := c.parseWhere(argv[4])
	if !ok {
		return
	}
	c.lmove(argv[1], argv[2], from, to)
}

// cmdRPopLPush: RPOPLPUSH source destination — LMOVE source destination
// RIGHT LEFT.
func cmdRPopLPush(c *Ctx, argv [][]byte) { c.lmove(argv[1], argv[2], false, true) }

// cmdLMPop: LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count] — pop up
// to count (default 1) elements from the first non-empty list. Reply:
// [key, [elements]], or the null array when every list is missing.
// Errors: "numkeys should be greater than 0", syntax error (missing or bad
// LEFT/RIGHT, unknown or repeated option), "count should be greater than
// 0", WRONGTYPE for a non-list key met before a non-empty list. Effect:
// LPOP|RPOP key <number popped>.
func cmdLMPop(c *Ctx, argv [][]byte) {
	keys, front, count, ok := c.parseMPop(argv, 1, false)
	if !ok {
		return
	}
	if !c.lmpopFirst(keys, front, count) {
		c.W.NullArray()
	}
}

// lmpopFirst pops up to count elements from the first non-empty list of
// keys (Redis's mpopGenericCommand → listPopRangeAndReplyWithKey):
// [key, [elements]], the events, and the effect LPOP|RPOP key <popped> as
// Redis 7.0 rewrites LMPOP and BLMPOP. It reports whether it answered (a
// pop or WRONGTYPE); false leaves the reply to the caller.
func (c *Ctx) lmpopFirst(keys [][]byte, front bool, count int64) bool {
	for _, key := range keys {
		e, ok := c.lookupList(key, false)
		if !ok {
			return true
		}
		if e == nil {
			continue
		}
		l := e.list()
		n := int(min(count, int64(l.Len())))
		c.W.Array(2)
		c.W.Bulk(key)
		c.W.Array(n)
		for i := 0; i < n; i++ {
			if front {
				l.PopFront().write(c.W)
			} else {
				l.PopBack().write(c.W)
			}
		}
		c.removeIfEmpty(e, l.Len() == 0)
		c.touched(key)
		c.E.Stats.Dirty += int64(n) - 1 // listElementsRemoved: dirty += count
		c.notifyPopped(key, front, l.Len() == 0)
		// LPOP|RPOP key <popped>, as Redis 7.0 rewrites LMPOP
		if f := c.own(3); f != nil {
			f.argStr(popName(front))
			f.arg(key)
			f.argInt(int64(n))
		}
		return true
	}
	return false
}
