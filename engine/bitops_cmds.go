package engine

import (
	"math/bits"
	"unsafe"
)

// BITCOUNT, BITPOS and BITOP (Redis 7.0 bitops.c), with the same index
// arithmetic: BYTE or BIT ranges, negative indexes from the end, and
// BITPOS's rule that a clear bit just past an explicit range is not found.

const (
	errBitArg   = "ERR The bit argument must be 1 or 0."
	errBitopNot = "ERR BITOP NOT must be called with a single source key."
)

func init() {
	Register(
		&Command{Name: "bitcount", Arity: -2, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "2.6.0",
			Summary: "Counts the number of set bits (population counting) in a string.", Run: cmdBitCount},
		&Command{Name: "bitpos", Arity: -3, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "2.8.7",
			Summary: "Finds the first set (1) or clear (0) bit in a string.", Run: cmdBitPos},
		&Command{Name: "bitop", Arity: -4, Flags: "write denyoom", FirstKey: 2, LastKey: -1, Step: 1, Group: "bitmap", Since: "2.6.0",
			Summary: "Performs bitwise operations on multiple strings, and stores the result.", Run: cmdBitOp},
	)
}

// strBytes is e's string value as bytes (integers formatted into tmp).
func strBytes(e *entry, tmp []byte) []byte {
	if e.enc == encInt {
		return e.appendStr(tmp[:0])
	}
	return unsafe.Slice((*byte)(e.p), e.n)
}

// bitsOrZero is the string at key for a bit read (integers formatted
// into tmp); a missing key replies :0 and WRONGTYPE its error, and both
// return ok false.
func (c *Ctx) bitsOrZero(key, tmp []byte) ([]byte, bool) {
	e, ok := c.lookupString(key, true)
	if !ok {
		return nil, false
	}
	if e == nil {
		c.W.Int(0)
		return nil, false
	}
	return strBytes(e, tmp), true
}

