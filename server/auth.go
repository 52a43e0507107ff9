package server

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"limitdb/acl"
	"limitdb/engine"
)

// Error texts of authentication and permission checks (Redis 7.0.15).
const (
	errNoAuth         = "NOAUTH Authentication required."
	errHelloNoAuth    = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
	errNoPermKey      = "NOPERM this user has no permissions to access one of the keys used as arguments"
	errNoPermChannel  = "NOPERM this user has no permissions to access one of the channels used as arguments"
	errExecACLChanged = "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: "
)

// authState is the server's access control: the users (one acl.ACL, the
// state a cluster replicates), whether connections must authenticate, and
// the ACL LOG. Guarded by the engine lock, except needAuth.
type authState struct {
	acl *acl.ACL
	// needAuth: the default user is off or has a password, so a
	// connection that has not authenticated may run only no_auth
	// commands. Atomic: the request reader reads it outside the lock.
	needAuth atomic.Bool
	// defaultNoPass: the default user has the nopass flag (on or off),
	// what protected mode asks; atomic for the accept loop.
	defaultNoPass atomic.Bool
	// defaultUser is the default user as of the last syncAuth, for new
	// connections: accepting must not wait for the engine lock, which a
	// running script holds (clients arriving then get BUSY, as in Redis).
	defaultUser atomic.Pointer[acl.User]
	// master is masteruser and masterauth; linkKeys the password hashes
	// of the users a peer node may authenticate as (cluster_auth.go)
	master   atomic.Pointer[[2]string]
	linkKeys atomic.Pointer[map[string][]string]
	log      aclLog
	file     string // aclfile, "" when none
	// confUsers: names defined by config file "user" lines (each once)
	confUsers map[string]bool
	// confDefault: the rules of a config file's "user default" line
	// (reset first), applied again once the whole file is loaded
	confDefault []string
}

func (s *Server) initAuth() {
	s.auth.acl = acl.New()
	s.auth.log.max = 128
	s.syncAuth()
}

// syncAuth recomputes what depends on the default user; called after
// every change to the users.
func (s *Server) syncAuth() {
	d := s.auth.acl.Default()
	s.auth.defaultUser.Store(d)
	s.auth.needAuth.Store(!d.NoPass() || !d.Enabled())
	s.auth.defaultNoPass.Store(d.NoPass())
	s.publishLinkKeys()
}

// defaultUserNoPass reports whether the default user has the nopass flag
// (Redis 7.0's protected-mode test, networking.c: it looks at nopass
// only, not at on/off). Safe without the engine lock.
func (s *Server) defaultUserNoPass() bool { return s.auth.defaultNoPass.Load() }

// setDefaultAuth makes cl the default user, authenticated when that user
// needs no password (a new connection, RESET). It reads only what
// syncAuth published, so it needs no lock.
func (s *Server) setDefaultAuth(cl *client) {
	cl.user = s.auth.defaultUser.Load()
	cl.authed = !s.auth.needAuth.Load()
}

// authenticate logs cl in as user/pass; on failure it logs an "auth"
// entry and returns false.
func (s *Server) authenticate(cl *client, argv0, user, pass []byte) bool {
	u := s.auth.acl.Authenticate(user, pass)
	if u == nil && s.follower() && !cl.readonly {
		// the users are cluster state: a follower that has not applied a
		// user just created elsewhere catches up before refusing (a read
		// barrier, as for any linearizable read)
		s.door.Unlock()
		_, err := s.node.ReadBarrier()
		s.door.Lock()
		if err == nil {
			u = s.auth.acl.Authenticate(user, pass)
		}
	}
	if u == nil {
		ctx := "toplevel"
		if cl.tx.Active || cl.ctx.InMulti {
			ctx = "multi"
		}
		s.logDenied(cl, acl.DeniedAuth, ctx, string(user), string(argv0))
		return false
	}
	cl.user, cl.authed = u, true
	return true
}

// setRequirePass applies requirepass: the default user's password (Redis 7
// keeps requirepass as an alias of it), nopass when empty.
var (
	applyRequirePass = &applyFn{atLoad: true, run: func(s *Server) string {
		s.setRequirePass(s.conf.params["requirepass"])
		return ""
	}}
	applyACLLogMax = &applyFn{atLoad: true, run: func(s *Server) string {
		s.setACLLogMax(s.conf.params["acllog-max-len"])
		return ""
	}}
)

func (s *Server) setRequirePass(v string) {
	s.auth.acl.SetDefaultPassword(v)
	s.syncAuth()
}

// setACLLogMax applies acllog-max-len (the log is trimmed at the next event).
func (s *Server) setACLLogMax(v string) {
	if n, err := strconv.Atoi(v); err == nil {
		s.auth.log.max = n
	}
}

// permitted checks cl's user against cmd; on denial it logs the event and
// returns Redis's NOPERM error (or "" after closing the connection of a
// deleted user). The common case, a user allowed everything, is one field
// read; a user with key patterns costs about 40 ns and no allocation
// (acl.BenchmarkCheckKeyPatterns).
func (s *Server) permitted(cl *client, cmd *engine.Command, argv [][]byte) (string, bool) {
	u := cl.user
	res, pos := u.Check(cmd, argv)
	if res == acl.OK {
		return "", true
	}
	if u.Gone() {
		cl.closeNow = true
		return "", false
	}
	ctx := "toplevel"
	if cl.tx.Active {
		ctx = "multi"
	}
	s.denied(cl, res, ctx, cmd, argv, pos)
	return noPermText(res, cmd), false
}

