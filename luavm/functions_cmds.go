package luavm

import (
	"slices"
	"strings"

	"limitdb/engine"
	"limitdb/resp"
)

// FUNCTION and FCALL (functions.c). The library commands record
// themselves as sent when they change something (Redis 7.0 propagates
// FUNCTION LOAD/DELETE/FLUSH/RESTORE so: they raise server.dirty), and a
// follower applies them (Engine.Apply) by compiling and registering the
// library, without the time bound a client's load has. FCALL records the
// effects of what its function calls, as EVAL.

func init() {
	fcall := &engine.Command{Name: "fcall", Arity: -3, Flags: "noscript stale skip_monitor no_mandatory_keys script noeffect", Group: "scripting", Since: "7.0.0", Summary: "Invoke a function", Run: cmdFcall}
	fcallRO := &engine.Command{Name: "fcall_ro", Arity: -3, Flags: "readonly noscript stale skip_monitor no_mandatory_keys script noeffect", Group: "scripting", Since: "7.0.0", Summary: "Invoke a read-only function", Run: cmdFcallRO}
	fcall.FlagsFor = func(c *engine.Ctx, argv [][]byte) engine.Flag { return fcallFlags(c, fcall.F, argv) }
	fcallRO.FlagsFor = func(c *engine.Ctx, argv [][]byte) engine.Flag { return fcallFlags(c, fcallRO.F, argv) }
	engine.Register(fcall, fcallRO,
		&engine.Command{Name: "function", Arity: -2, Group: "scripting", Since: "7.0.0", Summary: "A container for function commands", Subs: []*engine.Command{
			{Name: "load", Arity: -3, Flags: "write denyoom noscript", Group: "scripting", Since: "7.0.0", Summary: "Create a function with the given arguments (name, code, description)", Run: cmdFunctionLoad},
			{Name: "delete", Arity: 3, Flags: "write noscript", Group: "scripting", Since: "7.0.0", Summary: "Delete a function by name", Run: cmdFunctionDelete},
			{Name: "flush", Arity: -2, Flags: "write noscript", Group: "scripting", Since: "7.0.0", Summary: "Deleting all functions", Run: cmdFunctionFlush},
			{Name: "restore", Arity: -3, Flags: "write denyoom noscript", Group: "scripting", Since: "7.0.0", Summary: "Restore all the functions on the given payload", Run: cmdFunctionRestore},
			{Name: "dump", Arity: 2, Flags: "noscript", Group: "scripting", Since: "7.0.0", Summary: "Dump all functions into a serialized binary payload", Run: cmdFunctionDump},
			{Name: "list", Arity: -2, Flags: "noscript", Group: "scripting", Since: "7.0.0", Summary: "List information about all the functions", Run: cmdFunctionList},
			{Name: "stats", Arity: 2, Flags: "noscript allow_busy", Group: "scripting", Since: "7.0.0", Summary: "Return information about the function currently running (name, description, duration)", Run: cmdFunctionStats},
			{Name: "kill", Arity: 2, Flags: "noscript allow_busy", Group: "scripting", Since: "7.0.0", Summary: "Kill the function currently in execution.", Run: cmdFunctionKill},
			{Name: "help", Arity: 2, Flags: "loading stale", Group: "scripting", Since: "7.0.0", Summary: "Show helpful text about the different subcommands", Run: cmdFunctionHelp},
		}},
	)
}

// Errors of the FUNCTION commands and FCALL (functions.c).
const (
	errFnNotFound     = "ERR Function not found"
	errFnBadKeys      = "ERR Bad number of keys provided"
	errFnCodeMissing  = "ERR Function code is missing"
	errFnUnknownOpt   = "ERR Unknown option given: "
	errLibNotFound    = "ERR Library not found"
	errFnFlushOption  = "ERR FUNCTION FLUSH only supports SYNC|ASYNC option"
	errFnRestorePol   = "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE."
	errFnListNoName   = "ERR library name argument was not given"
	errFnListArgument = "ERR Unknown argument "
)

// lookupFunction finds a function by name, ignoring case, without
// allocating for names of up to 64 bytes.
func (s *libSet) lookupFunction(name []byte) *Function {
	var buf [64]byte
	var low []byte
	if len(name) <= len(buf) {
		low = buf[:len(name)]
	} else {
		low = make([]byte, len(name))
	}
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	return s.funcs[string(low)]
}

