package server

import (
	"strings"

	"limitdb/engine"
)

func init() {
	sub := func(name string, arity int, summary string, h connHandler) connSub {
		return connSub{&engine.Command{Name: name, Arity: arity, Flags: "loading stale", Group: "server", Since: "7.0.0", Summary: summary}, h}
	}
	registerConn(&engine.Command{Name: "command", Arity: -1, Flags: "loading stale", Group: "server", Since: "2.8.13", Summary: "Returns detailed information about all commands."}, cmdCommand,
		sub("count", 2, "Returns a count of commands.", cmdCommandCount),
		sub("info", -2, "Returns information about one, multiple or all commands.", cmdCommandInfo),
		sub("docs", -2, "Returns documentary information about one, multiple or all commands.", cmdCommandDocs),
		sub("list", -2, "Returns a list of command names.", cmdCommandList),
		sub("getkeys", -4, "Extracts the key names from an arbitrary command.", cmdCommandGetkeys),
		sub("getkeysandflags", -4, "Extract keys and access flags given a full Redis command", cmdCommandGetkeysAndFlags),
		sub("help", 2, "Returns helpful text about the different subcommands.", cmdCommandHelp),
	)
}

// writeCommandInfo writes one COMMAND INFO entry: name, arity, flags,
// first key, last key, step, ACL categories, tips, key specs, subcommands
// (sets in RESP3 where Redis sends sets).
func writeCommandInfo(cl *client, cmd *engine.Command) {
	w := &cl.w
	w.Array(10)
	w.BulkString(cmd.Name)
	w.Int(int64(cmd.Arity))
	flags := engine.FlagNames(cmd.F)
	w.Set(len(flags))
	for _, f := range flags {
		w.Status(f)
	}
	w.Int(int64(cmd.FirstKey))
	w.Int(int64(cmd.LastKey))
	w.Int(int64(cmd.Step))
	cats := cmd.CategoryList()
	w.Set(len(cats))
	for _, c := range cats {
		w.Status("@" + c)
	}
	w.Set(0) // tips
	writeKeySpecs(cl, cmd.KeySpecs)
	if len(cmd.Subs) == 0 {
		w.Set(0)
		return
	}
	w.Array(len(cmd.Subs))
	for _, s := range cmd.Subs {
		writeCommandInfo(cl, s)
	}
}

var keyFlagNames = []struct {
	f    engine.KeyFlag
	name string
}{{engine.KeyRO, "RO"}, {engine.KeyRW, "RW"}, {engine.KeyOW, "OW"}, {engine.KeyRM, "RM"},
	{engine.KeyAccess, "access"}, {engine.KeyUpdate, "update"}, {engine.KeyInsert, "insert"},
	{engine.KeyDelete, "delete"}, {engine.KeyNotKey, "not_key"}, {engine.KeyIncomplete, "incomplete"},
	{engine.KeyVariableFlags, "variable_flags"}}

// writeKeySpecs writes a command's key specs as Redis 7.0's COMMAND INFO
// does: a set of maps of notes (when any), flags, begin_search, find_keys.
func writeKeySpecs(cl *client, specs []engine.KeySpec) {
	w := &cl.w
	w.Set(len(specs))
	for _, ks := range specs {
		n := 3
		if ks.Notes != "" {
			n++
			w.Map(n)
			w.BulkString("notes")
			w.BulkString(ks.Notes)
		} else {
			w.Map(n)
		}
		w.BulkString("flags")
		var names []string
		for _, f := range keyFlagNames {
			if ks.Flags&f.f != 0 {
				names = append(names, f.name)
			}
		}
		w.Set(len(names))
		for _, name := range names {
			w.Status(name)
		}
		w.BulkString("begin_search")
		if ks.Unsupported {
			// SORT's BY/GET and STORE specs, the only ones limitdb has
			// (a keyword spec would be Unsupported too: none exists yet)
			w.Map(2)
			w.BulkString("type")
			w.BulkString("unknown")
			w.BulkString("spec")
			w.Map(0)
			w.BulkString("find_keys")
			w.Map(2)
			w.BulkString("type")
			w.BulkString("unknown")
			w.BulkString("spec")
			w.Map(0)
			continue
		}
		w.Map(2)
		w.BulkString("type")
		w.BulkString("index")
		w.BulkString("spec")
		w.Map(1)
		w.BulkString("index")
		w.Int(int64(ks.BeginIndex))
		w.BulkString("find_keys")
		w.Map(2)
		w.BulkString("type")
		if ks.KeyNum {
			w.BulkString("keynum")
			w.BulkString("spec")
			w.Map(3)
			w.BulkString("keynumidx")
			w.Int(int64(ks.KeyNumIdx))
			w.BulkString("firstkey")
			w.Int(int64(ks.FirstKey))
			w.BulkString("keystep")
			w.Int(int64(ks.KeyStep))
		} else {
			w.BulkString("range")
			w.BulkString("spec")
			w.Map(3)
			w.BulkString("lastkey")
			w.Int(int64(ks.LastKey))
			w.BulkString("keystep")
			w.Int(int64(ks.KeyStep))
			w.BulkString("limit")
			w.Int(int64(ks.Limit))
		}
	}
}

