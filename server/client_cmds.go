package server

import (
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"limitdb/acl"
	"limitdb/engine"
)

func init() {
	sub := func(name string, arity int, flags, summary string, h connHandler) connSub {
		return connSub{&engine.Command{Name: name, Arity: arity, Flags: flags, Group: "connection", Since: "2.4.0", Summary: summary}, h}
	}
	registerConn(&engine.Command{Name: "client", Arity: -2, Group: "connection", Since: "2.4.0", Summary: "A container for client connection commands."}, nil,
		sub("id", 2, "noscript loading stale", "Returns the unique client ID of the connection.", cmdClientID),
		sub("getname", 2, "noscript loading stale", "Returns the name of the connection.", cmdClientGetname),
		sub("setname", 3, "noscript loading stale", "Sets the connection name.", cmdClientSetname),
		sub("setinfo", 4, "noscript loading stale", "Sets information specific to the client or connection.", cmdClientSetinfo),
		sub("list", -2, "admin noscript loading stale", "Lists open connections.", cmdClientList),
		sub("info", 2, "noscript loading stale", "Returns information about the connection.", cmdClientInfo),
		sub("no-evict", 3, "admin noscript loading stale", "Sets the client eviction mode of the connection.", cmdClientNoEvict),
		sub("no-touch", 3, "noscript loading stale", "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.", cmdClientNoTouch),
		sub("kill", -3, "admin noscript loading stale", "Terminates open connections.", cmdClientKill),
		sub("reply", 3, "noscript loading stale", "Instructs the server whether to reply to commands.", cmdClientReply), // pubsub_cmds.go
		sub("unblock", -3, "admin noscript loading stale", "Unblocks a client blocked by a blocking command from a different connection.", cmdClientUnblock),
		sub("help", 2, "loading stale", "Returns helpful text about the different subcommands.", cmdClientHelp),
	)
}

// cmdClientID: CLIENT ID — this connection's id (integer).
func cmdClientID(s *Server, cl *client, argv [][]byte) { cl.w.Int(cl.id) }

// cmdClientGetname: CLIENT GETNAME — the name, or null when none is set.
func cmdClientGetname(s *Server, cl *client, argv [][]byte) {
	if cl.name == "" {
		cl.w.Null()
		return
	}
	cl.w.BulkString(cl.name)
}

// cmdClientSetname: CLIENT SETNAME name — OK; an empty name clears it.
// Names may hold only '!'..'~'.
func cmdClientSetname(s *Server, cl *client, argv [][]byte) {
	if !validClientName(argv[2]) {
		cl.w.Error(errBadClientName)
		return
	}
	cl.name = string(argv[2])
	cl.w.OK()
}

// cmdClientSetinfo: CLIENT SETINFO LIB-NAME|LIB-VER value — Redis 7.2's
// command (7.0.15 lacks it; clients send it on connect and ignore the
// error, but it is cheaper to accept it). Values take the client-name
// character rules.
func cmdClientSetinfo(s *Server, cl *client, argv [][]byte) {
	attr := strings.ToLower(string(argv[2]))
	if attr != "lib-name" && attr != "lib-ver" {
		cl.w.Error("ERR Unrecognized option '" + string(argv[2]) + "'")
		return
	}
	if !validClientName(argv[3]) {
		cl.w.Error("ERR " + attr + " cannot contain spaces, newlines or special characters.")
		return
	}
	if attr == "lib-name" {
		cl.lib = string(argv[3])
	} else {
		cl.libV = string(argv[3])
	}
	cl.w.OK()
}

// onOff parses ON|OFF (any case).
func onOff(b []byte) (v, ok bool) {
	switch strings.ToLower(string(b)) {
	case "on":
		return true, true
	case "off":
		return false, true
	}
	return false, false
}

// cmdClientNoEvict: CLIENT NO-EVICT ON|OFF — OK, syntax error otherwise.
// limitdb never evicts clients; the flag only shows in CLIENT LIST (e).
func cmdClientNoEvict(s *Server, cl *client, argv [][]byte) {
	v, ok := onOff(argv[2])
	if !ok {
		cl.w.Error(engine.ErrSyntax)
		return
	}
	cl.noEvict = v
	cl.w.OK()
}