// fcallFlags is fcallGetCommandFlags: a known function's declared flags
// replace the command's (scriptFlagsToCmdFlags).
func fcallFlags(c *engine.Ctx, base engine.Flag, argv [][]byte) engine.Flag {
	st, ok := c.E.Scripts.(*State)
	if !ok {
		return base
	}
	f := st.fn.lookupFunction(argv[1])
	if f == nil {
		return base
	}
	return f.flags.cmdFlags(base)
}

// cmdFcall: FCALL function numkeys [key …] [arg …] — run a function with
// its KEYS and ARGV tables as arguments. Errors: ERR Function not found,
// ERR Bad number of keys provided, the numkeys range errors, a declared
// flag's refusal, the function's own errors with "script: <name>, on
// @user_function:<line>.".
func cmdFcall(c *engine.Ctx, argv [][]byte) { fcallGeneric(c, argv, false) }

// cmdFcallRO: FCALL_RO — FCALL refusing writes; a function without the
// no-writes flag is refused before it runs.
func cmdFcallRO(c *engine.Ctx, argv [][]byte) { fcallGeneric(c, argv, true) }

func fcallGeneric(c *engine.Ctx, argv [][]byte, ro bool) {
	st := StateOf(c.E)
	f := st.fn.lookupFunction(argv[1])
	if f == nil {
		c.W.Error(errFnNotFound)
		return
	}
	n, ok := engine.ParseIntB(argv[2])
	switch {
	case !ok:
		c.W.Error(errFnBadKeys)
		return
	case n > int64(len(argv)-3):
		c.W.Error(errTooManyKeys)
		return
	case n < 0:
		c.W.Error(errNegKeys)
		return
	}
	if msg := prepareRun(c, f.flags, ro); msg != "" {
		c.W.Error(msg)
		return
	}
	nk := int(n)
	st.runFunction(c, f, argv, argv[3:3+nk], argv[3+nk:], ro)
}

// loadOptsFor is a client's bounds for loading libraries, none while
// applying the executing node's record.
func loadOptsFor(c *engine.Ctx) loadOpts {
	if c.Applying {
		return loadOpts{}
	}
	return loadOpts{timeout: loadTimeout, memLimit: c.E.Guard.MemLimit.Load()}
}

// cmdFunctionLoad: FUNCTION LOAD [REPLACE] code — create the library the
// code's shebang line names (#!lua name=<library>), reply its name.
func cmdFunctionLoad(c *engine.Ctx, argv [][]byte) {
	replace := false
	i := 2
	for i < len(argv)-1 {
		a := argv[i]
		i++
		if engine.EqualFold(a, "replace") {
			replace = true
			continue
		}
		c.W.Error(errFnUnknownOpt + string(a))
		return
	}
	if i >= len(argv) {
		c.W.Error(errFnCodeMissing)
		return
	}
	st := StateOf(c.E)
	name, msg := st.create(string(argv[i]), replace, &st.fn, loadOptsFor(c))
	if msg != "" {
		c.W.Error(msg)
		return
	}
	st.changed(c)
	c.W.BulkString(name)
}

// changed notes a change of the libraries: it counts as a change of the
// data (so the command records itself as its effect, and save rules count
// it) and updates FUNCTION STATS's published counts.
func (st *State) changed(c *engine.Ctx) {
	c.E.Stats.Dirty++
	st.publish(c.E)
}

// cmdFunctionDelete: FUNCTION DELETE library.
func cmdFunctionDelete(c *engine.Ctx, argv [][]byte) {
	st := StateOf(c.E)
	l := st.fn.libs[string(argv[2])]
	if l == nil {
		c.W.Error(errLibNotFound)
		return
	}
	st.fn.unlink(l)
	st.changed(c)
	c.W.OK()
}

// cmdFunctionFlush: FUNCTION FLUSH [ASYNC|SYNC] — delete every library
// (both modes free at once; as SCRIPT FLUSH).
func cmdFunctionFlush(c *engine.Ctx, argv [][]byte) {
	if len(argv) > 3 {
		c.W.Error(engine.ErrSubcommandSyntax(argv))
		return
	}
	if len(argv) == 3 && !engine.EqualFold(argv[2], "sync") && !engine.EqualFold(argv[2], "async") {
		c.W.Error(errFnFlushOption)
		return
	}
	st := StateOf(c.E)
	st.fn = newLibSet()
	st.changed(c)
	c.W.OK()
}

