package engine

import "unsafe"

// BITFIELD and BITFIELD_RO (Redis 7.0 bitops.c): integers of 1..64 bits
// (unsigned up to 63) at any bit offset of a string, read, written or
// incremented with Redis's WRAP, SAT and FAIL overflow rules.

const (
	errBitfieldType     = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
	errBitfieldOverflow = "ERR Invalid OVERFLOW type specified"
	errBitfieldRO       = "ERR BITFIELD_RO only supports the GET subcommand"
)

func init() {
	Register(
		&Command{Name: "bitfield", Arity: -2, Flags: "write denyoom", FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "3.2.0",
			Summary: "Performs arbitrary bitfield integer operations on strings.", Run: func(c *Ctx, argv [][]byte) { bitfieldGeneric(c, argv, false) }},
		&Command{Name: "bitfield_ro", Arity: -2, Flags: "readonly fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "6.0.0",
			Summary: "Performs arbitrary read-only bitfield integer operations on strings.", Run: func(c *Ctx, argv [][]byte) { bitfieldGeneric(c, argv, true) }},
	)
}

const (
	bfGet = iota
	bfSet
	bfIncrBy
)

const (
	bfWrap = iota
	bfSat
	bfFail
)

type bitfieldOp struct {
	offset       uint64
	i64          int64
	op, overflow int
	bits         uint
	signed       bool
}

// parseBitfieldType is getBitfieldTypeFromArgument: i1..i64 or u1..u63.
func parseBitfieldType(c *Ctx, a []byte) (signed bool, bits uint, ok bool) {
	if len(a) == 0 || (a[0] != 'i' && a[0] != 'u') {
		c.W.Error(errBitfieldType)
		return false, 0, false
	}
	signed = a[0] == 'i'
	n, ok := ParseIntB(a[1:])
	if !ok || n < 1 || (signed && n > 64) || (!signed && n > 63) {
		c.W.Error(errBitfieldType)
		return false, 0, false
	}
	return signed, uint(n), true
}

// parseBitfieldOffset is getBitOffsetFromArgument with the #N form (N
// times the type's width).
func parseBitfieldOffset(c *Ctx, a []byte, bits uint) (uint64, bool) {
	hash := len(a) > 0 && a[0] == '#'
	if hash {
		a = a[1:]
	}
	off, ok := ParseIntB(a)
	if hash {
		off *= int64(bits)
	}
	if !ok || off < 0 || off>>3 >= c.E.Enc.ProtoMaxBulkLen {
		c.W.Error(ErrBitNotInt)
		return 0, false
	}
	return uint64(off), true
}

func getUnsignedBitfield(p []byte, offset uint64, bits uint) uint64 {
	var v uint64
	for j := uint(0); j < bits; j++ {
		b := p[offset>>3] >> (7 - offset&7) & 1
		v = v<<1 | uint64(b)
		offset++
	}
	return v
}

func getSignedBitfield(p []byte, offset uint64, bits uint) int64 {
	v := getUnsignedBitfield(p, offset, bits)
	if bits < 64 && v&(1<<(bits-1)) != 0 {
		v |= ^uint64(0) << bits
	}
	return int64(v)
}

func setBitfield(p []byte, offset uint64, bits uint, v uint64) {
	for j := uint(0); j < bits; j++ {
		bit := byte(v>>(bits-1-j)) & 1
		shift := 7 - offset&7
		p[offset>>3] = p[offset>>3]&^(1<<shift) | bit<<shift
		offset++
	}
}

// unsignedOverflow is checkUnsignedBitfieldOverflow: whether value+incr
// leaves 0..2^bits-1, and the value to store instead (WRAP, SAT).
func unsignedOverflow(value uint64, incr int64, bits uint, ow int) (limit uint64, overflow bool) {
	max := uint64(1)<<bits - 1
	maxincr := int64(max - value)
	minincr := -int64(value)
	switch {
	case value > max || (incr > 0 && incr > maxincr):
		limit = max
	case incr < 0 && incr < minincr:
		limit = 0
	default:
		return 0, false
	}
	if ow == bfWrap {
		limit = (value + uint64(incr)) &^ (^uint64(0) << bits)
	}
	return limit, true
}

// signedOverflow is checkSignedBitfieldOverflow.
func signedOverflow(value, incr int64, bits uint, ow int) (limit int64, overflow bool) {
	max := int64(1)<<(bits-1) - 1
	if bits == 64 {
		max = 1<<63 - 1
	}
	min := -max - 1
	maxincr := int64(uint64(max) - uint64(value))
	minincr := min - value
	switch {
	case value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr):
		limit = max
	case value < min || (bits != 64 && incr < minincr) || (value < 0 && incr < 0 && incr < minincr):
		limit = min
	default:
		return 0, false
	}
	if ow == bfWrap {
		c := uint64(value) + uint64(incr)
		if bits < 64 {
			mask := ^uint64(0) << bits
			if c&(1<<(bits-1)) != 0 {
				c |= mask
			} else {
				c &^= mask
			}
		}
		limit = int64(c)
	}
	return limit, true
}

