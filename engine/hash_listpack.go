package engine

import (
	"strings"
	"unsafe"
)

// The listpack encoding of a small hash, Redis's own (t_hash.c): while a
// hash is within hash-max-listpack-entries / -value (and hashLPMax
// fields), it is one listpack of field, value, field, value … in
// insertion order, held in its entry's words (Hash is an lpVal): no
// object, no per-field strings. Canonical integers (Redis's string2ll
// rule) are integer entries, so a counter or a timestamp costs its
// bytes. A hash converts to the pair table (hashTable) when it outgrows
// the limits and, like Redis, back only when loaded (RDB, RESTORE, DEBUG
// RELOAD: hashOf); the RDB and DUMP form is the listpack itself.
//
// Measured at 1,000,000 token buckets (HSET k tokens <0..9> ts <ms> +
// PEXPIRE, bench/loadgen -mode memory): a 31-byte listpack in a 32-byte
// size class, 86 B live per key with the entry and key, 88 B of RSS
// (appendonly no) against Redis's 145 of used_memory; the pair table (a
// 48-byte object, 64 bytes of pairs and two field strings) cost ~200.

// hashLPMax bounds the listpack encoding whatever the configured limits
// (Redis 7.0's default hash-max-listpack-entries is 512): a lookup walks
// the listpack, so past it a hash Redis would still hold as a listpack
// is a pair table with a field index here (hashTable.ht false keeps
// Redis's listpack behaviour in replies).
const hashLPMax = 128

// hashForceTable makes every hash a pair table (tests compare the two
// encodings with it).
var hashForceTable bool

// Hash is a hash value: its entry's words (entry.hash), or a value being
// built. The listpack encoding is the lpVal; the pair table has
// n == lpOther and p its *hashTable.
type Hash struct{ lpVal }

// hash returns the Hash of a hash entry, overlaid on its words.
func (e *entry) hash() *Hash { return (*Hash)(unsafe.Pointer(&e.p)) }

// setHash makes e hold h.
func (e *entry) setHash(h Hash) {
	e.kind, e.enc = KindHash, 0
	e.p, e.n = h.p, h.n
}

func (h *Hash) table() *hashTable { return (*hashTable)(h.p) }

// Len is the number of fields.
func (h *Hash) Len() int {
	if h.isLP() {
		return h.count() / 2
	}
	return len(h.table().kv)
}

// cowGen is the hash's copy-on-write generation (cow.go).
func (h *Hash) cowGen() uint32 {
	if h.isLP() {
		return h.gen()
	}
	return h.table().gen
}

// ht reports whether Redis holds the hash as a hashtable.
func (h *Hash) ht() bool { return !h.isLP() && h.table().ht }

// reserveFor makes room at once for HSET's field/value pairs, as if all
// were new (lpVal.reserve; convertForArgs already made a hash whose
// arguments exceed the limits a table).
func (h *Hash) reserveFor(pairs [][]byte) {
	if h.Len()+len(pairs)/2 > hashLPMax {
		return
	}
	extra := 0
	for _, a := range pairs {
		extra += lpStringSize(a)
	}
	h.reserve(extra)
}

// lpFind returns the offsets of field's entry and of its value.
func (h *Hash) lpFind(field string) (f, v int, ok bool) {
	b := h.bytes()
	k := keyOfString(field)
	for p := lpFirst; !lpEnd(b, p); {
		eq, q := lpIs(b, p, &k)
		if eq {
			return p, q, true
		}
		p = lpNext(b, q)
	}
	return 0, 0, false
}

// Get returns the value of field (a string value aliases the hash: valid
// until it changes).
func (h *Hash) Get(field string) (lelem, bool) {
	if !h.isLP() {
		t := h.table()
		if i := t.find(field); i >= 0 {
			return t.kv[i].v, true
		}
		return lelem{}, false
	}
	if _, v, ok := h.lpFind(field); ok {
		x, _ := lpElem(h.bytes(), v)
		return x, true
	}
	return lelem{}, false
}

// has reports whether field exists.
func (h *Hash) has(field string) bool {
	if !h.isLP() {
		return h.table().find(field) >= 0
	}
	_, _, ok := h.lpFind(field)
	return ok
}

// Set sets field to value (both may alias arguments: they are copied)
// and reports whether the field is new. A field or value longer than
// hash-max-listpack-value, or more than hash-max-listpack-entries fields,
// make it a hashtable, as Redis's hashTypeSet does.
func (h *Hash) Set(field string, value lelem) bool {
	return h.set(field, value, &defaultLimits)
}

// set is Set under the limits lim.
func (h *Hash) set(field string, value lelem, lim *EncodingLimits) bool {
	if h.isLP() {
		if int64(len(field)) > lim.HashMaxListpackValue || (value.p != nil && value.n > lim.HashMaxListpackValue) {
			h.toTable(true)
		} else if added, ok := h.lpSet(field, value, lim); ok {
			return added
		}
	}
	if value.p != nil {
		value = strElem(strings.Clone(value.String()))
	}
	return h.table().set(field, value, lim)
}