// bitRange turns start/end (bytes or, with isBit, bits) into a byte range
// of a string of n bytes and the masks of the edge bits outside a bit
// range, as bitcountCommand and bitposCommand do.
func bitRange(start, end int64, n int, isBit bool) (s, e int64, firstMask, lastMask byte) {
	total := int64(n)
	if isBit {
		total <<= 3
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	if end >= total {
		end = total - 1
	}
	if isBit && start <= end {
		firstMask = ^byte((1 << (8 - (start & 7))) - 1)
		lastMask = byte((1 << (7 - (end & 7))) - 1)
		start >>= 3
		end >>= 3
	}
	return start, end, firstMask, lastMask
}

// parseBitUnit reads BIT or BYTE.
func parseBitUnit(c *Ctx, a []byte) (isBit, ok bool) {
	switch {
	case EqualFold(a, "bit"):
		return true, true
	case EqualFold(a, "byte"):
		return false, true
	}
	c.W.Error(ErrSyntax)
	return false, false
}

func popcount(b []byte) (n int64) {
	for _, x := range b {
		n += int64(bits.OnesCount8(x))
	}
	return n
}

// cmdBitCount: BITCOUNT key [start end [BYTE|BIT]] — the set bits in the
// range; 0 for a missing key. Errors: ErrSyntax, ErrNotInt, WRONGTYPE.
func cmdBitCount(c *Ctx, argv [][]byte) {
	var tmp [24]byte
	p, ok := c.bitsOrZero(argv[1], tmp[:])
	if !ok {
		return
	}
	var start, end int64
	var firstMask, lastMask byte
	switch len(argv) {
	case 4, 5:
		s, ok1 := ParseIntB(argv[2])
		en, ok2 := ParseIntB(argv[3])
		if !ok1 || !ok2 {
			c.W.Error(ErrNotInt)
			return
		}
		if s < 0 && en < 0 && s > en {
			c.W.Int(0)
			return
		}
		isBit := false
		if len(argv) == 5 {
			if isBit, ok = parseBitUnit(c, argv[4]); !ok {
				return
			}
		}
		start, end, firstMask, lastMask = bitRange(s, en, len(p), isBit)
	case 2:
		start, end = 0, int64(len(p))-1
	default:
		c.W.Error(ErrSyntax)
		return
	}
	if start > end {
		c.W.Int(0)
		return
	}
	n := popcount(p[start : end+1])
	n -= int64(bits.OnesCount8(p[start]&firstMask) + bits.OnesCount8(p[end]&lastMask))
	c.W.Int(n)
}

// bitpos is redisBitpos: the position of the first bit equal to bit in
// b; for a clear bit in all-ones bytes, the bit just past them; -1 for a
// set bit in all-zero bytes.
func bitpos(b []byte, bit int64) int64 {
	for i, x := range b {
		if bit == 0 {
			x = ^x
		}
		if x != 0 {
			return int64(i)*8 + int64(bits.LeadingZeros8(x))
		}
	}
	if bit == 1 {
		return -1
	}
	return int64(len(b)) * 8
}

// cmdBitPos: BITPOS key bit [start [end [BYTE|BIT]]] — the first bit
// equal to bit in the range, -1 when none (a missing key is all zeros).
// Errors: ErrNotInt, errBitArg, ErrSyntax, WRONGTYPE.
func cmdBitPos(c *Ctx, argv [][]byte) {
	bit, ok := ParseIntB(argv[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	if bit != 0 && bit != 1 {
		c.W.Error(errBitArg)
		return
	}
	e, ok := c.lookupString(argv[1], true)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(-bit)
		return
	}
	var tmp [24]byte
	p := strBytes(e, tmp[:])
	var start, end int64
	var firstMask, lastMask byte
	endGiven := false
	switch len(argv) {
	case 4, 5, 6:
		s, ok := ParseIntB(argv[3])
		if !ok {
			c.W.Error(ErrNotInt)
			return
		}
		isBit := false
		if len(argv) == 6 {
			if isBit, ok = parseBitUnit(c, argv[5]); !ok {
				return
			}
		}
		en := int64(len(p)) - 1
		if isBit {
			en = int64(len(p))<<3 + 7
		}
		if len(argv) >= 5 {
			if en, ok = ParseIntB(argv[4]); !ok {
				c.W.Error(ErrNotInt)
				return
			}
			endGiven = true
		}
		start, end, firstMask, lastMask = bitRange(s, en, len(p), isBit)
	case 3:
		start, end = 0, int64(len(p))-1
	default:
		c.W.Error(ErrSyntax)
		return
	}
	if start > end {
		c.W.Int(-1)
		return
	}
	nbytes := end - start + 1
	edge := func(x, mask byte) byte { // the bits outside the range never match
		if bit == 1 {
			return x &^ mask
		}
		return x | mask
	}
	var pos int64
	switch {
	case firstMask != 0 || lastMask != 0:
		// a bit range: compare with the outside bits neutralised
		buf := append([]byte(nil), p[start:end+1]...)
		buf[0] = edge(buf[0], firstMask)
		buf[len(buf)-1] = edge(buf[len(buf)-1], lastMask)
		pos = bitpos(buf, bit)
	default:
		pos = bitpos(p[start:end+1], bit)
	}
	if endGiven && bit == 0 && pos == nbytes<<3 {
		c.W.Int(-1)
		return
	}
	if pos != -1 {
		pos += start << 3
	}
	c.W.Int(pos)
}

// cmdBitOp: BITOP AND|OR|XOR|NOT destkey key [key ...] — stores the
// bitwise result (shorter strings padded with zero bytes; missing keys are
// empty) and replies its length; an empty result deletes destkey. Errors:
// ErrSyntax (operation), errBitopNot, WRONGTYPE.
func cmdBitOp(c *Ctx, argv [][]byte) {
	op := argv[1]
	switch {
	case EqualFold(op, "and"), EqualFold(op, "or"), EqualFold(op, "xor"):
	case EqualFold(op, "not"):
		if len(argv) != 4 {
			c.W.Error(errBitopNot)
			return
		}
	default:
		c.W.Error(ErrSyntax)
		return
	}
	srcs := make([][]byte, len(argv)-3)
	maxLen := 0
	for j, k := range argv[3:] {
		e, ok := c.lookupString(k, true)
		if !ok {
			return
		}
		if e != nil {
			srcs[j] = append([]byte(nil), strBytes(e, make([]byte, 0, 24))...)
			maxLen = max(maxLen, len(srcs[j]))
		}
	}
	dst := argv[2]
	if maxLen == 0 {
		if e := c.lookupWrite(dst); e != nil {
			c.DB.removeEntry(e)
			c.touched(dst)
			c.notify(NotifyGeneric, "del", dst)
		}
		c.W.Int(0)
		return
	}
	res := make([]byte, maxLen)
	at := func(s []byte, i int) byte {
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	for i := range res {
		out := at(srcs[0], i)
		switch op[0] | 0x20 {
		case 'n':
			out = ^out
		case 'a':
			for _, s := range srcs[1:] {
				out &= at(s, i)
			}
		case 'o':
			for _, s := range srcs[1:] {
				out |= at(s, i)
			}
		case 'x':
			for _, s := range srcs[1:] {
				out ^= at(s, i)
			}
		}
		res[i] = out
	}
	e := c.overwrite(c.lookupWrite(dst), dst)
	e.setRaw(unsafe.String(&res[0], len(res)))
	e.enc = encRawObj // Redis's createObject: raw whatever the length
	c.touched(dst)
	c.notify(NotifyString, "set", dst)
	c.W.Int(int64(maxLen))
}
