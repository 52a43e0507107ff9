package luavm

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// cmsgpack, as lua_cmsgpack.c (Redis's copy): pack(...) encodes each
// argument and concatenates; unpack(s) returns every decoded object;
// unpack_one(s [, offset]) and unpack_limit(s, limit [, offset]) return the
// next offset (-1 at the end) first.

const msgpackMaxNesting = 16

func openMsgpack(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(mpPack))
	t.RawSetString("unpack", L.NewFunction(func(L *lua.LState) int { return mpUnpack(L, 0, 0, false) }))
	t.RawSetString("unpack_one", L.NewFunction(func(L *lua.LState) int {
		return mpUnpack(L, 1, L.OptInteger(2, 0), true)
	}))
	t.RawSetString("unpack_limit", L.NewFunction(func(L *lua.LState) int {
		return mpUnpack(L, L.CheckInteger(2), L.OptInteger(3, 0), true)
	}))
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	return t
}

func mpPack(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		luaErrorf(L, "bad argument #0 to 'pack' (MessagePack pack needs input.)")
	}
	var b []byte
	for i := 1; i <= n; i++ {
		b = mpEncode(L, b, L.Get(i), 0)
	}
	L.ReleaseHeld(cap(b))
	L.ChargeMem(len(b))
	L.Push(lua.LString(b))
	return 1
}

func mpEncode(L *lua.LState, b []byte, v lua.LValue, level int) []byte {
	switch x := v.(type) {
	case lua.LString:
		n := len(x)
		b = heldGrow(L, b, n+5)
		switch {
		case n < 32:
			b = append(b, 0xa0|byte(n))
		case n <= 0xff:
			b = append(b, 0xd9, byte(n))
		case n <= 0xffff:
			b = append(b, 0xda)
			b = binary.BigEndian.AppendUint16(b, uint16(n))
		default:
			b = append(b, 0xdb)
			b = binary.BigEndian.AppendUint32(b, uint32(n))
		}
		return append(b, x...)
	case lua.LBool:
		if x {
			return append(b, 0xc3)
		}
		return append(b, 0xc2)
	case lua.LNumber:
		f := float64(x)
		if !math.IsInf(f, 0) && f == f && float64(int64(f)) == f {
			return mpInt(b, int64(f))
		}
		if float64(float32(f)) == f || f != f {
			b = append(b, 0xca)
			return binary.BigEndian.AppendUint32(b, math.Float32bits(float32(f)))
		}
		b = append(b, 0xcb)
		return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
	case *lua.LTable:
		if level >= msgpackMaxNesting {
			return append(b, 0xc0)
		}
		// array when every key is a positive integer and there are no holes
		count, max, isArray := 0, 0, true
		x.ForEach(func(k, _ lua.LValue) {
			count++
			if n, ok := k.(lua.LNumber); ok && n > 0 && float64(n) == math.Floor(float64(n)) {
				if int(n) > max {
					max = int(n)
				}
				return
			}
			isArray = false
		})
		if isArray && max == count {
			switch {
			case count <= 15:
				b = append(b, 0x90|byte(count))
			case count <= 0xffff:
				b = append(b, 0xdc)
				b = binary.BigEndian.AppendUint16(b, uint16(count))
			default:
				b = append(b, 0xdd)
				b = binary.BigEndian.AppendUint32(b, uint32(count))
			}
			for i := 1; i <= count; i++ {
				b = mpEncode(L, b, x.RawGetInt(i), level+1)
			}
			return b
		}
		switch {
		case count <= 15:
			b = append(b, 0x80|byte(count))
		case count <= 0xffff:
			b = append(b, 0xde)
			b = binary.BigEndian.AppendUint16(b, uint16(count))
		default:
			b = append(b, 0xdf)
			b = binary.BigEndian.AppendUint32(b, uint32(count))
		}
		x.ForEach(func(k, val lua.LValue) {
			b = mpEncode(L, b, k, level+1)
			b = mpEncode(L, b, val, level+1)
		})
		return b
	}
	return append(b, 0xc0)
}

