package luavm

import (
	"context"
	"slices"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"limitdb/engine"
)

// Redis 7 functions (functions.c, function_lua.c): libraries loaded with
// FUNCTION LOAD register functions that FCALL runs. Libraries are
// replicated state, like the script cache: FUNCTION LOAD, DELETE, FLUSH
// and RESTORE record themselves as effects (as Redis 7.0 propagates them)
// and a follower applies them by compiling the library and running its
// registration code; snapshots carry each library's code as Redis's RDB
// does (RDB_OPCODE_FUNCTION2). The commands are in functions_cmds.go.
//
// The functions run in an interpreter of their own (State.fvm), as Redis
// keeps a lua_State for them apart from EVAL's. Its globals are two
// tables: the real globals G (the sandbox, read-only, with Redis's error
// metatable) and the table the libraries' code runs in, empty and
// read-only, whose metatable's __index is G — or, while a library loads,
// the library API (a `redis` table with register_function, log, the log
// levels and the version only), so that loading code reaches nothing else.

const functionChunk = "user_function"

// loadTimeout is Redis's LOAD_TIMEOUT_MS: a library's registration code
// that runs longer fails with "FUNCTION LOAD timeout".
const loadTimeout = 500 * time.Millisecond

// Library is one loaded library.
type Library struct {
	Name  string
	Code  string      // the whole FUNCTION LOAD payload, shebang line included
	Funcs []*Function // in registration order
}

// Function is one registered function.
type Function struct {
	Name    string
	Desc    string
	HasDesc bool
	flags   scriptFlags
	lib     *Library
	fn      lua.LValue // the callback (a function) in the functions' interpreter
	// reuse: the callback cannot keep its KEYS and ARGV tables past a
	// call (mayKeepArgs), so one pair of tables serves every call
	reuse bool
}

// libSet is Redis's functionsLibCtx: libraries by name (case-sensitive,
// as Redis's libraries dictionary) and every library's functions by name
// (case-insensitive, as its functions dictionary: FCALL TEST finds test).
type libSet struct {
	libs  map[string]*Library
	funcs map[string]*Function
	nfn   int // functions linked (FUNCTION STATS)
}

func newLibSet() libSet {
	return libSet{libs: map[string]*Library{}, funcs: map[string]*Function{}}
}

// link adds l's functions and l (libraryLink). A name two functions of
// one library share case-insensitively keeps the first, as Redis's
// dictAdd does.
func (s *libSet) link(l *Library) {
	for _, f := range l.Funcs {
		k := strings.ToLower(f.Name)
		if _, dup := s.funcs[k]; !dup {
			s.funcs[k] = f
		}
	}
	s.libs[l.Name] = l
	s.nfn += len(l.Funcs)
}

// unlink removes l and its functions (libraryUnlink).
func (s *libSet) unlink(l *Library) {
	for _, f := range l.Funcs {
		k := strings.ToLower(f.Name)
		if s.funcs[k] == f {
			delete(s.funcs, k)
		}
	}
	delete(s.libs, l.Name)
	s.nfn -= len(l.Funcs)
}

