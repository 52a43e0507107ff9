package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unsafe"
)

// Reading RDB: the values of a snapshot or of a RESTORE payload, written
// by limitdb or by redis-server 7.0 (every encoding Redis 7.0 writes:
// listpack, intset, quicklist 2, LZF and integer strings; and the plain
// RDB_TYPE_LIST / ZSET of older versions). What limitdb cannot hold is
// refused with an error naming it: streams, module values other than
// limitdb's limiters, module aux data, and the ziplist/zipmap encodings of
// Redis before 7.0. Function libraries are read as their code
// (functions_rdb.go) and compiled by the scripting package.
//
// The input is hostile until checked: every length is checked against
// what is left (a payload) or read as it arrives (a stream), so memory
// grows only with input actually read (LZF output is bounded by the
// format's 88:1 ratio); counts never preallocate more than 1024 slots;
// every listpack and intset is validated entry by entry; duplicates, NaN
// scores and bad limiter parameters are errors. Nothing here panics on
// any input (FuzzRDBLoad).

var (
	errRDBTruncated  = errors.New("unexpected end of the RDB data")
	errRDBCorrupt    = errors.New("the RDB data is corrupt")
	errEmptyKey      = errors.New("empty key")
	errLimiterFormat = errors.New("corrupt limiter value")
)

// rdbReader reads RDB primitives from a stream (src) or a byte slice
// (src nil, buf the whole input), keeping the CRC64 of what it consumed.
type rdbReader struct {
	src     io.Reader
	buf     []byte
	pos     int
	crcBase uint64 // CRC of the bytes consumed before buf[0]
	srcErr  error
}

const rdbReadChunk = 64 << 10

func newRDBStream(r io.Reader) *rdbReader {
	return &rdbReader{src: r, buf: make([]byte, 0, rdbReadChunk)}
}

func newRDBBytes(b []byte) *rdbReader { return &rdbReader{buf: b} }

// sum is the CRC64 of everything consumed so far.
func (r *rdbReader) sum() uint64 { return crc64Update(r.crcBase, r.buf[:r.pos]) }

// fill makes at least n (<= rdbReadChunk) unread bytes available.
func (r *rdbReader) fill(n int) error {
	if len(r.buf)-r.pos >= n {
		return nil
	}
	if r.src == nil || r.srcErr != nil {
		return errRDBTruncated
	}
	r.crcBase = crc64Update(r.crcBase, r.buf[:r.pos])
	k := copy(r.buf[:cap(r.buf)], r.buf[r.pos:])
	r.buf, r.pos = r.buf[:k], 0
	for empty := 0; len(r.buf) < n; {
		m, err := r.src.Read(r.buf[len(r.buf):cap(r.buf)])
		r.buf = r.buf[:len(r.buf)+m]
		if m == 0 && err == nil {
			if empty++; empty == 100 { // as bufio: a reader that never progresses
				err = io.ErrNoProgress
			}
		}
		if err != nil {
			r.srcErr = err
			if len(r.buf) < n {
				if err != io.EOF {
					return err
				}
				return errRDBTruncated
			}
		}
	}
	return nil
}

func (r *rdbReader) byte1() (byte, error) {
	if err := r.fill(1); err != nil {
		return 0, err
	}
	b := r.buf[r.pos]
	r.pos++
	return b, nil
}

