package luavm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"limitdb/resp"
)

var posInf = math.Inf(1)

// newVM builds the sandbox once: base/table/string/math/coroutine, cjson,
// bit, the redis table, Redis's math.random and tostring, and the
// protected global environment. fnMode builds the functions' interpreter
// (Redis's function_lua.c): no KEYS/ARGV, no debugger functions, and the
// two sets of globals of newFuncEnv.
func newVM(st *State, fnMode bool) *vm {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 19000, RegistrySize: 1024 * 4, RegistryMaxSize: 1024 * 256})
	v := &vm{st: st, L: L, fns: map[*Script]*lua.LFunction{}, chunk: chunkName, fnMode: fnMode}
	if fnMode {
		v.chunk = functionChunk
	}
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	G := L.G.Global
	for _, n := range []string{"print", "module", "setfenv", "getfenv", "newproxy", "dofile", "loadfile", "require", "_printregs", "package", "debug", "io", "os", "channel", "_GOPHER_LUA_VERSION"} {
		G.RawSetString(n, lua.LNil)
	}
	G.RawSetString("_VERSION", lua.LString("Lua 5.1"))
	G.RawSetString("tostring", L.NewFunction(baseToString))
	G.RawSetString("error", L.NewFunction(baseError))
	G.RawSetString("loadstring", L.NewFunction(func(L *lua.LState) int { return v.loadString(L) }))
	origPcall := G.RawGetString("pcall").(*lua.LFunction)
	G.RawSetString("pcall", L.NewFunction(func(L *lua.LState) int { return redisPcall(L, origPcall) }))
	G.RawSetString("gcinfo", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LNumber(0)); return 1 }))

	m := G.RawGetString("math").(*lua.LTable)
	m.RawSetString("random", L.NewFunction(v.mathRandom))
	m.RawSetString("randomseed", L.NewFunction(v.mathRandomSeed))
	s := G.RawGetString("string").(*lua.LTable)
	s.RawSetString("dump", L.NewFunction(stringDump))

	G.RawSetString("cjson", openCjson(L))
	G.RawSetString("bit", openBit(L))
	G.RawSetString("cmsgpack", openMsgpack(L))
	G.RawSetString("struct", openStruct(L))

	r := v.redisAPI(L)
	if !fnMode {
		// evalGenericCommand adds the debugger's functions (as in a run
		// without SCRIPT DEBUG) and the deprecated replicate_commands
		r.RawSetString("breakpoint", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LFalse); return 1 }))
		r.RawSetString("debug", L.NewFunction(func(L *lua.LState) int { return 0 }))
		r.RawSetString("replicate_commands", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LTrue); return 1 }))
	}
	G.RawSetString("redis", r)
	v.errh = L.NewFunction(v.errHandler)
	if !fnMode {
		// EVAL's error handler is a global in Redis 7.0
		G.RawSetString("__redis__err__handler", v.errh)
	}

	// Protected globals: reading an undefined global fails, as with
	// Redis 7's error metatable, and every table a script can reach from
	// the globals is read-only (luaSetTableProtectionRecursively): no
	// script can change what the next one sees (the VM is shared).
	L.SetMetatable(G, errorMetatable(L))
	protectTables(G)
	// and the strings' metatable ({__index = string}, lstrlib.c's)
	L.GetMetatable(lua.LString("")).(*lua.LTable).Readonly = true
	v.G, v.realG, v.env = G, G, G
	if fnMode {
		v.newFuncEnv()
	}
	v.keys = L.NewTable()
	v.args = L.NewTable()
	return v
}

// redisAPI is the redis table of luaRegisterRedisAPI, filled in its order
// (which decides pairs(redis)).
func (v *vm) redisAPI(L *lua.LState) *lua.LTable {
	r := L.NewTable()
	r.RawSetString("call", L.NewFunction(func(L *lua.LState) int { return v.call(L, true) }))
	r.RawSetString("pcall", L.NewFunction(func(L *lua.LState) int { return v.call(L, false) }))
	v.registerLog(L, r)
	registerVersion(r)
	r.RawSetString("setresp", L.NewFunction(v.setResp))
	r.RawSetString("sha1hex", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() != 1 {
			raiseTable(L, "ERR wrong number of arguments")
		}
		L.Push(lua.LString(SHA1Hex([]byte(L.ToString(1)))))
		return 1
	}))
	r.RawSetString("error_reply", L.NewFunction(redisErrorReply))
	r.RawSetString("status_reply", L.NewFunction(redisStatusReply))
	r.RawSetString("set_repl", L.NewFunction(setRepl))
	for _, k := range []string{"REPL_NONE", "REPL_AOF", "REPL_SLAVE", "REPL_REPLICA", "REPL_ALL"} {
		r.RawSetString(k, lua.LNumber(redisConsts[k]))
	}
	r.RawSetString("acl_check_cmd", L.NewFunction(v.aclCheck))
	return r
}

