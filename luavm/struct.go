package luavm

import (
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// struct, as lua_struct.c (Redis's copy) on x86-64: pack(fmt, ...),
// unpack(fmt, s [, pos]), size(fmt). Native order is little endian; short
// 2, long/size_t 8, int 4 bytes; integers up to 32 bytes.

const structMaxInt = 32

type structOpts struct {
	big   bool
	align int
}

func openStruct(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(structPack))
	t.RawSetString("unpack", L.NewFunction(structUnpack))
	t.RawSetString("size", L.NewFunction(structSize))
	return t
}

func argError(L *lua.LState, n int, fn, msg string) {
	luaErrorf(L, "bad argument #%d to '%s' (%s)", n, fn, msg)
}

// getnum reads an optional decimal size at fmt[*i].
func getnum(L *lua.LState, fmt string, i *int, df int) int {
	if *i >= len(fmt) || fmt[*i] < '0' || fmt[*i] > '9' {
		return df
	}
	a := 0
	for *i < len(fmt) && fmt[*i] >= '0' && fmt[*i] <= '9' {
		d := int(fmt[*i] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			luaErrorf(L, "integral size overflow")
		}
		a = a*10 + d
		*i++
	}
	return a
}

func optsize(L *lua.LState, opt byte, fmt string, i *int) int {
	switch opt {
	case 'B', 'b', 'x':
		return 1
	case 'H', 'h':
		return 2
	case 'L', 'l', 'T', 'd':
		return 8
	case 'f':
		return 4
	case 'c':
		return getnum(L, fmt, i, 1)
	case 'i', 'I':
		sz := getnum(L, fmt, i, 4)
		if sz > structMaxInt {
			luaErrorf(L, "integral size %d is larger than limit of %d", sz, structMaxInt)
		}
		return sz
	}
	return 0
}

func gettoalign(n int, h *structOpts, opt byte, size int) int {
	if size == 0 || opt == 'c' {
		return 0
	}
	if size > h.align {
		size = h.align
	}
	return (size - (n & (size - 1))) & (size - 1)
}

func controloptions(L *lua.LState, fn string, opt byte, fmt string, i *int, h *structOpts) {
	switch opt {
	case ' ':
	case '>':
		h.big = true
	case '<':
		h.big = false
	case '!':
		a := getnum(L, fmt, i, 8)
		if a == 0 || a&(a-1) != 0 {
			luaErrorf(L, "alignment %d is not a power of 2", a)
		}
		h.align = a
	default:
		argError(L, 1, fn, "invalid format option '"+string([]byte{opt})+"'")
	}
}

func isIntOpt(opt byte) bool { return strings.IndexByte("bBhHlLTiI", opt) >= 0 }

func structPack(L *lua.LState) int {
	fmt := L.CheckString(1)
	h := structOpts{align: 1}
	arg := 2
	var b []byte
	total := 0
	for i := 0; i < len(fmt); {
		opt := fmt[i]
		i++
		size := optsize(L, opt, fmt, &i)
		toalign := gettoalign(total, &h, opt, size)
		total += toalign
		for ; toalign > 0; toalign-- {
			b = append(b, 0)
		}
		switch {
		case isIntOpt(opt):
			n := float64(L.CheckNumber(arg))
			arg++
			var v uint64
			if n < 0 {
				v = uint64(int64(n))
			} else {
				v = uint64(n)
			}
			buf := make([]byte, size)
			if h.big {
				for k := size - 1; k >= 0; k-- {
					buf[k] = byte(v)
					v >>= 8
				}
			} else {
				for k := 0; k < size; k++ {
					buf[k] = byte(v)
					v >>= 8
				}
			}
			b = append(b, buf...)
		case opt == 'x':
			b = append(b, 0)
		case opt == 'f' || opt == 'd':
			n := float64(L.CheckNumber(arg))
			arg++
			var bits uint64
			if opt == 'f' {
				bits = uint64(math.Float32bits(float32(n)))
			} else {
				bits = math.Float64bits(n)
			}
			buf := make([]byte, size)
			for k := 0; k < size; k++ {
				buf[k] = byte(bits >> (8 * k))
			}
			if h.big {
				for l, r := 0, size-1; l < r; l, r = l+1, r-1 {
					buf[l], buf[r] = buf[r], buf[l]
				}
			}
			b = append(b, buf...)
		case opt == 'c' || opt == 's':
			s := L.CheckString(arg)
			arg++
			if size == 0 {
				size = len(s)
			}
			if len(s) < size {
				argError(L, arg, "pack", "string too short")
			}
			b = heldGrow(L, b, size+1) // lua-memory-limit
			b = append(b, s[:size]...)
			if opt == 's' {
				b = append(b, 0)
				size++
			}
		default:
			controloptions(L, "pack", opt, fmt, &i, &h)
		}
		total += size
	}
	L.ReleaseHeld(cap(b))
	L.ChargeMem(len(b))
	L.Push(lua.LString(b))
	return 1
}

