// Package luavm runs Redis 7.0 Lua scripts (EVAL, EVALSHA, EVAL_RO,
// EVALSHA_RO, SCRIPT …) on gopher-lua. It registers its commands in the
// engine's command table from init; the engine never imports it.
//
// Nothing here reads the clock or uses Go's random source: a script sees the
// command's time (Ctx.Now) and math.random is Redis's own 48-bit generator
// whose state lives in the engine (Engine.Scripts).
package luavm

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"limitdb/engine"
	"limitdb/resp"
)

const (
	errNegKeys      = "ERR Number of keys can't be negative"
	errTooManyKeys  = "ERR Number of keys can't be greater than number of args"
	errCompile      = "ERR Error compiling script (new function): "
	errUnknownCmd   = "ERR Unknown Redis command called from script"
	errWrongArity   = "ERR Wrong number of args calling Redis command from script"
	errNotAllowed   = "ERR This Redis command is not allowed from script"
	errArgType      = "ERR Lua redis lib command arguments must be strings or integers"
	errNoArgs       = "ERR Please specify at least one argument for this redis lib call"
	errNotBusy      = "NOTBUSY No scripts in execution right now."
	errUnkillable   = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
	errFlushOption  = "ERR SCRIPT FLUSH only support SYNC|ASYNC option"
	errDebugOption  = "ERR Use SCRIPT DEBUG YES/SYNC/NO"
	errNoDebugger   = "ERR SCRIPT DEBUG YES/SYNC is not supported: limitdb has no Lua debugger"
	errKilledByUser = "ERR Script killed by user with SCRIPT KILL..."
)

// Script is one cached script.
type Script struct {
	SHA   string // lower-case hex
	Body  string
	flags scriptFlags // its shebang's flags, or flagEvalCompat
	proto *lua.FunctionProto
}

// State is the scripting state of one engine: the script cache (replicated:
// SCRIPT LOAD/FLUSH go through the log), the Lua generator's state
// (replicated: Redis never reseeds it between scripts) and the interpreter.
type State struct {
	Scripts map[string]*Script
	// Rand48 is redisLrand48's 48-bit state (EVAL scripts and functions
	// share it, as Redis's one generator).
	Rand48 uint64

	vm *vm

	// fn holds the function libraries (functions.go), replicated state
	// like Scripts; fvm is their interpreter.
	fn  libSet
	fvm *vm
}

// Seed48 is the generator's initial state, as Redis starts it.
const Seed48 = 0x1234ABCD330E

// StateOf returns e's scripting state, creating it on first use.
func StateOf(e *engine.Engine) *State {
	if st, ok := e.Scripts.(*State); ok {
		return st
	}
	st := newState()
	e.Scripts = st
	return st
}

func newState() *State {
	return &State{Scripts: map[string]*Script{}, Rand48: Seed48, fn: newLibSet()}
}

func init() {
	eval := &engine.Command{Name: "eval", Arity: -3, Flags: "noscript stale skip_monitor no_mandatory_keys script noeffect", Group: "scripting", Since: "2.6.0", Summary: "Executes a server-side Lua script.", Run: cmdEval}
	evalSha := &engine.Command{Name: "evalsha", Arity: -3, Flags: "noscript stale skip_monitor no_mandatory_keys script noeffect", Group: "scripting", Since: "2.6.0", Summary: "Executes a server-side Lua script by SHA1 digest.", Run: cmdEvalSha}
	evalRO := &engine.Command{Name: "eval_ro", Arity: -3, Flags: "readonly noscript stale skip_monitor no_mandatory_keys script noeffect", Group: "scripting", Since: "7.0.0", Summary: "Executes a read-only server-side Lua script.", Run: cmdEvalRO}
	evalShaRO := &engine.Command{Name: "evalsha_ro", Arity: -3, Flags: "readonly noscript stale skip_monitor no_mandatory_keys script noeffect", Group: "scripting", Since: "7.0.0", Summary: "Executes a read-only server-side Lua script by SHA1 digest.", Run: cmdEvalShaRO}
	for _, cmd := range []*engine.Command{eval, evalSha, evalRO, evalShaRO} {
		cmd, bySHA := cmd, strings.HasPrefix(cmd.Name, "evalsha")
		cmd.FlagsFor = func(c *engine.Ctx, argv [][]byte) engine.Flag { return evalFlags(c, cmd.F, argv, bySHA) }
	}
	engine.Register(eval, evalSha, evalRO, evalShaRO,
		&engine.Command{Name: "script", Arity: -2, Group: "scripting", Since: "2.6.0", Summary: "A container for Lua scripts management commands.", Subs: []*engine.Command{
			{Name: "load", Arity: 3, Flags: "noscript stale script", Group: "scripting", Since: "2.6.0", Summary: "Loads a server-side Lua script to the script cache.", Run: cmdScriptLoad},
			{Name: "exists", Arity: -3, Flags: "noscript", Group: "scripting", Since: "2.6.0", Summary: "Determines whether server-side Lua scripts exist in the script cache.", Run: cmdScriptExists},
			{Name: "debug", Arity: 3, Flags: "noscript", Group: "scripting", Since: "3.2.0", Summary: "Sets the debug mode of server-side Lua scripts.", Run: cmdScriptDebug},
			{Name: "flush", Arity: -2, Flags: "noscript script", Group: "scripting", Since: "2.6.0", Summary: "Removes all server-side Lua scripts from the script cache.", Run: cmdScriptFlush},
			{Name: "kill", Arity: 2, Flags: "noscript allow_busy", Group: "scripting", Since: "2.6.0", Summary: "Terminates a server-side Lua script during execution.", Run: cmdScriptKill},
			{Name: "help", Arity: 2, Flags: "loading stale", Group: "scripting", Since: "5.0.0", Summary: "Returns helpful text about the different subcommands.", Run: cmdScriptHelp},
		}},
	)
	engine.ScriptSHAs = func(e *engine.Engine) []string {
		st, ok := e.Scripts.(*State)
		if !ok {
			return nil
		}
		out := make([]string, 0, len(st.Scripts))
		for sha := range st.Scripts {
			out = append(out, sha)
		}
		return out
	}
}