// registerLog is luaRegisterLogFunction: redis.log and the log levels.
func (v *vm) registerLog(L *lua.LState, r *lua.LTable) {
	r.RawSetString("log", L.NewFunction(v.redisLog))
	for _, k := range []string{"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING"} {
		r.RawSetString(k, lua.LNumber(redisConsts[k]))
	}
}

// registerVersion is luaRegisterVersion.
func registerVersion(r *lua.LTable) {
	r.RawSetString("REDIS_VERSION_NUM", lua.LNumber(0x07000f))
	r.RawSetString("REDIS_VERSION", lua.LString("7.0.15"))
}

// errorMetatable is luaSetErrorMetatable's metatable: reading a field the
// table lacks fails with Redis's text.
func errorMetatable(L *lua.LState) *lua.LTable {
	m := L.NewTable()
	m.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		luaErrorf(L, "Script attempted to access nonexistent global variable '%s'", L.ToString(2))
		return 0
	}))
	return m
}

// protectTables is luaSetTableProtectionRecursively: t, every table it
// holds and every metatable on the way become read-only (the walk stops
// at tables already read-only, as Redis's does). Bounded by the sandbox's
// own tables: it runs on the globals once, before any script.
func protectTables(t *lua.LTable) {
	if t.Readonly {
		return
	}
	t.Readonly = true
	t.ForEach(func(_, val lua.LValue) {
		if tt, ok := val.(*lua.LTable); ok {
			protectTables(tt)
		}
	})
	if mt, ok := t.Metatable.(*lua.LTable); ok {
		protectTables(mt)
	}
}

// setResp is redis.setresp(2|3): lua_tonumber of its argument, as Redis.
func (v *vm) setResp(L *lua.LState) int {
	if L.GetTop() != 1 {
		raiseTable(L, "ERR redis.setresp() requires one argument.")
	}
	n := int(toNumber(L, 1))
	if n != 2 && n != 3 {
		raiseTable(L, "ERR RESP version must be 2 or 3.")
	}
	v.proto = n
	return 0
}

