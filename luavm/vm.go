package luavm

import (
	"bytes"
	"context"
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"limitdb/engine"
	"limitdb/resp"
)

// vm is one sandboxed interpreter, built once and reused by every script
// of an engine (scripts run one at a time under the engine lock). An
// engine has two, as Redis has two lua_States: one for EVAL scripts and
// one for function libraries (fnMode, functions.go).
type vm struct {
	st    *State
	L     *lua.LState
	env   *lua.LTable // the scripts' global environment: a read-only proxy of G
	G     *lua.LTable // the real globals (KEYS and ARGV are set here); the libraries' for functions
	realG *lua.LTable // the sandbox's globals
	chunk string      // chunk name: "user_script", or "user_function"
	fns   map[*Script]*lua.LFunction
	keys  *lua.LTable
	args  *lua.LTable
	bound bool // keys/args are the tables bound to KEYS/ARGV
	errh  *lua.LFunction
	cmdW  resp.Writer // replies of redis.call
	sub   engine.Ctx  // the context of redis.call (reused: one call at a time)
	strs  strCache    // recent short bulk replies, shared (Lua strings are immutable)
	argv  [][]byte
	arena []byte
	// sources maps loadstring chunk ids to their names (error suffixes)
	sources map[string]string

	// function libraries (fnMode): see newFuncVM
	fnMode  bool
	libAPI  *lua.LTable // the globals a library's code sees while it loads
	gmeta   *lua.LTable // the metatable of the functions' globals: __index is G, or libAPI while loading
	loading *loadCtx    // the FUNCTION LOAD in progress, else nil

	// per run
	c        *engine.Ctx
	db       *engine.DB // the script's database (SELECT inside a script)
	name     string     // in error replies: the script's SHA1, or the function's name
	ro       bool       // writes refused (EVAL_RO, FCALL_RO, no-writes)
	allowOOM bool       // the allow-oom flag: deny-oom commands run over maxmemory
	proto    int        // redis.setresp
	wrote    bool
	ctx      context.Context
	cancel   context.CancelFunc
}

func (st *State) getVM() *vm {
	if st.vm == nil {
		st.vm = newVM(st, false)
	}
	return st.vm
}

// run executes s with KEYS and ARGV and writes its reply to c.W. ro
// refuses writes; allowOOM lets deny-oom commands run over maxmemory.
func (st *State) run(c *engine.Ctx, s *Script, keys, args [][]byte, ro, allowOOM bool) {
	v := st.getVM()
	L := v.L
	fn := v.fns[s]
	if fn == nil {
		fn = L.NewFunctionFromProto(s.proto)
		fn.Env = v.env
		v.fns[s] = fn
	}
	v.c, v.name, v.ro, v.allowOOM, v.proto, v.wrote, v.db = c, s.SHA, ro, allowOOM, 2, false, c.DB
	if k := fillArray(L, v.keys, keys); k != v.keys || !v.bound {
		v.keys = k
		v.G.RawSetString("KEYS", k)
	}
	if a := fillArray(L, v.args, args); a != v.args || !v.bound {
		v.args = a
		v.G.RawSetString("ARGV", a)
	}
	v.bound = true
	busyStart(c.E, v, "", nil)
	defer st.finish(c, v, len(c.W.B)) // busyEnd, and contains a panic
	L.SetMemLimit(c.E.Guard.MemLimit.Load())
	top := L.GetTop()
	L.Push(fn)
	// the script's objects get the same ids (shown by tostring, used to
	// place object keys in tables) on every call
	prevIDs := L.SetObjectIDs(lua.RunObjectIDs)
	err := L.PCall(0, 1, v.errh)
	if err != nil {
		var ev lua.LValue = lua.LNil
		if ae, ok := err.(*lua.ApiError); ok {
			ev = ae.Object
		}
		v.writeError(c.W, ev)
	} else {
		v.writeResult(c.W, L.Get(-1), resultSlots)
	}
	L.SetObjectIDs(prevIDs)
	L.SetTop(top)
	v.c = nil
}

// fillArray refills t (reused between calls) with the strings of a. The
// table is reshaped to what Redis's luaCreateArray (lua_newtable, then
// lua_rawseti of each) builds, so nothing a script did to it last time
// (fields, a metatable, a grown array part) shows in this call.
func fillArray(L *lua.LState, t *lua.LTable, a [][]byte) *lua.LTable {
	t.ShapeArray(len(a))
	for i, b := range a {
		// keep the previous call's string when equal (saves a copy)
		if old, ok := t.RawGetInt(i + 1).(lua.LString); ok && string(old) == string(b) {
			continue
		}
		t.RawSetInt(i+1, lua.LString(b))
	}
	return t
}