// bitfieldGeneric: BITFIELD key [GET type offset] [SET type offset value]
// [INCRBY type offset increment] [OVERFLOW WRAP|SAT|FAIL] … — one reply
// per GET/SET/INCRBY (SET: the old value; INCRBY: the new one; nil when
// FAIL refused it). Errors, in argument order: syntax, the type error,
// the offset error, ErrNotInt, the OVERFLOW error; WRONGTYPE; BITFIELD_RO
// refuses SET and INCRBY. A write creates the key or grows it with zero
// bytes up to the highest bit written.
func bitfieldGeneric(c *Ctx, argv [][]byte, readonly bool) {
	var ops []bitfieldOp
	ow := bfWrap
	writes := false
	var highest uint64
	for j := 2; j < len(argv); j++ {
		rem := len(argv) - j - 1
		sub := argv[j]
		var op int
		switch {
		case EqualFold(sub, "get") && rem >= 2:
			op = bfGet
		case EqualFold(sub, "set") && rem >= 3:
			op = bfSet
		case EqualFold(sub, "incrby") && rem >= 3:
			op = bfIncrBy
		case EqualFold(sub, "overflow") && rem >= 1:
			j++
			switch {
			case EqualFold(argv[j], "wrap"):
				ow = bfWrap
			case EqualFold(argv[j], "sat"):
				ow = bfSat
			case EqualFold(argv[j], "fail"):
				ow = bfFail
			default:
				c.W.Error(errBitfieldOverflow)
				return
			}
			continue
		default:
			c.W.Error(ErrSyntax)
			return
		}
		signed, bits, ok := parseBitfieldType(c, argv[j+1])
		if !ok {
			return
		}
		off, ok := parseBitfieldOffset(c, argv[j+2], bits)
		if !ok {
			return
		}
		var v int64
		if op != bfGet {
			writes = true
			highest = max(highest, off+uint64(bits)-1)
			if v, ok = ParseIntB(argv[j+3]); !ok {
				c.W.Error(ErrNotInt)
				return
			}
		}
		ops = append(ops, bitfieldOp{offset: off, i64: v, op: op, overflow: ow, bits: bits, signed: signed})
		if op == bfGet {
			j += 2
		} else {
			j += 3
		}
	}
	var p []byte
	var e *entry
	dirty := false
	if !writes {
		var ok bool
		if e, ok = c.lookupString(argv[1], true); !ok {
			return
		}
		if e != nil {
			p = strBytes(e, make([]byte, 0, 24))
		}
	} else {
		if readonly {
			c.W.Error(errBitfieldRO)
			return
		}
		var ok bool
		if e, ok = c.lookupString(argv[1], false); !ok {
			return
		}
		n := int(highest>>3) + 1
		if e == nil {
			e = c.create(argv[1])
			p = make([]byte, n)
			dirty = true
		} else {
			old := e.strLen()
			p = e.appendStr(make([]byte, 0, max(n, old)))
			if n > old {
				p = append(p, make([]byte, n-old)...)
				dirty = true
			}
		}
	}
	changes := 0
	c.W.Array(len(ops))
	for _, op := range ops {
		if op.op == bfGet {
			// read through a zero-padded window of 9 bytes, as Redis
			var buf [9]byte
			b := op.offset >> 3
			for i := uint64(0); i < 9 && b+i < uint64(len(p)); i++ {
				buf[i] = p[b+i]
			}
			if op.signed {
				c.W.Int(getSignedBitfield(buf[:], op.offset-b*8, op.bits))
			} else {
				c.W.Int(int64(getUnsignedBitfield(buf[:], op.offset-b*8, op.bits)))
			}
			continue
		}
		var oldv, newv uint64
		var ret int64
		overflow := false
		if op.signed {
			old := getSignedBitfield(p, op.offset, op.bits)
			var nv int64
			if op.op == bfIncrBy {
				nv = old + op.i64
				if lim, of := signedOverflow(old, op.i64, op.bits, op.overflow); of {
					nv, overflow = lim, true
				}
				ret = nv
			} else {
				nv = op.i64
				if lim, of := signedOverflow(nv, 0, op.bits, op.overflow); of {
					nv, overflow = lim, true
				}
				ret = old
			}
			oldv, newv = uint64(old), uint64(nv)
		} else {
			old := getUnsignedBitfield(p, op.offset, op.bits)
			var nv uint64
			if op.op == bfIncrBy {
				nv = old + uint64(op.i64)
				if lim, of := unsignedOverflow(old, op.i64, op.bits, op.overflow); of {
					nv, overflow = lim, true
				}
				ret = int64(nv)
			} else {
				nv = uint64(op.i64)
				if lim, of := unsignedOverflow(nv, 0, op.bits, op.overflow); of {
					nv, overflow = lim, true
				}
				ret = int64(old)
			}
			oldv, newv = old, nv
		}
		if overflow && op.overflow == bfFail {
			c.W.Null()
			continue
		}
		c.W.Int(ret)
		setBitfield(p, op.offset, op.bits, newv)
		if dirty || oldv != newv {
			changes++
		}
	}
	if writes {
		e.setRaw(unsafe.String(&p[0], len(p)))
		e.enc = encRawObj
		// a key created or grown is a change even when every operation
		// FAILed (Redis creates it without propagating: a replica would
		// miss it; limitdb's followers must not)
		if changes > 0 || dirty {
			c.touched(argv[1])
		}
		if changes > 0 {
			c.notify(NotifyString, "setbit", argv[1])
		}
	}
}
