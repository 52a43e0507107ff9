package luavm

import (
	"math"

	lua "github.com/yuin/gopher-lua"

	"limitdb/resp"
)

// --- bit (LuaBitOp) ------------------------------------------------------------

func toBit(L *lua.LState, i int) uint32 {
	f := float64(L.CheckNumber(i))
	// LuaBitOp normalizes through 2^52+2^51 addition: modular int32
	return uint32(int64(math.Floor(f+0.5)) & 0xffffffff)
}

func pushBit(L *lua.LState, x uint32) int {
	L.Push(lua.LNumber(int32(x)))
	return 1
}

func openBit(L *lua.LState) *lua.LTable {
	fns := map[string]lua.LGFunction{
		"tobit": func(L *lua.LState) int { return pushBit(L, toBit(L, 1)) },
		"bnot":  func(L *lua.LState) int { return pushBit(L, ^toBit(L, 1)) },
		"band": func(L *lua.LState) int {
			x := toBit(L, 1)
			for i := 2; i <= L.GetTop(); i++ {
				x &= toBit(L, i)
			}
			return pushBit(L, x)
		},
		"bor": func(L *lua.LState) int {
			x := toBit(L, 1)
			for i := 2; i <= L.GetTop(); i++ {
				x |= toBit(L, i)
			}
			return pushBit(L, x)
		},
		"bxor": func(L *lua.LState) int {
			x := toBit(L, 1)
			for i := 2; i <= L.GetTop(); i++ {
				x ^= toBit(L, i)
			}
			return pushBit(L, x)
		},
		"lshift":  func(L *lua.LState) int { return pushBit(L, toBit(L, 1)<<(toBit(L, 2)&31)) },
		"rshift":  func(L *lua.LState) int { return pushBit(L, toBit(L, 1)>>(toBit(L, 2)&31)) },
		"arshift": func(L *lua.LState) int { return pushBit(L, uint32(int32(toBit(L, 1))>>(toBit(L, 2)&31))) },
		"rol": func(L *lua.LState) int {
			x, n := toBit(L, 1), toBit(L, 2)&31
			return pushBit(L, x<<n|x>>((32-n)&31))
		},
		"ror": func(L *lua.LState) int {
			x, n := toBit(L, 1), toBit(L, 2)&31
			return pushBit(L, x>>n|x<<((32-n)&31))
		},
		"bswap": func(L *lua.LState) int {
			x := toBit(L, 1)
			return pushBit(L, x>>24|(x>>8)&0xff00|(x&0xff00)<<8|x<<24)
		},
		"tohex": func(L *lua.LState) int {
			x := toBit(L, 1)
			n := int32(8)
			if L.GetTop() >= 2 {
				n = int32(toBit(L, 2))
			}
			digits := "0123456789abcdef"
			if n < 0 {
				n = -n
				digits = "0123456789ABCDEF"
			}
			if n > 8 {
				n = 8
			}
			buf := make([]byte, n)
			for i := int(n) - 1; i >= 0; i-- {
				buf[i] = digits[x&15]
				x >>= 4
			}
			L.Push(lua.LString(buf))
			return 1
		},
	}
	// luaL_register's table and lua_bit.c's bit_funcs order: pairs(bit)
	// gives Redis's order
	t := L.CreateTable(0, len(bitOrder))
	for _, k := range bitOrder {
		t.RawSetString(k, L.NewFunction(fns[k]))
	}
	return t
}

var bitOrder = []string{"tobit", "bnot", "band", "bor", "bxor", "lshift", "rshift", "arshift", "rol", "ror", "bswap", "tohex"}

var _ = resp.AppendG
