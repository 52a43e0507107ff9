package engine

import "unsafe"

// SETBIT and GETBIT (Redis 7.0 bitops.c).

const (
	errBitValue = "ERR bit is not an integer or out of range"
)

func init() {
	Register(
		&Command{Name: "setbit", Arity: 4, Flags: "write denyoom", FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "2.2.0",
			Summary: "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.", Run: cmdSetBit},
		&Command{Name: "getbit", Arity: 3, Flags: "readonly fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "2.2.0",
			Summary: "Returns a bit value by offset.", Run: cmdGetBit},
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
	changed := e == nil
	if e == nil {
		e = c.create(argv[1])
		buf = make([]byte, byteIdx+1)
	} else {
		n := max(e.strLen(), byteIdx+1)
		changed = n != e.strLen()
		buf = make([]byte, 0, n)
		buf = e.appendStr(buf)
		buf = buf[:n]
	}
	shift := 7 - uint(off&7)
	old := (buf[byteIdx] >> shift) & 1
	buf[byteIdx] = buf[byteIdx]&^(1<<shift) | byte(on)<<shift
	e.setRaw(unsafe.String(&buf[0], len(buf)))
	e.enc = encRawObj
	// a bit set to what it was is no change (no WATCH, no effect), as in
	// Redis 7.0 (the value still becomes raw, as dbUnshareStringValue
	// makes it)
	if changed || old != byte(on) {
		c.touched(argv[1])
		c.notify(NotifyString, "setbit", argv[1])
	}
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
	var tmp [24]byte
	s, ok := c.bitsOrZero(argv[1], tmp[:])
	if !ok {
		return
	}
	byteIdx := off >> 3
	if byteIdx >= int64(len(s)) {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(s[byteIdx]>>(7-uint(off&7))) & 1)
}
