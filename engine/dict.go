package engine

import (
	"math/bits"
	"strings"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// entry is one key of a database. Its layout is what a key costs, so it is
// kept at 40 bytes: the value lives in p/n without an interface box, and the
// key is a (pointer, 16-bit length) pair instead of a string header.
//
//	kind string, enc encRaw:  p = string bytes, n = length
//	kind string, enc encInt:  p = nil, n = the integer (Redis's "int" encoding)
//	other kinds:              p = the object (*List, *Hash, …), n is the
//	                          type's own (a limiter keeps its state word here)
//
// The key (read it with keyStr) is stored one of three ways, told apart by
// klen alone:
//
//	klen == 0:                 the empty key, kp = nil
//	1 <= klen <= arenaMaxKey:  kp points into the dict's key arena
//	klen == keyIndirect:       kp is a *string (keys longer than
//	                           arenaMaxKey, up to any length Go can hold)
//
// klen and lru are one byte each so that the entry stays 40 bytes: the
// last four fields share one 8-byte word with next.
//
// kind, enc and exp keep their own fields, so the deadline is a full int64
// (Redis accepts any positive ms deadline that fits a long long).
type entry struct {
	kp   unsafe.Pointer
	p    unsafe.Pointer
	n    int64
	exp  int64 // absolute deadline, unix ms; 0 = no deadline
	next int32 // index+1 of the next entry in the bucket; 0 ends the chain
	klen uint8
	kind Kind
	enc  uint8
	lru  uint8 // last access, unix seconds mod 256 (OBJECT IDLETIME)
}

const (
	keyIndirect = 1<<8 - 1        // klen value: kp is a *string
	arenaMaxKey = keyIndirect - 1 // longer keys get their own allocation
	slabSize    = 64 << 10        // arena slab size
)

// keyStr returns the key of e. The string stays valid (its bytes never
// change) even after e is deleted or the arena is compacted.
func (e *entry) keyStr() string {
	if e.klen == keyIndirect {
		return *(*string)(e.kp)
	}
	return unsafe.String((*byte)(e.kp), int(e.klen))
}

// keyIs reports whether e's key is key.
func (e *entry) keyIs(key string) bool {
	if e.klen == keyIndirect {
		return *(*string)(e.kp) == key
	}
	return int(e.klen) == len(key) && unsafe.String((*byte)(e.kp), len(key)) == key
}

// arena holds the bytes of short keys back to back in append-only slabs, so
// a key costs its length and no allocation of its own. Bytes once written
// are never changed: a key string handed out (to a reply, a WATCH record, the
// deleted-keys list) stays valid as long as it is referenced, since it keeps
// its slab alive. Deleting a key only counts its bytes as dead; when dead
// bytes pass a bound, a compaction copies the live keys into fresh slabs and
// repoints their entries, and the old slabs go to the garbage collector.
//
// The compaction is incremental, so no single command pays for the whole
// keyspace: once started, every insert and remove moves the keys of the
// next compactStep entry slots, until the cursor passes the last slot.
type arena struct {
	cur    []byte // the slab being filled; len = bytes used
	live   int    // bytes of live keys in the slabs (exact)
	dead   int    // bytes of deleted keys and abandoned slab tails (an estimate while moving)
	moving bool   // a compaction is under way
	next   int32  // the next entry slot the compaction moves
}

const compactStep = 32

// put copies key (1..arenaMaxKey bytes) into the arena.
func (a *arena) put(key string) unsafe.Pointer {
	if len(a.cur)+len(key) > cap(a.cur) {
		a.dead += cap(a.cur) - len(a.cur)
		a.cur = make([]byte, 0, slabSize)
	}
	off := len(a.cur)
	a.cur = append(a.cur, key...)
	a.live += len(key)
	return unsafe.Pointer(&a.cur[off])
}

// setKey stores a copy of key in e (key may alias a transient buffer).
func (d *dict) setKey(e *entry, key string) {
	switch n := len(key); {
	case n == 0:
		e.kp, e.klen = nil, 0
	case n <= arenaMaxKey:
		e.kp, e.klen = d.keys.put(key), uint8(n)
	default:
		s := strings.Clone(key)
		e.kp, e.klen = unsafe.Pointer(&s), keyIndirect
	}
}

// dropKey accounts for the deletion of e's key.
func (d *dict) dropKey(e *entry) {
	if n := int(e.klen); n != 0 && n <= arenaMaxKey {
		d.keys.live -= n
		d.keys.dead += n
	}
}

// maybeCompact advances a compaction under way, or starts one when the dead
// bytes exceed a quarter of the live ones plus four slabs. That bounds the
// waste (old slabs live on until the compaction ends, at most 1.25 × live
// + 4 slabs) and makes the copying amortized O(1) per deleted byte.
func (d *dict) maybeCompact() {
	if d.keys.moving {
		d.compactStep(compactStep)
	} else if d.keys.dead > d.keys.live/4+4*slabSize {
		d.startCompact()
		d.compactStep(compactStep)
	}
}

// startCompact begins a compaction: new keys and moved keys go to fresh
// slabs, and dead counts only the waste in those.
func (d *dict) startCompact() {
	a := &d.keys
	a.cur, a.dead, a.moving, a.next = nil, 0, true, 0
}

// compactStep moves the arena keys of the next n entry slots into the
// current slabs and repoints their entries. Entries do not move, so *entry
// pointers, bucket chains and SCAN cursors are unaffected; old key strings
// stay valid (old slabs are not touched, only released). A key inserted
// during the compaction into a slot the cursor has not reached yet is
// copied once more; that is rare and only costs its length.
func (d *dict) compactStep(n int) {
	a := &d.keys
	for ; n > 0 && a.next < d.used; n-- {
		e := d.at(a.next)
		a.next++
		if k := int(e.klen); k != 0 && k <= arenaMaxKey {
			e.kp = a.put(unsafe.String((*byte)(e.kp), k))
			a.live -= k // put counted it again
		}
	}
	if a.next >= d.used {
		a.moving = false
		d.compactions++
	}
}

// compact runs a whole compaction at once (tests and benchmarks).
func (d *dict) compact() {
	if !d.keys.moving {
		d.startCompact()
	}
	for d.keys.moving {
		d.compactStep(1 << 30)
	}
}

const chunkBits = 10
const chunkSize = 1 << chunkBits

// dict is a chained hash table of entries, Redis's dict in spirit: a
// power-of-two bucket array and SCAN's reverse-binary cursor, which
// guarantees that a full scan returns every key present from start to end
// even while the table grows or shrinks. Entries live in fixed chunks so a
// *entry stays valid until that key is deleted, and so the table never
// copies its entries when it grows. The hash is seeded identically on every
// node: bucket order reaches KEYS, SCAN and RANDOMKEY replies, and replicas
// must agree on them.
type dict struct {
	buckets     []int32 // index+1 of the first entry; 0 = empty
	chunks      [][]entry
	free        int32 // index+1 of the first free slot (linked via next)
	used        int32 // slots ever handed out
	count       int
	keys        arena // bytes of the keys up to arenaMaxKey long
	compactions int   // arena compactions so far (tests, stats)
	// slots, when set (db 0 in cluster mode), is kept up to date with
	// every insert and remove (slot_index.go)
	slots *slotIndex
}

func hashKey(k string) uint64 { return xxhash.Sum64String(k) }

func (d *dict) at(i int32) *entry { return &d.chunks[i>>chunkBits][i&(chunkSize-1)] }

func (d *dict) len() int { return d.count }

// find returns the entry of key, or nil.
func (d *dict) find(key string) *entry {
	if d.count == 0 {
		return nil
	}
	b := hashKey(key) & uint64(len(d.buckets)-1)
	for i := d.buckets[b]; i != 0; {
		e := d.at(i - 1)
		if e.keyIs(key) {
			return e
		}
		i = e.next
	}
	return nil
}

// insert adds key, which must be absent, and returns its zeroed entry. The
// dict keeps a copy of key, so key may alias a transient buffer.
func (d *dict) insert(key string) *entry {
	if d.count >= len(d.buckets) {
		d.resize(max(4, len(d.buckets)*2))
	}
	var idx int32
	if d.free != 0 {
		idx = d.free - 1
		d.free = d.at(idx).next
	} else {
		idx = d.used
		if int(idx>>chunkBits) == len(d.chunks) {
			d.chunks = append(d.chunks, make([]entry, chunkSize))
		}
		d.used++
	}
	e := d.at(idx)
	b := hashKey(key) & uint64(len(d.buckets)-1)
	*e = entry{next: d.buckets[b]}
	d.setKey(e, key)
	if d.keys.moving {
		d.compactStep(compactStep)
	}
	d.buckets[b] = idx + 1
	d.count++
	if d.slots != nil {
		d.slots.add(idx, key)
	}
	return e
}

// remove deletes key and reports whether it was there.
func (d *dict) remove(key string) bool {
	if d.count == 0 {
		return false
	}
	b := hashKey(key) & uint64(len(d.buckets)-1)
	prev := int32(0)
	for i := d.buckets[b]; i != 0; {
		e := d.at(i - 1)
		if e.keyIs(key) {
			if prev == 0 {
				d.buckets[b] = e.next
			} else {
				d.at(prev - 1).next = e.next
			}
			if d.slots != nil {
				d.slots.del(i-1, key)
			}
			d.dropKey(e)
			*e = entry{next: d.free}
			d.free = i
			d.count--
			d.maybeCompact()
			if len(d.buckets) > 64 && d.count*8 < len(d.buckets) {
				d.resize(len(d.buckets) / 2)
			}
			return true
		}
		prev = i
		i = e.next
	}
	return false
}

// resize rebuilds the bucket array with n buckets (a power of two).
func (d *dict) resize(n int) {
	nb := make([]int32, n)
	mask := uint64(n - 1)
	for _, b := range d.buckets {
		for i := b; i != 0; {
			e := d.at(i - 1)
			next := e.next
			h := hashKey(e.keyStr()) & mask
			e.next = nb[h]
			nb[h] = i
			i = next
		}
	}
	d.buckets = nb
}

// clear empties the dict and lets its memory go; a slot index stays
// attached, emptied.
func (d *dict) clear() {
	s := d.slots
	*d = dict{slots: s}
	if s != nil {
		s.reset()
	}
}

// scanBucket calls fn for every entry of the bucket that cursor v names and
// returns the next cursor (0 when the scan is complete).
func (d *dict) scanBucket(v uint64, fn func(*entry)) uint64 {
	if d.count == 0 {
		return 0
	}
	mask := uint64(len(d.buckets) - 1)
	for i := d.buckets[v&mask]; i != 0; {
		e := d.at(i - 1)
		i = e.next // fn may delete e
		fn(e)
	}
	v |= ^mask
	v = bits.Reverse64(v)
	v++
	return bits.Reverse64(v)
}

// each calls fn for every entry in bucket order until fn returns false.
// fn must not insert or delete.
func (d *dict) each(fn func(*entry) bool) {
	for _, b := range d.buckets {
		for i := b; i != 0; {
			e := d.at(i - 1)
			if !fn(e) {
				return
			}
			i = e.next
		}
	}
}

// random returns a random entry (nil when empty): a random non-empty bucket,
// then a random element of its chain, as Redis's dictGetFairRandomKey does
// in spirit.
func (d *dict) random(r *Rand) *entry {
	if d.count == 0 {
		return nil
	}
	mask := len(d.buckets) - 1
	for {
		b := d.buckets[r.Intn(mask+1)]
		if b == 0 {
			continue
		}
		n := 0
		for i := b; i != 0; i = d.at(i - 1).next {
			n++
		}
		k := r.Intn(n)
		i := b
		for ; k > 0; k-- {
			i = d.at(i - 1).next
		}
		return d.at(i - 1)
	}
}