// evalFlags is evalGetCommandFlags: the flags of a script's shebang line
// replace the command's (scriptFlagsToCmdFlags); a script without one, or
// one not cached (EVALSHA) or not valid, keeps them.
func evalFlags(c *engine.Ctx, base engine.Flag, argv [][]byte, bySHA bool) engine.Flag {
	var f scriptFlags
	st, _ := c.E.Scripts.(*State)
	if bySHA {
		var s *Script
		if st != nil {
			s = st.lookupSHA(argv[1])
		}
		if s == nil {
			return base
		}
		f = s.flags
	} else if s := st.cachedBody(argv[1]); s != nil {
		f = s.flags
	} else {
		var msg string
		if f, _, msg = evalShebang(string(argv[1])); msg != "" {
			return base
		}
	}
	if f&flagEvalCompat != 0 {
		return base
	}
	return f.cmdFlags(base)
}

// cachedBody is the cached script of an EVAL body, or nil.
func (st *State) cachedBody(body []byte) *Script {
	if st == nil || len(body) < 2 || body[0] != '#' || body[1] != '!' {
		return nil // without a shebang, the flags are the command's anyway
	}
	return st.Scripts[SHA1Hex(body)]
}

// SHA1Hex is the lower-case hex SHA1 of b (redis.sha1hex, script ids).
func SHA1Hex(b []byte) string {
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}

// lowerSHA returns a 40-char SHA in lower case, or "" when b is not 40 long.
func lowerSHA(b []byte) string {
	if len(b) != 40 {
		return ""
	}
	var buf [40]byte
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return string(buf[:])
}

// lookupSHA finds a cached script without allocating.
func (st *State) lookupSHA(b []byte) *Script {
	if len(b) != 40 {
		return nil
	}
	var buf [40]byte
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return st.Scripts[string(buf[:])]
}

// load compiles body and caches it. On a compile error it returns Redis's
// error text. A body whose compilation would need more than memLimit
// (lua-memory-limit, ~64 bytes per source byte) is refused as Lua refuses
// a chunk when it runs out of memory while loading it.
func (st *State) load(body []byte, memLimit int64) (*Script, string) {
	sha := SHA1Hex(body)
	if s := st.Scripts[sha]; s != nil {
		return s, ""
	}
	s, msg := newScript(sha, string(body), memLimit)
	if s != nil {
		st.Scripts[sha] = s
	}
	return s, msg
}

// newScript compiles an EVAL body: its shebang line, if any, gives its
// flags and is left out of the compiled code (its newline kept, so that
// line numbers stay the user's), as Redis's luaCreateFunction does.
func newScript(sha, src string, memLimit int64) (*Script, string) {
	flags, skip, msg := evalShebang(src)
	if msg != "" {
		return nil, msg
	}
	if memLimit > 0 && int64(len(src))*compileBytesPerByte > memLimit {
		return nil, errCompile + lua.MemErrorText
	}
	proto, err := compile(src[skip:], chunkName)
	if err != "" {
		return nil, errCompile + err
	}
	return &Script{SHA: sha, Body: src, flags: flags, proto: proto}, ""
}

