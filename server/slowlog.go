package server

import (
	"strconv"
	"strings"
	"time"

	"limitdb/door"
	"limitdb/engine"
)

// Redis's slowlog entry limits (slowlog.h)
const (
	slowlogMaxArgc = 32
	slowlogMaxStr  = 128
)

// slowEntry is one SLOWLOG GET entry.
type slowEntry struct {
	id, unix, usec int64
	argv           []string
	peer, name     string
}

// slowlog holds the entries, newest first, and the settings they obey.
// Guarded by the engine lock (commands run under it, and CONFIG SET too).
type slowlog struct {
	entries []slowEntry
	nextID  int64
	slower  int64 // slowlog-log-slower-than, µs (< 0: off)
	maxLen  int64 // slowlog-max-len
	// chain is the end of the last timed command: the start of the next
	// one when it follows at once, under the same hold of the engine
	// lock (slowStart)
	chain struct {
		hold  uint64
		calls int64 // stats.commands once the command is counted
		t     int64
	}
}

func init() {
	sub := func(name string, arity int, flags, since, summary string, h connHandler) connSub {
		return connSub{&engine.Command{Name: name, Arity: arity, Flags: flags, Group: "server", Since: since, Summary: summary}, h}
	}
	registerConn(&engine.Command{Name: "slowlog", Arity: -2, Group: "server", Since: "2.2.12", Summary: "A container for slow log commands"}, nil,
		sub("get", -2, "admin loading stale", "2.2.12", "Get the slow log's entries", cmdSlowlogGet),
		sub("len", 2, "admin loading stale", "2.2.12", "Get the slow log's length", cmdSlowlogLen),
		sub("reset", 2, "admin loading stale", "2.2.12", "Clear all entries from the slow log", cmdSlowlogReset),
		sub("help", 2, "loading stale", "6.2.0", "Show helpful text about the different subcommands", cmdSlowlogHelp),
	)
}

// slowTimed says whether call measures cmd on its own. Redis times every
// command; limitdb runs a pipeline's commands under one clock read
// (cmdstats.go), so it reads the clock around a command only when the
// command could qualify: commands not flagged fast always (scripts,
// O(N) commands), fast ones only when the threshold is under 1 ms (a
// fast command does not take 1 ms). With the default threshold (10 ms)
// the pipelined hot path pays nothing. The engine lock is held.
func (s *Server) slowTimed(cmd *engine.Command) bool {
	sl := &s.slow
	if sl.slower < 0 || cmd.Has(engine.FlagSkipSlowlog) {
		return false
	}
	return sl.slower < 1000 || !cmd.Has(engine.FlagFast)
}

// slowStart is the start of a timed command: the end of the timed
// command just before it when nothing else ran between them under this
// hold of the engine lock (only the request's parsing), else a clock
// read. A pipeline of SETs (not flagged fast, so timed) read the clock
// twice per command: 6 % of the CPU at SET P=16; chained, once.
func (s *Server) slowStart() int64 {
	c := &s.slow.chain
	if c.hold == s.door.Holds() && c.calls == s.stats.commands.Load() && c.t != 0 {
		return c.t
	}
	return door.Nanotime()
}

// slowEnd ends the timed command started at t0 (call counts it in
// stats.commands just after).
func (s *Server) slowEnd(cl *client, argv [][]byte, t0 int64) {
	t := door.Nanotime()
	s.slowlogPush(cl, argv, t-t0)
	s.slow.chain.hold, s.slow.chain.calls, s.slow.chain.t = s.door.Holds(), s.stats.commands.Load()+1, t
}

// slowlogPush is Redis's slowlogPushEntryIfNeeded: log argv when it took
// at least slowlog-log-slower-than µs, then trim to slowlog-max-len.
func (s *Server) slowlogPush(cl *client, argv [][]byte, ns int64) {
	sl := &s.slow
	if sl.slower < 0 { // may have changed while the command ran (CONFIG SET)
		return
	}
	usec := ns / 1000
	if usec >= sl.slower {
		e := slowEntry{id: sl.nextID, unix: time.Now().Unix(), usec: usec, argv: slowlogArgv(argv), name: cl.name}
		e.peer = cl.nc.RemoteAddr().String()
		sl.nextID++
		sl.entries = append(sl.entries, slowEntry{})
		copy(sl.entries[1:], sl.entries)
		sl.entries[0] = e
	}
	if int64(len(sl.entries)) > sl.maxLen {
		clear(sl.entries[sl.maxLen:])
		sl.entries = sl.entries[:sl.maxLen]
	}
}

