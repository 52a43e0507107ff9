package luavm

import (
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"limitdb/resp"
)

// lua-cjson 2.1.0 as Redis 7.0.15 ships it (deps/lua/src/lua_cjson.c):
// encode, decode, the configuration functions, new and null, with its
// texts and limits. Each module table has its own configuration (cjson.new
// returns a table with a fresh one); the configuration of the global cjson
// table lives as long as the interpreter, so a script that changes it
// changes it for the scripts after it, as in Redis (whose SCRIPT FLUSH
// resets it with the interpreter: so does limitdb's). It is node-local,
// like Redis's: a replica promoted to leader starts with the defaults.

// cjsonNull is cjson.null, Lua's light userdata NULL: object id 0 hashes
// as address 0 does and tostring shows "userdata: (nil)". One value for
// every interpreter and every cjson.new table, as NULL is.
var cjsonNull = &lua.LUserData{Metatable: lua.LNil}

// luaMaxCStack is Lua 5.1's LUAI_MAXCSTACK: lua_checkstack fails past
// it, which bounds cjson's nesting whatever the configured depth.
const luaMaxCStack = 8000

// cjsonConfig is json_config_t.
type cjsonConfig struct {
	sparseConvert  int // 0/1 (json_enum_option's setting)
	sparseRatio    int
	sparseSafe     int
	encodeMaxDepth int
	decodeMaxDepth int
	encodeInvalid  int // 0 off, 1 on, 2 null
	decodeInvalid  int // 0 off, 1 on
	keepBuffer     int // 0/1: only memory in lua-cjson; kept for its replies
	precision      int
}

func newCjsonConfig() *cjsonConfig {
	return &cjsonConfig{sparseRatio: 2, sparseSafe: 10, encodeMaxDepth: 1000, decodeMaxDepth: 1000,
		decodeInvalid: 1, keepBuffer: 1, precision: 14}
}

// openCjson is lua_cjson_new: a module table with its own configuration,
// filled in lua-cjson's order (luaL_setfuncs, then null, _NAME, _VERSION),
// which decides pairs(cjson).
func openCjson(L *lua.LState) *lua.LTable {
	cfg := newCjsonConfig()
	t := L.NewTable()
	for _, f := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{"encode", cfg.encode},
		{"decode", cfg.decode},
		{"encode_sparse_array", cfg.encodeSparseArray},
		{"encode_max_depth", func(L *lua.LState) int {
			return cfg.intOption(L, 1, &cfg.encodeMaxDepth, 1, math.MaxInt32)
		}},
		{"decode_max_depth", func(L *lua.LState) int {
			return cfg.intOption(L, 1, &cfg.decodeMaxDepth, 1, math.MaxInt32)
		}},
		{"encode_number_precision", func(L *lua.LState) int {
			return cfg.intOption(L, 1, &cfg.precision, 1, 14)
		}},
		{"encode_keep_buffer", func(L *lua.LState) int {
			cjsonArgInit(L, 1)
			return enumOption(L, 1, &cfg.keepBuffer, boolOptions)
		}},
		{"encode_invalid_numbers", func(L *lua.LState) int {
			cjsonArgInit(L, 1)
			return enumOption(L, 1, &cfg.encodeInvalid, []string{"off", "on", "null"})
		}},
		{"decode_invalid_numbers", func(L *lua.LState) int {
			cjsonArgInit(L, 1)
			return enumOption(L, 1, &cfg.decodeInvalid, boolOptions)
		}},
		{"new", func(L *lua.LState) int { L.Push(openCjson(L)); return 1 }},
	} {
		t.RawSetString(f.name, L.NewFunction(f.fn))
	}
	t.RawSetString("null", cjsonNull)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	return t
}

// --- configuration -----------------------------------------------------------

var boolOptions = []string{"off", "on"}

// cjsonArgInit is json_arg_init: at most n arguments, the missing ones nil.
func cjsonArgInit(L *lua.LState, n int) {
	if L.GetTop() > n {
		argErr(L, n+1, "found too many arguments")
	}
	for L.GetTop() < n {
		L.Push(lua.LNil)
	}
}

// intOption is json_integer_option for a one-argument function.
func (cfg *cjsonConfig) intOption(L *lua.LState, n int, setting *int, lo, hi int) int {
	cjsonArgInit(L, n)
	return intOptionAt(L, 1, setting, lo, hi)
}