// sorted returns the libraries in name order: FUNCTION LIST and DUMP and
// snapshots list them so (Redis's order is its hash table's, random per
// process).
func (s *libSet) sorted() []*Library {
	out := make([]*Library, 0, len(s.libs))
	for _, l := range s.libs {
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b *Library) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// publish stores FUNCTION STATS's counts where a busy server reads them
// (loads, not stores, when they are already there: FCALL's path).
func (st *State) publish(e *engine.Engine) {
	if n := int64(len(st.fn.libs)); e.Guard.Libraries.Load() != n {
		e.Guard.Libraries.Store(n)
	}
	if n := int64(st.fn.nfn); e.Guard.Functions.Load() != n {
		e.Guard.Functions.Store(n)
	}
}

// Errors of library creation (functionsCreateWithLibraryCtx and its
// callees), Redis's texts.
const (
	errLibMissingMeta = "ERR Missing library metadata"
	errLibInvalidMeta = "ERR Invalid library metadata"
	errLibNameTwice   = "ERR Invalid metadata value, name argument was given multiple times"
	errLibMetaValue   = "ERR Invalid metadata value given: "
	errLibNoName      = "ERR Library name was not given"
	errLibName        = "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"
	errLibCompile     = "ERR Error compiling function: "
	errLibRegister    = "ERR Error registering functions: "
	errLibNoFunctions = "ERR No functions registered"
	errLibTimeout     = "ERR FUNCTION LOAD timeout"
)

// libMeta is functionExtractLibMetaData: the engine and library names of
// the shebang line and where the code after it starts (at its newline,
// which keeps the user's line numbers).
func libMeta(code string) (engineName, name string, body int, msg string) {
	line, ok, found := shebangLine(code)
	if !ok {
		return "", "", 0, errLibMissingMeta
	}
	if !found {
		return "", "", 0, errLibInvalidMeta
	}
	parts, ok := splitShebang(line)
	if !ok || len(parts) == 0 {
		return "", "", 0, errLibInvalidMeta
	}
	engineName = parts[0][min(2, len(parts[0])):]
	hasName := false
	for _, p := range parts[1:] {
		if len(p) >= 5 && strings.EqualFold(p[:5], "name=") {
			if hasName {
				return "", "", 0, errLibNameTwice
			}
			name, hasName = p[5:], true
			continue
		}
		return "", "", 0, errLibMetaValue + p
	}
	if !hasName {
		return "", "", 0, errLibNoName
	}
	return engineName, name, len(line), ""
}

// validName is functionsVerifyName: [a-zA-Z0-9_]+.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// loadOpts are what distinguishes a client's FUNCTION LOAD from the
// executing node's record being applied or a snapshot being loaded: the
// client's load is bounded in time (LOAD_TIMEOUT_MS) and by
// lua-memory-limit; the others run what the executing node accepted.
type loadOpts struct {
	timeout  time.Duration
	memLimit int64
}

// create is functionsCreateWithLibraryCtx: it compiles code, runs its
// registration code and links the library into set (replacing the one of
// the same name when replace; else that is an error). It returns the
// library's name, or Redis's error text with set unchanged.
func (st *State) create(code string, replace bool, set *libSet, o loadOpts) (string, string) {
	engineName, name, body, msg := libMeta(code)
	if msg != "" {
		return "", msg
	}
	if !validName(name) {
		return "", errLibName
	}
	if !strings.EqualFold(engineName, "lua") {
		return "", "ERR Engine '" + engineName + "' not found"
	}
	old := set.libs[name]
	if old != nil && !replace {
		return "", "ERR Library '" + name + "' already exists"
	}
	if old != nil {
		set.unlink(old)
	}
	lib, msg := st.compileLibrary(name, code, body, o)
	if msg == "" && len(lib.Funcs) == 0 {
		msg = errLibNoFunctions
	}
	if msg == "" {
		for _, f := range lib.Funcs {
			if set.funcs[strings.ToLower(f.Name)] != nil {
				msg = "ERR Function " + f.Name + " already exists"
				break
			}
		}
	}
	if msg != "" {
		if old != nil {
			set.link(old)
		}
		return "", msg
	}
	set.link(lib)
	return name, ""
}

// loadCtx is a library being loaded (Redis's loadCtx).
type loadCtx struct {
	lib *Library
}

// compileLibrary is luaEngineCreate: compile the code after the shebang
// line as "@user_function" and run it with the library API as its
// globals; redis.register_function adds to the library.
func (st *State) compileLibrary(name, code string, body int, o loadOpts) (*Library, string) {
	src := code[body:]
	if o.memLimit > 0 && int64(len(src))*compileBytesPerByte > o.memLimit {
		return nil, errLibCompile + lua.MemErrorText
	}
	proto, msg := compile(src, functionChunk)
	if msg != "" {
		return nil, errLibCompile + msg
	}
	v := st.funcVM()
	L := v.L
	lib := &Library{Name: name, Code: code}
	fn := L.NewFunctionFromProto(proto)
	fn.Env = v.G // the functions' globals (see newFuncEnv)
	v.gmeta.RawSetString("__index", v.libAPI)
	v.loading = &loadCtx{lib: lib}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if o.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
	}
	prevCtx := L.Context()
	L.SetContext(ctx)
	L.SetMemLimit(o.memLimit)
	top := L.GetTop()
	L.Push(fn)
	err := L.PCall(0, 0, nil)
	L.SetTop(top)
	if prevCtx != nil {
		L.SetContext(prevCtx)
	} else {
		L.RemoveContext()
	}
	timedOut := ctx.Err() == context.DeadlineExceeded
	cancel()
	v.loading = nil
	v.gmeta.RawSetString("__index", v.realG)
	if err != nil {
		if timedOut {
			return nil, errLibRegister + errLibTimeout
		}
		var ev lua.LValue = lua.LNil
		if ae, ok := err.(*lua.ApiError); ok {
			ev = ae.Object
		}
		return nil, errLibRegister + loadErrorText(ev)
	}
	return lib, ""
}