// view returns the next n bytes (n <= rdbReadChunk), valid until the next
// read.
func (r *rdbReader) view(n int) ([]byte, error) {
	if err := r.fill(n); err != nil {
		return nil, err
	}
	b := r.buf[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

// bytes returns the next n bytes: a view when they are buffered, else a
// new slice (owned) grown as the input arrives, so a huge claimed length
// costs only what the input really holds.
func (r *rdbReader) bytes(n uint64) (b []byte, owned bool, err error) {
	if left := uint64(len(r.buf) - r.pos); n <= left {
		b = r.buf[r.pos : r.pos+int(n)]
		r.pos += int(n)
		return b, false, nil
	}
	if r.src == nil || n > math.MaxInt/2 {
		return nil, false, errRDBTruncated
	}
	out := make([]byte, 0, min(n, 1<<20))
	for uint64(len(out)) < n {
		k := int(min(n-uint64(len(out)), rdbReadChunk))
		v, err := r.view(k)
		if err != nil {
			return nil, false, err
		}
		out = append(out, v...)
	}
	return out, true, nil
}

// lengthEnc is rdbLoadLenByRef: a length, or (encoded) a special string
// encoding number.
func (r *rdbReader) lengthEnc() (uint64, bool, error) {
	b, err := r.byte1()
	if err != nil {
		return 0, false, err
	}
	switch b >> 6 {
	case 0:
		return uint64(b & 0x3F), false, nil
	case 1:
		c, err := r.byte1()
		if err != nil {
			return 0, false, err
		}
		return uint64(b&0x3F)<<8 | uint64(c), false, nil
	case 3:
		return uint64(b & 0x3F), true, nil
	}
	switch b {
	case 0x80:
		v, err := r.view(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(v)), false, nil
	case 0x81:
		v, err := r.view(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(v), false, nil
	}
	return 0, false, errRDBCorrupt
}

// length is a length that must not be a string encoding.
func (r *rdbReader) length() (uint64, error) {
	n, enc, err := r.lengthEnc()
	if err == nil && enc {
		err = errRDBCorrupt
	}
	return n, err
}

// str reads a string (rdbGenericLoadStringObject): integer-encoded ones
// as their decimal text, LZF ones decompressed. owned: b is not a view of
// the read buffer.
func (r *rdbReader) str() (b []byte, owned bool, err error) {
	n, enc, err := r.lengthEnc()
	if err != nil {
		return nil, false, err
	}
	if !enc {
		return r.bytes(n)
	}
	var v int64
	switch n {
	case rdbEncInt8:
		x, err := r.view(1)
		if err != nil {
			return nil, false, err
		}
		v = int64(int8(x[0]))
	case rdbEncInt16:
		x, err := r.view(2)
		if err != nil {
			return nil, false, err
		}
		v = int64(int16(binary.LittleEndian.Uint16(x)))
	case rdbEncInt32:
		x, err := r.view(4)
		if err != nil {
			return nil, false, err
		}
		v = int64(int32(binary.LittleEndian.Uint32(x)))
	case rdbEncLZF:
		clen, err := r.length()
		if err != nil {
			return nil, false, err
		}
		ulen, err := r.length()
		if err != nil {
			return nil, false, err
		}
		// a back reference of 3 bytes makes at most 264: nothing real
		// expands more than 88 times
		if clen == 0 || ulen == 0 || ulen/88 > clen {
			return nil, false, errRDBCorrupt
		}
		c, _, err := r.bytes(clen)
		if err != nil {
			return nil, false, err
		}
		out := make([]byte, ulen)
		if !lzfDecompress(c, out) {
			return nil, false, errRDBCorrupt
		}
		return out, true, nil
	default:
		return nil, false, errRDBCorrupt
	}
	return strconv.AppendInt(nil, v, 10), true, nil
}

// strString reads a string the caller keeps.
func (r *rdbReader) strString() (string, error) {
	b, owned, err := r.str()
	if err != nil {
		return "", err
	}
	if owned && len(b) > 0 {
		return unsafe.String(&b[0], len(b)), nil
	}
	return string(b), nil
}

// --- values -------------------------------------------------------------------

// rdbValue is a loaded value, ready for an entry's fields.
type rdbValue struct {
	kind Kind
	enc  uint8
	p    unsafe.Pointer
	n    int64
}

func (v *rdbValue) install(e *entry) { e.kind, e.enc, e.p, e.n = v.kind, v.enc, v.p, v.n }

// loadOpts says how encodings are chosen.
type loadOpts struct {
	// strict: keep the encodings the type bytes and hints say (a limitdb
	// snapshot, whose reload must give back the exact state); otherwise
	// choose them as Redis 7.0's rdbLoadObject does under lim (a file or
	// payload from Redis, a RESTORE).
	strict bool
	lim    *EncodingLimits
	keyEnc string // the limitdb-key-enc hint of the next key
}

// unsupported names the RDB types limitdb cannot represent.
func unsupported(typ byte) error {
	switch typ {
	case rdbTypeStream, rdbTypeStream2:
		return errors.New("limitdb cannot load streams")
	case rdbTypeHashZipmap, rdbTypeListZiplist, rdbTypeZsetZiplist, rdbTypeHashZiplist, rdbTypeListQuicklist:
		return fmt.Errorf("limitdb cannot load the ziplist/zipmap encoding (RDB type %d, written by Redis before 7.0)", typ)
	}
	return fmt.Errorf("unknown RDB type %d", typ)
}

// loadValue reads a value of RDB type typ (rdbLoadObject).
func (r *rdbReader) loadValue(typ byte, o *loadOpts) (rdbValue, error) {
	switch typ {
	case rdbTypeString:
		b, owned, err := r.str()
		if err != nil {
			return rdbValue{}, err
		}
		return strValue(b, owned, o), nil
	case rdbTypeList, rdbTypeListQuicklist2:
		return r.loadList(typ)
	case rdbTypeSet, rdbTypeSetIntset:
		return r.loadSet(typ, o)
	case rdbTypeZset, rdbTypeZset2, rdbTypeZsetListpack:
		return r.loadZset(typ, o)
	case rdbTypeHash, rdbTypeHashListpack:
		return r.loadHash(typ, o)
	case rdbTypeModule, rdbTypeModule2:
		return r.loadModule(typ)
	}
	return rdbValue{}, unsupported(typ)
}

// strValue is a string value: an integer when canonical (Redis's
// tryObjectEncoding), unless a limitdb hint says how it was held.
func strValue(b []byte, owned bool, o *loadOpts) rdbValue {
	v := rdbValue{kind: KindString}
	if o.keyEnc == "" && len(b) <= 20 {
		if n, ok := ParseIntB(b); ok {
			v.enc, v.n = encInt, n
			return v
		}
	}
	var s string
	if owned && len(b) > 0 {
		s = unsafe.String(&b[0], len(b))
	} else {
		s = string(b)
	}
	v.enc, v.p, v.n = encRaw, unsafe.Pointer(unsafe.StringData(s)), int64(len(s))
	if o.keyEnc == "raw" {
		v.enc = encRawObj
	}
	return v
}

func (r *rdbReader) loadList(typ byte) (rdbValue, error) {
	n, err := r.length()
	if err != nil {
		return rdbValue{}, err
	}
	l := &listRing{}
	for ; n > 0; n-- {
		if typ == rdbTypeList {
			b, _, err := r.str()
			if err != nil {
				return rdbValue{}, err
			}
			l.PushBack(elemOf(b))
			continue
		}
		container, err := r.length()
		if err != nil {
			return rdbValue{}, err
		}
		b, _, err := r.str()
		if err != nil {
			return rdbValue{}, err
		}
		switch {
		case len(b) == 0:
			return rdbValue{}, errRDBCorrupt
		case container == quicklistPlain:
			l.PushBack(elemOf(b))
		case container == quicklistPacked:
			err := lpEach(b, func(s []byte, v int64, isInt bool) error {
				if isInt {
					l.PushBack(lelem{n: v})
				} else {
					l.PushBack(elemOf(s))
				}
				return nil
			})
			if err != nil {
				return rdbValue{}, err
			}
		default:
			return rdbValue{}, errRDBCorrupt
		}
	}
	if l.n == 0 {
		return rdbValue{}, errEmptyKey
	}
	v := listOfRing(l)
	return rdbValue{kind: KindList, p: v.p, n: v.n}, nil
}

var errDupMember = errors.New("duplicate set members detected")

func (r *rdbReader) loadSet(typ byte, o *loadOpts) (rdbValue, error) {
	s := &Set{}
	if typ == rdbTypeSetIntset {
		b, _, err := r.str()
		if err != nil {
			return rdbValue{}, err
		}
		ints, err := intsetValues(b)
		if err != nil {
			return rdbValue{}, err
		}
		s.ints = ints
		if !o.strict && int64(len(ints)) > o.lim.SetMaxIntsetEntries {
			s.toHT()
		}
		return rdbValue{kind: KindSet, p: unsafe.Pointer(s)}, nil
	}
	n, err := r.length()
	if err != nil {
		return rdbValue{}, err
	}
	if n == 0 {
		return rdbValue{}, errEmptyKey
	}
	// Redis tries an intset when the set is small enough; a limitdb
	// snapshot says hashtable and means it
	intset := !o.strict && n <= uint64(max(o.lim.SetMaxIntsetEntries, 0))
	members := make([]string, 0, min(n, 1024))
	for i := uint64(0); i < n; i++ {
		m, err := r.strString()
		if err != nil {
			return rdbValue{}, err
		}
		if intset {
			if _, ok := ParseInt(m); !ok {
				intset = false
			}
		}
		members = append(members, m)
	}
	if intset {
		for _, m := range members {
			if !s.add(m, o.lim) {
				return rdbValue{}, errDupMember
			}
		}
		return rdbValue{kind: KindSet, p: unsafe.Pointer(s)}, nil
	}
	s.ht = true
	s.members = members
	if len(members) >= setIndexMin {
		s.buildIndex()
		if len(s.idx) != len(members) {
			return rdbValue{}, errDupMember
		}
	} else {
		for i := range members {
			for j := 0; j < i; j++ {
				if members[i] == members[j] {
					return rdbValue{}, errDupMember
				}
			}
		}
	}
	return rdbValue{kind: KindSet, p: unsafe.Pointer(s)}, nil
}

var errDupZset = errors.New("duplicate zset fields detected")

func (r *rdbReader) loadZset(typ byte, o *loadOpts) (rdbValue, error) {
	z := newZskip()
	add := func(m string, score float64) error {
		if math.IsNaN(score) {
			return errors.New("zset with NAN score detected")
		}
		if z.find(m) != nil {
			return errDupZset
		}
		z.insert(z.norm(score), m)
		return nil
	}
	if typ == rdbTypeZsetListpack {
		b, _, err := r.str()
		if err != nil {
			return rdbValue{}, err
		}
		var member string
		odd := false
		err = lpEach(b, func(s []byte, v int64, isInt bool) error {
			if !odd {
				odd = true
				if isInt {
					member = strconv.FormatInt(v, 10)
				} else {
					member = string(s)
				}
				return nil
			}
			odd = false
			score := float64(v)
			if !isInt {
				f, ok := strtod(bstr(s))
				if !ok {
					return errRDBCorrupt
				}
				score = f
			}
			return add(member, score)
		})
		if err == nil && odd {
			err = errListpack
		}
		if err != nil {
			return rdbValue{}, err
		}
		if z.len() == 0 {
			return rdbValue{}, errEmptyKey
		}
		if !o.strict && int64(z.len()) > o.lim.ZsetMaxListpackEntries {
			z.setBig()
		}
		return zsetValue(z), nil
	}
	n, err := r.length()
	if err != nil {
		return rdbValue{}, err
	}
	if n == 0 {
		return rdbValue{}, errEmptyKey
	}
	// a skiplist: Redis converts it to a listpack after loading when it
	// fits the limits; a limitdb snapshot keeps what it says
	z.setBig()
	maxLen := 0
	for i := uint64(0); i < n; i++ {
		m, err := r.strString()
		if err != nil {
			return rdbValue{}, err
		}
		var score float64
		if typ == rdbTypeZset2 {
			b, err := r.view(8)
			if err != nil {
				return rdbValue{}, err
			}
			score = math.Float64frombits(binary.LittleEndian.Uint64(b))
		} else if score, err = r.oldDouble(); err != nil {
			return rdbValue{}, err
		}
		maxLen = max(maxLen, len(m))
		if err := add(m, score); err != nil {
			return rdbValue{}, err
		}
	}
	if !o.strict && int64(z.len()) <= o.lim.ZsetMaxListpackEntries && int64(maxLen) <= o.lim.ZsetMaxListpackValue {
		z.big = false // zsetOf makes it a listpack (-0 becomes 0)
	}
	return zsetValue(z), nil
}

// oldDouble is rdbLoadDoubleValue (RDB_TYPE_ZSET): a length byte (253
// nan, 254 +inf, 255 -inf) and the number as text.
func (r *rdbReader) oldDouble() (float64, error) {
	l, err := r.byte1()
	if err != nil {
		return 0, err
	}
	switch l {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	b, err := r.view(int(l))
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, errRDBCorrupt
	}
	return f, nil
}

var errDupHash = errors.New("duplicate hash fields detected")

// zsetValue is the loaded value of sk.
func zsetValue(sk *zskip) rdbValue {
	z := zsetOf(sk)
	return rdbValue{kind: KindZSet, p: z.p, n: z.n}
}

// hashValue is the loaded value of t.
func hashValue(t *hashTable) rdbValue {
	h := hashOf(t)
	return rdbValue{kind: KindHash, p: h.p, n: h.n}
}

func (r *rdbReader) loadHash(typ byte, o *loadOpts) (rdbValue, error) {
	h := &hashTable{}
	add := func(f string, v lelem) error {
		if h.find(f) >= 0 {
			return errDupHash
		}
		h.kv = append(h.kv, hpair{f, v})
		if h.idx != nil {
			h.idx[f] = int32(len(h.kv) - 1)
		} else if len(h.kv) >= hashIndexMin {
			h.buildIndex()
		}
		return nil
	}
	if typ == rdbTypeHashListpack {
		b, _, err := r.str()
		if err != nil {
			return rdbValue{}, err
		}
		var field string
		odd := false
		err = lpEach(b, func(s []byte, v int64, isInt bool) error {
			var x lelem
			if isInt {
				x = lelem{n: v}
			} else {
				x = elemOf(s)
			}
			if !odd {
				odd = true
				field = x.String()
				return nil
			}
			odd = false
			return add(field, x)
		})
		if err == nil && odd {
			err = errListpack
		}
		if err != nil {
			return rdbValue{}, err
		}
		if len(h.kv) == 0 {
			return rdbValue{}, errEmptyKey
		}
		h.ht = !o.strict && int64(len(h.kv)) > o.lim.HashMaxListpackEntries
		return hashValue(h), nil
	}
	n, err := r.length()
	if err != nil {
		return rdbValue{}, err
	}
	if n == 0 {
		return rdbValue{}, errEmptyKey
	}
	ht := o.strict || n > uint64(max(o.lim.HashMaxListpackEntries, 0))
	for i := uint64(0); i < n; i++ {
		f, err := r.strString()
		if err != nil {
			return rdbValue{}, err
		}
		v, _, err := r.str()
		if err != nil {
			return rdbValue{}, err
		}
		if int64(len(f)) > o.lim.HashMaxListpackValue || int64(len(v)) > o.lim.HashMaxListpackValue {
			ht = true
		}
		if err := add(f, elemOf(v)); err != nil {
			return rdbValue{}, err
		}
	}
	h.ht = ht
	return hashValue(h), nil
}

// --- DUMP payloads ------------------------------------------------------------

// verifyDumpPayload is Redis's: at least the 10-byte footer, an RDB
// version not newer than 10, and the CRC64 of everything before the
// checksum.
func verifyDumpPayload(p []byte) bool {
	if len(p) < 10 {
		return false
	}
	f := p[len(p)-10:]
	if int(binary.LittleEndian.Uint16(f)) > rdbVersion {
		return false
	}
	return binary.LittleEndian.Uint64(f[2:]) == crc64Update(0, p[:len(p)-8])
}

// loadDumpPayload reads the value of a verified payload, choosing
// encodings as Redis's RESTORE does (under lim). Like Redis it reads from
// the whole payload, footer included, and ignores what follows the value.
func loadDumpPayload(p []byte, lim *EncodingLimits) (rdbValue, error) {
	r := newRDBBytes(p)
	typ, err := r.byte1()
	if err != nil {
		return rdbValue{}, err
	}
	return r.loadValue(typ, &loadOpts{lim: lim})
}
