package luavm

import (
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"limitdb/resp"
)

// --- cjson -------------------------------------------------------------------

var cjsonNull *lua.LUserData

func openCjson(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	// lua_cjson's null is a light userdata holding NULL: object id 0
	// hashes as address 0 does, and tostring shows "userdata: (nil)"
	cjsonNull = &lua.LUserData{Metatable: lua.LNil}
	t.RawSetString("null", cjsonNull)
	t.RawSetString("encode", L.NewFunction(cjsonEncode))
	t.RawSetString("decode", L.NewFunction(cjsonDecode))
	return t
}

func cjsonEncode(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.ArgError(1, "expected 1 argument")
	}
	var b []byte
	b = jsonAppend(L, b, L.Get(1), 0)
	L.ReleaseHeld(cap(b))
	L.ChargeMem(len(b))
	L.Push(lua.LString(b))
	return 1
}

func jsonAppend(L *lua.LState, b []byte, v lua.LValue, depth int) []byte {
	switch x := v.(type) {
	case *lua.LNilType:
		return append(b, "null"...)
	case lua.LBool:
		if x {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case lua.LNumber:
		f := float64(x)
		if math.IsInf(f, 0) || f != f {
			luaErrorf(L, "Cannot serialise number: must not be NaN or Inf")
		}
		return append(b, fmtNumber(f)...)
	case lua.LString:
		b = heldGrow(L, b, 6*len(x)+2)
		return jsonString(b, string(x))
	case *lua.LUserData:
		if x == cjsonNull {
			return append(b, "null"...)
		}
	case *lua.LTable:
		depth++
		if depth > 1000 {
			luaErrorf(L, "Cannot serialise, excessive nesting (%d)", depth)
		}
		// array detection as lua_cjson's lua_array_length
		// (max is a C int: a key of 2^31 or more converts to INT_MIN on
		// x86-64, and the table is then encoded as an object)
		maxKey, items, isArray := 0, 0, true
		x.ForEach(func(k, _ lua.LValue) {
			if n, ok := k.(lua.LNumber); ok && float64(n) == math.Floor(float64(n)) && n >= 1 {
				if float64(n) > float64(maxKey) {
					maxKey = math.MinInt32
					if n < 1<<31 {
						maxKey = int(n)
					}
				}
				items++
				return
			}
			isArray = false
		})
		if items == 0 && isArray {
			return append(b, "{}"...)
		}
		if isArray && maxKey > 0 {
			if maxKey > items*2 && maxKey > 10 {
				luaErrorf(L, "Cannot serialise table: excessively sparse array")
			}
			b = append(b, '[')
			for i := 1; i <= maxKey; i++ {
				if i > 1 {
					b = append(b, ',')
				}
				b = jsonAppend(L, b, x.RawGetInt(i), depth)
			}
			return append(b, ']')
		}
		b = append(b, '{')
		first := true
		x.ForEach(func(k, val lua.LValue) {
			if !first {
				b = append(b, ',')
			}
			first = false
			switch kk := k.(type) {
			case lua.LString:
				b = jsonString(b, string(kk))
			case lua.LNumber:
				// json_append_number between quotes: same refusal
				if f := float64(kk); math.IsInf(f, 0) || f != f {
					luaErrorf(L, "Cannot serialise number: must not be NaN or Inf")
				}
				b = jsonString(b, fmtNumber(float64(kk)))
			default:
				luaErrorf(L, "Cannot serialise table: table key must be a number or string")
			}
			b = append(b, ':')
			b = jsonAppend(L, b, val, depth)
		})
		return append(b, '}')
	}
	luaErrorf(L, "Cannot serialise %s: type not supported", v.Type().String())
	return b
}

func jsonString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '/':
			b = append(b, '\\', '/')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			if c < 0x20 || c == 0x7f {
				b = append(b, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}

type jsonParser struct {
	L     *lua.LState
	s     string
	i     int
	depth int
}

const (
	tObjBegin = "T_OBJ_BEGIN"
	tObjEnd   = "T_OBJ_END"
	tArrBegin = "T_ARR_BEGIN"
	tArrEnd   = "T_ARR_END"
	tString   = "T_STRING"
	tNumber   = "T_NUMBER"
	tBoolean  = "T_BOOLEAN"
	tNull     = "T_NULL"
	tColon    = "T_COLON"
	tComma    = "T_COMMA"
	tEnd      = "T_END"
	tError    = "T_ERROR"
)

type jtok struct {
	typ string
	val lua.LValue
	pos int
	err string
}

func cjsonDecode(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.ArgError(1, "expected 1 argument")
	}
	p := &jsonParser{L: L, s: L.CheckString(1)}
	tok := p.next()
	v := p.value(tok)
	tok = p.next()
	if tok.typ != tEnd {
		p.fail("the end", tok)
	}
	L.Push(v)
	return 1
}

func (p *jsonParser) fail(exp string, t jtok) {
	found := t.typ
	if t.typ == tError {
		found = t.err
	}
	luaErrorf(p.L, "Expected %s but found %s at character %d", exp, found, t.pos+1)
}

func (p *jsonParser) next() jtok {
	s := p.s
	for p.i < len(s) && (s[p.i] == ' ' || s[p.i] == '\t' || s[p.i] == '\n' || s[p.i] == '\r') {
		p.i++
	}
	t := jtok{pos: p.i}
	if p.i >= len(s) {
		t.typ = tEnd
		return t
	}
	c := s[p.i]
	switch c {
	case '{':
		p.i++
		t.typ = tObjBegin
	case '}':
		p.i++
		t.typ = tObjEnd
	case '[':
		p.i++
		t.typ = tArrBegin
	case ']':
		p.i++
		t.typ = tArrEnd
	case ':':
		p.i++
		t.typ = tColon
	case ',':
		p.i++
		t.typ = tComma
	case '"':
		return p.str(t)
	default:
		switch {
		case c == '-' || c >= '0' && c <= '9':
			j := p.i
			for j < len(s) && strings.IndexByte("0123456789+-.eE", s[j]) >= 0 {
				j++
			}
			f, err := strconv.ParseFloat(s[p.i:j], 64)
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				err = nil // strtod: out of range is +-inf (or 0), as Redis's cjson
			}
			if err != nil {
				t.typ, t.err = tError, "invalid number"
				return t
			}
			p.i = j
			t.typ, t.val = tNumber, lua.LNumber(f)
		case strings.HasPrefix(s[p.i:], "true"):
			p.i += 4
			t.typ, t.val = tBoolean, lua.LTrue
		case strings.HasPrefix(s[p.i:], "false"):
			p.i += 5
			t.typ, t.val = tBoolean, lua.LFalse
		case strings.HasPrefix(s[p.i:], "null"):
			p.i += 4
			t.typ, t.val = tNull, cjsonNull
		default:
			t.typ, t.err = tError, "invalid token"
		}
	}
	return t
}