// cache is load for a command: a script new to the cache is recorded as
// the limitdb-only effect SCRIPT LOAD <body>. Redis 7.0 replicates no
// script body (its replicas run only the effects), but here a follower
// becomes the leader and must answer EVALSHA as the old one did, so the
// cache is replicated state (StrictDigest covers it). While applying,
// the node-local lua-memory-limit does not refuse what the executing node
// accepted.
func (st *State) cache(c *engine.Ctx, body []byte) (*Script, string) {
	limit := c.E.Guard.MemLimit.Load()
	if c.Applying {
		limit = 0
	}
	n := len(st.Scripts)
	s, msg := st.load(body, limit)
	if s != nil && len(st.Scripts) != n {
		c.AlsoPropagate(engine.Args("SCRIPT").S("LOAD").B(body))
	}
	return s, msg
}

// compile parses and compiles a script body as the chunk named name
// ("user_script" for EVAL, "user_function" for a library).
func compile(src, name string) (*lua.FunctionProto, string) {
	if msg := checkSyntaxAs(src, name); msg != "" {
		return nil, msg
	}
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		return nil, compileErrText(err, src, name)
	}
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		return nil, name + ":1: " + err.Error()
	}
	// A Lua 5.1 main chunk is vararg without the compat "arg" table;
	// gopher-lua would build one (a map allocation) on every call.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	return proto, ""
}

const chunkName = "user_script"

// numKeys validates EVAL's numkeys argument.
func numKeys(c *engine.Ctx, argv [][]byte) (int, bool) {
	n, ok := engine.ParseIntB(argv[2])
	if !ok {
		c.W.Error(engine.ErrNotInt)
		return 0, false
	}
	if n > int64(len(argv)-3) {
		c.W.Error(errTooManyKeys)
		return 0, false
	}
	if n < 0 {
		c.W.Error(errNegKeys)
		return 0, false
	}
	return int(n), true
}

// cmdEval: EVAL script numkeys [key ...] [arg ...] — compile (and cache)
// the script, run it with KEYS and ARGV, reply with its result converted as
// Redis does. Errors: ErrNotInt / negative / too many numkeys, compile
// errors, runtime errors with the "script: <sha>, on @user_script:<line>."
// suffix.
func cmdEval(c *engine.Ctx, argv [][]byte) { evalGeneric(c, argv, false, false) }

// cmdEvalSha: EVALSHA sha1 numkeys [key ...] [arg ...] — run a cached
// script (SHA case-insensitive); NOSCRIPT when it is not cached.
func cmdEvalSha(c *engine.Ctx, argv [][]byte) { evalGeneric(c, argv, true, false) }

// cmdEvalRO: EVAL_RO — EVAL whose script may not call write commands.
func cmdEvalRO(c *engine.Ctx, argv [][]byte) { evalGeneric(c, argv, false, true) }

// cmdEvalShaRO: EVALSHA_RO — EVALSHA whose script may not call write commands.
func cmdEvalShaRO(c *engine.Ctx, argv [][]byte) { evalGeneric(c, argv, true, true) }

func evalGeneric(c *engine.Ctx, argv [][]byte, bySHA, ro bool) {
	nk, ok := numKeys(c, argv)
	if !ok {
		return
	}
	st := StateOf(c.E)
	var s *Script
	if bySHA {
		s = st.lookupSHA(argv[1])
		if s == nil {
			c.W.Error(engine.ErrNoScript)
			return
		}
	} else {
		var msg string
		s, msg = st.cache(c, argv[1])
		if s == nil {
			c.W.Error(msg)
			return
		}
	}
	if msg := prepareRun(c, s.flags, ro); msg != "" {
		c.W.Error(msg)
		return
	}
	st.run(c, s, argv[3:3+nk], argv[3+nk:], ro || c.ReadOnly || s.flags&flagNoWrites != 0,
		s.flags&(flagAllowOOM|flagEvalCompat) == flagAllowOOM)
}

// Texts of scriptPrepareForRun's refusals.
const (
	errScriptWriteRO   = "ERR Can not execute a script with write flag using *_ro command."
	errScriptOOM       = "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'"
	errScriptMISCONF   = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts."
	errScriptMISCONFAO = "MISCONF Redis is configured to persist data to AOF, but it's currently unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts. AOF error: "
)