// loadErrorText is luaExtractErrorInformation's message for an error of
// a library's registration code (run without an error handler): a string
// gets "ERR ", a table gives its err field, anything else is C's "%s" of
// NULL.
func loadErrorText(ev lua.LValue) string {
	switch x := ev.(type) {
	case lua.LString:
		return "ERR " + luaMessage(string(x))
	case lua.LNumber:
		return "ERR " + fmtNumber(float64(x))
	case *lua.LTable:
		switch e := x.RawGetString("err").(type) {
		case lua.LString:
			return string(e)
		case lua.LNumber:
			return fmtNumber(float64(e))
		}
	}
	return "(null)"
}

// Errors of redis.register_function, raised as {err=…} (function_lua.c).
const (
	errRegArgs      = "ERR wrong number of arguments to redis.register_function"
	errRegNotLoad   = "ERR redis.register_function can only be called on FUNCTION LOAD command"
	errRegOneArg    = "ERR calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."
	errRegKey       = "ERR named argument key given to redis.register_function is not a string"
	errRegNameType  = "ERR function_name argument given to redis.register_function must be a string"
	errRegDescType  = "ERR description argument given to redis.register_function must be a string"
	errRegCbType    = "ERR callback argument given to redis.register_function must be a function"
	errRegFlagsType = "ERR flags argument to redis.register_function must be a table representing function flags"
	errRegFlag      = "ERR unknown flag given"
	errRegUnknown   = "ERR unknown argument given to redis.register_function"
	errRegNoName    = "ERR redis.register_function must get a function name argument"
	errRegNoCb      = "ERR redis.register_function must get a callback argument"
	errRegFirst     = "ERR first argument to redis.register_function must be a string"
	errRegSecond    = "ERR second argument to redis.register_function must be a function"
	errRegDup       = "ERR Function already exists in the library"
)

// luaIsString is lua_isstring: strings and numbers.
func luaIsString(v lua.LValue) (string, bool) {
	switch x := v.(type) {
	case lua.LString:
		return string(x), true
	case lua.LNumber:
		return fmtNumber(float64(x)), true
	}
	return "", false
}

func isFunction(v lua.LValue) bool { _, ok := v.(*lua.LFunction); return ok }