func structUnpack(L *lua.LState) int {
	fmt := L.CheckString(1)
	data := L.CheckString(2)
	ld := len(data)
	// luaL_optinteger into a size_t: only 0 is refused; a negative or
	// huge position is past the end, so any read is "data string too short"
	p64 := L.OptInteger(3, 1)
	if p64 == 0 {
		argError(L, 3, "unpack", "offset must be 1 or greater")
	}
	pos := ld + 1
	if p64 > 0 && p64-1 <= int64(ld) {
		pos = int(p64 - 1)
	}
	h := structOpts{align: 1}
	var out []lua.LValue
	for i := 0; i < len(fmt); {
		opt := fmt[i]
		i++
		size := optsize(L, opt, fmt, &i)
		pos += gettoalign(pos, &h, opt, size)
		if !(size <= ld && pos <= ld-size) {
			argError(L, 2, "unpack", "data string too short")
		}
		switch {
		case isIntOpt(opt):
			var l uint64
			if h.big {
				for k := 0; k < size; k++ {
					l = l<<8 | uint64(data[pos+k])
				}
			} else {
				for k := size - 1; k >= 0; k-- {
					l = l<<8 | uint64(data[pos+k])
				}
			}
			if opt >= 'a' && opt <= 'z' {
				// C's shift by size*8-1 on x86-64 uses the count mod 64
				// (i0 shifts by 63: fuzz crasher, Go panics on a negative
				// shift)
				mask := ^uint64(0) << (uint(size*8-1) & 63)
				if l&mask != 0 {
					l |= mask
				}
				out = append(out, lua.LNumber(float64(int64(l))))
			} else {
				out = append(out, lua.LNumber(float64(l)))
			}
		case opt == 'x':
		case opt == 'f' || opt == 'd':
			buf := []byte(data[pos : pos+size])
			if h.big {
				for l, r := 0, size-1; l < r; l, r = l+1, r-1 {
					buf[l], buf[r] = buf[r], buf[l]
				}
			}
			var bits uint64
			for k := size - 1; k >= 0; k-- {
				bits = bits<<8 | uint64(buf[k])
			}
			if opt == 'f' {
				out = append(out, lua.LNumber(math.Float32frombits(uint32(bits))))
			} else {
				out = append(out, lua.LNumber(math.Float64frombits(bits)))
			}
		case opt == 'c':
			if size == 0 {
				if len(out) == 0 {
					luaErrorf(L, "format 'c0' needs a previous size")
				}
				n, ok := out[len(out)-1].(lua.LNumber)
				if !ok {
					luaErrorf(L, "format 'c0' needs a previous size")
				}
				// a size_t in C: a negative (or NaN) size is huge (fuzz
				// crasher: "bc0" with a negative byte)
				if !(n >= 0 && float64(n) <= float64(ld-pos)) {
					argError(L, 2, "unpack", "data string too short")
				}
				size = int(n)
				out = out[:len(out)-1]
			}
			out = append(out, lua.LString(data[pos:pos+size]))
		case opt == 's':
			e := strings.IndexByte(data[pos:], 0)
			if e < 0 {
				luaErrorf(L, "unfinished string in data")
			}
			size = e + 1
			out = append(out, lua.LString(data[pos:pos+e]))
		default:
			controloptions(L, "unpack", opt, fmt, &i, &h)
		}
		pos += size
	}
	for _, v := range out {
		L.Push(v)
	}
	L.Push(lua.LNumber(pos + 1))
	return len(out) + 1
}

func structSize(L *lua.LState) int {
	fmt := L.CheckString(1)
	h := structOpts{align: 1}
	pos := 0
	for i := 0; i < len(fmt); {
		opt := fmt[i]
		i++
		size := optsize(L, opt, fmt, &i)
		pos += gettoalign(pos, &h, opt, size)
		if opt == 's' {
			argError(L, 1, "size", "option 's' has no fixed size")
		} else if opt == 'c' && size == 0 {
			argError(L, 1, "size", "option 'c0' has no fixed size")
		}
		if !(opt >= 'a' && opt <= 'z' || opt >= 'A' && opt <= 'Z' || opt >= '0' && opt <= '9') {
			controloptions(L, "size", opt, fmt, &i, &h)
		}
		pos += size
	}
	L.Push(lua.LNumber(pos))
	return 1
}
