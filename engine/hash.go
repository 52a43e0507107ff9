package engine

import (
	"math"
	"math/big"
	"slices"
	"strings"
	"unsafe"
)

// Hash error texts not shared with other files.
const (
	errNaNOrInfinity = "ERR value is NaN or Infinity"
)

// Redis's listpack limits (hash-max-listpack-entries/-value, in
// Engine.Enc): below them Redis keeps a hash in insertion order, which
// replies show.
const (
	hashIndexMin = 16 // pairs from which a field index is kept
)

func init() {
	Register(
		&Command{Name: "hset", Arity: -4, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0", Summary: "Creates or modifies the value of a field in a hash.", Run: cmdHSet},
		&Command{Name: "hsetnx", Arity: 4, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0", Summary: "Sets the value of a field in a hash only when the field doesn't exist.", Run: cmdHSetNX},
		&Command{Name: "hmset", Arity: -4, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0", Summary: "Sets the values of multiple fields.", Run: cmdHMSet},
		&Command{Name: "hget", Arity: 3, Flags: "readonly fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0", Summary: "Returns the value of a field in a hash.", Run: cmdHGet},
		&Command{Name: "hmget", Arity: -3, Flags: "readonly fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0", Summary: "Returns the values of all fields in a hash.", Run: cmdHMGet},
		&Command{Name: "hgetall", Arity: 2, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0", Summary: "Returns all fields and values in a hash.", Run: cmdHGetAll},
		&Command{Name: "hdel", Arity: -3, Flags: "write fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0", Summary: "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.", Run: cmdHDel},
		&Command{Name: "hexists", Arity: 3, Flags: "readonly fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0", Summary: "Determines whether a field exists in a hash.", Run: cmdHExists},
		&Command{Name: "hlen", Arity: 2, Flags: "readonly fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0", Summary: "Returns the number of fields in a hash.", Run: cmdHLen},
		&Command{Name: "hkeys", Arity: 2, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0", Summary: "Returns all fields in a hash.", Run: cmdHKeys},
		&Command{Name: "hvals", Arity: 2, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0", Summary: "Returns all values in a hash.", Run: cmdHVals},
		&Command{Name: "hincrby", Arity: 4, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0", Summary: "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.", Run: cmdHIncrBy},
		&Command{Name: "hincrbyfloat", Arity: 4, Flags: "write denyoom fast noeffect", FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.6.0", Summary: "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist.", Run: cmdHIncrByFloat},
		&Command{Name: "hstrlen", Arity: 3, Flags: "readonly fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "3.2.0", Summary: "Returns the length of the value of a field.", Run: cmdHStrLen},
		&Command{Name: "hscan", Arity: -3, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.8.0", Summary: "Iterates over fields and values of a hash.", Run: cmdHScan},
	)
	RegisterKind(KindHash, KindOps{Clone: func(p unsafe.Pointer, n int64) (unsafe.Pointer, int64) {
		h := Hash{lpVal{p, n}}
		c := h.clone(0)
		return c.p, c.n
	}})
}

// hashTable is a hash too large for the listpack (hash_listpack.go):
// field/value pairs in one slice in insertion order, plus a field index
// once the hash has hashIndexMin pairs. Values are list elements (lelem):
// integers in canonical form are stored inline, so counters and
// timestamps cost no allocation. While Redis would keep the hash as a
// listpack (ht false) deletions keep the order, so replies list fields
// exactly as Redis does; once Redis would have converted it to a
// hashtable (ht true, never reverted, as in Redis) deletions move the
// last pair into the hole (O(1)), and the order, though deterministic,
// is not Redis's.
type hashTable struct {
	kv  []hpair
	idx map[string]int32 // field -> pair index; nil for small hashes
	ht  bool
	gen uint32 // copy-on-write generation (cow.go)
}

// hpair is one field and its value.
type hpair struct {
	f string
	v lelem
}

// Len is the length of the element's value as a string.
func (x lelem) Len() int {
	if x.p == nil {
		var tmp [24]byte
		return len(appendInt(tmp[:0], x.n))
	}
	return int(x.n)
}

// find returns the pair index of field, or -1.
func (h *hashTable) find(field string) int {
	if h.idx != nil {
		if i, ok := h.idx[field]; ok {
			return int(i)
		}
		return -1
	}
	for i := range h.kv {
		if h.kv[i].f == field {
			return i
		}
	}
	return -1
}

// set sets field (a lookup view) to value (owned) and reports whether
// the field is new, under the limits lim.
func (h *hashTable) set(field string, value lelem, lim *EncodingLimits) bool {
	if i := h.find(field); i >= 0 {
		if value.p != nil && value.n > lim.HashMaxListpackValue {
			h.ht = true
		}
		h.kv[i].v = value
		return false
	}
	if int64(len(field)) > lim.HashMaxListpackValue || (value.p != nil && value.n > lim.HashMaxListpackValue) {
		h.ht = true
	}
	f := strings.Clone(field)
	h.kv = append(h.kv, hpair{f, value})
	n := len(h.kv)
	if h.idx != nil {
		h.idx[f] = int32(n - 1)
	} else if n >= hashIndexMin {
		h.buildIndex()
	}
	if int64(n) > lim.HashMaxListpackEntries {
		h.ht = true
	}
	return true
}

func (h *hashTable) buildIndex() {
	h.idx = make(map[string]int32, len(h.kv))
	for i := range h.kv {
		h.idx[h.kv[i].f] = int32(i)
	}
}

// Del removes field and reports whether it was there.
func (h *hashTable) Del(field string) bool {
	i := h.find(field)
	if i < 0 {
		return false
	}
	last := len(h.kv) - 1
	if h.idx != nil {
		delete(h.idx, field)
	}
	if h.ht {
		if i != last {
			h.kv[i] = h.kv[last]
			if h.idx != nil {
				h.idx[h.kv[i].f] = int32(i)
			}
		}
	} else {
		copy(h.kv[i:], h.kv[i+1:])
		if h.idx != nil {
			for j := i; j < last; j++ {
				h.idx[h.kv[j].f] = int32(j)
			}
		}
	}
	h.kv[last] = hpair{}
	h.kv = h.kv[:last]
	if h.idx != nil && last < hashIndexMin/2 {
		h.idx = nil
	}
	if cap(h.kv) > 16 && len(h.kv)*4 < cap(h.kv) {
		h.kv = slices.Clone(h.kv)
	}
	return true
}

func (h *hashTable) clone() *hashTable {
	c := &hashTable{kv: slices.Clone(h.kv), ht: h.ht}
	if h.idx != nil {
		c.buildIndex()
	}
	return c
}

// lookupHash returns the live hash at key (nil when missing); WRONGTYPE is
// written and ok=false when the key holds another type.
func (c *Ctx) lookupHash(key []byte, read bool) (*entry, bool) {
	return c.lookupKind(key, KindHash, read)
}

// hashForWrite returns the hash at key, creating an empty one when missing.
func (c *Ctx) hashForWrite(key []byte) (*Hash, bool) {
	e, ok := c.lookupHash(key, false)
	if !ok {
		return nil, false
	}
	if e == nil {
		e = c.create(key)
		e.setHash(Hash{c.newLP()})
	}
	return e.hash(), true
}

// hsetPairs stores argv[2:] as field/value pairs and returns how many
// fields were new. An odd number of arguments is an arity error.
func (c *Ctx) hsetPairs(argv [][]byte) (int64, bool) {
	if len(argv)%2 == 1 {
		c.W.Error(ErrWrongArgs(c.Cmd.Name))
		return 0, false
	}
	h, ok := c.hashForWrite(argv[1])
	if !ok {
		return 0, false
	}
	h.convertForArgs(argv[2:], &c.E.Enc)
	if h.isLP() && len(argv) > 4 {
		h.reserveFor(argv[2:])
	}
	var added int64
	for i := 2; i < len(argv); i += 2 {
		if h.set(bstr(argv[i]), elemView(argv[i+1]), &c.E.Enc) {
			added++
		}
	}
	c.touched(argv[1])
	return added, true
}

// cmdHSet: HSET key field value [field value ...] — set the fields,
// creating the hash. Reply: the number of fields added. Errors: arity (odd
// pair count), WRONGTYPE.
func cmdHSet(c *Ctx, argv [][]byte) {
	if n, ok := c.hsetPairs(argv); ok {
		c.W.Int(n)
		c.notify(NotifyHash, "hset", argv[1])
	}
}

// cmdHMSet: HMSET key field value [field value ...] — HSET replying OK.
func cmdHMSet(c *Ctx, argv [][]byte) {
	if _, ok := c.hsetPairs(argv); ok {
		c.W.OK()
		c.notify(NotifyHash, "hset", argv[1])
	}
}

// cmdHSetNX: HSETNX key field value — set field only if it does not exist.
// Reply: 1 when set, 0 when the field existed. Errors: WRONGTYPE.
func cmdHSetNX(c *Ctx, argv [][]byte) {
	h, ok := c.hashForWrite(argv[1])
	if !ok {
		return
	}
	h.convertForArgs(argv[2:4], &c.E.Enc)
	if h.has(bstr(argv[2])) {
		c.W.Int(0)
		return
	}
	h.set(bstr(argv[2]), elemView(argv[3]), &c.E.Enc)
	c.touched(argv[1])
	c.W.Int(1)
	c.notify(NotifyHash, "hset", argv[1])
}

// cmdHGet: HGET key field — the value, or null. Errors: WRONGTYPE.
func cmdHGet(c *Ctx, argv [][]byte) {
	e, ok := c.lookupHash(argv[1], true)
	if !ok {
		return
	}
	if e != nil {
		if v, ok := e.hash().Get(bstr(argv[2])); ok {
			v.write(c.W)
			return
		}
	}
	c.W.Null()
}

// cmdHMGet: HMGET key field [field ...] — an array of values, null for each
// missing field (all null for a missing key). Errors: WRONGTYPE.
func cmdHMGet(c *Ctx, argv [][]byte) {
	e, ok := c.lookupHash(argv[1], true)
	if !ok {
		return
	}
	c.W.Array(len(argv) - 2)
	for _, f := range argv[2:] {
		if e != nil {
			if v, ok := e.hash().Get(bstr(f)); ok {
				v.write(c.W)
				continue
			}
		}
		c.W.Null()
	}
}

// hashAll replies the fields and/or values of the hash at key.
func (c *Ctx) hashAll(key []byte, fields, values bool) {
	e, ok := c.lookupHash(key, true)
	if !ok {
		return
	}
	var kv []hpair
	if e != nil {
		kv = c.hpairs(e.hash())
	}
	n := len(kv)
	if fields && values {
		c.W.Map(n)
	} else {
		c.W.Array(n)
	}
	for i := range kv {
		if fields {
			c.W.BulkString(kv[i].f)
		}
		if values {
			kv[i].v.write(c.W)
		}
	}
}

// cmdHGetAll: HGETALL key — every field and value: a map in RESP3, a flat
// array in RESP2; empty for a missing key. Errors: WRONGTYPE.
func cmdHGetAll(c *Ctx, argv [][]byte) { c.hashAll(argv[1], true, true) }

// cmdHKeys: HKEYS key — array of fields. Errors: WRONGTYPE.
func cmdHKeys(c *Ctx, argv [][]byte) { c.hashAll(argv[1], true, false) }

// cmdHVals: HVALS key — array of values. Errors: WRONGTYPE.
func cmdHVals(c *Ctx, argv [][]byte) { c.hashAll(argv[1], false, true) }

// cmdHDel: HDEL key field [field ...] — remove fields; the key is deleted
// when the hash becomes empty. Reply: the number removed. Errors: WRONGTYPE.
func cmdHDel(c *Ctx, argv [][]byte) {
	e, ok := c.lookupHash(argv[1], false)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	h := e.hash()
	var n int64
	for _, f := range argv[2:] {
		if h.Del(bstr(f)) {
			n++
			if h.Len() == 0 {
				break
			}
		}
	}
	if n > 0 {
		c.removeIfEmpty(e, h.Len() == 0)
		c.touched(argv[1])
		c.notify(NotifyHash, "hdel", argv[1])
		if h.Len() == 0 {
			c.notify(NotifyGeneric, "del", argv[1])
		}
	}
	c.W.Int(n)
}

// cmdHExists: HEXISTS key field — 1 if the field exists, else 0.
func cmdHExists(c *Ctx, argv [][]byte) {
	e, ok := c.lookupHash(argv[1], true)
	if !ok {
		return
	}
	if e != nil && e.hash().has(bstr(argv[2])) {
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}

// cmdHLen: HLEN key — the number of fields, 0 for a missing key.
func cmdHLen(c *Ctx, argv [][]byte) {
	e, ok := c.lookupHash(argv[1], true)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(e.hash().Len()))
}

// cmdHStrLen: HSTRLEN key field — the length of the value, 0 when missing.
func cmdHStrLen(c *Ctx, argv [][]byte) {
	e, ok := c.lookupHash(argv[1], true)
	if !ok {
		return
	}
	if e != nil {
		if v, ok := e.hash().Get(bstr(argv[2])); ok {
			c.W.Int(int64(v.Len()))
			return
		}
	}
	c.W.Int(0)
}

// cmdHIncrBy: HINCRBY key field increment — add increment to the integer
// value of field (0 when missing), creating hash and field. Reply: the new
// value. Errors: not an integer (increment, checked first), WRONGTYPE,
// "hash value is not an integer", overflow.
func cmdHIncrBy(c *Ctx, argv [][]byte) {
	incr, ok := ParseIntB(argv[3])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	h, ok := c.hashForWrite(argv[1])
	if !ok {
		return
	}
	var cur int64
	if v, ok := h.Get(bstr(argv[2])); ok {
		n, ok := v.n, v.p == nil // a string value is never a canonical integer
		if !ok {
			c.W.Error(ErrHashNotInt)
			return
		}
		cur = n
	}
	if (incr < 0 && cur < 0 && incr < -1<<63-cur) || (incr > 0 && cur > 0 && incr > 1<<63-1-cur) {
		c.W.Error(ErrOverflow)
		return
	}
	cur += incr
	h.set(bstr(argv[2]), lelem{n: cur}, &c.E.Enc)
	c.touched(argv[1])
	c.W.Int(cur)
	c.notify(NotifyHash, "hincrby", argv[1])
}

func appendInt(b []byte, n int64) []byte {
	if n < 0 {
		b = append(b, '-')
		return appendUint(b, uint64(-n))
	}
	return appendUint(b, uint64(n))
}

func appendUint(b []byte, u uint64) []byte {
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}

// cmdHIncrByFloat: HINCRBYFLOAT key field increment — add increment to the
// field's value (0 when missing) in x87 80-bit long double arithmetic, as
// Redis does on x86-64, and store/reply the sum formatted with "%.17Lf"
// without trailing zeros. Reply: bulk string. Errors: "value is not a valid
// float" (increment), "value is NaN or Infinity" (increment), WRONGTYPE,
// "hash value is not a float", "increment would produce NaN or Infinity".
func cmdHIncrByFloat(c *Ctx, argv [][]byte) {
	incr, ok := parseLongDouble(bstr(argv[3]))
	if !ok {
		c.W.Error(ErrNotFloat)
		return
	}
	if incr.IsInf() {
		c.W.Error(errNaNOrInfinity)
		return
	}
	h, ok := c.hashForWrite(argv[1])
	if !ok {
		return
	}
	sum := incr
	if v, ok := h.Get(bstr(argv[2])); ok {
		cur, ok := parseLongDouble(v.String())
		if !ok {
			c.W.Error(ErrHashNotFloat)
			return
		}
		if cur.IsInf() {
			c.W.Error(ErrIncrNaN)
			return
		}
		sum = new(big.Float).SetPrec(64).Add(cur, incr)
	}
	if !longDoubleFinite(sum) {
		c.W.Error(ErrIncrNaN)
		return
	}
	s := formatLongDouble(sum)
	h.set(bstr(argv[2]), elemOfString(s), &c.E.Enc)
	c.touched(argv[1])
	c.W.BulkString(s)
	c.notify(NotifyHash, "hincrbyfloat", argv[1])
	// the effect carries the result (HSET key field <new value>), so that
	// no replica computes the sum again
	if f := c.own(4); f != nil {
		f.argStr("HSET")
		f.arg(argv[1])
		f.arg(argv[2])
		f.argStr(s)
	}
}

// parseScanCursor is Redis's parseScanCursorOrReply: strtoul in base 10
// of the whole argument (an optional sign, a negative value wrapping
// around; an empty string is 0), no leading space, no overflow.
func parseScanCursor(b []byte) (uint64, bool) {
	s := bstr(b)
	if len(s) == 0 {
		return 0, true
	}
	if isSpaceByte(s[0]) {
		return 0, false
	}
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := uint64(ch - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}

// scanOpts are the options of SCAN, HSCAN, SSCAN and ZSCAN.
type scanOpts struct {
	pat    string
	usePat bool
	count  int64
	typ    []byte // SCAN's TYPE; nil when absent
}

// parseScanOpts parses [MATCH pattern] [COUNT count] (and [TYPE type] when
// allowType, SCAN only) from argv[from:], as Redis's scanGenericCommand
// does: COUNT not an integer is ErrNotInt, COUNT < 1 and anything else a
// syntax error.
func (c *Ctx) parseScanOpts(argv [][]byte, from int, allowType bool) (scanOpts, bool) {
	o := scanOpts{count: 10}
	for i := from; i < len(argv); {
		more := len(argv) - i
		switch {
		case EqualFold(argv[i], "count") && more >= 2:
			n, ok := ParseIntB(argv[i+1])
			if !ok {
				c.W.Error(ErrNotInt)
				return o, false
			}
			if n < 1 {
				c.W.Error(ErrSyntax)
				return o, false
			}
			o.count = n
			i += 2
		case EqualFold(argv[i], "match") && more >= 2:
			o.pat = bstr(argv[i+1])
			o.usePat = o.pat != "*"
			i += 2
		case allowType && EqualFold(argv[i], "type") && more >= 2:
			o.typ = argv[i+1]
			i += 2
		default:
			c.W.Error(ErrSyntax)
			return o, false
		}
	}
	return o, true
}

// scanWindow is the cursor of HSCAN/SSCAN over a hashtable-encoded value
// held as a slice from which deletions swap-remove (the last element moves
// into the hole). Positions are visited from the end down: a cursor c != 0
// means positions [0, c) are still to visit (0 starts with the whole
// slice). A swap-remove only ever moves the last element, which is either
// already visited (it may then be returned twice, as Redis allows) or,
// when everything left is unvisited, stays unvisited; appended elements land
// past the window. So every element present for the whole scan is returned,
// Redis's guarantee. It returns the positions [from, to) to visit now and
// the next cursor.
func scanWindow(cur, n uint64, count int64) (from, to, next uint64) {
	to = n
	if cur != 0 {
		to = min(cur, n)
	}
	if uint64(count) < to {
		from = to - uint64(count)
	}
	return from, to, from
}

// writeEmptyScan replies a finished, empty scan: ["0", []].
func (c *Ctx) writeEmptyScan() {
	c.W.Array(2)
	c.W.BulkString("0")
	c.W.EmptyArray()
}

// cmdHScan: HSCAN key cursor [MATCH pattern] [COUNT count] — iterate the
// hash. Reply: [next cursor, flat array of field, value, …]. A hash Redis
// keeps as a listpack is returned whole with cursor 0 (COUNT ignored), as
// Redis does; a larger one is walked COUNT pairs per call with the cursor
// as a position (cursor values differ from Redis's). MATCH filters fields.
// Errors: "invalid cursor" (checked first), then WRONGTYPE, then options;
// a missing key replies an empty scan without parsing options.
func cmdHScan(c *Ctx, argv [][]byte) {
	cur, ok := parseScanCursor(argv[2])
	if !ok {
		c.W.Error(ErrInvalidCursor)
		return
	}
	e, ok := c.lookupHash(argv[1], true)
	if !ok {
		return
	}
	if e == nil {
		c.writeEmptyScan()
		return
	}
	o, ok := c.parseScanOpts(argv, 3, false)
	if !ok {
		return
	}
	h := e.hash()
	ht := h.ht()
	kv := c.hpairs(h)
	n := uint64(len(kv))
	from, to, next := uint64(0), n, uint64(0)
	if ht {
		from, to, next = scanWindow(cur, n, o.count)
	}
	var out []int
	for k := from; k < to; k++ {
		i := k
		if ht { // walk down: see scanWindow
			i = to - 1 - (k - from)
		}
		if o.usePat && !Match(o.pat, kv[i].f, false) {
			continue
		}
		out = append(out, int(i))
	}
	c.W.Array(2)
	var tmp [24]byte
	c.W.Bulk(appendUint(tmp[:0], next))
	c.W.Array(2 * len(out))
	for _, i := range out {
		c.W.BulkString(kv[i].f)
		kv[i].v.write(c.W)
	}
}

func init() {
	Register(&Command{Name: "hrandfield", Arity: -2, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "6.2.0", Summary: "Returns one or more random fields from a hash.", Run: cmdHRandField})
}

// cmdHRandField: HRANDFIELD key [count [WITHVALUES]] — random fields
// (c.rng()). Without count: a field, null for a missing key. With count:
// an array; count > 0 gives min(count, HLEN) distinct fields (the whole
// hash, in its order, when count >= HLEN), count < 0 gives -count fields
// that may repeat; empty for 0 or a missing key. WITHVALUES adds each value:
// flat in RESP2, a [field, value] array per pair in RESP3. Errors: not an
// integer, LLONG_MIN out of range, syntax error, "value is out of range"
// (WITHVALUES with |count| > LLONG_MAX/2), WRONGTYPE.
func cmdHRandField(c *Ctx, argv [][]byte) {
	if len(argv) == 2 {
		e, ok := c.lookupHash(argv[1], true)
		if !ok {
			return
		}
		if e == nil {
			c.W.Null()
			return
		}
		kv := c.hpairs(e.hash())
		c.W.BulkString(kv[c.rng().Intn(len(kv))].f)
		return
	}
	count, ok := ParseIntB(argv[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	if count == -1<<63 {
		c.W.Error(errSRandRange)
		return
	}
	withValues := false
	if len(argv) > 4 || (len(argv) == 4 && !EqualFold(argv[3], "withvalues")) {
		c.W.Error(ErrSyntax)
		return
	}
	withValues = len(argv) == 4
	if withValues && (count < -math.MaxInt64/2 || count > math.MaxInt64/2) {
		c.W.Error(errOutOfRange)
		return
	}
	e, ok := c.lookupHash(argv[1], true)
	if !ok {
		return
	}
	if e == nil || count == 0 {
		c.W.EmptyArray()
		return
	}
	kv := c.hpairs(e.hash())
	n := len(kv)
	write := func(i int) {
		if withValues {
			if c.W.Proto == 3 {
				c.W.Array(2)
			}
			c.W.BulkString(kv[i].f)
			kv[i].v.write(c.W)
			return
		}
		c.W.BulkString(kv[i].f)
	}
	header := func(k int) {
		if withValues && c.W.Proto != 3 {
			c.W.Array(2 * k)
		} else {
			c.W.Array(k)
		}
	}
	switch {
	case count < 0:
		if c.randCountTooLarge(count) {
			return
		}
		start := len(c.W.B)
		header(int(-count))
		for k := int64(0); k < -count; k++ {
			if k&1023 == 1023 && c.randReplyTooLarge(start) {
				return
			}
			write(c.rng().Intn(n))
		}
	case count >= int64(n):
		header(n)
		for i := 0; i < n; i++ {
			write(i)
		}
	case count*4 < int64(n):
		header(int(count))
		seen := make(map[int]struct{}, count)
		for len(seen) < int(count) {
			i := c.rng().Intn(n)
			if _, dup := seen[i]; dup {
				continue
			}
			seen[i] = struct{}{}
			write(i)
		}
	default:
		pos := make([]int32, n)
		for i := range pos {
			pos[i] = int32(i)
		}
		header(int(count))
		for k := 0; k < int(count); k++ {
			j := k + c.rng().Intn(n-k)
			pos[k], pos[j] = pos[j], pos[k]
			write(int(pos[k]))
		}
	}
}