// registerFunction is redis.register_function(name, callback) or
// redis.register_function{function_name=…, callback=…, description=…,
// flags={…}}.
func (v *vm) registerFunction(L *lua.LState) int {
	if v.loading == nil {
		raiseTable(L, errRegNotLoad)
	}
	f := &Function{lib: v.loading.lib}
	switch L.GetTop() {
	case 1:
		t, ok := L.Get(1).(*lua.LTable)
		if !ok {
			raiseTable(L, errRegOneArg)
		}
		hasName := false
		// the fields in the table's order, as lua_next visits them: the
		// first bad one decides the error
		for k, val := t.Next(lua.LNil); k != lua.LNil; k, val = t.Next(k) {
			key, ok := luaIsString(k)
			if !ok {
				raiseTable(L, errRegKey)
			}
			switch strings.ToLower(key) {
			case "function_name":
				if f.Name, ok = luaIsString(val); !ok {
					raiseTable(L, errRegNameType)
				}
				hasName = true
			case "description":
				if f.Desc, ok = luaIsString(val); !ok {
					raiseTable(L, errRegDescType)
				}
				f.HasDesc = true
			case "callback":
				if !isFunction(val) {
					raiseTable(L, errRegCbType)
				}
				f.fn = val
			case "flags":
				ft, ok := val.(*lua.LTable)
				if !ok {
					raiseTable(L, errRegFlagsType)
				}
				if f.flags, ok = readFlags(ft); !ok {
					raiseTable(L, errRegFlag)
				}
			default:
				raiseTable(L, errRegUnknown)
			}
		}
		if !hasName {
			raiseTable(L, errRegNoName)
		}
		if f.fn == nil {
			raiseTable(L, errRegNoCb)
		}
	case 2:
		var ok bool
		if f.Name, ok = luaIsString(L.Get(1)); !ok {
			raiseTable(L, errRegFirst)
		}
		if !isFunction(L.Get(2)) {
			raiseTable(L, errRegSecond)
		}
		f.fn = L.Get(2)
	default:
		raiseTable(L, errRegArgs)
	}
	// functionLibCreateFunction
	if !validName(f.Name) {
		raiseTable(L, errLibName)
	}
	lib := v.loading.lib
	for _, g := range lib.Funcs {
		if g.Name == f.Name {
			raiseTable(L, errRegDup)
		}
	}
	if cb, ok := f.fn.(*lua.LFunction); ok && !cb.IsG {
		f.reuse = !mayKeepArgs(cb.Proto)
	}
	lib.Funcs = append(lib.Funcs, f)
	return 0
}

// mayKeepArgs reports whether a callback may keep its KEYS or ARGV table
// (its first two parameters, registers 0 and 1) past the call. It may
// not when its instructions only index them (R(B) of GETTABLE), take
// their length, compare or test them, directly or through registers a
// MOVE copied them into (gopher-lua copies a local before LEN): then its
// calls reuse one pair of tables, which saves two tables per FCALL
// (BenchmarkFcallCounter). Any other use — a call or return range that
// covers them, a closure capturing them, SETTABLE, SETUPVAL, SELF, a use
// as a key — or any write of them (conservatively) counts as keeping; so
// does a vararg callback, which reaches its arguments through `...`. The
// copies are found to a fixed point first, so a copy made late in a loop
// counts for a use earlier in its body.
func mayKeepArgs(p *lua.FunctionProto) bool {
	if p.IsVarArg != 0 {
		return true
	}
	np := min(int(p.NumParameters), 2)
	var held [256]bool // registers that may hold KEYS or ARGV
	for r := 0; r < np; r++ {
		held[r] = true
	}
	code := p.Code
	fields := func(ins uint32) (op, a, b, c, bx int) {
		return int(ins >> 26), int(ins>>18) & 0xff, int(ins & 0x1ff), int(ins>>9) & 0x1ff, int(ins & 0x3ffff)
	}
	// upvalues returns how many capture pseudo-instructions follow pc
	upvalues := func(op, bx int) int {
		if op == lua.OP_CLOSURE && bx < len(p.FunctionPrototypes) {
			return int(p.FunctionPrototypes[bx].NumUpvalues)
		}
		return 0
	}
	for changed := true; changed; {
		changed = false
		for pc := 0; pc < len(code); pc++ {
			op, a, b, _, bx := fields(code[pc])
			if (op == lua.OP_MOVE || op == lua.OP_MOVEN) && held[b] && !held[a] {
				held[a], changed = true, true
			}
			pc += upvalues(op, bx)
		}
	}
	param := func(r int) bool { return r >= 0 && r < len(held) && held[r] }
	// span reports whether registers lo … hi (hi < 0: to the top) may
	// hold one
	span := func(lo, hi int) bool {
		if hi < 0 || hi >= len(held) {
			hi = len(held) - 1
		}
		for r := lo; r <= hi; r++ {
			if held[r] {
				return true
			}
		}
		return false
	}
	for pc := 0; pc < len(code); pc++ {
		op, a, b, c, bx := fields(code[pc])
		rk := func(x int) bool { return x < 256 && param(x) }
		keep := false
		switch op {
		case lua.OP_JMP, lua.OP_CLOSE, lua.OP_NOP:
		case lua.OP_EQ, lua.OP_LT, lua.OP_LE, lua.OP_TEST:
			// reads only
		case lua.OP_MOVE:
			keep = a < np // a copy is followed; overwriting a parameter is not
		case lua.OP_GETTABLE, lua.OP_GETTABLEKS:
			keep = a < np || rk(c) // R(B) is only indexed
		case lua.OP_LEN, lua.OP_NOT, lua.OP_UNM, lua.OP_ADD, lua.OP_SUB, lua.OP_MUL, lua.OP_DIV, lua.OP_MOD, lua.OP_POW,
			lua.OP_LOADK, lua.OP_LOADBOOL, lua.OP_GETUPVAL, lua.OP_GETGLOBAL, lua.OP_NEWTABLE:
			keep = a < np // reads that keep nothing; a write of a parameter
		case lua.OP_LOADNIL:
			keep = span(a, b)
		case lua.OP_CONCAT:
			keep = a < np || span(b, c)
		case lua.OP_CALL, lua.OP_TAILCALL:
			keep = span(a, map0(b, a+b-1)) || a < np
		case lua.OP_RETURN:
			keep = b != 1 && span(a, map0(b, a+b-2))
		case lua.OP_SETLIST:
			keep = span(a, map0(b, a+b))
		case lua.OP_VARARG, lua.OP_FORPREP, lua.OP_FORLOOP, lua.OP_TFORLOOP:
			keep = a < np
		case lua.OP_MOVEN:
			keep = a < np // R(A) := R(B), then c real MOVEs
		case lua.OP_CLOSURE:
			// R(A) := closure; the upvalues it captures are the MOVE
			// (a register) and GETUPVAL pseudo-instructions after it
			keep = a < np
			for n := upvalues(op, bx); n > 0 && pc+1 < len(code); n-- {
				pc++
				if uop, _, ub, _, _ := fields(code[pc]); uop == lua.OP_MOVE && param(ub) {
					keep = true
				}
			}
		default: // SETGLOBAL, SETUPVAL, SETTABLE(KS), SELF, TESTSET
			keep = param(a) || param(b) || rk(c) || (op == lua.OP_SELF && a+1 < np)
		}
		if keep {
			return true
		}
	}
	return false
}