// prepareRun is Redis's scriptPrepareForRun for a script that declared
// flags (a shebang line, a function): one that may write is refused while
// the server refuses writes (MISCONF), under *_RO and without enough good
// replicas (NOREPLICAS); one without
// allow-oom or no-writes is refused over maxmemory. Scripts without a
// shebang line (flagEvalCompat) decide at their first write instead.
// no-cluster, allow-stale and allow-cross-slot-keys are accepted and have
// nothing to act on: limitdb is neither a Redis Cluster node nor a stale
// replica (commands.md). It returns the refusal, or "".
func prepareRun(c *engine.Ctx, f scriptFlags, ro bool) string {
	if f&flagEvalCompat != 0 {
		return ""
	}
	if f&flagNoWrites == 0 {
		if d := c.E.WriteDenied; d != "" {
			if rest, ok := strings.CutPrefix(d, "MISCONF Errors writing to the AOF file: "); ok {
				return errScriptMISCONFAO + rest
			}
			return errScriptMISCONF
		}
		if ro {
			return errScriptWriteRO
		}
		if d := c.E.NoReplicas; d != "" {
			return d
		}
	}
	if c.OOM && f&(flagAllowOOM|flagNoWrites) == 0 {
		return errScriptOOM
	}
	return ""
}

// cmdScriptLoad: SCRIPT LOAD script — compile and cache, reply the SHA1.
func cmdScriptLoad(c *engine.Ctx, argv [][]byte) {
	s, msg := StateOf(c.E).cache(c, argv[2])
	if s == nil {
		c.W.Error(msg)
		return
	}
	c.W.BulkString(s.SHA)
}

// cmdScriptExists: SCRIPT EXISTS sha1 [sha1 ...] — an array of 1/0.
func cmdScriptExists(c *engine.Ctx, argv [][]byte) {
	st := StateOf(c.E)
	c.W.Array(len(argv) - 2)
	for _, a := range argv[2:] {
		if st.lookupSHA(a) != nil {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
	}
}

// cmdScriptFlush: SCRIPT FLUSH [ASYNC|SYNC] — empty the script cache.
func cmdScriptFlush(c *engine.Ctx, argv [][]byte) {
	if len(argv) > 3 || (len(argv) == 3 && !engine.EqualFold(argv[2], "sync") && !engine.EqualFold(argv[2], "async")) {
		c.W.Error(errFlushOption)
		return
	}
	st := StateOf(c.E)
	st.Scripts = map[string]*Script{}
	// a new interpreter, as Redis's scriptingReset (it resets what scripts
	// could change in it: cjson's configuration); the generator's state
	// is kept, as Redis's is process-wide
	st.vm = nil
	// the cache is replicated (see cache); Redis propagates no SCRIPT FLUSH
	c.AlsoPropagate(engine.Args("SCRIPT").S("FLUSH"))
	c.W.OK()
}

// cmdScriptDebug: SCRIPT DEBUG YES|SYNC|NO — NO is accepted; the Lua
// debugger (YES, SYNC) is not available in limitdb.
func cmdScriptDebug(c *engine.Ctx, argv [][]byte) {
	switch {
	case engine.EqualFold(argv[2], "no"):
		c.W.OK()
	case engine.EqualFold(argv[2], "yes"), engine.EqualFold(argv[2], "sync"):
		c.W.Error(errNoDebugger)
	default:
		c.W.Error(errDebugOption)
	}
}

// cmdScriptKill: SCRIPT KILL — stop the running script if it has not
// written; NOTBUSY when none runs (a running script holds the engine lock,
// so when this handler runs, no script is running; the BUSY path is handled
// before the lock, see KillRunning).
func cmdScriptKill(c *engine.Ctx, argv [][]byte) { c.W.Error(errNotBusy) }

var scriptHelp = []string{
	"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DEBUG (YES|SYNC|NO)",
	"    Set the debug mode for subsequent scripts executed.",
	"EXISTS <sha1> [<sha1> ...]",
	"    Return information about the existence of the scripts in the script cache.",
	"FLUSH [ASYNC|SYNC]",
	"    Flush the Lua scripts cache. Very dangerous on replicas.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the scripts cache.",
	"    * SYNC: Synchronously flush the scripts cache.",
	"KILL",
	"    Kill the currently executing Lua script.",
	"LOAD <script>",
	"    Load a script into the scripts cache without executing it.",
	"HELP",
	"    Prints this help.",
}

// cmdScriptHelp: SCRIPT HELP — the help lines as status replies.
func cmdScriptHelp(c *engine.Ctx, argv [][]byte) {
	c.W.Array(len(scriptHelp))
	for _, l := range scriptHelp {
		c.W.Status(l)
	}
}

var _ = resp.NewWriter