// slowlogArgv copies argv as Redis stores it: at most 32 arguments (the
// last one then says how many more there were), each cut at 128 bytes,
// and secrets replaced by "(redacted)" as Redis redacts them (AUTH, HELLO
// … AUTH, ACL SETUSER, CONFIG SET of its sensitive parameters).
func slowlogArgv(argv [][]byte) []string {
	n := min(len(argv), slowlogMaxArgc)
	out := make([]string, n)
	for j := 0; j < n; j++ {
		a := argv[j]
		switch {
		case n != len(argv) && j == n-1:
			out[j] = "... (" + strconv.Itoa(len(argv)-n+1) + " more arguments)"
		case len(a) > slowlogMaxStr:
			out[j] = string(a[:slowlogMaxStr]) + "... (" + strconv.Itoa(len(a)-slowlogMaxStr) + " more bytes)"
		default:
			out[j] = string(a)
		}
	}
	redact := func(i int) {
		if i < n {
			out[i] = "(redacted)"
		}
	}
	is := func(i int, word string) bool { return i < len(argv) && strings.EqualFold(string(argv[i]), word) }
	switch {
	case is(0, "auth") && len(argv) <= 3: // more arguments: a syntax error, not redacted
		redact(1)
		if len(argv) == 3 {
			redact(2)
		}
	case is(0, "hello"):
		// options in order; Redis stops at the first one it rejects
		for i := 2; i < len(argv); i++ {
			switch {
			case is(i, "auth") && i+2 < len(argv):
				redact(i + 1)
				redact(i + 2)
				i += 2
			case is(i, "setname") && i+1 < len(argv):
				i++
			default:
				i = len(argv)
			}
		}
	case is(0, "acl") && is(1, "setuser"):
		for i := 2; i < len(argv); i++ {
			redact(i)
		}
	case is(0, "config") && is(1, "set"):
		for i := 2; i+1 < len(argv); i += 2 {
			if is(i, "requirepass") || is(i, "masterauth") || is(i, "masteruser") {
				redact(i + 1)
			}
		}
	}
	return out
}

// cmdSlowlogGet: SLOWLOG GET [count] — the newest count entries (10 by
// default, -1 for all): id, unix time, µs, arguments, peer, name.
func cmdSlowlogGet(s *Server, cl *client, argv [][]byte) {
	count := int64(10)
	if len(argv) > 3 {
		cl.w.Error(engine.ErrSubcommandSyntax(argv))
		return
	}
	if len(argv) == 3 {
		n, ok := engine.ParseIntB(argv[2])
		if !ok || n < -1 {
			cl.w.Error("ERR count should be greater than or equal to -1")
			return
		}
		count = n
		if n == -1 {
			count = int64(len(s.slow.entries))
		}
	}
	k := min(count, int64(len(s.slow.entries)))
	cl.w.Array(int(k))
	for _, e := range s.slow.entries[:k] {
		cl.w.Array(6)
		cl.w.Int(e.id)
		cl.w.Int(e.unix)
		cl.w.Int(e.usec)
		cl.w.Array(len(e.argv))
		for _, a := range e.argv {
			cl.w.BulkString(a)
		}
		cl.w.BulkString(e.peer)
		cl.w.BulkString(e.name)
	}
}

// cmdSlowlogLen: SLOWLOG LEN.
func cmdSlowlogLen(s *Server, cl *client, argv [][]byte) {
	cl.w.Int(int64(len(s.slow.entries)))
}

// cmdSlowlogReset: SLOWLOG RESET — drop every entry (ids go on).
func cmdSlowlogReset(s *Server, cl *client, argv [][]byte) {
	clear(s.slow.entries)
	s.slow.entries = s.slow.entries[:0]
	cl.w.OK()
}

// cmdSlowlogHelp: SLOWLOG HELP.
func cmdSlowlogHelp(s *Server, cl *client, argv [][]byte) {
	help(cl,
		"SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"GET [<count>]",
		"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
		"    Entries are made of:",
		"    id, timestamp, time in microseconds, arguments array, client IP and port,",
		"    client name",
		"LEN",
		"    Return the length of the slowlog.",
		"RESET",
		"    Reset the slowlog.",
		"HELP",
		"    Prints this help.",
	)
}
