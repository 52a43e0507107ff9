package server

import (
	cryptorand "crypto/rand"
	"encoding/hex"
	"os"
	"time"

	"limitdb/acl"
	"limitdb/engine"
)

const (
	errNoACLFile   = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."
	errACLSave     = "ERR There was an error trying to save the ACLs. Please check the server logs for more information"
	errDelDefault  = "ERR The 'default' user cannot be removed"
	errGenpassBits = "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096"
)

func init() {
	sub := func(name string, arity int, flags, summary string, h connHandler) connSub {
		return connSub{&engine.Command{Name: name, Arity: arity, Flags: flags, Group: "server", Since: "6.0.0", Summary: summary}, h}
	}
	const adm = "admin noscript loading stale"
	const std = "noscript loading stale"
	dry := sub("dryrun", -4, adm, "Returns whether the user can execute the given command without executing the command.", cmdACLDryrun)
	dry.cmd.Since = "7.0.0"
	registerConn(&engine.Command{Name: "acl", Arity: -2, Group: "server", Since: "6.0.0", Summary: "A container for Access List Control commands"}, nil,
		sub("cat", -2, std, "List the ACL categories or the commands inside a category", cmdACLCat),
		sub("deluser", -3, adm, "Remove the specified ACL users and the associated rules", cmdACLDeluser),
		dry,
		sub("genpass", -2, std, "Generate a pseudorandom secure password to use for ACL users", cmdACLGenpass),
		sub("getuser", 3, adm, "Get the rules for a specific ACL user", cmdACLGetuser),
		sub("help", 2, "loading stale", "Show helpful text about the different subcommands", cmdACLHelp),
		sub("list", 2, adm, "List the current ACL rules in ACL config file format", cmdACLList),
		sub("load", 2, adm, "Reload the ACLs from the configured ACL file", cmdACLLoad),
		sub("log", -2, adm, "List latest events denied because of ACLs in place", cmdACLLog),
		sub("save", 2, adm, "Save the current ACL rules in the configured ACL file", cmdACLSave),
		sub("setuser", -3, adm, "Modify or create the rules for a specific ACL user", cmdACLSetuser),
		sub("users", 2, adm, "List the username of all the configured ACL rules", cmdACLUsers),
		sub("whoami", 2, std, "Return the name of the user associated to the current connection", cmdACLWhoami),
	)
}

func strs(argv [][]byte) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = string(a)
	}
	return out
}

// cmdACLSetuser: ACL SETUSER name [rule …] — all rules or none.
func cmdACLSetuser(s *Server, cl *client, argv [][]byte) {
	if _, err := s.auth.acl.SetUser(string(argv[2]), strs(argv[3:])); err != nil {
		cl.w.Error("ERR " + err.Error())
		return
	}
	s.syncAuth()
	s.killRevokedSubscribers(cl) // pubsub.go
	s.publishACL()
	cl.w.OK()
}

// cmdACLDeluser: ACL DELUSER name [name …] — the number deleted; their
// connections are closed (the caller's after this reply).
func cmdACLDeluser(s *Server, cl *client, argv [][]byte) {
	for _, a := range argv[2:] {
		if string(a) == acl.DefaultName {
			cl.w.Error(errDelDefault)
			return
		}
	}
	var gone []*acl.User
	for _, a := range argv[2:] {
		if u := s.auth.acl.DelUser(string(a)); u != nil {
			gone = append(gone, u)
		}
	}
	cl.w.Int(int64(len(gone)))
	if len(gone) > 0 {
		s.publishACL()
	}
	s.dropUsers(cl, gone)
}

// writeSelector writes a selector's commands, keys and channels fields.
func writeSelector(cl *client, sel *acl.Selector) {
	cl.w.BulkString("commands")
	cl.w.BulkString(sel.CommandRules())
	cl.w.BulkString("keys")
	cl.w.BulkString(sel.KeysString())
	cl.w.BulkString("channels")
	cl.w.BulkString(sel.ChannelsString())
}

// cmdACLGetuser: ACL GETUSER name — a map of flags, passwords, the root
// selector's commands/keys/channels, and the other selectors; null for an
// unknown user.
func cmdACLGetuser(s *Server, cl *client, argv [][]byte) {
	u := s.auth.acl.User(string(argv[2]))
	if u == nil {
		cl.w.Null()
		return
	}
	cl.w.Map(6)
	cl.w.BulkString("flags")
	flags := u.Flags()
	cl.w.Set(len(flags))
	for _, f := range flags {
		cl.w.BulkString(f)
	}
	cl.w.BulkString("passwords")
	cl.w.Array(len(u.Passwords()))
	for _, p := range u.Passwords() {
		cl.w.BulkString(p)
	}
	writeSelector(cl, u.Selector(0))
	cl.w.BulkString("selectors")
	cl.w.Array(u.NumSelectors())
	for i := 1; i <= u.NumSelectors(); i++ {
		cl.w.Map(3)
		writeSelector(cl, u.Selector(i))
	}
}