// map0 is hi, or -1 (to the top) when the count n is 0.
func map0(n, hi int) int {
	if n == 0 {
		return -1
	}
	return hi
}

// readFlags is luaRegisterFunctionReadFlags: t[1], t[2] … until nil, each
// a flag name (case-insensitive); false for anything else.
func readFlags(t *lua.LTable) (scriptFlags, bool) {
	var out scriptFlags
	for i := 1; ; i++ {
		v := t.RawGetInt(i)
		if v == lua.LNil {
			return out, true
		}
		name, ok := luaIsString(v)
		if !ok {
			return 0, false
		}
		found := false
		for _, d := range scriptFlagNames {
			if strings.EqualFold(d.name, name) {
				out |= d.f
				found = true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
}

// newFuncEnv builds the two sets of globals of luaEngineInitEngine: the
// library API (its own error metatable, read-only) and the table the
// libraries run in, whose metatable sends reads to the real globals.
func (v *vm) newFuncEnv() {
	L := v.L
	api := L.NewTable()
	r := L.NewTable()
	r.RawSetString("register_function", L.NewFunction(v.registerFunction))
	v.registerLog(L, r)
	registerVersion(r)
	L.SetMetatable(r, errorMetatable(L))
	api.RawSetString("redis", r)
	L.SetMetatable(api, errorMetatable(L))
	protectTables(api)
	v.libAPI = api

	env := L.NewTable()
	meta := L.NewTable()
	meta.RawSetString("__index", v.G)
	meta.Readonly = true
	L.SetMetatable(env, meta)
	env.Readonly = true
	v.G, v.env, v.gmeta = env, env, meta
	// loadstring's chunks run in them too (lua_replace(LUA_GLOBALSINDEX))
	L.G.Global = env
}

// funcVM returns the functions' interpreter. A new one (the first use, or
// after a contained panic dropped it) has every library loaded again into
// it, their functions rebound; that cannot fail, as each loaded once.
func (st *State) funcVM() *vm {
	if st.fvm != nil {
		return st.fvm
	}
	st.fvm = newVM(st, true)
	for _, l := range st.fn.sorted() {
		_, _, body, _ := libMeta(l.Code)
		nl, msg := st.compileLibrary(l.Name, l.Code, body, loadOpts{})
		if msg != "" {
			panic("luavm: a loaded library does not load again: " + msg)
		}
		for i, f := range l.Funcs {
			f.fn = nl.Funcs[i].fn
		}
	}
	return st.fvm
}

// runFunction is luaEngineCall: f called with its KEYS and ARGV tables
// as arguments (new ones every call: a library may keep them), its reply
// converted as a script's.
func (st *State) runFunction(c *engine.Ctx, f *Function, argv [][]byte, keys, args [][]byte, ro bool) {
	v := st.funcVM()
	L := v.L
	v.c, v.name, v.proto, v.wrote, v.db = c, f.Name, 2, false, c.DB
	v.ro = ro || c.ReadOnly || f.flags&flagNoWrites != 0
	v.allowOOM = f.flags&flagAllowOOM != 0
	st.publish(c.E) // FUNCTION STATS's counts, for a server busy with this call
	busyStart(c.E, v, f.Name, argv)
	defer st.finish(c, v, len(c.W.B))
	L.SetMemLimit(c.E.Guard.MemLimit.Load())
	// the objects' ids run on from call to call (unlike EVAL's, reset for
	// every run): a library's upvalues keep objects between calls
	top := L.GetTop()
	L.Push(f.fn)
	if f.reuse {
		// refilled in place, reshaped as new ones (as EVAL's KEYS/ARGV)
		v.keys, v.args = fillArray(L, v.keys, keys), fillArray(L, v.args, args)
		L.Push(v.keys)
		L.Push(v.args)
	} else {
		L.Push(newArray(L, keys))
		L.Push(newArray(L, args))
	}
	err := L.PCall(2, 1, v.errh)
	if err != nil {
		var ev lua.LValue = lua.LNil
		if ae, ok := err.(*lua.ApiError); ok {
			ev = ae.Object
		}
		v.writeError(c.W, ev)
	} else {
		v.writeResult(c.W, L.Get(-1), resultSlots)
	}
	L.SetTop(top)
	v.c = nil
}

// newArray is luaCreateArray: a new table filled with a[i] at i+1.
func newArray(L *lua.LState, a [][]byte) *lua.LTable {
	t := L.NewSeqTable(len(a))
	for i, b := range a {
		t.RawSetInt(i+1, lua.LString(b))
	}
	return t
}

// flagNames lists f's flags in Redis's order (FUNCTION LIST).
func (f scriptFlags) names() []string {
	var out []string
	for _, d := range scriptFlagNames {
		if f&d.f != 0 {
			out = append(out, d.name)
		}
	}
	return out
}

// MemoryInfo is what INFO's memory section reports of scripting (Redis
// 7.0's fields): the EVAL interpreter's and the functions' interpreter's
// memory (what their roots reach; 0 before first use), the script cache's
// and the libraries' own estimated overhead, and the counts. The engine
// lock is held.
type MemoryInfo struct {
	VMEval, ScriptsEval, Scripts int64
	VMFunctions, FunctionsMem    int64
	Functions, Libraries         int64
}

// Memory returns e's MemoryInfo.
func Memory(e *engine.Engine) MemoryInfo {
	var m MemoryInfo
	st, _ := e.Scripts.(*State)
	if st == nil {
		return m
	}
	if st.vm != nil {
		m.VMEval = st.vm.L.MemInUse()
	}
	if st.fvm != nil {
		m.VMFunctions = st.fvm.L.MemInUse()
	}
	// evalScriptsMemory's shape: per script its SHA and body plus the
	// dictionary entry and luaScript (64 + 16 bytes on x86-64)
	for _, s := range st.Scripts {
		m.ScriptsEval += int64(len(s.Body)) + 40 + 80
	}
	m.Scripts = int64(len(st.Scripts))
	for _, l := range st.fn.libs {
		m.FunctionsMem += int64(len(l.Code)+len(l.Name)) + 64
		for _, f := range l.Funcs {
			m.FunctionsMem += int64(len(f.Name)+len(f.Desc)) + 64
		}
	}
	m.Functions, m.Libraries = int64(st.fn.nfn), int64(len(st.fn.libs))
	return m
}
