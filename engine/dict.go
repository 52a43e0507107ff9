package engine

import (
	"math/bits"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// entry is one key of a database. Its layout is what a key costs, so it is
// kept at 48 bytes: the value lives in p/n without an interface box.
//
//	kind string, enc encRaw:  p = string bytes, n = length
//	kind string, enc encInt:  p = nil, n = the integer (Redis's "int" encoding)
//	other kinds:              p = the object (*List, *Hash, …), n is the
//	                          type's own (a limiter keeps its state word here)
type entry struct {
	key  string
	p    unsafe.Pointer
	n    int64
	exp  int64 // absolute deadline, unix ms; 0 = no deadline
	next int32 // index+1 of the next entry in the bucket; 0 ends the chain
	kind Kind
	enc  uint8
	lru  uint16 // last access, unix seconds mod 2^16 (OBJECT IDLETIME)
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
	buckets []int32 // index+1 of the first entry; 0 = empty
	chunks  [][]entry
	free    int32 // index+1 of the first free slot (linked via next)
	used    int32 // slots ever handed out
	count   int
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
		if e.key == key {
			return e
		}
		i = e.next
	}
	return nil
}

// insert adds key, which must be absent, and returns its zeroed entry.
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
	*e = entry{key: key, next: d.buckets[b]}
	d.buckets[b] = idx + 1
	d.count++
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
		if e.key == key {
			if prev == 0 {
				d.buckets[b] = e.next
			} else {
				d.at(prev - 1).next = e.next
			}
			*e = entry{next: d.free}
			d.free = i
			d.count--
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
			h := hashKey(e.key) & mask
			e.next = nb[h]
			nb[h] = i
			i = next
		}
	}
	d.buckets = nb
}

// clear empties the dict and lets its memory go.
func (d *dict) clear() { *d = dict{} }

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