// cmdACLList: ACL LIST — "user <name> <rules>" per user, in name order.
func cmdACLList(s *Server, cl *client, argv [][]byte) {
	lines := s.auth.acl.Lines()
	cl.w.Array(len(lines))
	for _, l := range lines {
		cl.w.BulkString(l)
	}
}

// cmdACLUsers: ACL USERS — the user names in order.
func cmdACLUsers(s *Server, cl *client, argv [][]byte) {
	us := s.auth.acl.Users()
	cl.w.Array(len(us))
	for _, u := range us {
		cl.w.BulkString(u.Name)
	}
}

// cmdACLWhoami: ACL WHOAMI — the connection's user.
func cmdACLWhoami(s *Server, cl *client, argv [][]byte) {
	cl.w.BulkString(cl.user.Name)
}

// cmdACLCat: ACL CAT [category] — the categories, or the commands (and
// subcommands) of one.
func cmdACLCat(s *Server, cl *client, argv [][]byte) {
	if len(argv) == 2 {
		cl.w.Array(len(engine.CategoryNames))
		for _, n := range engine.CategoryNames {
			cl.w.BulkString(n)
		}
		return
	}
	if len(argv) != 3 {
		cl.w.Error(subSyntaxErr(argv))
		return
	}
	cat := engine.CategoryByName(string(argv[2]))
	if cat == 0 {
		name := string(argv[2])
		if len(name) > 128 {
			name = name[:128]
		}
		cl.w.Error("ERR Unknown category '" + name + "'")
		return
	}
	var names []string
	for _, c := range engine.Commands() {
		for _, x := range append([]*engine.Command{c}, c.Subs...) {
			if x.Cats&cat != 0 {
				names = append(names, x.Name)
			}
		}
	}
	cl.w.Array(len(names))
	for _, n := range names {
		cl.w.BulkString(n)
	}
}

// subSyntaxErr is Redis's addReplySubcommandSyntaxError text.
func subSyntaxErr(argv [][]byte) string { return engine.ErrSubcommandSyntax(argv) }

// cmdACLGenpass: ACL GENPASS [bits] — a random password of bits (256 by
// default) as hex.
func cmdACLGenpass(s *Server, cl *client, argv [][]byte) {
	bits := int64(256)
	if len(argv) == 3 {
		n, ok := engine.ParseIntB(argv[2])
		if !ok {
			cl.w.Error(engine.ErrNotInt)
			return
		}
		bits = n
	} else if len(argv) > 3 {
		cl.w.Error(subSyntaxErr(argv))
		return
	}
	if bits <= 0 || bits > 4096 {
		cl.w.Error(errGenpassBits)
		return
	}
	chars := (bits + 3) / 4
	raw := make([]byte, (chars+1)/2)
	if _, err := cryptorand.Read(raw); err != nil {
		cl.w.Error("ERR " + err.Error())
		return
	}
	cl.w.BulkString(hex.EncodeToString(raw)[:chars])
}

// cmdACLLog: ACL LOG [count | RESET] — the newest count (10) entries.
func cmdACLLog(s *Server, cl *client, argv [][]byte) {
	count := int64(10)
	if len(argv) == 3 {
		if engine.EqualFold(argv[2], "reset") {
			s.auth.log.entries = nil
			cl.w.OK()
			return
		}
		n, ok := engine.ParseIntB(argv[2])
		if !ok {
			cl.w.Error(engine.ErrNotInt)
			return
		}
		count = max(n, 0)
	} else if len(argv) > 3 {
		cl.w.Error(subSyntaxErr(argv))
		return
	}
	es := s.auth.log.entries
	count = min(count, int64(len(es)))
	now := time.Now().UnixMilli()
	cl.w.Array(int(count))
	for _, e := range es[:count] {
		cl.w.Map(7)
		cl.w.BulkString("count")
		cl.w.Int(e.count)
		cl.w.BulkString("reason")
		cl.w.BulkString(reasonName(e.reason))
		cl.w.BulkString("context")
		cl.w.BulkString(e.context)
		cl.w.BulkString("object")
		cl.w.BulkString(e.object)
		cl.w.BulkString("username")
		cl.w.BulkString(e.user)
		cl.w.BulkString("age-seconds")
		cl.w.Double(float64(now-e.ctime) / 1000)
		cl.w.BulkString("client-info")
		cl.w.BulkString(e.clientInfo)
	}
}