// setRepl is redis.set_repl(flags): validated as Redis does (its text for
// a wrong argument count says "two"); limitdb always records a script's
// effects (commands.md says why).
func setRepl(L *lua.LState) int {
	if L.GetTop() != 1 {
		raiseTable(L, "ERR redis.set_repl() requires two arguments.")
	}
	if int(toNumber(L, 1))&^3 != 0 {
		raiseTable(L, "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
	}
	return 0
}

// toNumber is lua_tonumber: a number, a string that converts, else 0.
func toNumber(L *lua.LState, i int) float64 { return float64(lua.LVAsNumber(L.Get(i))) }

var redisConsts = map[string]int{"LOG_DEBUG": 0, "LOG_VERBOSE": 1, "LOG_NOTICE": 2, "LOG_WARNING": 3,
	"REPL_NONE": 0, "REPL_AOF": 1, "REPL_SLAVE": 2, "REPL_REPLICA": 2, "REPL_ALL": 3}

// redisLog is redis.log(level, msg…).
func (v *vm) redisLog(L *lua.LState) int {
	if L.GetTop() < 2 {
		raiseTable(L, "ERR redis.log() requires two arguments or more.")
	}
	lv, ok := L.Get(1).(lua.LNumber)
	if str, isStr := L.Get(1).(lua.LString); isStr {
		// lua_isnumber: a string that converts is a number too
		L.Push(v.realG.RawGetString("tonumber"))
		L.Push(str)
		L.Call(1, 1)
		lv, ok = L.Get(-1).(lua.LNumber)
		L.Pop(1)
	}
	if !ok {
		raiseTable(L, "ERR First argument must be a number (log level).")
	}
	level := int(lv) // C's (int) cast: 1.5 is verbose
	if level < 0 || level > 3 {
		raiseTable(L, "ERR Invalid debug level.")
	}
	if e := v.c.E; e.Log != nil {
		// the arguments glued with spaces, as luaLogCommand does;
		// values with no string form (tables, nil…) are skipped
		var b []byte
		for i := 2; i <= L.GetTop(); i++ {
			switch a := L.Get(i).(type) {
			case lua.LString, lua.LNumber:
				if i > 2 {
					b = append(b, ' ')
				}
				b = append(b, a.String()...)
			}
		}
		e.Log(level, string(b))
	}
	return 0
}

// returnErr returns {err=msg} (luaPushError without raising).
func returnErr(L *lua.LState, msg string) int {
	t := L.NewTable()
	t.RawSetString("err", lua.LString(msg))
	L.Push(t)
	return 1
}

// raiseTable raises {err=msg}, as Redis's luaPushError+luaError do for
// errors of the redis.* functions (no position prefix).
func raiseTable(L *lua.LState, msg string) {
	t := L.NewTable()
	t.RawSetString("err", lua.LString(msg))
	L.Error(t, 0)
}

// arithRe matches gopher-lua's arithmetic error; PUC-Lua says
// "attempt to perform arithmetic on a <type> value".
var arithRe = regexp.MustCompile(`cannot perform (\w+) operation between (\w+) and (\w+)`)

// luaMessage rewrites gopher-lua runtime messages into PUC-Lua 5.1's.
func luaMessage(s string) string {
	if m := arithRe.FindStringSubmatchIndex(s); m != nil {
		op, a, b := s[m[2]:m[3]], s[m[4]:m[5]], s[m[6]:m[7]]
		bad := a
		if a == "number" || (op == "concat" && a == "string") {
			bad = b
		}
		if op == "concat" {
			return s[:m[0]] + "attempt to concatenate a " + bad + " value" + s[m[1]:]
		}
		return s[:m[0]] + "attempt to perform arithmetic on a " + bad + " value" + s[m[1]:]
	}
	return s
}

// where is luaL_where(L, level): "user_script:<line>: " when the function
// at level is a script function with a current line, else "".
func where(L *lua.LState, level int) string {
	dbg, ok := L.GetStack(level)
	if !ok {
		return ""
	}
	if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil || dbg.CurrentLine <= 0 {
		return ""
	}
	return dbg.Source + ":" + strconv.Itoa(dbg.CurrentLine) + ": "
}

// baseError is Lua 5.1's error(msg [, level]): a string (or number)
// message gets the position of the function at level (1 = the caller).
func baseError(L *lua.LState) int {
	v := L.Get(1)
	level := L.OptInt(2, 1)
	switch x := v.(type) {
	case lua.LString:
		if level > 0 {
			v = lua.LString(where(L, level) + string(x))
		}
	case lua.LNumber:
		if level > 0 {
			v = lua.LString(where(L, level) + fmtNumber(float64(x)))
		}
	}
	L.Error(v, 0)
	return 0
}

// compileBytesPerByte is the compiler's peak heap per source byte.
const compileBytesPerByte = 64

// baseLoadString is Lua 5.1's loadstring(s [, chunkname]) with PUC-Lua's
// compile errors; the chunk runs in the scripts' globals.
func (v *vm) loadString(L *lua.LState) int {
	src := L.CheckString(1)
	name := L.OptString(2, src)
	if i := strings.IndexByte(name, 0); i >= 0 {
		name = name[:i] // the chunk name is a C string (a dump's stops at its NUL)
	}
	id := chunkID(name)
	if v.sources == nil {
		v.sources = map[string]string{}
	}
	// kept across scripts for error suffixes: bounded in count and size
	if len(v.sources) < 1024 && len(name) <= 4096 {
		v.sources[id] = name
	}
	// compiling takes ~55 bytes of AST and code per source byte (measured:
	// 6 MB of "x = 1 " → 330 MB of heap): count it against the script's
	// memory budget while it lasts
	L.ChargeHeld(len(src) * compileBytesPerByte)
	defer L.ReleaseHeld(len(src) * compileBytesPerByte)
	if msg := checkSyntaxAs(src, chunkIDLex(name)); msg != "" {
		L.Push(lua.LNil)
		L.Push(lua.LString(msg))
		return 2
	}
	chunk, err := parse.Parse(strings.NewReader(src), id)
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(id + ":1: " + strings.TrimSpace(err.Error())))
		return 2
	}
	proto, err := lua.Compile(chunk, id)
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(id + ":1: " + strings.TrimSpace(err.Error())))
		return 2
	}
	proto.IsVarArg &^= lua.VarArgNeedsArg
	fn := L.NewFunctionFromProto(proto)
	fn.Env = L.G.Global
	L.Push(fn)
	return 1
}

