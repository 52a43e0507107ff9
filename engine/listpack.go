package engine

import (
	"encoding/binary"
	"errors"
	"slices"
	"unsafe"
)

// Redis 7.0's compact blobs, as RDB files and DUMP payloads carry them:
// listpacks (listpack.c: small hashes and sorted sets, quicklist nodes)
// and intsets (intset.c: small all-integer sets), byte for byte as Redis
// lays them out, so a DUMP of a value equals Redis's. Small sorted sets
// and hashes are also held in memory as listpacks (lpVal below,
// zset_listpack.go, hash_listpack.go): their RDB form is then a copy.
//
// A listpack: total bytes (uint32 LE), element count (uint16 LE, 65535
// when too many to count), the entries, 0xFF. An entry is its encoding and
// data, then its own length in 1..5 bytes readable backwards (backlen).
// Strings that are canonical integers (lpStringToInt64, Redis's string2ll)
// are stored as integers of 7, 13, 16, 24, 32 or 64 bits.

var errListpack = errors.New("listpack integrity check failed")

const lpHdrSize = 6

// lpWriter builds one listpack.
type lpWriter struct {
	b []byte
	n int
}

func (w *lpWriter) reset() {
	w.b = append(w.b[:0], 0, 0, 0, 0, 0, 0)
	w.n = 0
}

// size is lpBytes of the listpack being built, terminator included.
func (w *lpWriter) size() int { return len(w.b) + 1 }

// lpBacklen appends the backlen of an entry of l bytes (lpEncodeBacklen).
func lpBacklen(b []byte, l int) []byte {
	switch {
	case l <= 127:
		return append(b, byte(l))
	case l < 16383:
		return append(b, byte(l>>7), byte(l&127)|128)
	case l < 2097151:
		return append(b, byte(l>>14), byte(l>>7&127)|128, byte(l&127)|128)
	case l < 268435455:
		return append(b, byte(l>>21), byte(l>>14&127)|128, byte(l>>7&127)|128, byte(l&127)|128)
	}
	return append(b, byte(l>>28), byte(l>>21&127)|128, byte(l>>14&127)|128, byte(l>>7&127)|128, byte(l&127)|128)
}

// lpIntSize is the encoded size of v as an integer entry (no backlen).
func lpIntSize(v int64) int {
	switch {
	case v >= 0 && v <= 127:
		return 1
	case v >= -4096 && v <= 4095:
		return 2
	case v >= -32768 && v <= 32767:
		return 3
	case v >= -8388608 && v <= 8388607:
		return 4
	case v >= -2147483648 && v <= 2147483647:
		return 5
	}
	return 9
}

// appendInt adds an integer entry (lpEncodeIntegerGetType).
func (w *lpWriter) appendInt(v int64) {
	w.b = lpAppendInt(w.b, v)
	w.n++
}

// appendString adds s, as an integer when it is a canonical one
// (lpEncodeGetType).
func (w *lpWriter) appendString(s string) {
	w.b = lpAppendString(w.b, s)
	w.n++
}

// appendElem adds a list element or hash value.
func (w *lpWriter) appendElem(x lelem) {
	if x.p == nil {
		w.appendInt(x.n)
		return
	}
	w.appendString(x.String())
}

// lpEntrySize is the size an element would add, backlen included.
func lpEntrySize(x lelem) int {
	var n int
	if x.p == nil {
		n = lpIntSize(x.n)
	} else {
		switch l := int(x.n); {
		case l < 64:
			n = 1 + l
		case l < 4096:
			n = 2 + l
		default:
			n = 5 + l
		}
	}
	switch {
	case n <= 127:
		return n + 1
	case n < 16383:
		return n + 2
	case n < 2097151:
		return n + 3
	case n < 268435455:
		return n + 4
	}
	return n + 5
}