// cmdClientNoTouch: CLIENT NO-TOUCH ON|OFF (Redis 7.2; 7.0.15 lacks it) —
// OK, syntax error otherwise. Shows as flag T in CLIENT LIST.
func cmdClientNoTouch(s *Server, cl *client, argv [][]byte) {
	v, ok := onOff(argv[2])
	if !ok {
		cl.w.Error(engine.ErrSyntax)
		return
	}
	cl.noTouch = v
	cl.w.OK()
}

// sortedClients returns the connected clients in id order.
func (s *Server) sortedClients() []*client {
	s.mu.Lock()
	out := make([]*client, 0, len(s.clients))
	for _, c := range s.clients {
		out = append(out, c)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// validClientType reports whether t names a Redis client type, and
// which: "normal", "pubsub", or "" for the replication types, which no
// limitdb client has.
func validClientType(t string) (typ string, ok bool) {
	switch t = strings.ToLower(t); t {
	case "normal", "pubsub":
		return t, true
	case "master", "replica", "slave":
		return "", true
	}
	return "", false
}

// clientType is Redis's getClientType for limitdb's clients: pubsub while
// subscribed to anything, else normal.
func (c *client) clientType() string {
	if c.subscribed() {
		return "pubsub"
	}
	return "normal"
}

// cmdClientList: CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id …]
// — one line per client (see clientInfo), as a bulk string (verbatim in
// RESP3). Errors: unknown type, "Invalid client ID", syntax error.
func cmdClientList(s *Server, cl *client, argv [][]byte) {
	var ids map[int64]bool
	typ := ""
	onlyNone := false
	if len(argv) == 4 && strings.EqualFold(string(argv[2]), "type") {
		t, ok := validClientType(string(argv[3]))
		if !ok {
			cl.w.Error("ERR Unknown client type '" + string(argv[3]) + "'")
			return
		}
		typ, onlyNone = t, t == ""
	} else if len(argv) > 3 && strings.EqualFold(string(argv[2]), "id") {
		ids = map[int64]bool{}
		for _, a := range argv[3:] {
			n, ok := engine.ParseIntB(a)
			if !ok || n <= 0 {
				cl.w.Error(errInvalidID)
				return
			}
			ids[n] = true
		}
	} else if len(argv) != 2 {
		cl.w.Error(engine.ErrSyntax)
		return
	}
	var b []byte
	if !onlyNone {
		now := time.Now()
		for _, c := range s.sortedClients() {
			if ids != nil && !ids[c.id] || typ != "" && c.clientType() != typ {
				continue
			}
			if c == cl {
				b = c.appendInfoReq(b, now, true, requestLen(argv))
			} else {
				b = c.appendInfo(b, now, false)
			}
		}
	}
	cl.w.Verbatim(string(b))
}

// cmdClientInfo: CLIENT INFO — this client's CLIENT LIST line.
func cmdClientInfo(s *Server, cl *client, argv [][]byte) {
	cl.w.Verbatim(string(cl.appendInfoReq(nil, time.Now(), true, requestLen(argv))))
}

// requestLen is the size of argv as a multibulk request: Redis's qbuf
// still holds the command being executed (the query buffer is trimmed
// after it runs), so CLIENT LIST shows qbuf=26 for itself.
func requestLen(argv [][]byte) int64 {
	n := int64(len(strconv.Itoa(len(argv)))) + 3
	for _, a := range argv {
		n += int64(len(strconv.Itoa(len(a)))+3) + int64(len(a)) + 2
	}
	return n
}

// appendInfo appends the CLIENT LIST line of c with Redis 7.0's fields
// (plus 7.2's lib-name and lib-ver at the end). Memory fields are what
// limitdb can tell: query buffer bytes and output buffer bytes, for the
// calling client only (self): another client's buffers belong to its own
// goroutine, which touches them outside the engine lock; unsent replies
// (oll, omem) for any client, from its output queue (output.go).
func (c *client) appendInfo(b []byte, now time.Time, self bool) []byte {
	return c.appendInfoReq(b, now, self, 0)
}

// appendInfoReq is appendInfo for the calling client running a request
// of req bytes, which its qbuf counts.
func (c *client) appendInfoReq(b []byte, now time.Time, self bool, req int64) []byte {
	str := func(k, v string) {
		b = append(b, k...)
		b = append(b, '=')
		b = append(b, v...)
		b = append(b, ' ')
	}
	num := func(k string, v int64) {
		b = append(b, k...)
		b = append(b, '=')
		b = strconv.AppendInt(b, v, 10)
		b = append(b, ' ')
	}
	num("id", c.id)
	str("addr", c.nc.RemoteAddr().String())
	str("laddr", c.nc.LocalAddr().String())
	num("fd", connFD(c.nc))
	str("name", c.name)
	num("age", int64(now.Sub(c.born)/time.Second))
	num("idle", int64(now.Sub(c.last)/time.Second))
	flags := ""
	if c.subscribed() {
		flags += "P"
	}
	if c.tx.Active {
		flags += "x"
	}
	if c.blk != nil || c.fwdBlk != nil && c.fwdBlk.blocked.Load() {
		flags += "b"
	}
	if isUnixConn(c.nc) {
		flags += "U"
	}
	if c.noEvict {
		flags += "e"
	}
	if c.noTouch {
		flags += "T"
	}
	if flags == "" {
		flags = "N"
	}
	str("flags", flags)
	num("db", int64(c.db))
	var sub, psub, ssub int
	if c.ps != nil {
		sub, psub, ssub = len(c.ps.chans), len(c.ps.pats), len(c.ps.shard)
	}
	num("sub", int64(sub))
	num("psub", int64(psub))
	num("ssub", int64(ssub))
	multi := int64(-1)
	if c.tx.Active {
		multi = int64(len(c.tx.Queue))
	}
	num("multi", multi)
	var qbuf, obl, omem int64
	if self {
		qbuf, obl, omem = int64(c.rd.Buffered())+req, int64(len(c.w.B)), int64(cap(c.w.B))
	}
	num("qbuf", qbuf)
	num("qbuf-free", 0)
	num("argv-mem", 0)
	num("multi-mem", 0)
	num("rbs", 0)
	num("rbp", 0)
	num("obl", obl)
	oll, pending := c.outputStats()
	num("oll", oll)
	num("omem", pending)
	num("tot-mem", qbuf+omem+pending)
	if pending > 0 {
		str("events", "rw")
	} else {
		str("events", "r")
	}
	cmd := c.lastC
	if cmd == "" {
		cmd = "NULL"
	}
	str("cmd", cmd)
	str("user", c.user.Name)
	num("redir", -1)
	num("resp", int64(c.w.Proto))
	str("lib-name", c.lib)
	b = append(b, "lib-ver="...)
	b = append(b, c.libV...)
	return append(b, '\n')
}

// connFD returns the socket's file descriptor, or -1.
func connFD(nc net.Conn) int64 {
	tc, ok := rawConn(nc)
	if !ok {
		return -1
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := int64(-1)
	rc.Control(func(f uintptr) { fd = int64(f) })
	return fd
}

// cmdClientKill: CLIENT KILL ip:port (old form: OK, or "No such client")
// or CLIENT KILL <filter> <value> … with filters ID, ADDR, LADDR, TYPE,
// USER, SKIPME yes|no (default yes) — the number of clients closed.
// Errors as Redis 7.0: "client-id should be greater than 0", "Unknown
// client type", "No such user", syntax error for odd or unknown filters.
func cmdClientKill(s *Server, cl *client, argv [][]byte) {
	if len(argv) == 3 {
		addr := string(argv[2])
		for _, c := range s.sortedClients() {
			if c.nc.RemoteAddr().String() == addr {
				s.kill(cl, c)
				cl.w.OK()
				return
			}
		}
		cl.w.Error(errNoSuchClient)
		return
	}
	var (
		id          int64
		addr, laddr string
		user        *acl.User
		typ         = ""
		skipme      = true
	)
	for i := 2; i < len(argv); i += 2 {
		if i+1 >= len(argv) {
			cl.w.Error(engine.ErrSyntax)
			return
		}
		v := argv[i+1]
		switch strings.ToLower(string(argv[i])) {
		case "id":
			n, ok := engine.ParseIntB(v)
			if !ok || n <= 0 {
				cl.w.Error(errClientIDPos)
				return
			}
			id = n
		case "type":
			t, ok := validClientType(string(v))
			if !ok {
				cl.w.Error("ERR Unknown client type '" + string(v) + "'")
				return
			}
			typ = t
			if t == "" {
				typ = "replication" // no client has it
			}
		case "addr":
			addr = string(v)
		case "laddr":
			laddr = string(v)
		case "user":
			u := s.auth.acl.User(string(v))
			if u == nil {
				cl.w.Error("ERR No such user '" + string(v) + "'")
				return
			}
			user = u
		case "skipme":
			switch strings.ToLower(string(v)) {
			case "yes":
				skipme = true
			case "no":
				skipme = false
			default:
				cl.w.Error(engine.ErrSyntax)
				return
			}
		default:
			cl.w.Error(engine.ErrSyntax)
			return
		}
	}
	killed := int64(0)
	for _, c := range s.sortedClients() {
		if id != 0 && c.id != id {
			continue
		}
		if user != nil && c.user != user {
			continue
		}
		if addr != "" && c.nc.RemoteAddr().String() != addr {
			continue
		}
		if laddr != "" && c.nc.LocalAddr().String() != laddr {
			continue
		}
		if typ != "" && c.clientType() != typ {
			continue
		}
		if c == cl && skipme {
			continue
		}
		s.kill(cl, c)
		killed++
	}
	cl.w.Int(killed)
}

// kill closes c: at once for another client, after this reply for the
// calling one.
func (s *Server) kill(self, c *client) {
	if c == self {
		self.closeNow = true
		return
	}
	c.nc.Close()
}

// cmdClientHelp: CLIENT HELP — the subcommands limitdb has.
func cmdClientHelp(s *Server, cl *client, argv [][]byte) {
	help(cl,
		"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"GETNAME",
		"    Return the name of the current connection.",
		"ID",
		"    Return the ID of the current connection.",
		"INFO",
		"    Return information about the current client connection.",
		"KILL <ip:port>",
		"    Kill connection made from <ip:port>.",
		"KILL <option> <value> [<option> <value> [...]]",
		"    Kill connections. Options are:",
		"    * ADDR (<ip:port>|<unixsocket>:0)",
		"      Kill connections made from the specified address",
		"    * LADDR (<ip:port>|<unixsocket>:0)",
		"      Kill connections made to specified local address",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      Kill connections by type.",
		"    * USER <username>",
		"      Kill connections authenticated by <username>.",
		"    * SKIPME (YES|NO)",
		"      Skip killing current connection (default: yes).",
		"LIST [options ...]",
		"    Return information about client connections. Options:",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      Return clients of specified type.",
		"REPLY (ON|OFF|SKIP)",
		"    Control the replies sent to the current connection.",
		"SETNAME <name>",
		"    Assign the name <name> to the current connection.",
		"UNBLOCK <clientid> [TIMEOUT|ERROR]",
		"    Unblock the specified blocked client.",
		"SETINFO <option> <value>",
		"    Set client meta attr. Options are:",
		"    * LIB-NAME: the client lib name.",
		"    * LIB-VER: the client lib version.",
		"NO-EVICT (ON|OFF)",
		"    Protect current client connection from eviction.",
		"NO-TOUCH (ON|OFF)",
		"    Will not touch LRU/LFU stats when this mode is on.",
		"HELP",
		"    Prints this help.",
	)
}