// writeError writes the reply for a script that raised ev: Redis's error
// handler turns every error into {err=…} with the line it happened on.
func (v *vm) writeError(w *resp.Writer, ev lua.LValue) {
	msg := "ERR unknown error"
	line := -1
	if s, ok := ev.(lua.LString); ok && v.L.MemExceeded() && s == lua.MemErrorText {
		// Lua's LUA_ERRMEM skips the error handler; Redis then replies
		// with the bare message in this form (luaCallFunction: the run's
		// name is the SHA1 or the function's name)
		w.Error("ERR Error running script " + v.name + ", " + lua.MemErrorText)
		return
	}
	if t, ok := ev.(*lua.LTable); ok {
		if e, ok := t.RawGetString("err").(lua.LString); ok {
			msg = string(e)
		}
		v.noErrorStats(t)
		if l, ok := t.RawGetString("line").(lua.LNumber); ok {
			line = int(l)
		}
	} else if ev != lua.LNil {
		// the handler could not run (e.g. stack overflow): same shape
		str := luaMessage(tostring(ev))
		msg = "ERR " + str
		if strings.HasPrefix(str, v.chunk+":") {
			rest := str[len(v.chunk)+1:]
			if i := strings.IndexByte(rest, ':'); i > 0 {
				if n, err := strconv.Atoi(rest[:i]); err == nil {
					line = n
				}
			}
		}
	}
	if line >= 0 {
		src := "@" + v.chunk
		if t, ok := ev.(*lua.LTable); ok {
			if s, ok := t.RawGetString("source").(lua.LString); ok {
				src = string(s)
			}
		}
		msg += " script: " + v.name + ", on " + src + ":" + strconv.Itoa(line) + "."
	}
	w.Error(msg)
}

// errHandler is Redis's __redis__err__handler: it turns a string error into
// {err='ERR '..msg} and records the line of the innermost script frame.
func (v *vm) errHandler(L *lua.LState) int {
	ev := L.Get(1)
	if s, ok := ev.(lua.LString); ok && L.MemExceeded() && s == lua.MemErrorText {
		L.Push(ev) // out of memory: no handler in Lua 5.1 (see writeError)
		return 1
	}
	t, ok := ev.(*lua.LTable)
	if v.killed() {
		t, ok = L.NewTable(), true
		t.RawSetString("err", lua.LString(errKilledByUser))
	}
	if !ok {
		t = L.NewTable()
		s := tostring(ev)
		t.RawSetString("err", lua.LString("ERR "+luaMessage(s)))
	}
	for lvl := 0; lvl < 50; lvl++ {
		dbg, ok := L.GetStack(lvl)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil {
			continue
		}
		if dbg.CurrentLine > 0 {
			src := "@" + v.chunk
			if dbg.Source != v.chunk {
				src = dbg.Source
				if raw, ok := v.sources[dbg.Source]; ok {
					src = raw
				}
			}
			t.RawSetString("source", lua.LString(src))
			t.RawSetString("line", lua.LNumber(dbg.CurrentLine))
			break
		}
	}
	L.Push(t)
	return 1
}

// resultSlots is what Redis's Lua stack holds when luaReplyToRedisReply
// starts (the error handler and the result), and luaMaxCStack what
// lua_checkstack allows: the conversion needs room for 4 more at every
// value, so nesting ends in "reached lua stack limit" at the depth
// Redis's does (7995 arrays).
const resultSlots = 2

