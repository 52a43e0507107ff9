package engine

import (
	"strings"
	"unsafe"
)

// A small list is one listpack of its elements (Redis 7.0 holds it as a
// quicklist of one listpack node; OBJECT ENCODING says "quicklist" for
// every list either way), held in its entry's words like a small hash or
// sorted set (List is an lpVal): no object, no per-element string. A
// list converts to the ring (listRing) when a push or LSET would take it
// past listLPMaxEntries elements or listLPMaxBytes bytes (Redis's
// list-max-listpack-size -2: 8 KB nodes), and back only when a command
// rebuilds it whole (LREM, LINSERT) or on load. Pushes and pops at the
// tail are one append; at the head one memmove of at most 8 KB.
//
// Measured (BenchmarkListMemory10, heap per key, entry and key
// included): a list of 10 millisecond timestamps 166 B (a 107-byte
// listpack in a 112-byte size class) against 262 as a ring (a 48-byte
// object and a 160-byte element buffer).

const (
	// listLPMaxEntries bounds a listpack list so that indexing (a walk)
	// stays cheap.
	listLPMaxEntries = 128
	// listLPMaxBytes is list-max-listpack-size -2's node size.
	listLPMaxBytes = 8 << 10
)

// List is a list value: its entry's words (entry.list), or a value being
// built. The listpack encoding is the lpVal; the ring has n == lpOther
// and p its *listRing.
type List struct{ lpVal }

// list returns the List of a list entry, overlaid on its words.
func (e *entry) list() *List { return (*List)(unsafe.Pointer(&e.p)) }

// setList makes e hold l.
func (e *entry) setList(l List) {
	e.kind, e.enc = KindList, 0
	e.p, e.n = l.p, l.n
}

func (l *List) ring() *listRing { return (*listRing)(l.p) }

// listOfRing is the value of a list built as a ring (a load, SORT
// STORE): a listpack when it fits.
func listOfRing(r *listRing) List {
	var l List
	l.p, l.n = unsafe.Pointer(r), lpOther
	l.maybeListpack()
	return l
}

// Len is the number of elements.
func (l *List) Len() int {
	if l.isLP() {
		return l.count()
	}
	return l.ring().n
}

// cowGen is the list's copy-on-write generation (cow.go).
func (l *List) cowGen() uint32 {
	if l.isLP() {
		return l.gen()
	}
	return l.ring().gen
}

// clone is a copy of l with copy-on-write generation g.
func (l *List) clone(g uint32) List {
	if l.isLP() {
		return List{l.lpVal.clone(g)}
	}
	c := l.ring().clone()
	c.gen = g
	return List{lpVal{p: unsafe.Pointer(c), n: lpOther}}
}

// offset is the offset of element i (0 <= i < Len) of a listpack list,
// walked from the nearer end.
func (l *List) offset(i int) int {
	b := l.bytes()
	n := l.count()
	if i < n/2 {
		p := lpFirst
		for ; i > 0; i-- {
			p = lpNext(b, p)
		}
		return p
	}
	p := len(b) - 1
	for k := n - i; k > 0; k-- {
		p = lpPrev(b, p)
	}
	return p
}

// at returns element i (0 <= i < Len); a string element of a listpack
// aliases it: valid until the list changes.
func (l *List) at(i int) lelem {
	if !l.isLP() {
		return l.ring().at(i)
	}
	x, _ := lpElem(l.bytes(), l.offset(i))
	return x
}

// toRing converts a listpack list to the ring.
func (l *List) toRing() {
	b := l.bytes()
	n := l.count()
	r := &listRing{buf: make([]lelem, max(4, n+n/4+1)), gen: l.gen()}
	for p, i := lpFirst, 0; i < n; i++ {
		var x lelem
		x, p = lpElem(b, p)
		if x.p != nil {
			x = strElem(strings.Clone(x.String())) // the listpack goes
		}
		r.buf[i] = x
	}
	r.n = n
	l.p, l.n = unsafe.Pointer(r), lpOther
}

// maybeListpack converts a ring list that fits the limits to a listpack.
func (l *List) maybeListpack() {
	if l.isLP() {
		return
	}
	r := l.ring()
	if r.n > listLPMaxEntries {
		return
	}
	size := lpHdrSize + 1
	for i := 0; i < r.n; i++ {
		if size += lpEntrySize(r.at(i)); size > listLPMaxBytes {
			return
		}
	}
	var v lpVal
	if r.n > 0 {
		w := lpWriter{b: lpAlloc(size)}
		w.reset()
		for i := 0; i < r.n; i++ {
			w.appendElem(r.at(i))
		}
		v.setBytes(w.finish())
	}
	v.n |= int64(uint64(r.gen) << 32)
	l.lpVal = v
}

// fits reports whether a listpack list can take x (size bytes more)
// without leaving the listpack limits.
func (l *List) fits(size int) bool {
	return l.count() < listLPMaxEntries && len(l.bytes())+size <= listLPMaxBytes
}