// noPermText is processCommand's NOPERM reply for an ACL refusal.
func noPermText(res acl.Result, cmd *engine.Command) string {
	switch res {
	case acl.DeniedKey:
		return errNoPermKey
	case acl.DeniedChannel:
		return errNoPermChannel
	}
	return "NOPERM this user has no permissions to run the '" + cmd.Name + "' command"
}

// execPermitted re-checks a queued command at EXEC time.
func (s *Server) execPermitted(cl *client, cmd *engine.Command, argv [][]byte) bool {
	res, pos := cl.user.Check(cmd, argv)
	if res == acl.OK {
		return true
	}
	s.denied(cl, res, "multi", cmd, argv, pos)
	why := "no permission to execute the command or subcommand"
	switch res {
	case acl.DeniedKey:
		why = "no permission to touch the specified keys"
	case acl.DeniedChannel:
		why = "no permission to access one of the channels used as arguments"
	}
	cl.w.Error(errExecACLChanged + why)
	s.countError([]byte(errExecACLChanged)) // an error reply, not a rejected call
	return false
}

// UserName is the ACL user cl runs as: the engine attributes policy
// changes to it (RL.POLICY's updated_by).
func (cl *client) UserName() string { return cl.user.Name }

// ScriptCheck implements engine.ScriptACL: a command called from a script
// is checked against the caller's user; the text is Redis's for scripts.
func (cl *client) ScriptCheck(cmd *engine.Command, argv [][]byte) string {
	res, pos := cl.user.Check(cmd, argv)
	if res == acl.OK {
		if cl.s.clusterMode {
			return cl.s.scriptSlotRefusal(cl, cmd, argv) // (cluster_slots_route.go)
		}
		return ""
	}
	cl.s.denied(cl, res, "lua", cmd, argv, pos)
	switch res {
	case acl.DeniedKey:
		return "ERR The user executing the script can't access at least one of the keys mentioned in the command arguments"
	case acl.DeniedChannel:
		return "ERR The user executing the script can't publish to the channel mentioned in the command"
	}
	return "ERR The user executing the script can't run this command or subcommand"
}

// ScriptAllowed implements engine.ScriptACL for redis.acl_check_cmd.
func (cl *client) ScriptAllowed(cmd *engine.Command, argv [][]byte) bool {
	res, _ := cl.user.Check(cmd, argv)
	return res == acl.OK
}

// UnrestrictedKeyAccess implements engine.ScriptACL for SORT's BY and
// GET patterns.
func (cl *client) UnrestrictedKeyAccess(cmd *engine.Command, argv [][]byte) bool {
	return cl.user.UnrestrictedKeyAccess(cmd, argv)
}

// dropUsers closes the connections authenticated as any of users (deleted
// or replaced): at once for other clients, after this reply for cl.
func (s *Server) dropUsers(cl *client, users []*acl.User) {
	if len(users) == 0 {
		return
	}
	for _, u := range users {
		u.MarkGone()
	}
	for _, c := range s.sortedClients() {
		for _, u := range users {
			if c.user == u {
				s.kill(cl, c)
			}
		}
	}
}

// applyUserDirective applies a config file "user <name> <rules…>" line
// (args are the words after "user") as Redis loads them: a name may
// appear once, "user default" starts from reset, and the errors are
// Redis's start-up texts ("Error in user declaration '<word>': <why>",
// pointing at the word Redis points at; an unknown command or category:
// "Error loading ACL rule '<rule>' for the user named '<name>': <why>").
func applyUserDirective(s *Server, args []string) error {
	if len(args) < 1 {
		return acl.Error("wrong number of arguments")
	}
	full := append([]string{"user"}, args...)
	name, rules := args[0], args[1:]
	if s.auth.confUsers[name] {
		return acl.Error("Error in user declaration '" + name + "': Duplicate user found. A user can only be defined once in config files")
	}
	shift := 0
	if name == acl.DefaultName {
		rules, shift = append([]string{"reset"}, rules...), 1
	}
	_, err := s.auth.acl.SetUser(name, rules)
	if re, ok := err.(*acl.RuleError); ok {
		if re.UnknownCommand() {
			return acl.Error("Error loading ACL rule '" + re.Rule + "' for the user named '" + name + "': " + string(re.Why))
		}
		// Redis indexes the whole line with the rule's index (its quirk)
		return acl.Error("Error in user declaration '" + full[min(re.Index-shift, len(full)-1)] + "': " + string(re.Why))
	}
	if err != nil {
		return err
	}
	if s.auth.confUsers == nil {
		s.auth.confUsers = map[string]bool{}
	}
	s.auth.confUsers[name] = true
	if name == acl.DefaultName {
		s.auth.confDefault = rules
	}
	s.syncAuth()
	return nil
}

// LoadACLFile loads the aclfile at start-up (Redis refuses to start when
// it cannot be loaded).
func (s *Server) LoadACLFile(path string) error {
	if len(s.auth.confUsers) > 0 {
		return acl.Error("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.")
	}
	s.auth.file = path
	s.conf.params["aclfile"] = path
	b, err := os.ReadFile(path)
	if err != nil {
		return acl.Error("Error loading ACLs, opening file '" + path + "': " + osErrText(err))
	}
	a, err := acl.Load(string(b), path)
	if err != nil {
		return err
	}
	s.auth.acl.Replace(a)
	s.syncAuth()
	return nil
}

// osErrText is strerror's text for a file error ("No such file or
// directory").
func osErrText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	t := err.Error()
	if t != "" {
		t = strings.ToUpper(t[:1]) + t[1:]
	}
	return t
}