// intOptionAt is json_integer_option: luaL_checkinteger stored into a C
// int (low 32 bits), checked against [lo, hi] as argument 1 whatever the
// option's position (lua-cjson's own quirk); pushes the setting.
func intOptionAt(L *lua.LState, i int, setting *int, lo, hi int) int {
	if L.Get(i) != lua.LNil {
		v := int(int32(L.CheckInteger(i)))
		if v < lo || v > hi {
			argErr(L, 1, "expected integer between "+strconv.Itoa(lo)+" and "+strconv.Itoa(hi))
		}
		*setting = v
	}
	L.Push(lua.LNumber(*setting))
	return 1
}

// enumOption is json_enum_option with bool_true 1: a boolean sets 0/1, a
// string one of the options (luaL_checkoption); pushes the setting as a
// boolean when it is 0 or 1, else as its name.
func enumOption(L *lua.LState, i int, setting *int, options []string) int {
	switch v := L.Get(i).(type) {
	case *lua.LNilType:
	case lua.LBool:
		*setting = 0
		if v {
			*setting = 1
		}
	default:
		name := L.CheckString(i)
		found := -1
		for k, o := range options {
			if o == name {
				found = k
				break
			}
		}
		if found < 0 {
			argErr(L, i, "invalid option '"+name+"'")
		}
		*setting = found
	}
	if *setting <= 1 {
		L.Push(lua.LBool(*setting == 1))
	} else {
		L.Push(lua.LString(options[*setting]))
	}
	return 1
}

// encodeSparseArray is json_cfg_encode_sparse_array: convert, ratio, safe.
func (cfg *cjsonConfig) encodeSparseArray(L *lua.LState) int {
	cjsonArgInit(L, 3)
	enumOption(L, 1, &cfg.sparseConvert, boolOptions)
	intOptionAt(L, 2, &cfg.sparseRatio, 0, math.MaxInt32)
	intOptionAt(L, 3, &cfg.sparseSafe, 0, math.MaxInt32)
	return 3
}

// --- encode ----------------------------------------------------------------------

func (cfg *cjsonConfig) encode(L *lua.LState) int {
	if L.GetTop() != 1 {
		argErr(L, 1, "expected 1 argument")
	}
	var b []byte
	b = cfg.appendValue(L, b, L.Get(1), 0, 1)
	L.ReleaseHeld(cap(b))
	L.ChargeMem(len(b))
	L.Push(lua.LString(b))
	return 1
}

// encodeError is json_encode_exception: "Cannot serialise <type>: why".
func encodeError(L *lua.LState, v lua.LValue, why string) {
	luaErrorf(L, "Cannot serialise %s: %s", v.Type().String(), why)
}

// appendValue is json_append_data. depth counts the tables entered; slots
// the Lua stack slots lua-cjson would hold at this point (the argument,
// one per array level, two per object level), which lua_checkstack bounds
// at LUAI_MAXCSTACK.
func (cfg *cjsonConfig) appendValue(L *lua.LState, b []byte, v lua.LValue, depth, slots int) []byte {
	switch x := v.(type) {
	case *lua.LNilType:
		return append(b, "null"...)
	case lua.LBool:
		if x {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case lua.LNumber:
		return cfg.appendNumber(L, b, x)
	case lua.LString:
		b = heldGrow(L, b, 6*len(x)+2)
		return jsonString(b, string(x))
	case *lua.LUserData:
		if x == cjsonNull {
			return append(b, "null"...)
		}
	case *lua.LTable:
		depth++
		if depth > cfg.encodeMaxDepth || slots+3 > luaMaxCStack {
			luaErrorf(L, "Cannot serialise, excessive nesting (%d)", depth)
		}
		if n := cfg.arrayLength(L, x); n > 0 {
			b = append(b, '[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					b = append(b, ',')
				}
				b = cfg.appendValue(L, b, x.RawGetInt(i), depth, slots+1)
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
				b = append(b, ':')
			case lua.LNumber:
				b = append(b, '"')
				b = cfg.appendNumber(L, b, kk)
				b = append(b, '"', ':')
			default:
				encodeError(L, k, "table key must be a number or string")
			}
			b = cfg.appendValue(L, b, val, depth, slots+2)
		})
		return append(b, '}')
	}
	encodeError(L, v, "type not supported")
	return b
}