// cmdCommand: COMMAND — the COMMAND INFO entry of every command.
func cmdCommand(s *Server, cl *client, argv [][]byte) {
	if len(argv) > 1 {
		cl.w.Error(engine.ErrUnknownSubcommand(argv[1], "COMMAND"))
		return
	}
	all := engine.Commands()
	cl.w.Array(len(all))
	for _, c := range all {
		writeCommandInfo(cl, c)
	}
}

// cmdCommandCount: COMMAND COUNT — the number of top-level commands.
func cmdCommandCount(s *Server, cl *client, argv [][]byte) {
	cl.w.Int(int64(len(engine.Commands())))
}

// lookupFull finds "name" or "container|sub".
func lookupFull(name []byte) *engine.Command {
	n := string(name)
	if i := strings.IndexByte(n, '|'); i >= 0 {
		c := engine.Lookup([]byte(n[:i]))
		if c == nil {
			return nil
		}
		return c.Sub([]byte(n[i+1:]))
	}
	return engine.Lookup(name)
}

// cmdCommandInfo: COMMAND INFO [name …] — an entry per name (null for an
// unknown one); every command when no name is given.
func cmdCommandInfo(s *Server, cl *client, argv [][]byte) {
	if len(argv) == 2 {
		cmdCommand(s, cl, argv[:1])
		return
	}
	cl.w.Array(len(argv) - 2)
	for _, a := range argv[2:] {
		if c := lookupFull(a); c != nil {
			writeCommandInfo(cl, c)
		} else {
			cl.w.Null()
		}
	}
}

func writeCommandDocs(cl *client, cmd *engine.Command) {
	w := &cl.w
	n := 3
	if len(cmd.Subs) > 0 {
		n++
	}
	w.Map(n)
	w.BulkString("summary")
	w.BulkString(cmd.Summary)
	w.BulkString("since")
	w.BulkString(cmd.Since)
	w.BulkString("group")
	w.BulkString(cmd.Group)
	if len(cmd.Subs) > 0 {
		w.BulkString("subcommands")
		w.Map(len(cmd.Subs))
		for _, s := range cmd.Subs {
			w.BulkString(s.Name)
			writeCommandDocs(cl, s)
		}
	}
}

// cmdCommandDocs: COMMAND DOCS [name …] — a map of name to its docs
// (summary, since, group, subcommands); unknown names are left out;
// every command when no name is given. limitdb has no complexity or
// argument documentation.
func cmdCommandDocs(s *Server, cl *client, argv [][]byte) {
	var cmds []*engine.Command
	if len(argv) == 2 {
		cmds = engine.Commands()
	} else {
		for _, a := range argv[2:] {
			if c := lookupFull(a); c != nil {
				cmds = append(cmds, c)
			}
		}
	}
	cl.w.Map(len(cmds))
	for _, c := range cmds {
		cl.w.BulkString(c.Name)
		writeCommandDocs(cl, c)
	}
}