// reserveFor makes room at once for a push of args (lpVal.reserve) when
// they all fit the listpack.
func (l *List) reserveFor(args [][]byte) {
	if !l.isLP() || len(args) < 2 {
		return
	}
	extra := 0
	for _, a := range args {
		extra += lpStringSize(a)
	}
	if l.fits(extra) && l.count()+len(args) <= listLPMaxEntries {
		l.reserve(extra)
	}
}

// PushFront prepends x.
func (l *List) PushFront(x lelem) { l.push(x, true) }

// PushBack appends x.
func (l *List) PushBack(x lelem) { l.push(x, false) }

func (l *List) push(x lelem, front bool) {
	if l.isLP() {
		size := lpEntrySize(x)
		if l.fits(size) {
			off := lpFirst
			if !front {
				off = len(l.bytes()) - 1
			}
			b := l.splice(off, 0, size, 1)
			lpAppendElem(b[off:off], x)
			return
		}
		l.toRing()
	}
	if front {
		l.ring().PushFront(x)
	} else {
		l.ring().PushBack(x)
	}
}

// PopFront removes and returns the first element (the list is not
// empty); a string element is a copy.
func (l *List) PopFront() lelem { return l.pop(true) }

// PopBack removes and returns the last element (the list is not empty).
func (l *List) PopBack() lelem { return l.pop(false) }

func (l *List) pop(front bool) lelem {
	if !l.isLP() {
		if front {
			return l.ring().PopFront()
		}
		return l.ring().PopBack()
	}
	b := l.bytes()
	off := lpFirst
	if !front {
		off = lpPrev(b, len(b)-1)
	}
	x, next := lpElem(b, off)
	if x.p != nil {
		x = strElem(strings.Clone(x.String())) // the bytes move
	}
	l.splice(off, next-off, 0, -1)
	return x
}

// set replaces element i with x.
func (l *List) set(i int, x lelem) {
	if l.isLP() {
		b := l.bytes()
		off := l.offset(i)
		next := lpNext(b, off)
		size := lpEntrySize(x)
		if len(b)-(next-off)+size <= listLPMaxBytes {
			nb := l.splice(off, next-off, size, 0)
			lpAppendElem(nb[off:off], x)
			return
		}
		l.toRing()
	}
	l.ring().set(i, x)
}

// trim keeps elements s..t (0 <= s <= t < Len).
func (l *List) trim(s, t int) {
	if !l.isLP() {
		r := l.ring()
		for r.n > t+1 {
			r.PopBack()
		}
		for i := 0; i < s; i++ {
			r.PopFront()
		}
		return
	}
	n := l.count()
	if t+1 < n {
		end := l.offset(t + 1)
		l.splice(end, len(l.bytes())-1-end, 0, -(n - t - 1))
	}
	if s > 0 {
		l.splice(lpFirst, l.offset(s)-lpFirst, 0, -s)
	}
}

// linear returns the elements as one slice in order, which the caller
// may reorder and hand back to replace; a listpack list becomes a ring
// for it.
func (l *List) linear() []lelem {
	if l.isLP() {
		l.toRing()
	}
	return l.ring().linear()
}

// replace makes s (owned by the list, from linear) the elements; a list
// that fits becomes a listpack again.
func (l *List) replace(s []lelem) {
	if l.isLP() {
		l.toRing()
	}
	l.ring().replace(s)
	l.maybeListpack()
}

// memUsage is what eviction credits for the list's value.
func (l *List) memUsage() int64 {
	if l.isLP() {
		return int64(uint32(l.n)) // the listpack's allocation
	}
	r := l.ring()
	n := 48 + 16*int64(cap(r.buf))
	for i := 0; i < r.n; i++ {
		n += elemAlloc(r.at(i))
	}
	return n
}

// listIter walks a list's elements from one index in either direction
// without indexing each (a listpack walk is linear).
type listIter struct {
	l   *List
	b   []byte
	p   int // a listpack's entry offset
	i   int // a ring's index
	rev bool
}

// iter is an iterator at element i (0 <= i < Len, or 0 of an empty
// list, which it does not read), going towards the tail, or towards the
// head with rev.
func (l *List) iter(i int, rev bool) listIter {
	it := listIter{l: l, i: i, rev: rev}
	if l.isLP() && l.count() > 0 {
		it.b = l.bytes()
		it.p = l.offset(i)
	}
	return it
}

// next returns the current element and moves on (a string element of a
// listpack aliases it).
func (it *listIter) next() lelem {
	if it.b == nil {
		x := it.l.ring().at(it.i)
		if it.rev {
			it.i--
		} else {
			it.i++
		}
		return x
	}
	x, next := lpElem(it.b, it.p)
	if it.rev {
		if it.p > lpFirst {
			it.p = lpPrev(it.b, it.p)
		}
	} else {
		it.p = next
	}
	return x
}