// arrayLength is lua_array_length: the largest key when every key is an
// integer >= 1 (a C int: a key of 2^31 or more converts to INT_MIN on
// x86-64, which makes the table an object), -1 for an object, and the
// sparse-array rule (an error, or an object when encode_sparse_array
// converts).
func (cfg *cjsonConfig) arrayLength(L *lua.LState, t *lua.LTable) int {
	maxKey, items, isArray := 0, 0, true
	t.ForEach(func(k, _ lua.LValue) {
		if !isArray {
			return
		}
		if n, ok := k.(lua.LNumber); ok && n != 0 && float64(n) == math.Floor(float64(n)) && n >= 1 {
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
	if !isArray {
		return -1
	}
	if cfg.sparseRatio > 0 && maxKey > items*cfg.sparseRatio && maxKey > cfg.sparseSafe {
		if cfg.sparseConvert == 0 {
			luaErrorf(L, "Cannot serialise table: excessively sparse array")
		}
		return -1
	}
	return maxKey
}

// appendNumber is json_append_number: encode_invalid_numbers decides NaN
// and infinities (an error, "nan"/"inf"/"-inf", or null), the rest is
// "%.<precision>g".
func (cfg *cjsonConfig) appendNumber(L *lua.LState, b []byte, n lua.LNumber) []byte {
	f := float64(n)
	bad := math.IsInf(f, 0) || f != f
	switch cfg.encodeInvalid {
	case 0:
		if bad {
			encodeError(L, n, "must not be NaN or Inf")
		}
	case 1:
		if f != f {
			return append(b, "nan"...)
		}
	default:
		if bad {
			return append(b, "null"...)
		}
	}
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	}
	return resp.AppendG(b, f, cfg.precision)
}

// jsonString is json_append_string: lua-cjson's escape table (char2escape).
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

// --- decode ----------------------------------------------------------------------

// Token types and their names in error messages (json_token_type_name).
const (
	tObjBegin = iota
	tObjEnd
	tArrBegin
	tArrEnd
	tString
	tNumber
	tBoolean
	tNull
	tColon
	tComma
	tEnd
	tError
)

var tokenNames = [...]string{"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING",
	"T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END", "T_ERROR"}

type jtok struct {
	typ int
	val lua.LValue
	pos int    // token->index: where it starts, or where the error is
	err string // T_ERROR's text
}

// jsonParser is json_parse_t over a C string: a NUL byte ends the input,
// as in lua-cjson (at(i) reads 0 past the end).
type jsonParser struct {
	L     *lua.LState
	cfg   *cjsonConfig
	s     string
	i     int
	depth int
	tmp   []byte
}

func (p *jsonParser) at(i int) byte {
	if i < len(p.s) {
		return p.s[i]
	}
	return 0
}

func (cfg *cjsonConfig) decode(L *lua.LState) int {
	if L.GetTop() != 1 {
		argErr(L, 1, "expected 1 argument")
	}
	s := L.CheckString(1)
	if len(s) >= 2 && (s[0] == 0 || s[1] == 0) {
		luaErrorf(L, "JSON parser does not support UTF-16 or UTF-32")
	}
	p := &jsonParser{L: L, cfg: cfg, s: s}
	v := p.value(p.next(), 1)
	if t := p.next(); t.typ != tEnd {
		p.fail("the end", t)
	}
	L.Push(v)
	return 1
}

// fail is json_throw_parse_error.
func (p *jsonParser) fail(exp string, t jtok) {
	found := tokenNames[t.typ]
	if t.typ == tError {
		found = t.err
	}
	luaErrorf(p.L, "Expected %s but found %s at character %d", exp, found, t.pos+1)
}

// next is json_next_token.
func (p *jsonParser) next() jtok {
	for {
		c := p.at(p.i)
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			break
		}
		p.i++
	}
	t := jtok{pos: p.i}
	c := p.at(p.i)
	switch c {
	case '{':
		t.typ = tObjBegin
	case '}':
		t.typ = tObjEnd
	case '[':
		t.typ = tArrBegin
	case ']':
		t.typ = tArrEnd
	case ':':
		t.typ = tColon
	case ',':
		t.typ = tComma
	case 0:
		t.typ = tEnd
		return t
	case '"':
		return p.str(t)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if p.cfg.decodeInvalid == 0 && p.invalidNumber() {
			return p.tokErr(t, "invalid number")
		}
		return p.number(t)
	case 'f', 'i', 'I', 'n', 'N', 't', '+':
		rest := p.s[p.i:]
		switch {
		case strings.HasPrefix(rest, "true"):
			p.i += 4
			t.typ, t.val = tBoolean, lua.LTrue
		case strings.HasPrefix(rest, "false"):
			p.i += 5
			t.typ, t.val = tBoolean, lua.LFalse
		case strings.HasPrefix(rest, "null"):
			p.i += 4
			t.typ, t.val = tNull, cjsonNull
		case p.cfg.decodeInvalid != 0 && p.invalidNumber():
			return p.number(t)
		default:
			return p.tokErr(t, "invalid token")
		}
		return t
	default:
		return p.tokErr(t, "invalid token")
	}
	p.i++
	return t
}

// tokErr is json_set_token_error: the error is where the parser stands.
func (p *jsonParser) tokErr(t jtok, msg string) jtok {
	t.typ, t.err, t.pos = tError, msg, p.i
	return t
}

// invalidNumber is json_is_invalid_number: what strtod accepts and strict
// JSON does not (a leading +, hex, leading zeros, inf, nan).
func (p *jsonParser) invalidNumber() bool {
	i := p.i
	if p.at(i) == '+' {
		return true
	}
	if p.at(i) == '-' {
		i++
	}
	if c := p.at(i); c == '0' {
		c2 := p.at(i + 1)
		return c2|0x20 == 'x' || (c2 >= '0' && c2 <= '9')
	} else if c <= '9' {
		return false
	}
	rest := strings.ToLower(p.s[i:min(len(p.s), i+3)])
	return rest == "inf" || rest == "nan"
}

// number is json_next_number_token: strtod's longest prefix.
func (p *jsonParser) number(t jtok) jtok {
	f, n := strtodPrefix(p.s[p.i:])
	if n == 0 {
		return p.tokErr(t, "invalid number")
	}
	p.i += n
	t.typ, t.val = tNumber, lua.LNumber(f)
	return t
}

// str is json_next_string_token.
func (p *jsonParser) str(t jtok) jtok {
	p.i++ // the opening quote
	b := p.tmp[:0]
	for {
		c := p.at(p.i)
		if c == '"' {
			break
		}
		if c == 0 {
			return p.tokErr(t, "unexpected end of string")
		}
		if c == '\\' {
			switch e := p.at(p.i + 1); e {
			case '"', '\\', '/':
				c = e
			case 'b':
				c = '\b'
			case 't':
				c = '\t'
			case 'n':
				c = '\n'
			case 'f':
				c = '\f'
			case 'r':
				c = '\r'
			case 'u':
				var ok bool
				if b, ok = p.unicodeEscape(b); !ok {
					return p.tokErr(t, "invalid unicode escape code")
				}
				continue
			default:
				return p.tokErr(t, "invalid escape code")
			}
			p.i++
		}
		b = append(b, c)
		p.i++
	}
	p.i++
	p.tmp = b
	t.typ, t.val = tString, lua.LString(b)
	return t
}

// unicodeEscape is json_append_unicode_escape at the backslash of \uXXXX
// (a surrogate pair takes two escapes): the code point as UTF-8 (up to 4
// bytes, codepoint_to_utf8's ranges, NUL included).
func (p *jsonParser) unicodeEscape(b []byte) ([]byte, bool) {
	cp := p.hex4(p.i + 2)
	if cp < 0 {
		return b, false
	}
	n := 6
	if cp&0xF800 == 0xD800 {
		if cp&0x400 != 0 || p.at(p.i+6) != '\\' || p.at(p.i+7) != 'u' {
			return b, false
		}
		lo := p.hex4(p.i + 8)
		if lo < 0 || lo&0xFC00 != 0xDC00 {
			return b, false
		}
		cp = ((cp&0x3FF)<<10 | lo&0x3FF) + 0x10000
		n = 12
	}
	switch {
	case cp <= 0x7F:
		b = append(b, byte(cp))
	case cp <= 0x7FF:
		b = append(b, byte(cp>>6|0xC0), byte(cp&0x3F|0x80))
	case cp <= 0xFFFF:
		b = append(b, byte(cp>>12|0xE0), byte(cp>>6&0x3F|0x80), byte(cp&0x3F|0x80))
	default:
		b = append(b, byte(cp>>18|0xF0), byte(cp>>12&0x3F|0x80), byte(cp>>6&0x3F|0x80), byte(cp&0x3F|0x80))
	}
	p.i += n
	return b, true
}

// hex4 is decode_hex4: four hex digits at i, or -1.
func (p *jsonParser) hex4(i int) int {
	v := 0
	for k := 0; k < 4; k++ {
		c := p.at(i + k)
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | int(c-'0')
		case c|0x20 >= 'a' && c|0x20 <= 'f':
			v = v<<4 | int(c|0x20-'a'+10)
		default:
			return -1
		}
	}
	return v
}

