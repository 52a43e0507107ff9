package server

import (
	"strings"

	"limitdb/acl"
	"limitdb/engine"
)

// Error texts of the connection commands (Redis 7.0.15), not in engine/errors.go.
const (
	errNoProto        = "NOPROTO unsupported protocol version"
	errProtoNotInt    = "ERR Protocol version is not an integer or out of range"
	errWrongPass      = "WRONGPASS invalid username-password pair or user is disabled."
	errAuthNoPassword = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	errBadClientName  = "ERR Client names cannot contain spaces, newlines or special characters."
	errNoSuchClient   = "ERR No such client"
	errClientIDPos    = "ERR client-id should be greater than 0"
	errInvalidID      = "ERR Invalid client ID"
)

func init() {
	registerConn(&engine.Command{Name: "hello", Arity: -1, Flags: "noscript loading stale fast no_auth allow_busy", Group: "connection", Since: "6.0.0", Summary: "Handshakes with the Redis server."}, cmdHello)
	registerConn(&engine.Command{Name: "auth", Arity: -2, Flags: "noscript loading stale fast no_auth allow_busy", Group: "connection", Since: "1.0.0", Summary: "Authenticates the connection."}, cmdAuth)
	registerConn(&engine.Command{Name: "reset", Arity: 1, Flags: "noscript loading stale fast no_auth allow_busy", Group: "connection", Since: "6.2.0", Summary: "Resets the connection."}, cmdReset)
}

// cmdHello: HELLO [protover [AUTH username password] [SETNAME name]].
// Options are applied in order as Redis 7.0 does (AUTH authenticates and
// SETNAME validates and sets the name when reached); then the protocol
// switches and the reply is a map (a flat array in RESP2) of server,
// version, proto, id, mode, role, modules. Errors: "Protocol version is not
// an integer", NOPROTO for versions other than 2 and 3, "Syntax error in
// HELLO option", WRONGPASS, bad client name.
func cmdHello(s *Server, cl *client, argv [][]byte) {
	ver := int64(cl.w.Proto)
	if len(argv) >= 2 {
		v, ok := engine.ParseIntB(argv[1])
		if !ok {
			cl.w.Error(errProtoNotInt)
			return
		}
		if v < 2 || v > 3 {
			cl.w.Error(errNoProto)
			return
		}
		ver = v
	}
	for j := 2; j < len(argv); j++ {
		more := len(argv) - j - 1
		opt := argv[j]
		switch {
		case strings.EqualFold(string(opt), "auth") && more >= 2:
			if !s.authenticate(cl, argv[0], argv[j+1], argv[j+2]) {
				cl.w.Error(errWrongPass)
				return
			}
			j += 2
		case strings.EqualFold(string(opt), "setname") && more >= 1:
			if !validClientName(argv[j+1]) {
				cl.w.Error(errBadClientName)
				return
			}
			cl.name = string(argv[j+1])
			j++
		default:
			cl.w.Error("ERR Syntax error in HELLO option '" + string(opt) + "'")
			return
		}
	}
	if !cl.authed {
		cl.w.Error(errHelloNoAuth)
		return
	}
	cl.w.Proto = int(ver)
	cl.w.Map(7)
	cl.w.BulkString("server")
	cl.w.BulkString("redis")
	cl.w.BulkString("version")
	cl.w.BulkString(RedisVersion)
	cl.w.BulkString("proto")
	cl.w.Int(ver)
	cl.w.BulkString("id")
	cl.w.Int(cl.id)
	cl.w.BulkString("mode")
	cl.w.BulkString(s.redisMode())
	cl.w.BulkString("role")
	cl.w.BulkString("master")
	cl.w.BulkString("modules")
	cl.w.EmptyArray()
}

// cmdAuth: AUTH [username] password. The one-argument form logs in as
// the default user and is Redis's "called without any password
// configured" error while that user is nopass. More than two arguments is
// a syntax error; a wrong pair (or a user that is off) is WRONGPASS.
func cmdAuth(s *Server, cl *client, argv [][]byte) {
	user, pass := []byte(acl.DefaultName), argv[len(argv)-1]
	switch len(argv) {
	case 2:
		if s.auth.acl.Default().NoPass() {
			cl.w.Error(errAuthNoPassword)
			return
		}
	case 3:
		user = argv[1]
	default:
		cl.w.Error(engine.ErrSyntax)
		return
	}
	if s.authenticate(cl, argv[0], user, pass) {
		cl.w.OK()
	} else {
		cl.w.Error(errWrongPass)
	}
}

// cmdReset: RESET — discard MULTI, drop every WATCH, SELECT 0, back to
// RESP2, clear the name and the NO-EVICT/NO-TOUCH flags; replies +RESET
// (in the protocol the client had before).
func cmdReset(s *Server, cl *client, argv [][]byte) {
	if cl.tx.Active {
		cl.tx.Reset()
	}
	cl.tx.Unwatch()
	s.unwatchForwarded(cl)
	cl.db = 0
	cl.name = ""
	cl.noEvict = false
	cl.noTouch = false
	if cl.ps != nil {
		s.resetPubsub(cl) // pubsub_cmds.go
	}
	s.setDefaultAuth(cl)
	cl.w.Status("RESET")
	cl.w.Proto = 2
}

// validClientName: Redis accepts only the printable ASCII characters '!'..'~'.
func validClientName(b []byte) bool {
	for _, c := range b {
		if c < '!' || c > '~' {
			return false
		}
	}
	return true
}

// help writes a HELP reply: an array of simple strings.
func help(cl *client, lines ...string) {
	cl.w.Array(len(lines))
	for _, l := range lines {
		cl.w.Status(l)
	}
}