func mpInt(b []byte, n int64) []byte {
	if n >= 0 {
		switch {
		case n <= 127:
			return append(b, byte(n))
		case n <= 0xff:
			return append(b, 0xcc, byte(n))
		case n <= 0xffff:
			return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
		case n <= 0xffffffff:
			return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	}
	switch {
	case n >= -32:
		return append(b, byte(int8(n)))
	case n >= -128:
		return append(b, 0xd0, byte(int8(n)))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(int16(n)))
	case n >= -2147483648:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(int32(n)))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

type mpDecoder struct {
	L   *lua.LState
	s   string
	i   int
	err string
	// top is how many values lua_cmsgpack.c would hold on the Lua stack
	// (arguments, results so far, two per open table): like it, decoding
	// stops with "stack overflow" past LUAI_MAXCSTACK, which bounds both
	// the results and the nesting (and so this decoder's Go recursion).
	top int
}

const mpStackErr = "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)"

// maxCStack is Lua 5.1's LUAI_MAXCSTACK.
const maxCStack = 8000

func (d *mpDecoder) need(n int) bool {
	if d.i+n > len(d.s) {
		d.err = "Missing bytes in input."
		return false
	}
	return true
}

func (d *mpDecoder) u(n int) uint64 {
	var v uint64
	for k := 0; k < n; k++ {
		v = v<<8 | uint64(d.s[d.i+k])
	}
	d.i += n
	return v
}

func (d *mpDecoder) decode() lua.LValue {
	if !d.need(1) {
		return lua.LNil
	}
	if d.top+1 > maxCStack {
		luaErrorf(d.L, "%s", mpStackErr)
	}
	c := d.s[d.i]
	d.i++
	switch {
	case c <= 0x7f:
		return lua.LNumber(c)
	case c >= 0xe0:
		return lua.LNumber(int8(c))
	case c&0xe0 == 0xa0:
		return d.str(int(c & 0x1f))
	case c&0xf0 == 0x90:
		return d.array(int(c & 0x0f))
	case c&0xf0 == 0x80:
		return d.dict(int(c & 0x0f))
	}
	sized := func(n int) (uint64, bool) {
		if !d.need(n) {
			return 0, false
		}
		return d.u(n), true
	}
	switch c {
	case 0xc0:
		return lua.LNil
	case 0xc2:
		return lua.LFalse
	case 0xc3:
		return lua.LTrue
	case 0xcc, 0xcd, 0xce, 0xcf:
		n := 1 << (c - 0xcc)
		if v, ok := sized(n); ok {
			return lua.LNumber(float64(v))
		}
	case 0xd0:
		if v, ok := sized(1); ok {
			return lua.LNumber(int8(v))
		}
	case 0xd1:
		if v, ok := sized(2); ok {
			return lua.LNumber(int16(v))
		}
	case 0xd2:
		if v, ok := sized(4); ok {
			return lua.LNumber(int32(v))
		}
	case 0xd3:
		if v, ok := sized(8); ok {
			return lua.LNumber(int64(v))
		}
	case 0xca:
		if v, ok := sized(4); ok {
			return lua.LNumber(math.Float32frombits(uint32(v)))
		}
	case 0xcb:
		if v, ok := sized(8); ok {
			return lua.LNumber(math.Float64frombits(v))
		}
	case 0xd9, 0xc4:
		if v, ok := sized(1); ok {
			return d.str(int(v))
		}
	case 0xda, 0xc5:
		if v, ok := sized(2); ok {
			return d.str(int(v))
		}
	case 0xdb, 0xc6:
		if v, ok := sized(4); ok {
			return d.str(int(v))
		}
	case 0xdc:
		if v, ok := sized(2); ok {
			return d.array(int(v))
		}
	case 0xdd:
		if v, ok := sized(4); ok {
			return d.array(int(v))
		}
	case 0xde:
		if v, ok := sized(2); ok {
			return d.dict(int(v))
		}
	case 0xdf:
		if v, ok := sized(4); ok {
			return d.dict(int(v))
		}
	default:
		d.err = "Bad data format in input."
	}
	return lua.LNil
}

func (d *mpDecoder) str(n int) lua.LValue {
	if !d.need(n) {
		return lua.LNil
	}
	s := d.s[d.i : d.i+n]
	d.i += n
	return lua.LString(s)
}

// array and dict fill a table from empty in the data's order, as
// lua_cmsgpack's mp_decode_to_lua_array/hash (lua_newtable, lua_settable),
// which gives Redis's layout; nothing is reserved for a declared count.
func (d *mpDecoder) array(n int) lua.LValue {
	t := d.L.NewTable()
	d.top += 2 // the table and the index
	for k := 1; k <= n && d.err == ""; k++ {
		t.RawSetInt(k, d.decode())
	}
	d.top -= 2
	return t
}

func (d *mpDecoder) dict(n int) lua.LValue {
	t := d.L.NewTable()
	for k := 0; k < n && d.err == ""; k++ {
		d.top++ // the table
		key := d.decode()
		d.top++ // and the key
		val := d.decode()
		d.top -= 2
		if d.err == "" && key != lua.LNil {
			t.RawSet(key, val)
		}
	}
	return t
}

// mpUnpack decodes up to limit objects (0: all) from offset.
func mpUnpack(L *lua.LState, limit, offset int64, withOffset bool) int {
	s := L.CheckString(1)
	if offset < 0 || limit < 0 {
		// Redis prints the input length where it means the limit
		luaErrorf(L, "Invalid request to unpack with offset of %d and limit of %d.", int32(offset), int32(len(s)))
	}
	if offset > int64(len(s)) {
		luaErrorf(L, "Start offset %d greater than input length %d.", int32(offset), int32(len(s)))
	}
	d := &mpDecoder{L: L, s: s, i: int(offset)}
	var out []lua.LValue
	for d.i < len(s) && (limit == 0 || int64(len(out)) < limit) {
		d.top = L.GetTop() + len(out)
		v := d.decode()
		if d.err != "" {
			luaErrorf(L, "%s", d.err)
		}
		out = append(out, v)
	}
	if withOffset {
		next := d.i
		if next >= len(s) {
			next = -1
		}
		L.Push(lua.LNumber(next))
	}
	for _, v := range out {
		L.Push(v)
	}
	if withOffset {
		return len(out) + 1
	}
	return len(out)
}
