package server

import (
	"bytes"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"limitdb/engine"
)

// DEBUG (Redis 7.0 debug.c): the subcommands Redis's own tests lean on —
// DIGEST, DIGEST-VALUE, OBJECT, RELOAD (and LOADAOF, which reloads as it
// does), SLEEP, SET-ACTIVE-EXPIRE, PROTOCOL, HELP; QUICKLIST-PACKED-
// THRESHOLD, PAUSE-CRON, SET-DISABLE-DENY-SCRIPTS and REPLYBUFFER are
// accepted without effect — and limitdb's DIGEST-STRICT
// (engine.StrictDigest) and, on a Raft node, the fault tests'
// RAFT-FAIL-WRITES, RAFT-STALL-WRITES and RAFT-POWER-CUT (none of them in
// HELP, which keeps Redis's text). The rest (JMAP, POPULATE…) get Redis's
// unknown-subcommand error.
// enable-debug-command (no|yes|local, immutable) guards the whole command
// as Redis's processCommand does, right after the arity check.

const errDebugNotAllowed = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."

// debugCmd is DEBUG's table entry: dispatch compares a resolved command
// against it (one pointer comparison) before its protected check.
var debugCmd = &engine.Command{Name: "debug", Arity: -2, Flags: "admin noscript loading stale", Group: "server", Since: "1.0.0", Summary: "A container for debugging commands"}

func init() {
	registerConn(debugCmd, cmdDebug)
}

// SetDebugCommand sets enable-debug-command before the server starts
// (embedding, tests), as the config file would, without applying the rest
// of the configuration.
func (s *Server) SetDebugCommand(mode string) {
	s.door.Lock()
	s.conf.params["enable-debug-command"] = mode
	s.door.Unlock()
}

// debugAllowed is Redis's allowProtectedAction for enable-debug-command.
// The engine lock is held (the parameter table is read under it).
func (s *Server) debugAllowed(cl *client) bool {
	return s.protectedAllowed(cl, "enable-debug-command")
}

// protectedAllowed is Redis's allowProtectedAction: the no|yes|local
// parameter name decides whether cl may take the protected action.
func (s *Server) protectedAllowed(cl *client, name string) bool {
	switch s.conf.params[name] {
	case "yes":
		return true
	case "local":
		return isLocalAddr(cl.nc.RemoteAddr())
	}
	return false
}