// cmdCommandList: COMMAND LIST [FILTERBY MODULE m | ACLCAT cat | PATTERN p]
// — the names of all commands and subcommands ("container|sub").
func cmdCommandList(s *Server, cl *client, argv [][]byte) {
	var filter func(c *engine.Command) bool
	if len(argv) != 2 {
		if len(argv) != 5 || !strings.EqualFold(string(argv[2]), "filterby") {
			cl.w.Error(engine.ErrSyntax)
			return
		}
		v := string(argv[4])
		switch strings.ToLower(string(argv[3])) {
		case "module":
			filter = func(*engine.Command) bool { return false }
		case "aclcat":
			filter = func(c *engine.Command) bool {
				return c.Cats&engine.CategoryByName(v) != 0
			}
		case "pattern":
			filter = func(c *engine.Command) bool { return engine.Match(v, c.Name, true) }
		default:
			cl.w.Error(engine.ErrSyntax)
			return
		}
	}
	var names []string
	for _, c := range engine.Commands() {
		for _, x := range append([]*engine.Command{c}, c.Subs...) {
			if filter == nil || filter(x) {
				names = append(names, x.Name)
			}
		}
	}
	cl.w.Array(len(names))
	for _, n := range names {
		cl.w.BulkString(n)
	}
}

// cmdCommandGetkeys: COMMAND GETKEYS command [arg …] — the key arguments
// of the command, from its key specs (the positions the ACL check uses).
// Errors, in Redis's order: "Invalid command specified", "The command has
// no key arguments", "Invalid number of arguments specified for command",
// "Invalid arguments specified for command" (no key found, unless the
// command may have none, like EVAL).
func cmdCommandGetkeys(s *Server, cl *client, argv [][]byte) { getKeys(cl, argv, false) }

// cmdCommandGetkeysAndFlags: COMMAND GETKEYSANDFLAGS command [arg …] —
// GETKEYS with each key's flags: [key, set of flags] per key.
func cmdCommandGetkeysAndFlags(s *Server, cl *client, argv [][]byte) { getKeys(cl, argv, true) }

func getKeys(cl *client, argv [][]byte, withFlags bool) {
	args := argv[2:]
	cmd := engine.Lookup(args[0])
	if cmd != nil && len(cmd.Subs) > 0 && len(args) > 1 {
		cmd = cmd.Sub(args[1])
	}
	if cmd == nil {
		cl.w.Error("ERR Invalid command specified")
		return
	}
	hasKeys := false
	for _, ks := range cmd.KeySpecs {
		// SPUBLISH's and SSUBSCRIBE's shard channels are not keys
		// (Redis's doesCommandHaveKeys)
		hasKeys = hasKeys || ks.Flags&engine.KeyNotKey == 0
	}
	if !hasKeys {
		cl.w.Error("ERR The command has no key arguments")
		return
	}
	if !engine.ArityOK(cmd.Arity, len(args)) {
		cl.w.Error("ERR Invalid number of arguments specified for command")
		return
	}
	// the key specs, as the ACL check reads them
	var keys [][]byte
	var flags []engine.KeyFlag
	it := cmd.Keys(args)
	for {
		p, f, ok := it.Next()
		if !ok {
			break
		}
		keys = append(keys, args[p])
		flags = append(flags, f)
	}
	if len(keys) == 0 && !cmd.Has(engine.FlagNoMandatoryKeys) {
		cl.w.Error("ERR Invalid arguments specified for command")
		return
	}
	cl.w.Array(len(keys))
	for i, k := range keys {
		if !withFlags {
			cl.w.Bulk(k)
			continue
		}
		cl.w.Array(2)
		cl.w.Bulk(k)
		var names []string
		for _, fn := range keyFlagNames {
			if flags[i]&fn.f != 0 {
				names = append(names, fn.name)
			}
		}
		cl.w.Set(len(names))
		for _, n := range names {
			cl.w.Status(n)
		}
	}
}

// cmdCommandHelp: COMMAND HELP.
func cmdCommandHelp(s *Server, cl *client, argv [][]byte) {
	help(cl,
		"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"(no subcommand)",
		"    Return details about all Redis commands.",
		"COUNT",
		"    Return the total number of commands in this Redis server.",
		"LIST",
		"    Return a list of all commands in this Redis server.",
		"INFO [<command-name> ...]",
		"    Return details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"DOCS [<command-name> ...]",
		"    Return documentation details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"GETKEYS <full-command>",
		"    Return the keys from a full Redis command.",
		"GETKEYSANDFLAGS <full-command>",
		"    Return the keys and the access flags from a full Redis command.",
		"HELP",
		"    Prints this help.",
	)
}