func (p *jsonParser) str(t jtok) jtok {
	s := p.s
	var b []byte
	i := p.i + 1
	for {
		if i >= len(s) {
			t.typ, t.err, t.pos = tError, "unexpected end of string", i
			return t
		}
		c := s[i]
		if c == '"' {
			break
		}
		if c == '\\' {
			if i+1 >= len(s) {
				t.typ, t.err = tError, "invalid escape code"
				return t
			}
			i++
			switch s[i] {
			case '"', '\\', '/':
				b = append(b, s[i])
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				if i+4 >= len(s) {
					t.typ, t.err = tError, "invalid unicode escape code"
					return t
				}
				n, err := strconv.ParseUint(s[i+1:i+5], 16, 32)
				if err != nil {
					t.typ, t.err = tError, "invalid unicode escape code"
					return t
				}
				b = append(b, string(rune(n))...)
				i += 4
			default:
				t.typ, t.err = tError, "invalid escape code"
				return t
			}
			i++
			continue
		}
		b = append(b, c)
		i++
	}
	p.i = i + 1
	t.typ, t.val = tString, lua.LString(b)
	return t
}

func (p *jsonParser) value(t jtok) lua.LValue {
	switch t.typ {
	case tString, tNumber, tBoolean, tNull:
		return t.val
	case tObjBegin:
		p.depth++
		if p.depth > 1000 {
			luaErrorf(p.L, "Found too many nested data structures (%d) at character %d", p.depth, t.pos+1)
		}
		tab := p.L.NewTable()
		tok := p.next()
		if tok.typ == tObjEnd {
			p.depth--
			return tab
		}
		for {
			if tok.typ != tString {
				p.fail("object key string", tok)
			}
			key := tok.val
			tok = p.next()
			if tok.typ != tColon {
				p.fail("colon", tok)
			}
			tab.RawSet(key, p.value(p.next()))
			tok = p.next()
			if tok.typ == tObjEnd {
				p.depth--
				return tab
			}
			if tok.typ != tComma {
				p.fail("comma or object end", tok)
			}
			tok = p.next()
		}
	case tArrBegin:
		p.depth++
		if p.depth > 1000 {
			luaErrorf(p.L, "Found too many nested data structures (%d) at character %d", p.depth, t.pos+1)
		}
		tab := p.L.NewTable()
		tok := p.next()
		if tok.typ == tArrEnd {
			p.depth--
			return tab
		}
		for n := 1; ; n++ {
			tab.RawSetInt(n, p.value(tok))
			tok = p.next()
			if tok.typ == tArrEnd {
				p.depth--
				return tab
			}
			if tok.typ != tComma {
				p.fail("comma or array end", tok)
			}
			tok = p.next()
		}
	}
	p.fail("value", t)
	return lua.LNil
}

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