// value is json_process_value; slots as in appendValue (the argument,
// then per level the table, and for objects its key).
func (p *jsonParser) value(t jtok, slots int) lua.LValue {
	switch t.typ {
	case tString, tNumber, tBoolean, tNull:
		return t.val
	case tObjBegin:
		p.descend(slots + 3)
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
			if tok = p.next(); tok.typ != tColon {
				p.fail("colon", tok)
			}
			tab.RawSet(key, p.value(p.next(), slots+2))
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
		p.descend(slots + 2)
		tab := p.L.NewTable()
		tok := p.next()
		if tok.typ == tArrEnd {
			p.depth--
			return tab
		}
		for n := 1; ; n++ {
			tab.RawSetInt(n, p.value(tok, slots+1))
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

// descend is json_decode_descend: one level deeper, within
// decode_max_depth and lua_checkstack's room (need slots).
func (p *jsonParser) descend(need int) {
	p.depth++
	if p.depth > p.cfg.decodeMaxDepth || need > luaMaxCStack {
		luaErrorf(p.L, "Found too many nested data structures (%d) at character %d", p.depth, p.i)
	}
}

// strtodPrefix is C's strtod on the longest prefix of s that it accepts:
// an optional sign, then "inf"/"infinity", "nan"/"nan(…)", a hexadecimal
// float or a decimal one. It returns the value and the bytes used (0: no
// number). Out-of-range values are ±inf or 0, as strtod gives them.
func strtodPrefix(s string) (float64, int) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	sign := func(f float64) float64 {
		if neg {
			return -f
		}
		return f
	}
	low := strings.ToLower(s[i:min(len(s), i+8)])
	switch {
	case strings.HasPrefix(low, "infinity"):
		return sign(math.Inf(1)), i + 8
	case strings.HasPrefix(low, "inf"):
		return sign(math.Inf(1)), i + 3
	case strings.HasPrefix(low, "nan"):
		n := i + 3
		if n < len(s) && s[n] == '(' {
			j := n + 1
			for j < len(s) && (isAlnumByte(s[j]) || s[j] == '_') {
				j++
			}
			if j < len(s) && s[j] == ')' {
				n = j + 1
			}
		}
		// glibc's strtod("nan") is a positive NaN; printf shows "-nan"
		// for the negated one
		nan := math.Float64frombits(0x7FF8000000000000)
		if neg {
			nan = math.Float64frombits(0xFFF8000000000000)
		}
		return nan, n
	}
	if i+1 < len(s) && s[i] == '0' && s[i+1]|0x20 == 'x' {
		if f, n, ok := hexFloat(s[i+2:]); ok {
			return sign(f), i + 2 + n
		}
		return sign(0), i + 1 // "0x" without digits: the 0
	}
	start := i
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, 0
	}
	if i < len(s) && s[i]|0x20 == 'e' {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			i = j
		}
	}
	f, _ := strconv.ParseFloat(s[start:i], 64) // a range error still gives ±inf or 0
	return sign(f), i
}

// hexFloat reads the hex digits, point and binary exponent after "0x".
func hexFloat(s string) (float64, int, bool) {
	i, digits := 0, 0
	for i < len(s) && isHexByte(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isHexByte(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, 0, false
	}
	mant := s[:i]
	exp := "p0"
	if i < len(s) && s[i]|0x20 == 'p' {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			exp = s[i:j]
			i = j
		}
	}
	if mant[0] == '.' {
		mant = "0" + mant
	}
	f, _ := strconv.ParseFloat("0x"+mant+exp, 64)
	return f, i, true
}

func isHexByte(c byte) bool {
	return (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'f')
}

func isAlnumByte(c byte) bool {
	return (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'z')
}