// cmdFunctionDump: FUNCTION DUMP — the libraries in Redis's payload
// format (RDB_OPCODE_FUNCTION2 records, RDB version, CRC64), in name order.
func cmdFunctionDump(c *engine.Ctx, argv [][]byte) {
	st := StateOf(c.E)
	var codes []string
	for _, l := range st.fn.sorted() {
		codes = append(codes, l.Code)
	}
	c.W.Bulk(c.E.FunctionsPayload(codes))
}

// cmdFunctionRestore: FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE] —
// load a FUNCTION DUMP payload (Redis's or limitdb's): FLUSH replaces
// every library, APPEND (the default) fails on a library name already
// there, REPLACE replaces those; a function name already used by another
// library fails in every mode but FLUSH. All or nothing.
func cmdFunctionRestore(c *engine.Ctx, argv [][]byte) {
	if len(argv) > 4 {
		c.W.Error(engine.ErrSubcommandSyntax(argv))
		return
	}
	policy := "append"
	if len(argv) == 4 {
		switch {
		case engine.EqualFold(argv[3], "append"):
		case engine.EqualFold(argv[3], "replace"):
			policy = "replace"
		case engine.EqualFold(argv[3], "flush"):
			policy = "flush"
		default:
			c.W.Error(errFnRestorePol)
			return
		}
	}
	codes, perr := engine.ParseFunctionsPayload(argv[2])
	if perr == engine.ErrFunctionPayload {
		c.W.Error("ERR " + perr)
		return
	}
	st := StateOf(c.E)
	tmp := newLibSet()
	for _, code := range codes {
		if _, msg := st.create(code, false, &tmp, loadOptsFor(c)); msg != "" {
			c.W.Error(msg)
			return
		}
	}
	if perr != "" {
		c.W.Error("ERR " + perr)
		return
	}
	if policy == "flush" {
		st.fn = tmp
	} else if msg := join(&st.fn, &tmp, policy == "replace"); msg != "" {
		c.W.Error(msg)
		return
	}
	st.changed(c)
	c.W.OK()
}

// join is libraryJoin: src's libraries into dst, replacing those of the
// same name when replace (else that is an error); a function name already
// in dst is an error. On error dst is as it was.
func join(dst, src *libSet, replace bool) string {
	libs := src.sorted()
	var olds []*Library
	msg := ""
	for _, l := range libs {
		if old := dst.libs[l.Name]; old != nil {
			if !replace {
				msg = "ERR Library " + l.Name + " already exists"
				break
			}
			dst.unlink(old)
			olds = append(olds, old)
		}
	}
	if msg == "" {
	check:
		for _, l := range libs {
			for _, f := range l.Funcs {
				if dst.funcs[strings.ToLower(f.Name)] != nil {
					msg = "ERR Function " + f.Name + " already exists"
					break check
				}
			}
		}
	}
	if msg != "" {
		for _, old := range olds {
			dst.link(old)
		}
		return msg
	}
	for _, l := range libs {
		dst.link(l)
	}
	return ""
}

// cmdFunctionList: FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE] — each
// library (name order; Redis's is its hash table's) as a map of
// library_name, engine, functions (name, description, flags) and, with
// WITHCODE, library_code.
func cmdFunctionList(c *engine.Ctx, argv [][]byte) {
	withCode := false
	var pattern []byte
	hasPattern := false
	for i := 2; i < len(argv); i++ {
		a := argv[i]
		if !withCode && engine.EqualFold(a, "withcode") {
			withCode = true
			continue
		}
		if !hasPattern && engine.EqualFold(a, "libraryname") {
			if i >= len(argv)-1 {
				c.W.Error(errFnListNoName)
				return
			}
			i++
			pattern, hasPattern = argv[i], true
			continue
		}
		c.W.Error(errFnListArgument + string(a))
		return
	}
	st := StateOf(c.E)
	var libs []*Library
	for _, l := range st.fn.sorted() {
		if hasPattern && !engine.Match(string(pattern), l.Name, true) {
			continue
		}
		libs = append(libs, l)
	}
	w := c.W
	w.Array(len(libs))
	for _, l := range libs {
		if withCode {
			w.Map(4)
		} else {
			w.Map(3)
		}
		w.BulkString("library_name")
		w.BulkString(l.Name)
		w.BulkString("engine")
		w.BulkString("LUA")
		w.BulkString("functions")
		funcs := l.sortedFuncs()
		w.Array(len(funcs))
		for _, f := range funcs {
			w.Map(3)
			w.BulkString("name")
			w.BulkString(f.Name)
			w.BulkString("description")
			if f.HasDesc {
				w.BulkString(f.Desc)
			} else {
				w.Null()
			}
			w.BulkString("flags")
			names := f.flags.names()
			w.Set(len(names))
			for _, n := range names {
				w.Status(n)
			}
		}
		if withCode {
			w.BulkString("library_code")
			w.BulkString(l.Code)
		}
	}
}

