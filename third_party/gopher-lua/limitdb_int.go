package lua

import "math"

// limitdb patch: Lua 5.1's number-to-integer argument conversions.
//
// luaL_checkinteger converts a lua_Number to a ptrdiff_t with a C cast
// (x86-64 cvttsd2si: out of range and NaN give math.MinInt64) and
// luaL_checkint then keeps the low 32 bits of that (a C int), so
// string.rep('x', 2^32+3) repeats 3 times and string.rep('x', 2^40) none.
// Numeric strings are accepted as numbers, as luaL_checknumber does.

// number2integer is lua_number2integer on x86-64.
func number2integer(n LNumber) int64 {
	f := float64(n)
	if f != f || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// CheckInteger is luaL_checkinteger (64 bits).
func (ls *LState) CheckInteger(n int) int64 { return number2integer(ls.CheckNumber(n)) }

// OptInteger is luaL_optinteger (64 bits).
func (ls *LState) OptInteger(n int, d int64) int64 {
	if ls.Get(n) == LNil {
		return d
	}
	return ls.CheckInteger(n)
}

// CheckInt is luaL_checkint: the low 32 bits of luaL_checkinteger.
func (ls *LState) CheckInt(n int) int { return int(int32(ls.CheckInteger(n))) }

// OptInt is luaL_optint.
func (ls *LState) OptInt(n int, d int) int {
	if ls.Get(n) == LNil {
		return d
	}
	return ls.CheckInt(n)
}

// maxCStack is Lua 5.1's LUAI_MAXCSTACK: lua_checkstack refuses to let a C
// function have more than this many values on its stack.
const maxCStack = 8000

// cStackRoom is lua_checkstack(L, n) for the running Go function.
func (ls *LState) cStackRoom(n int64) bool {
	return n <= maxCStack && int64(ls.GetTop())+n <= maxCStack
}

// posrelat is lstrlib.c's: a negative position counts from the end.
func posrelat(pos int64, l int) int64 {
	if pos < 0 {
		pos += int64(l) + 1
	}
	if pos >= 0 {
		return pos
	}
	return 0
}

// maxCCalls is Lua 5.1's LUAI_MAXCCALLS.
const maxCCalls = 200