// cmdDebug: DEBUG <subcommand> [args…].
func cmdDebug(s *Server, cl *client, argv [][]byte) {
	sub := strings.ToLower(string(argv[1]))
	switch {
	case sub == "help" && len(argv) == 2:
		help(cl,
			"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"DIGEST",
			"    Output a hex signature representing the current DB content.",
			"DIGEST-VALUE <key> [<key> ...]",
			"    Output a hex signature of the values of all the specified keys.",
			"OBJECT <key>",
			"    Show low level info about `key` and associated value.",
			"PROTOCOL <type>",
			"    Reply with a test value of the specified type. <type> can be: string,",
			"    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
			"    true, false.",
			"RELOAD",
			"    Snapshot the dataset and load it back in place (in memory: limitdb",
			"    writes no dump.rdb here; the MERGE, NOFLUSH and NOSAVE options are not",
			"    supported).",
			"SET-ACTIVE-EXPIRE <0|1>",
			"    Setting it to 0 disables expiring keys in background when they are not",
			"    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
			"    default.",
			"SLEEP <seconds>",
			"    Stop the server for <seconds>. Decimals allowed.",
			"HELP",
			"    Prints this help.",
		)
	case sub == "digest" && len(argv) == 2:
		d := s.eng.DatasetDigest()
		cl.w.Status(d.Hex())
	case sub == "digest-strict" && len(argv) == 2:
		d := s.eng.StrictDigest()
		cl.w.Status(d.Hex())
	case (sub == "handover-pause" || sub == "handover-pause-own") && len(argv) == 3:
		// test-only (not in HELP): this node's handover driver waits this
		// many ms after the source froze a batch, or after its OWN
		// committed (cluster_migration.go)
		s.debugHandoverPause(cl, sub == "handover-pause-own", argv[2])
	case sub == "raft-fail-writes" && len(argv) == 3 && s.replicated():
		// test-only (not in HELP): the Raft log store fails every write
		// while set, as a full disk would
		s.node.InjectLogFailure(string(argv[2]) == "1")
		cl.w.OK()
	case sub == "raft-stall-writes" && len(argv) == 3 && s.replicated():
		// test-only (not in HELP): each write to the Raft log's files
		// first sleeps this many ms while set (a stalled disk); 0 ends it
		ms, err := strconv.ParseInt(string(argv[2]), 10, 64)
		if err != nil || ms < 0 {
			cl.w.Error(engine.ErrNotInt)
			return
		}
		s.node.InjectLogStall(time.Duration(ms) * time.Millisecond)
		cl.w.OK()
	case sub == "raft-power-cut" && len(argv) == 2 && s.replicated():
		// test-only (not in HELP): the node loses what a power cut would
		// (the log's writes since their last fsync) and dies as on
		// SIGKILL; no reply
		s.node.PowerCut()
	case sub == "digest-value":
		db := s.eng.DBs[cl.db]
		cl.w.Array(len(argv) - 2)
		for _, k := range argv[2:] {
			d := db.ValueDigest(string(k))
			cl.w.Status(d.Hex())
		}
	case sub == "object" && len(argv) == 3:
		info, ok := s.eng.DBs[cl.db].DebugObject(string(argv[2]), cl.ctx.Now)
		if !ok {
			cl.w.Error(engine.ErrNoSuchKey)
			return
		}
		cl.w.Status(string(engine.AppendDebugObject(nil, info)))
	case sub == "sleep" && len(argv) == 3:
		// Redis: strtod with no end check (garbage is 0), then nanosleep
		// with the engine (its event loop) blocked; negative returns at once
		if d := cStrtodPrefix(string(argv[2])) * 1e9; d > 0 {
			time.Sleep(time.Duration(min(d, math.MaxInt64)))
		}
		cl.w.Status("OK")
	case sub == "reload":
		s.debugReload(cl, argv[2:])
	case sub == "loadaof":
		// limitdb's append-only file is its Raft log, whose replay gives
		// back the state in memory: reloading that state is DEBUG RELOAD's
		// in-memory reload
		s.debugReload(cl, nil)
	case sub == "set-active-expire" && len(argv) == 3:
		s.activeExpireOff.Store(cAtoi(string(argv[2])) == 0)
		cl.w.Status("OK")
	case sub == "protocol" && len(argv) == 3:
		debugProtocol(cl, strings.ToLower(string(argv[2])))
	case sub == "quicklist-packed-threshold" && len(argv) == 3:
		// limitdb lists have no quicklist nodes to pack: the value is
		// checked as Redis's quicklistisSetPackedThreshold does, and kept
		// nowhere
		if sz, ok := parseMemory(string(argv[2])); !ok || sz > 1<<32-1<<20 {
			cl.w.Error("ERR argument must be a memory value bigger than 1 and smaller than 4gb")
			return
		}
		cl.w.OK()
	case (sub == "pause-cron" || sub == "set-disable-deny-scripts") && len(argv) == 3,
		sub == "replybuffer" && len(argv) == 4:
		// accepted for Redis's test suite, no effect (commands.md, DEBUG)
		cl.w.OK()
	default:
		cl.w.Error(subSyntaxErr(argv))
	}
}

const errDebugProtocol = "ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false"