// sortedFuncs is the library's functions in name order (Redis's order is
// its hash table's).
func (l *Library) sortedFuncs() []*Function {
	out := append([]*Function(nil), l.Funcs...)
	slices.SortFunc(out, func(a, b *Function) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// cmdFunctionStats: FUNCTION STATS — with the engine lock no script is
// running: running_script is null, then the engine's counts. (While a
// script runs past busy-reply-threshold the server answers without the
// lock: server/script_busy.go.)
func cmdFunctionStats(c *engine.Ctx, argv [][]byte) {
	st := StateOf(c.E)
	WriteFunctionStats(c.W, "", nil, 0, int64(len(st.fn.libs)), int64(st.fn.nfn))
}

// WriteFunctionStats writes FUNCTION STATS's reply: running_script (null
// when fn is "", else the function's name, its caller's command and how
// long it has run), then the one engine's library and function counts.
func WriteFunctionStats(w *resp.Writer, fn string, argv [][]byte, durMs, libs, funcs int64) {
	w.Map(2)
	w.BulkString("running_script")
	if fn == "" {
		w.Null()
	} else {
		w.Map(3)
		w.BulkString("name")
		w.BulkString(fn)
		w.BulkString("command")
		w.Array(len(argv))
		for _, a := range argv {
			w.Bulk(a)
		}
		w.BulkString("duration_ms")
		w.Int(durMs)
	}
	w.BulkString("engines")
	w.Map(1)
	w.BulkString("LUA")
	w.Map(2)
	w.BulkString("libraries_count")
	w.Int(libs)
	w.BulkString("functions_count")
	w.Int(funcs)
}

// cmdFunctionKill: FUNCTION KILL — no script runs while this holds the
// engine lock (the busy path is the server's, as SCRIPT KILL's).
func cmdFunctionKill(c *engine.Ctx, argv [][]byte) { c.W.Error(errNotBusy) }

var functionHelp = []string{
	"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"LOAD [REPLACE] <FUNCTION CODE>",
	"    Create a new library with the given library name and code.",
	"DELETE <LIBRARY NAME>",
	"    Delete the given library.",
	"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
	"    Return general information on all the libraries:",
	"    * Library name",
	"    * The engine used to run the Library",
	"    * Library description",
	"    * Functions list",
	"    * Library code (if WITHCODE is given)",
	"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
	"STATS",
	"    Return information about the current function running:",
	"    * Function name",
	"    * Command used to run the function",
	"    * Duration in MS that the function is running",
	"    If no function is running, return nil",
	"    In addition, returns a list of available engines.",
	"KILL",
	"    Kill the current running function.",
	"FLUSH [ASYNC|SYNC]",
	"    Delete all the libraries.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the libraries.",
	"    * SYNC: Synchronously flush the libraries.",
	"DUMP",
	"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
	"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
	"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
	"    control how to handle existing libraries (default APPEND):",
	"    * FLUSH: delete all existing libraries.",
	"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
	"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
	"      libraries with the new libraries (notice that even on this option there is a chance of failure",
	"      in case of functions name collision with another library).",
	"HELP",
	"    Prints this help.",
}

// cmdFunctionHelp: FUNCTION HELP — the help lines as status replies.
func cmdFunctionHelp(c *engine.Ctx, argv [][]byte) {
	c.W.Array(len(functionHelp))
	for _, l := range functionHelp {
		c.W.Status(l)
	}
}