// writeResult converts a Lua value to the client's reply as Redis's
// luaReplyToRedisReply does. slots counts the Lua stack slots Redis's
// conversion would hold at this value: one more per array level, three
// for a set member or a map value, four for a map key.
func (v *vm) writeResult(w *resp.Writer, lv lua.LValue, slots int) {
	if slots+4 > luaMaxCStack {
		w.Error("ERR reached lua stack limit")
		return
	}
	switch x := lv.(type) {
	case lua.LString:
		w.BulkString(string(x))
	case lua.LBool:
		if v.proto == 2 {
			if x {
				w.Int(1)
			} else {
				w.Null()
			}
		} else {
			w.Bool(bool(x))
		}
	case lua.LNumber:
		w.Int(int64(x))
	case *lua.LTable:
		if e, ok := x.RawGetString("err").(lua.LString); ok {
			w.Error(string(e))
			if slots == resultSlots {
				v.noErrorStats(x)
			}
			return
		}
		if s, ok := x.RawGetString("ok").(lua.LString); ok {
			w.Status(mapCRLF(string(s)))
			return
		}
		if d, ok := x.RawGetString("double").(lua.LNumber); ok {
			w.Double(float64(d))
			return
		}
		if b, ok := x.RawGetString("big_number").(lua.LString); ok {
			w.BigNumber(mapCRLF(string(b)))
			return
		}
		if vt, ok := x.RawGetString("verbatim_string").(*lua.LTable); ok {
			f, fok := vt.RawGetString("format").(lua.LString)
			str, sok := vt.RawGetString("string").(lua.LString)
			if fok && sok {
				if w.Proto == 3 {
					w.Raw([]byte("=" + strconv.Itoa(len(f)+1+len(str)) + "\r\n" + string(f) + ":" + string(str) + "\r\n"))
				} else {
					w.BulkString(string(str))
				}
				return
			}
		}
		if m, ok := x.RawGetString("map").(*lua.LTable); ok {
			var ks, vs []lua.LValue
			m.ForEach(func(k, val lua.LValue) { ks = append(ks, k); vs = append(vs, val) })
			w.Map(len(ks))
			for i := range ks {
				v.writeResult(w, ks[i], slots+4)
				v.writeResult(w, vs[i], slots+3)
			}
			return
		}
		if s, ok := x.RawGetString("set").(*lua.LTable); ok {
			var ks []lua.LValue
			s.ForEach(func(k, val lua.LValue) { ks = append(ks, k) })
			w.Set(len(ks))
			for _, k := range ks {
				v.writeResult(w, k, slots+3)
			}
			return
		}
		n := 0
		for x.RawGetInt(n+1) != lua.LNil {
			n++
		}
		w.Array(n)
		for i := 1; i <= n; i++ {
			v.writeResult(w, x.RawGetInt(i), slots+1)
		}
	default:
		w.Null()
	}
}

// noErrorStats marks the script's error reply as counted already when
// its table says so (ignore_error_stats_update: an error of a command the
// script called, counted when that command failed).
func (v *vm) noErrorStats(t *lua.LTable) {
	if v.c != nil && t.RawGetString("ignore_error_stats_update") == lua.LTrue {
		v.c.NoErrorStats = true
	}
}