// debugProtocol: DEBUG PROTOCOL <type> — one reply of each RESP3 type
// (written in its RESP2 form to a RESP2 client), as Redis's debug.c.
func debugProtocol(cl *client, name string) {
	w := &cl.w
	switch name {
	case "string":
		w.BulkString("Hello World")
	case "integer":
		w.Int(12345)
	case "double":
		w.Double(3.141)
	case "bignum":
		w.BigNumber("1234567999999999999999999999999999999")
	case "null":
		w.Null()
	case "array", "set":
		if name == "set" {
			w.Set(3)
		} else {
			w.Array(3)
		}
		for j := int64(0); j < 3; j++ {
			w.Int(j)
		}
	case "map":
		w.Map(3)
		for j := int64(0); j < 3; j++ {
			w.Int(j)
			w.Bool(j == 1)
		}
	case "attrib":
		if w.Proto == 3 {
			w.Raw([]byte("|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n"))
		}
		w.BulkString("Some real reply following the attribute")
	case "push":
		if w.Proto != 3 {
			w.Error("ERR RESP2 is not supported by this command")
			return
		}
		w.Push(2)
		w.BulkString("server-cpu-usage")
		w.Int(42)
		w.BulkString("Some real reply following the push reply")
	case "true", "false":
		w.Bool(name == "true")
	case "verbatim":
		w.Verbatim("This is a verbatim\nstring")
	default:
		w.Error(errDebugProtocol)
	}
}

// cStrtodPrefix is C's strtod(s, NULL) for decimal input: leading white
// space, then the longest prefix that reads as a number; 0 when none.
func cStrtodPrefix(s string) float64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	n := digits()
	if i < len(s) && s[i] == '.' {
		i++
		n += digits()
	}
	if n == 0 {
		return 0
	}
	end := i
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() > 0 {
			end = i
		}
	}
	f, _ := strconv.ParseFloat(s[:end], 64) // out of range: ±Inf, as strtod
	return f
}

// cAtoi is C's atoi: leading white space, optional sign, digits; 0 when
// none (overflow is undefined in C; here it saturates).
func cAtoi(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n int64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = min(n*10+int64(s[i]-'0'), math.MaxInt32)
	}
	if neg {
		return -n
	}
	return n
}

const (
	errReloadOption = "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options."
	errReloadLoad   = "ERR Error trying to load the RDB dump"
)

// debugReload: DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE] — Redis saves
// dump.rdb, empties the dataset and loads the file back; limitdb does the
// same through a snapshot in memory (engine.WriteSnapshot, ReloadSnapshot:
// values get the encodings Redis's load gives them), kept as the
// "saved" copy a later NOSAVE loads, with the engine lock held throughout,
// and replies +OK. WATCHes on existing keys are dirtied, as Redis's
// emptyData does. NOSAVE loads the copy the last DEBUG RELOAD kept (the
// RDB file in dir when there is none); NOFLUSH adds the loaded keys and
// function libraries to the current ones (engine.MergeSnapshot), where a
// name on both sides fails the load unless MERGE.
func (s *Server) debugReload(cl *client, opts [][]byte) {
	var merge, noflush, nosave bool
	for _, o := range opts {
		switch strings.ToLower(string(o)) {
		case "merge":
			merge = true
		case "noflush":
			noflush = true
		case "nosave":
			nosave = true
		default:
			cl.w.Error(errReloadOption)
			return
		}
	}
	if !nosave {
		var buf bytes.Buffer
		if err := s.eng.WriteSnapshot(&buf); err != nil {
			cl.w.Error("ERR " + err.Error())
			return
		}
		s.reloadRDB = buf.Bytes()
	}
	src := s.reloadRDB
	if src == nil {
		var err error
		if src, err = os.ReadFile(s.rdbPath()); err != nil {
			s.log.Warn("DEBUG RELOAD NOSAVE: no saved data set", "err", err)
			cl.w.Error(errReloadLoad)
			return
		}
	}
	var err error
	if noflush {
		err = s.eng.MergeSnapshot(bytes.NewReader(src), merge)
	} else {
		err = s.eng.ReloadSnapshot(bytes.NewReader(src))
	}
	if err != nil {
		s.log.Warn("DEBUG RELOAD failed", "err", err)
		cl.w.Error(errReloadLoad)
		return
	}
	s.log.Warn("DB reloaded by DEBUG RELOAD")
	cl.w.Status("OK")
}