// finish terminates the listpack and fills in its header.
func (w *lpWriter) finish() []byte {
	w.b = append(w.b, 0xFF)
	binary.LittleEndian.PutUint32(w.b, uint32(len(w.b)))
	cnt := w.n
	if cnt > 65535 {
		cnt = 65535
	}
	binary.LittleEndian.PutUint16(w.b[4:], uint16(cnt))
	return w.b
}

// lpEach validates the listpack b entry by entry (lpValidateIntegrity
// with deep checks: header, every encoding and backlen, terminator,
// count) and calls fn with each entry: an integer (isInt) or a string
// (s aliases b). fn's error stops the walk.
func lpEach(b []byte, fn func(s []byte, v int64, isInt bool) error) error {
	if len(b) < lpHdrSize+1 || int(binary.LittleEndian.Uint32(b)) != len(b) || b[len(b)-1] != 0xFF {
		return errListpack
	}
	want := int(binary.LittleEndian.Uint16(b[4:]))
	p, n := lpHdrSize, 0
	end := len(b) - 1
	for p < end {
		c := b[p]
		var hl, dl int // header and data lengths
		var v int64
		isInt := true
		switch {
		case c&0x80 == 0:
			hl, v = 1, int64(c)
		case c&0xC0 == 0x80:
			hl, dl, isInt = 1, int(c&0x3F), false
		case c&0xE0 == 0xC0:
			if p+2 > end {
				return errListpack
			}
			u := int64(c&0x1F)<<8 | int64(b[p+1])
			if u >= 1<<12 {
				u -= 1 << 13
			}
			hl, v = 2, u
		case c&0xF0 == 0xE0:
			if p+2 > end {
				return errListpack
			}
			hl, dl, isInt = 2, int(c&0xF)<<8|int(b[p+1]), false
		case c == 0xF0:
			if p+5 > end {
				return errListpack
			}
			l := binary.LittleEndian.Uint32(b[p+1:])
			if uint64(l) > uint64(end) {
				return errListpack
			}
			hl, dl, isInt = 5, int(l), false
		case c >= 0xF1 && c <= 0xF4:
			w := [...]int{2, 3, 4, 8}[c-0xF1]
			if p+1+w > end {
				return errListpack
			}
			var u uint64
			for i := w - 1; i >= 0; i-- {
				u = u<<8 | uint64(b[p+1+i])
			}
			shift := 64 - 8*uint(w)
			hl, v = 1+w, int64(u<<shift)>>shift
		default:
			return errListpack
		}
		l := hl + dl
		if l > end-p {
			return errListpack
		}
		var bl [5]byte
		blen := lpBacklen(bl[:0], l)
		if len(blen) > end-p-l || string(b[p+l:p+l+len(blen)]) != string(blen) {
			return errListpack
		}
		var s []byte
		if !isInt {
			s = b[p+hl : p+l]
		}
		if err := fn(s, v, isInt); err != nil {
			return err
		}
		p += l + len(blen)
		n++
	}
	if p != end || (want != 65535 && want != n) {
		return errListpack
	}
	return nil
}