func reasonName(r acl.Result) string {
	switch r {
	case acl.DeniedCmd:
		return "command"
	case acl.DeniedKey:
		return "key"
	case acl.DeniedChannel:
		return "channel"
	case acl.DeniedAuth:
		return "auth"
	}
	return "unknown"
}

// cmdACLDryrun: ACL DRYRUN user command [arg …] — OK when the user may run
// it, else a bulk string saying why.
func cmdACLDryrun(s *Server, cl *client, argv [][]byte) {
	u := s.auth.acl.User(string(argv[2]))
	if u == nil {
		cl.w.Error("ERR User '" + string(argv[2]) + "' not found")
		return
	}
	args := argv[3:]
	cmd := engine.Lookup(args[0])
	if cmd != nil && len(cmd.Subs) > 0 && len(args) >= 2 {
		cmd = cmd.Sub(args[1])
	}
	if cmd == nil {
		cl.w.Error("ERR Command '" + string(args[0]) + "' not found")
		return
	}
	if !engine.ArityOK(cmd.Arity, len(args)) {
		cl.w.Error(engine.ErrWrongArgs(cmd.Name))
		return
	}
	res, pos := u.Check(cmd, args)
	switch res {
	case acl.OK:
		cl.w.OK()
	case acl.DeniedKey:
		cl.w.BulkString("This user has no permissions to access the '" + string(args[pos]) + "' key")
	case acl.DeniedChannel:
		cl.w.BulkString("This user has no permissions to access the '" + string(args[pos]) + "' channel")
	default:
		cl.w.BulkString("This user has no permissions to run the '" + cmd.Name + "' command")
	}
}

// cmdACLLoad: ACL LOAD — replace every user with the aclfile's; on any
// error nothing changes. Connections of users that were replaced are
// closed (the default user's stay).
func cmdACLLoad(s *Server, cl *client, argv [][]byte) {
	if s.auth.file == "" {
		cl.w.Error(errNoACLFile)
		return
	}
	b, err := os.ReadFile(s.auth.file)
	if err != nil {
		cl.w.Error("ERR Error loading ACLs, opening file '" + s.auth.file + "': " + osErrText(err))
		return
	}
	a, err := acl.Load(string(b), s.auth.file)
	if err != nil {
		cl.w.Error("ERR " + err.Error())
		return
	}
	gone := s.auth.acl.Replace(a)
	s.syncAuth()
	s.killRevokedSubscribers(cl)
	s.publishACL()
	cl.w.OK()
	s.dropUsers(cl, gone)
}

// cmdACLSave: ACL SAVE — write the users to the aclfile (through a
// temporary file renamed over it).
func cmdACLSave(s *Server, cl *client, argv [][]byte) {
	if s.auth.file == "" {
		cl.w.Error(errNoACLFile)
		return
	}
	if err := writeFileAtomic(s.auth.file, s.auth.acl.Text()); err != nil {
		s.log.Warn("ACL SAVE failed", "err", err)
		cl.w.Error(errACLSave)
		return
	}
	cl.w.OK()
}

// cmdACLHelp: ACL HELP.
func cmdACLHelp(s *Server, cl *client, argv [][]byte) {
	help(cl,
		"ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"CAT [<category>]",
		"    List all commands that belong to <category>, or all command categories",
		"    when no category is specified.",
		"DELUSER <username> [<username> ...]",
		"    Delete a list of users.",
		"DRYRUN <username> <command> [<arg> ...]",
		"    Returns whether the user can execute the given command without executing the command.",
		"GETUSER <username>",
		"    Get the user's details.",
		"GENPASS [<bits>]",
		"    Generate a secure 256-bit user password. The optional `bits` argument can",
		"    be used to specify a different size.",
		"LIST",
		"    Show users details in config file format.",
		"LOAD",
		"    Reload users from the ACL file.",
		"LOG [<count> | RESET]",
		"    Show the ACL log entries.",
		"SAVE",
		"    Save the current config to the ACL file.",
		"SETUSER <username> <attribute> [<attribute> ...]",
		"    Create or modify a user with the specified attributes.",
		"USERS",
		"    List all the registered usernames.",
		"WHOAMI",
		"    Return the current connection username.",
		"HELP",
		"    Prints this help.",
	)
}