// mapCRLF is sdsmapchars(s, "\r\n", "  "): a status or big number keeps
// the protocol intact.
func mapCRLF(s string) string {
	if strings.IndexAny(s, "\r\n") < 0 {
		return s
	}
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

// --- redis.call --------------------------------------------------------------

func (v *vm) raise(L *lua.LState, msg string, raise bool) int {
	t := L.NewTable()
	t.RawSetString("err", lua.LString(msg))
	if raise {
		L.Error(t, 0)
		return 0
	}
	L.Push(t)
	return 1
}

// rejected is raiseCall for a command scriptCall refuses before it runs:
// it counts as a rejected call of cmd (nil when unknown) and its error in
// the error statistics, as Redis's afterErrorReply and
// incrCommandStatsOnError count it.
func (v *vm) rejected(L *lua.LState, cmd *engine.Command, msg string, raise bool) int {
	if v.c.Calls != nil {
		v.c.Calls.ScriptRejected(cmd, msg)
	}
	return v.raiseCall(L, msg, raise)
}

// called counts a command the script ran (answered here: TIME, PING,
// ECHO, SELECT) in the server's statistics; errReply "" for a success.
func (v *vm) called(cmd *engine.Command, errReply string) {
	if cmd != nil && v.c.Calls != nil {
		v.c.Calls.ScriptCalled(cmd, errReply)
	}
}

// raiseCall is raise for the errors of the command itself, which Redis
// finds in scriptCall or gets as the command's reply: its table also has
// ignore_error_stats_update = true, which a script sees through
// redis.pcall.
func (v *vm) raiseCall(L *lua.LState, msg string, raise bool) int {
	t := L.CreateTable(0, 1)
	t.RawSetString("err", lua.LString(msg))
	t.RawSetString("ignore_error_stats_update", lua.LTrue)
	if raise {
		L.Error(t, 0)
		return 0
	}
	L.Push(t)
	return 1
}

// luaArgv converts the n Lua arguments to argv (strings as they are,
// numbers as %.17g), laid in one reused arena; false for another type.
func (v *vm) luaArgv(L *lua.LState, n int) ([][]byte, bool) {
	argv := v.argv[:0]
	arena := v.arena[:0]
	var ends [64]int
	endsS := ends[:0]
	for i := 1; i <= n; i++ {
		switch a := L.Get(i).(type) {
		case lua.LString:
			arena = append(arena, a...)
		case lua.LNumber:
			// Redis: snprintf("%.17g"), which spells non-finite numbers
			// as glibc does (inf, -inf, nan, -nan)
			if f := float64(a); math.IsInf(f, 0) || f != f {
				arena = append(arena, fmtNumber(f)...)
			} else {
				arena = resp.AppendG17(arena, f)
			}
		default:
			return nil, false
		}
		endsS = append(endsS, len(arena))
	}
	start := 0
	for _, e := range endsS {
		argv = append(argv, arena[start:e:e])
		start = e
	}
	v.argv, v.arena = argv, arena
	return argv, true
}

// aclCheck is redis.acl_check_cmd(cmd, arg…): whether the script's
// caller may run that command with those arguments (no arity check, no
// ACL LOG entry, as Redis).
func (v *vm) aclCheck(L *lua.LState) int {
	if v.c == nil {
		return v.raise(L, "ERR redis.acl_check_cmd can only be called inside a script invocation", true)
	}
	n := L.GetTop()
	if n == 0 {
		return v.raise(L, errNoArgs, true)
	}
	argv, ok := v.luaArgv(L, n)
	if !ok {
		return v.raise(L, errArgType, true)
	}
	cmd := engine.Lookup(argv[0])
	if cmd != nil && len(cmd.Subs) > 0 && len(argv) >= 2 {
		cmd = cmd.Sub(argv[1])
	}
	if cmd == nil {
		return v.raise(L, "ERR Invalid command passed to redis.acl_check_cmd()", true)
	}
	L.Push(lua.LBool(v.c.ACL == nil || v.c.ACL.ScriptAllowed(cmd, argv)))
	return 1
}

// call is redis.call (raise=true) and redis.pcall (raise=false).
func (v *vm) call(L *lua.LState, raise bool) int {
	n := L.GetTop()
	if n == 0 {
		return v.raise(L, errNoArgs, raise)
	}
	if v.c == nil {
		return v.raise(L, "ERR redis.call is only allowed inside a script", raise)
	}
	argv, ok := v.luaArgv(L, n)
	if !ok {
		return v.raise(L, errArgType, raise)
	}
	c := v.c
	if engine.EqualFold(argv[0], "time") {
		v.called(engine.Lookup(argv[0]), "")
		L.Push(v.timeReply(L))
		return 1
	}
	cmd := engine.Lookup(argv[0])
	if cmd == nil {
		return v.rejected(L, nil, errUnknownCmd, raise)
	}
	if len(cmd.Subs) > 0 && len(argv) >= 2 {
		if sub := cmd.Sub(argv[1]); sub != nil {
			cmd = sub
		}
	}
	if !engine.ArityOK(cmd.Arity, len(argv)) {
		return v.rejected(L, cmd, errWrongArity, raise)
	}
	if cmd.Has(engine.FlagNoScript) {
		return v.rejected(L, cmd, errNotAllowed, raise)
	}
	if c.E.ElsewhereClusterWide() && strings.HasPrefix(cmd.Name, "rl.policy|") && cmd.Has(engine.FlagWrite) {
		// the policies of a cluster of several groups change in the
		// directory group only (engine/cluster_global.go)
		return v.rejected(L, cmd, engine.ErrClusterWideHere, raise)
	}
	if c.ACL != nil {
		if msg := c.ACL.ScriptCheck(cmd, argv); msg != "" {
			return v.rejected(L, cmd, msg, raise)
		}
	}
	isWrite := cmd.Has(engine.FlagWrite)
	if v.ro && (isWrite || cmd.Has(engine.FlagMayReplicate)) {
		// scriptVerifyWriteCommandAllow: may-replicate (PUBLISH) counts
		// as a write
		return v.rejected(L, cmd, engine.ErrReadOnlyScript, raise)
	}
	if isWrite && !v.wrote && (c.E.WriteDenied != "" || c.E.NoReplicas != "") {
		// Redis 7.0 (scriptVerifyWriteCommandAllow): while the server
		// refuses writes (MISCONF, then NOREPLICAS), a script's first
		// write fails; once it has written it is not stopped half way
		d := c.E.WriteDenied
		if d == "" {
			d = c.E.NoReplicas
		}
		return v.rejected(L, cmd, d, raise)
	}
	if cmd.Run == nil {
		// connection-level commands (PING, ECHO, SELECT …) have no engine
		// handler; only the harmless ones are answered here.
		switch cmd.Name {
		case "ping", "echo":
			v.called(cmd, "")
		}
		switch cmd.Name {
		case "ping":
			if len(argv) == 2 {
				L.Push(lua.LString(argv[1]))
			} else {
				t := L.NewTable()
				t.RawSetString("ok", lua.LString("PONG"))
				L.Push(t)
			}
			return 1
		case "echo":
			L.Push(lua.LString(argv[1]))
			return 1
		case "select":
			// SELECT changes the script's database, not the caller's
			n, ok := engine.ParseIntB(argv[1])
			msg := ""
			switch {
			case !ok:
				msg = engine.ErrNotInt
			case n != 0 && c.E.SlotsEnabled():
				msg = engine.ErrSelectCluster // cluster mode: db 0 only
			case n < 0 || n >= engine.NumDBs:
				msg = engine.ErrDBIndex
			}
			v.called(cmd, msg)
			if msg != "" {
				return v.raiseCall(L, msg, raise)
			}
			v.db = c.E.DBs[n]
			t := L.NewTable()
			t.RawSetString("ok", lua.LString("OK"))
			L.Push(t)
			return 1
		}
		return v.rejected(L, cmd, errNotAllowed, raise)
	}
	if c.OOM && !v.wrote && !v.allowOOM && cmd.Has(engine.FlagDenyOOM) {
		// Redis 7.0 (scriptVerifyOOM): over maxmemory at the script's
		// start, its first write is refused; later ones are not, nor
		// any under the allow-oom flag.
		return v.rejected(L, cmd, engine.ErrOOM, raise)
	}
	if isWrite && !v.wrote {
		v.wrote = true
		c.E.Guard.Wrote.Store(true)
	}
	w := &v.cmdW
	w.Reset()
	w.Proto = v.proto
	sub := &v.sub
	// ACL: SORT asks the caller's permissions for its BY/GET patterns;
	// Pub: what the script's commands publish (engine/notify.go)
	*sub = engine.Ctx{E: c.E, DB: v.db, W: w, Now: c.Now, InScript: true, InMulti: c.InMulti, ReadOnly: v.ro, Deleted: c.Deleted, Eff: c.Eff, ACL: c.ACL, Pub: c.Pub}
	effBefore := 0
	if c.Eff != nil {
		effBefore = len(c.Eff.B)
	}
	sub.Call(cmd, argv)
	sub.W, sub.DB, sub.Deleted, sub.ACL = nil, nil, nil, nil
	if c.Calls != nil {
		errReply := ""
		if len(w.B) > 3 && w.B[0] == '-' {
			errReply = string(w.B[1:bytes.IndexByte(w.B, '\r')])
		}
		c.Calls.ScriptCalled(cmd, errReply)
	}
	if c.Eff != nil {
		// the effects a script records are held until it ends (its unit's
		// record): they count against lua-memory-limit like its own data
		if grown := len(c.Eff.B) - effBefore; grown > 0 {
			L.ChargeHeld(grown)
		}
	}
	val, _, isErr := v.parseReply(L, w.B, 0)
	// the arena and the reply buffer are reused between calls; one huge
	// call must not pin its size for the life of the server
	if cap(v.arena) > reuseMax {
		v.arena = nil
	}
	if cap(w.B) > reuseMax {
		w.B = nil
	}
	if isErr && raise {
		L.Error(val, 0)
		return 0
	}
	L.Push(val)
	return 1
}

// timeReply is TIME at the script's frozen command time.
func (v *vm) timeReply(L *lua.LState) lua.LValue {
	now := v.c.Now
	t := L.CreateTable(2, 0)
	t.RawSetInt(1, lua.LString(strconv.FormatInt(now/1000, 10)))
	t.RawSetInt(2, lua.LString(strconv.FormatInt((now%1000)*1000, 10)))
	return t
}

// parseReply converts one RESP reply at b[i:] to a Lua value as Redis's
// redisProtocolToLuaType does, returning the value, the next offset and
// whether it was an error reply. Tables are filled in Redis's order from
// empty (lua_newtable), so their layout, and with it pairs() order, is
// Redis's; CreateTable(0, 1) for a one-field table gives the same layout
// without a rehash.
func (v *vm) parseReply(L *lua.LState, b []byte, i int) (lua.LValue, int, bool) {
	if i >= len(b) {
		return lua.LFalse, i, false
	}
	typ := b[i]
	j := i + 1
	for j < len(b) && b[j] != '\r' {
		j++
	}
	line := b[i+1 : j]
	next := j + 2
	switch typ {
	case ':':
		n, _ := engine.ParseIntB(line)
		return lua.LNumber(n), next, false
	case '$':
		n, _ := strconv.Atoi(string(line))
		if n < 0 {
			return lua.LFalse, next, false
		}
		if n > strCacheMax {
			L.ChargeMem(n) // a copy the script holds (lua-memory-limit)
		}
		return v.strs.get(b[next : next+n]), next + n + 2, false
	case '+':
		t := L.CreateTable(0, 1)
		var st lua.LValue = lvOK
		if string(line) != "OK" {
			st = lua.LString(line)
		}
		t.RawSetString("ok", st)
		return t, next, false
	case '-':
		t := L.CreateTable(0, 1)
		t.RawSetString("err", lua.LString(line))
		// luaPushErrorBuff's table is marked for the error stats as well
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
		return t, next, true
	case '*', '~', '>':
		n, _ := strconv.Atoi(string(line))
		if n < 0 {
			return lua.LFalse, next, false
		}
		if typ == '~' {
			set := L.NewTable()
			for k := 0; k < n; k++ {
				var e lua.LValue
				e, next, _ = v.parseReply(L, b, next)
				set.RawSet(e, lua.LTrue)
			}
			t := L.CreateTable(0, 1)
			t.RawSetString("set", set)
			return t, next, false
		}
		t := L.NewSeqTable(n)
		inOrder := false
		for k := 1; k <= n; k++ {
			var e lua.LValue
			e, next, _ = v.parseReply(L, b, next)
			if e == lua.LNil && !inOrder {
				// a RESP3 null: Lua's layout now depends on every step
				t = replaySeq(L, t, k-1)
				inOrder = true
			}
			t.RawSetInt(k, e)
		}
		return t, next, false
	case '%':
		n, _ := strconv.Atoi(string(line))
		m := L.NewTable()
		for k := 0; k < n; k++ {
			var key, val lua.LValue
			key, next, _ = v.parseReply(L, b, next)
			val, next, _ = v.parseReply(L, b, next)
			m.RawSet(key, val)
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("map", m)
		return t, next, false
	case '_':
		return lua.LNil, next, false
	case '#':
		return lua.LBool(len(line) > 0 && line[0] == 't'), next, false
	case ',':
		f, _ := strconv.ParseFloat(string(line), 64)
		switch string(line) {
		case "inf":
			f = posInf
		case "-inf":
			f = -posInf
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("double", lua.LNumber(f))
		return t, next, false
	case '(':
		t := L.CreateTable(0, 1)
		t.RawSetString("big_number", lua.LString(line))
		return t, next, false
	case '=':
		n, _ := strconv.Atoi(string(line))
		body := b[next : next+n]
		vt := L.NewTable()
		if len(body) >= 4 {
			vt.RawSetString("string", lua.LString(body[4:]))
			vt.RawSetString("format", lua.LString(body[:3]))
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("verbatim_string", vt)
		return t, next + n + 2, false
	}
	return lua.LFalse, next, false
}

// replaySeq is a table built from empty with t[1..n] stored in order, as
// Redis builds an array reply.
func replaySeq(L *lua.LState, t *lua.LTable, n int) *lua.LTable {
	u := L.NewTable()
	for k := 1; k <= n; k++ {
		u.RawSetInt(k, t.RawGetInt(k))
	}
	return u
}

// reuseMax is the largest buffer redis.call keeps for the next call.
const reuseMax = 1 << 20

// lvOK is the boxed "OK" status text, shared by every status reply table.
var lvOK lua.LValue = lua.LString("OK")

// strCache is a small direct-mapped cache of boxed Lua strings for short
// bulk replies: a hit costs no allocation (neither the string nor its
// interface box). Sharing is safe because Lua strings are immutable.
type strCache [256]lua.LValue

// strCacheMax is the longest string the cache keeps.
const strCacheMax = 32

func (sc *strCache) get(b []byte) lua.LValue {
	if len(b) > strCacheMax {
		return lua.LString(b)
	}
	h := uint32(2166136261)
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	slot := &sc[(h^h>>8)&255]
	if s, ok := (*slot).(lua.LString); ok && string(s) == string(b) {
		return *slot
	}
	lv := lua.LValue(lua.LString(b))
	*slot = lv
	return lv
}