// redisPcall is Redis 7's pcall (luaRedisPcall): an error raised as a
// table reaches the script as its err field when that is a string or a
// number (redis.call's and the redis.* functions' {err=…}); any other
// table comes back followed by a nil, as Redis's leaves the nil its
// lua_getfield pushed (pcall(error, {}) returns 3 values). gopher-lua
// messages are rewritten to PUC-Lua's.
//
// The original pcall runs in this function's own frame (not through
// L.Call): like Redis's luaRedisPcall it is one nested call, which Lua 5.1's
// C call limit (200) counts once.
func redisPcall(L *lua.LState, orig *lua.LFunction) int {
	n := orig.GFunction(L)
	first := L.GetTop() - n + 1
	if n >= 2 && L.Get(first) == lua.LFalse {
		switch e := L.Get(first + 1).(type) {
		case *lua.LTable:
			switch ev := L.GetField(e, "err").(type) {
			case lua.LString, lua.LNumber:
				L.Replace(first+1, ev)
			default:
				L.Push(lua.LNil)
				n++
			}
		case lua.LString:
			L.Replace(first+1, lua.LString(luaMessage(string(e))))
		}
	}
	return n
}

// baseToString is tostring with Lua 5.1's number format (%.14g).
func baseToString(L *lua.LState) int {
	L.CheckAny(1)
	v := L.Get(1)
	if mm := L.GetMetaField(v, "__tostring"); mm != lua.LNil {
		// luaL_callmeta: the metamethod's result, whatever its type
		L.Push(mm)
		L.Push(v)
		L.Call(1, 1)
		return 1
	}
	L.Push(lua.LString(tostring(v)))
	return 1
}

func tostring(v lua.LValue) string {
	switch x := v.(type) {
	case lua.LNumber:
		return fmtNumber(float64(x))
	case *lua.LUserData:
		if x == cjsonNull {
			return "userdata: (nil)" // glibc's %p of NULL
		}
		return x.String()
	case *lua.LTable, *lua.LFunction, *lua.LState:
		// "table: 0x…" as Lua's %p, from the object's id (never a Go
		// address: the same script shows the same text on every call)
		return v.String()
	}
	return v.String()
}

