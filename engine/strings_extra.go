package engine

import "unsafe"

// SETBIT, GETBIT and LCS: the string commands Redis's own string suite
// exercises beyond the core set (Redis 7.0 bitops.c and t_string.c).

const (
	errBitValue    = "ERR bit is not an integer or out of range"
	errLCSNotStr   = "ERR The specified keys must contain string values"
	errLCSLenAndID = "ERR If you want both the length and indexes, please just use IDX."
)

func init() {
	Register(
		&Command{Name: "setbit", Arity: 4, Flags: "write denyoom", FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "2.2.0",
			Summary: "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.", Run: cmdSetBit},
		&Command{Name: "getbit", Arity: 3, Flags: "readonly fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "2.2.0",
			Summary: "Returns a bit value by offset.", Run: cmdGetBit},
		&Command{Name: "lcs", Arity: -3, Flags: "readonly", FirstKey: 1, LastKey: 2, Step: 1, Group: "string", Since: "7.0.0",
			Summary: "Finds the longest common substring.", Run: cmdLCS},
	)
}

// parseBitOffset is Redis's getBitOffsetFromArgument for plain offsets: a
// non-negative integer whose byte index is below proto-max-bulk-len.
func parseBitOffset(c *Ctx, b []byte) (int64, bool) {
	off, ok := ParseIntB(b)
	if !ok || off < 0 || off>>3 >= c.E.Enc.ProtoMaxBulkLen {
		c.W.Error(ErrBitNotInt)
		return 0, false
	}
	return off, true
}

// cmdSetBit: SETBIT key offset 0|1 — sets the bit at offset (bit 0 is the
// most significant bit of the first byte), growing the string with zero
// bytes as needed; the key is created when missing and keeps its TTL.
// Reply: the bit's previous value. Errors: the bit offset error, the bit
// value error, WRONGTYPE.
func cmdSetBit(c *Ctx, argv [][]byte) {
	off, ok := parseBitOffset(c, argv[2])
	if !ok {
		return
	}
	on, ok := ParseIntB(argv[3])
	if !ok || on&^1 != 0 {
		c.W.Error(errBitValue)
		return
	}
	e, ok := c.lookupString(argv[1], false)
	if !ok {
		return
	}
	byteIdx := int(off >> 3)
	var buf []byte
	if e == nil {
		e = c.create(argv[1])
		buf = make([]byte, byteIdx+1)
	} else {
		n := max(e.strLen(), byteIdx+1)
		buf = make([]byte, 0, n)
		buf = e.appendStr(buf)
		buf = buf[:n]
	}
	shift := 7 - uint(off&7)
	old := (buf[byteIdx] >> shift) & 1
	buf[byteIdx] = buf[byteIdx]&^(1<<shift) | byte(on)<<shift
	e.setRaw(unsafe.String(&buf[0], len(buf)))
	e.enc = encRawObj
	c.touched(argv[1])
	c.W.Int(int64(old))
}

// cmdGetBit: GETBIT key offset — reply: the bit at offset, 0 past the end
// of the string or for a missing key. Errors: the bit offset error,
// WRONGTYPE.
func cmdGetBit(c *Ctx, argv [][]byte) {
	off, ok := parseBitOffset(c, argv[2])
	if !ok {
		return
	}
	e, ok := c.lookupString(argv[1], true)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	var tmp [24]byte
	var s []byte
	if e.enc == encInt {
		s = e.appendStr(tmp[:0])
	} else {
		s = unsafe.Slice((*byte)(e.p), e.n)
	}
	byteIdx := off >> 3
	if byteIdx >= int64(len(s)) {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(s[byteIdx]>>(7-uint(off&7))) & 1)
}

// cmdLCS: LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN] —
// the longest common subsequence of two strings (a missing key is the
// empty string). Reply: the subsequence (bulk); with LEN its length; with
// IDX a map {"matches": [[[a1 a2] [b1 b2] (len)] …], "len": n} listing
// the matched ranges from the end, those shorter than MINMATCHLEN left
// out. Errors: the "must contain string values" error for another type,
// not an integer for MINMATCHLEN, syntax error, LEN with IDX.
func cmdLCS(c *Ctx, argv [][]byte) {
	ea, eb := c.lookupRead(argv[1]), c.lookupRead(argv[2])
	if (ea != nil && ea.kind != KindString) || (eb != nil && eb.kind != KindString) {
		c.W.Error(errLCSNotStr)
		return
	}
	var a, b string
	if ea != nil {
		a = ea.str()
	}
	if eb != nil {
		b = eb.str()
	}
	var getLen, getIdx, withLen bool
	var minLen int64
	for j := 3; j < len(argv); j++ {
		switch opt := argv[j]; {
		case EqualFold(opt, "idx"):
			getIdx = true
		case EqualFold(opt, "len"):
			getLen = true
		case EqualFold(opt, "withmatchlen"):
			withLen = true
		case EqualFold(opt, "minmatchlen") && j+1 < len(argv):
			n, ok := ParseIntB(argv[j+1])
			if !ok {
				c.W.Error(ErrNotInt)
				return
			}
			minLen = max(n, 0)
			j++
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}
	if getLen && getIdx {
		c.W.Error(errLCSLenAndID)
		return
	}
	alen, blen := len(a), len(b)
	w := blen + 1
	tbl := make([]uint32, (alen+1)*w)
	for i := 1; i <= alen; i++ {
		for j := 1; j <= blen; j++ {
			if a[i-1] == b[j-1] {
				tbl[i*w+j] = tbl[(i-1)*w+j-1] + 1
			} else {
				tbl[i*w+j] = max(tbl[(i-1)*w+j], tbl[i*w+j-1])
			}
		}
	}
	total := int(tbl[alen*w+blen])
	if getLen {
		c.W.Int(int64(total))
		return
	}
	res := make([]byte, total)
	var ranges [][5]int64
	idx := total
	aStart, aEnd, bStart, bEnd := alen, 0, 0, 0
	emit := false
	for i, j := alen, blen; i > 0 && j > 0; {
		if a[i-1] == b[j-1] {
			res[idx-1] = a[i-1]
			if aStart == alen {
				aStart, aEnd, bStart, bEnd = i-1, i-1, j-1, j-1
			} else if aStart == i && bStart == j {
				aStart--
				bStart--
			} else {
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true
			}
			idx--
			i--
			j--
		} else {
			if tbl[(i-1)*w+j] > tbl[i*w+j-1] {
				i--
			} else {
				j--
			}
			if aStart != alen {
				emit = true
			}
		}
		if emit {
			ml := int64(aEnd - aStart + 1)
			if minLen == 0 || ml >= minLen {
				ranges = append(ranges, [5]int64{int64(aStart), int64(aEnd), int64(bStart), int64(bEnd), ml})
			}
			aStart = alen
			emit = false
		}
	}
	if !getIdx {
		c.W.Bulk(res)
		return
	}
	c.W.Map(2)
	c.W.BulkString("matches")
	c.W.Array(len(ranges))
	for _, r := range ranges {
		if withLen {
			c.W.Array(3)
		} else {
			c.W.Array(2)
		}
		c.W.Array(2)
		c.W.Int(r[0])
		c.W.Int(r[1])
		c.W.Array(2)
		c.W.Int(r[2])
		c.W.Int(r[3])
		if withLen {
			c.W.Int(r[4])
		}
	}
	c.W.BulkString("len")
	c.W.Int(int64(total))
}