// lpAppendInt appends an integer entry (lpEncodeIntegerGetType).
func lpAppendInt(b []byte, v int64) []byte {
	n := lpIntSize(v)
	u := uint64(v)
	switch n {
	case 1:
		b = append(b, byte(v))
	case 2:
		if v < 0 {
			u = uint64(1<<13 + v)
		}
		b = append(b, byte(u>>8)|0xC0, byte(u))
	case 3:
		b = append(b, 0xF1, byte(u), byte(u>>8))
	case 4:
		b = append(b, 0xF2, byte(u), byte(u>>8), byte(u>>16))
	case 5:
		b = append(b, 0xF3, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
	default:
		b = append(b, 0xF4)
		b = binary.LittleEndian.AppendUint64(b, u)
	}
	return lpBacklen(b, n)
}

// lpAppendString appends s, as an integer entry when it is a canonical
// one (lpEncodeGetType: Redis's string2ll rule).
func lpAppendString(b []byte, s string) []byte {
	if len(s) <= 20 {
		if v, ok := ParseInt(s); ok {
			return lpAppendInt(b, v)
		}
	}
	return lpAppendStr(b, s)
}

// lpAppendStr appends s as a string entry.
func lpAppendStr(b []byte, s string) []byte {
	l := len(s)
	var hl int
	switch {
	case l < 64:
		b = append(b, 0x80|byte(l))
		hl = 1
	case l < 4096:
		b = append(b, 0xE0|byte(l>>8), byte(l))
		hl = 2
	default:
		b = append(b, 0xF0)
		b = binary.LittleEndian.AppendUint32(b, uint32(l))
		hl = 5
	}
	b = append(b, s...)
	return lpBacklen(b, hl+l)
}

// lpStringSize is the size lpAppendString(s) adds, backlen included.
func lpStringSize(s []byte) int {
	if len(s) <= 20 {
		if v, ok := ParseIntB(s); ok {
			return lpIntSize(v) + 1
		}
	}
	l := len(s)
	switch {
	case l < 64:
		l++
	case l < 4096:
		l += 2
	default:
		l += 5
	}
	return l + lpBacklenSize(l)
}

// lpAppendElem appends a list element or hash value.
func lpAppendElem(b []byte, x lelem) []byte {
	if x.p == nil {
		return lpAppendInt(b, x.n)
	}
	return lpAppendStr(b, x.String()) // a string element is never a canonical integer
}

// lpBacklenSize is the size of the backlen of an entry of l bytes.
func lpBacklenSize(l int) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// --- listpacks in memory -------------------------------------------------------
//
// The functions below read listpacks this process built or validated
// (lpEach), so they do not check bounds beyond Go's own.

// lpFirst is the offset of a listpack's first entry (the terminator's
// when it is empty).
const lpFirst = lpHdrSize

// lpEnd reports whether p is the terminator of b.
func lpEnd(b []byte, p int) bool { return b[p] == 0xFF }

// lpDecode reads the entry at p: an integer (isInt, v) or a string (s
// aliases b), and the offset of the next entry.
func lpDecode(b []byte, p int) (s []byte, v int64, isInt bool, next int) {
	c := b[p]
	var hl, dl int
	switch {
	case c < 0x80:
		return nil, int64(c), true, p + 2
	case c&0xC0 == 0x80:
		hl, dl = 1, int(c&0x3F)
	case c&0xE0 == 0xC0:
		u := int64(c&0x1F)<<8 | int64(b[p+1])
		if u >= 1<<12 {
			u -= 1 << 13
		}
		return nil, u, true, p + 3
	case c&0xF0 == 0xE0:
		hl, dl = 2, int(c&0xF)<<8|int(b[p+1])
	case c == 0xF0:
		hl, dl = 5, int(binary.LittleEndian.Uint32(b[p+1:]))
	case c == 0xF1:
		return nil, int64(int16(binary.LittleEndian.Uint16(b[p+1:]))), true, p + 4
	case c == 0xF2:
		u := uint32(b[p+1]) | uint32(b[p+2])<<8 | uint32(b[p+3])<<16
		return nil, int64(int32(u<<8) >> 8), true, p + 5
	case c == 0xF3:
		return nil, int64(int32(binary.LittleEndian.Uint32(b[p+1:]))), true, p + 6
	default: // 0xF4
		return nil, int64(binary.LittleEndian.Uint64(b[p+1:])), true, p + 10
	}
	l := hl + dl
	return b[p+hl : p+l], 0, false, p + l + lpBacklenSize(l)
}

// lpNext is the offset of the entry after the one at p.
func lpNext(b []byte, p int) int {
	_, _, _, next := lpDecode(b, p)
	return next
}

// lpPrev is the offset of the entry before p (an entry or the
// terminator), read through its backlen (lpDecodeBacklen).
func lpPrev(b []byte, p int) int {
	q := p - 1
	l, shift := 0, 0
	for {
		c := b[q]
		l |= int(c&127) << shift
		if c&128 == 0 {
			break
		}
		shift += 7
		q--
	}
	return q - l
}

// lpText is the entry at p as text: a string entry's bytes, or an
// integer written into tmp.
func lpText(b []byte, p int, tmp []byte) (t []byte, next int) {
	s, v, isInt, next := lpDecode(b, p)
	if isInt {
		return appendInt(tmp[:0], v), next
	}
	return s, next
}

// lpElem is the entry at p as an element (a string element aliases b).
func lpElem(b []byte, p int) (x lelem, next int) {
	s, v, isInt, next := lpDecode(b, p)
	if isInt {
		return lelem{n: v}, next
	}
	return strElem(bstr(s)), next
}

// lpIs reports whether the entry at p equals k (entries are canonical: a
// canonical integer is only ever an integer entry), and the offset of the
// next entry.
func lpIs(b []byte, p int, k *elemKey) (bool, int) {
	s, v, isInt, next := lpDecode(b, p)
	if isInt {
		return k.isInt && v == k.n, next
	}
	return !k.isInt && bstr(s) == k.s, next
}

// lpVal is a value held as a listpack in its entry's (p, n) words: p is
// the listpack's first byte, n its capacity with the copy-on-write
// generation (cow.go) in the high 32 bits; p nil is the empty listpack.
// A value of the same kind in another encoding has n == lpOther and p
// its object. zset and Hash are lpVal, overlaid on the entry's words
// (entry.zset, entry.hash), so an encoding change or a reallocation
// repoints the entry itself and a listpack value costs no header object:
// the 10-member sliding log is its 207-byte listpack in a 208-byte size
// class, and nothing else besides the entry.
type lpVal struct {
	p unsafe.Pointer
	n int64
}

const lpOther = -1

// lpEmpty is the empty listpack, shared (never written: any insertion
// reallocates first).
var lpEmpty = [lpHdrSize + 1]byte{lpHdrSize + 1, 0, 0, 0, 0, 0, 0xFF}

func (v *lpVal) isLP() bool { return v.n != lpOther }

// newLP is the empty listpack value of a key being created, in the
// current copy-on-write generation: no capture holds it, so its first
// write lookup under a capture copies nothing. (Stamped 0, the sliding
// logs' PEXPIRE after their creating ZADD copied every listpack created
// while a Raft snapshot's capture was active: ~40 B of garbage per key
// at the end of a 1M-key load.)
func (c *Ctx) newLP() lpVal { return lpVal{n: int64(uint64(c.E.cow.gen) << 32)} }

// bytes is the listpack (len: its total bytes; cap: the allocation's).
func (v *lpVal) bytes() []byte {
	if v.p == nil {
		return lpEmpty[:]
	}
	b := unsafe.Slice((*byte)(v.p), int(uint32(v.n)))
	return b[:binary.LittleEndian.Uint32(b)]
}

// count is the number of entries (listpack values stay far below the
// header's 65535).
func (v *lpVal) count() int {
	if v.p == nil {
		return 0
	}
	return int(binary.LittleEndian.Uint16(unsafe.Slice((*byte)(v.p), lpHdrSize)[4:]))
}

func (v *lpVal) gen() uint32 { return uint32(uint64(v.n) >> 32) }

// setBytes makes b (a whole listpack) the value, keeping the generation.
func (v *lpVal) setBytes(b []byte) {
	v.p = unsafe.Pointer(unsafe.SliceData(b))
	v.n = int64(uint64(v.gen())<<32 | uint64(uint32(cap(b))))
}

// lpAlloc returns a zeroed slice of n bytes whose capacity is its size
// class (append's rounding), so growth in place uses what the
// allocation has anyway.
func lpAlloc(n int) []byte { return append([]byte(nil), make([]byte, n)...) }

// clone is an exact-size copy of v's listpack with generation g.
func (v *lpVal) clone(g uint32) lpVal {
	var c lpVal
	if v.p != nil {
		b := v.bytes()
		c.setBytes(append([]byte(nil), b...))
	}
	c.n |= int64(uint64(g) << 32)
	return c
}

// reserve makes room for extra more bytes in one allocation (in the
// size class of the result), so that a command adding several entries
// grows the listpack once: loading 1,000,000 sliding logs with one
// 10-member ZADD each reallocated every log a dozen times, and the
// garbage left 313 B of RSS per log for 262 live (appendonly no).
func (v *lpVal) reserve(extra int) {
	b := v.bytes()
	if v.p != nil && len(b)+extra <= cap(b) {
		return
	}
	nb := lpAlloc(len(b) + extra)
	copy(nb, b)
	v.setBytes(nb)
}

// splice replaces the del bytes at off by a gap of ins bytes, changes
// the entry count by dn and returns the listpack; the caller fills the
// gap. The allocation grows to the size class of the new length when it
// must, and shrinks when a deletion left the listpack under half of it
// (not on an insertion: lpVal.reserve made room ahead): a value at
// a steady size (the sliding log: remove the oldest, add the newest)
// allocates nothing.
func (v *lpVal) splice(off, del, ins, dn int) []byte {
	b := v.bytes()
	old := len(b)
	nl := old - del + ins
	switch {
	case v.p == nil || nl > cap(b) || (ins < del && nl <= cap(b)/2 && cap(b) > 64):
		nb := lpAlloc(nl)
		copy(nb, b[:off])
		copy(nb[off+ins:], b[off+del:])
		b = nb[:nl]
		v.setBytes(nb)
	default:
		b = b[:max(old, nl)]
		copy(b[off+ins:], b[off+del:old])
		b = b[:nl]
	}
	binary.LittleEndian.PutUint32(b, uint32(nl))
	binary.LittleEndian.PutUint16(b[4:], uint16(int(binary.LittleEndian.Uint16(b[4:]))+dn))
	return b
}

// --- intset -------------------------------------------------------------------

var errIntset = errors.New("intset integrity check failed")

// intsetBlob is the intset of the sorted values ints, in the narrowest
// width that holds them all. (Redis never narrows an intset when its
// widest member is removed; such a set dumps wider in Redis.)
func intsetBlob(b []byte, ints []int64) []byte {
	w := 2
	for _, v := range ints {
		switch {
		case v < -1<<31 || v > 1<<31-1:
			w = 8
		case w < 4 && (v < -1<<15 || v > 1<<15-1):
			w = 4
		}
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(w))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ints)))
	for _, v := range ints {
		switch w {
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		default:
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	}
	return b
}

// intsetValues checks an intset blob (intsetValidateIntegrity, deep: the
// members strictly ascending) and returns its members.
func intsetValues(b []byte) ([]int64, error) {
	if len(b) < 8 {
		return nil, errIntset
	}
	w := int(binary.LittleEndian.Uint32(b))
	n := uint64(binary.LittleEndian.Uint32(b[4:]))
	if (w != 2 && w != 4 && w != 8) || 8+n*uint64(w) != uint64(len(b)) || n == 0 {
		return nil, errIntset
	}
	ints := make([]int64, n)
	for i := range ints {
		p := b[8+i*w:]
		switch w {
		case 2:
			ints[i] = int64(int16(binary.LittleEndian.Uint16(p)))
		case 4:
			ints[i] = int64(int32(binary.LittleEndian.Uint32(p)))
		default:
			ints[i] = int64(binary.LittleEndian.Uint64(p))
		}
		if i > 0 && ints[i] <= ints[i-1] {
			return nil, errIntset
		}
	}
	return slices.Clip(ints), nil
}