// lpSet is set on a listpack hash; ok is false when it converted the
// hash instead (too many fields).
func (h *Hash) lpSet(field string, value lelem, lim *EncodingLimits) (added, ok bool) {
	var buf [80]byte
	if _, v, found := h.lpFind(field); found {
		b := h.bytes()
		enc := lpAppendElem(buf[:0], value)
		b = h.splice(v, lpNext(b, v)-v, len(enc), 0)
		copy(b[v:], enc)
		return false, true
	}
	n := h.Len()
	switch {
	case int64(n) >= lim.HashMaxListpackEntries:
		h.toTable(true)
		return false, false
	case n >= hashLPMax || hashForceTable:
		h.toTable(false)
		return false, false
	}
	enc := lpAppendElem(lpAppendString(buf[:0], field), value)
	end := len(h.bytes()) - 1
	b := h.splice(end, 0, len(enc), 2)
	copy(b[end:], enc)
	return true, true
}

// Del removes field and reports whether it was there.
func (h *Hash) Del(field string) bool {
	if !h.isLP() {
		return h.table().Del(field)
	}
	f, v, ok := h.lpFind(field)
	if ok {
		h.splice(f, lpNext(h.bytes(), v)-f, 0, -2)
	}
	return ok
}

// convertForArgs makes h a hashtable when any of args is longer than
// hash-max-listpack-value, as Redis's hashTypeTryConversion does.
func (h *Hash) convertForArgs(args [][]byte, lim *EncodingLimits) {
	if h.ht() {
		return
	}
	for _, a := range args {
		if int64(len(a)) > lim.HashMaxListpackValue {
			if h.isLP() {
				h.toTable(true)
			}
			h.table().ht = true
			return
		}
	}
}

// toTable converts a listpack hash to the pair table; ht says whether
// Redis holds it as a hashtable too.
func (h *Hash) toTable(ht bool) {
	t := &hashTable{ht: ht, gen: h.gen()}
	b := h.bytes()
	t.kv = make([]hpair, 0, h.Len()+1)
	var tmp [24]byte
	for p := lpFirst; !lpEnd(b, p); {
		f, q := lpText(b, p, tmp[:])
		x, next := lpElem(b, q)
		if x.p != nil {
			x = strElem(strings.Clone(x.String()))
		}
		t.kv = append(t.kv, hpair{string(f), x})
		p = next
	}
	if len(t.kv) >= hashIndexMin {
		t.buildIndex()
	}
	h.p, h.n = unsafe.Pointer(t), lpOther
}

// hashOf is the value of a hash built as a pair table (a loaded one): a
// listpack when Redis would hold it as one and it fits hashLPMax.
func hashOf(t *hashTable) Hash {
	if t.ht || len(t.kv) > hashLPMax || hashForceTable {
		return Hash{lpVal{p: unsafe.Pointer(t), n: lpOther}}
	}
	w := lpWriter{}
	w.reset()
	for i := range t.kv {
		w.appendString(t.kv[i].f)
		w.b = lpAppendElem(w.b, t.kv[i].v)
		w.n++
	}
	var h Hash
	if len(t.kv) > 0 {
		h.setBytes(append([]byte(nil), w.finish()...))
	}
	return h
}

// clone is a copy of h with copy-on-write generation g.
func (h *Hash) clone(g uint32) Hash {
	if h.isLP() {
		return Hash{h.lpVal.clone(g)}
	}
	c := h.table().clone()
	c.gen = g
	return Hash{lpVal{p: unsafe.Pointer(c), n: lpOther}}
}

// hashView is a listpack hash's pairs decoded for a reader: the
// engine's scratch, valid until the hash changes or the next view.
type hashView struct {
	kv  []hpair
	txt []byte // integer fields as text
}

// pairs returns h's field/value pairs in order: the table's own, or v
// filled from the listpack (strings alias it).
func (h *Hash) pairs(v *hashView) []hpair {
	if !h.isLP() {
		return h.table().kv
	}
	b := h.bytes()
	n := h.Len()
	if cap(v.kv) < n {
		v.kv = make([]hpair, n)
	}
	if cap(v.txt) < 21*n {
		v.txt = make([]byte, 0, 21*n)
	}
	kv, txt := v.kv[:n], v.txt[:0]
	for i, p := 0, lpFirst; i < n; i++ {
		s, iv, isInt, q := lpDecode(b, p)
		if isInt {
			st := len(txt)
			txt = appendInt(txt, iv)
			kv[i].f = unsafe.String(&txt[st], len(txt)-st)
		} else {
			kv[i].f = bstr(s)
		}
		kv[i].v, p = lpElem(b, q)
	}
	v.kv, v.txt = kv, txt
	return kv
}

// hpairs is the pairs of h for one reader (the engine's scratch view).
func (c *Ctx) hpairs(h *Hash) []hpair { return h.pairs(&c.E.hv) }

// elemView is the element b (a canonical integer inline, else aliasing b).
func elemView(b []byte) lelem {
	if len(b) <= 20 {
		if n, ok := ParseIntB(b); ok {
			return lelem{n: n}
		}
	}
	return strElem(bstr(b))
}