// fmtNumber is Lua 5.1's LUA_NUMBER_FMT "%.14g".
func fmtNumber(f float64) string {
	switch {
	case f == 0 && math.Signbit(f):
		return "-0"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f != f:
		if math.Signbit(f) { // glibc printf: 0/0, inf-inf, sqrt(-1) are negative NaNs on x86
			return "-nan"
		}
		return "nan"
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e14 {
		return strconv.FormatInt(int64(f), 10)
	}
	return string(resp.AppendG(nil, f, 14))
}

// --- Redis's 48-bit generator (redisLrand48) ---------------------------------

const lrandMax = 2147483647

func (v *vm) lrand48() int64 {
	st := v.st
	st.Rand48 = (st.Rand48*0x5DEECE66D + 0xB) & (1<<48 - 1)
	return int64(st.Rand48 >> 17)
}

// mathRandom is Redis's math.random: redisLrand48()%INT32_MAX scaled.
func (v *vm) mathRandom(L *lua.LState) int {
	r := float64(v.lrand48()%lrandMax) / float64(lrandMax)
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := checkInt(L, 1)
		if u < 1 {
			luaErrorf(L, "bad argument #1 to 'random' (interval is empty)")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l := checkInt(L, 1)
		u := checkInt(L, 2)
		if l > u {
			luaErrorf(L, "bad argument #2 to 'random' (interval is empty)")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		luaErrorf(L, "wrong number of arguments")
	}
	return 1
}

// checkInt is luaL_checkint: the number truncated to a C int.
func checkInt(L *lua.LState, i int) int32 {
	return int32(int64(L.CheckNumber(i)))
}

// mathRandomSeed is redisSrand48(luaL_checkint(1)).
func (v *vm) mathRandomSeed(L *lua.LState) int {
	s := uint32(checkInt(L, 1))
	v.st.Rand48 = uint64(s)<<16 | 0x330E
	return 0
}

// --- redis.error_reply / status_reply ------------------------------------------

func redisErrorReply(L *lua.LState) int {
	if L.GetTop() != 1 || L.Get(1).Type() != lua.LTString {
		return returnErr(L, "ERR wrong number or type of arguments")
	}
	s := L.ToString(1)
	var msg string
	if strings.HasPrefix(s, "-") {
		if sp := strings.IndexByte(s, ' '); sp >= 0 {
			msg = s[1:sp] + " " + strings.Trim(s[sp+1:], "\r\n")
		} else {
			msg = "ERR " + strings.Trim(s[1:], "\r\n")
		}
	} else {
		// "-" is prepended, then split as above
		if sp := strings.IndexByte(s, ' '); sp >= 0 {
			msg = s[:sp] + " " + strings.Trim(s[sp+1:], "\r\n")
		} else {
			msg = "ERR " + strings.Trim(s, "\r\n")
		}
	}
	t := L.NewTable()
	t.RawSetString("err", lua.LString(msg))
	L.Push(t)
	return 1
}

func redisStatusReply(L *lua.LState) int {
	if L.GetTop() != 1 || L.Get(1).Type() != lua.LTString {
		return returnErr(L, "ERR wrong number or type of arguments")
	}
	t := L.NewTable()
	t.RawSetString("ok", L.Get(1))
	L.Push(t)
	return 1
}

// --- compile errors -------------------------------------------------------------

// compileErrText renders a parse error as PUC-Lua 5.1 would:
// "user_script:<line>: <message> near '<token>'".
func compileErrText(err error, src, chunkName string) string {
	lastLine := 1 + strings.Count(src, "\n")
	var pe *parse.Error
	if errors.As(err, &pe) {
		msg := pe.Message
		if msg == "syntax error" {
			msg = "unexpected symbol"
		}
		tok := pe.Token
		if pe.Pos.Line == parse.EOF || tok == "" {
			return chunkName + ":" + strconv.Itoa(lastLine) + ": " + msg + " near '<eof>'"
		}
		return chunkName + ":" + strconv.Itoa(pe.Pos.Line) + ": " + msg + " near '" + tok + "'"
	}
	return chunkName + ":1: " + strings.TrimSpace(err.Error())
}

// argErr is luaL_argerror: "bad argument #n to 'name' (msg)", name
// being the one the running function was called by, or '?' when a Go
// function (pcall) called it, and the position of a Lua caller only, as
// luaL_error gives it (gopher-lua's ArgError names and places the first
// Lua frame instead).
func argErr(L *lua.LState, n int, msg string) {
	name := "?"
	if dbg, ok := L.GetStack(0); ok {
		if _, err := L.GetInfo("n", dbg, lua.LNil); err == nil && dbg.Name != "" && dbg.Name != "(anonymous)" && !strings.HasPrefix(dbg.Name, "<") {
			name = dbg.Name
		}
	}
	luaErrorf(L, "bad argument #%d to '%s' (%s)", n, name, msg)
}

// luaErrorf is luaL_error: the message with the caller's position.
func luaErrorf(L *lua.LState, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	L.Error(lua.LString(where(L, 1)+msg), 0)
}

// stringDump is string.dump, present as in Redis 7.0.15 (whose loaders
// refuse binary chunks: loadstring of a dump fails with the parser's
// "unexpected symbol near 'char(27)'", here too, since limitdb's loadstring
// only compiles source). A Lua function dumps as Lua 5.1's header
// ("\x1bLuaQ", x86-64 sizes) and function header (source, lines,
// upvalues, parameters, vararg, stack size) followed by gopher-lua's own
// instructions, so the bytes after the function header are not Redis's;
// a Go function gets Lua's "unable to dump given function".
func stringDump(L *lua.LState) int {
	v := L.Get(1)
	fn, ok := v.(*lua.LFunction)
	if !ok {
		got := v.Type().String()
		if L.GetTop() < 1 {
			got = "no value"
		}
		argErr(L, 1, "function expected, got "+got)
	}
	if fn.IsG {
		luaErrorf(L, "unable to dump given function")
	}
	p := fn.Proto
	b := []byte("\x1bLuaQ\x00\x01\x04\x08\x04\x08\x00")
	putInt := func(n int) { b = binary.LittleEndian.AppendUint32(b, uint32(n)) }
	src := "@" + p.SourceName
	b = binary.LittleEndian.AppendUint64(b, uint64(len(src)+1))
	b = append(b, src...)
	b = append(b, 0)
	putInt(p.LineDefined)
	putInt(p.LastLineDefined)
	b = append(b, p.NumUpvalues, p.NumParameters, p.IsVarArg, p.NumUsedRegisters)
	putInt(len(p.Code))
	for _, ins := range p.Code {
		b = binary.LittleEndian.AppendUint32(b, ins)
	}
	for range 5 { // constants, prototypes, line info, locals, upvalue names
		putInt(0)
	}
	L.ChargeMem(len(b))
	L.Push(lua.LString(b))
	return 1
}
