package server

import (
	"time"

	"limitdb/acl"
	"limitdb/engine"
)

// aclLog is the ACL LOG: denied commands, keys and authentications, newest
// first. Like Redis, a new event equal to one of the 10 newest (same
// reason, context, object and user, within 60 s) bumps its count instead
// of adding an entry. It is node-local (it holds times and client
// details) and never replicated.
type aclLog struct {
	entries []*aclLogEntry
	max     int // acllog-max-len
}

type aclLogEntry struct {
	count                 int64
	reason                acl.Result
	context, object, user string
	ctime                 int64 // unix ms of the last event
	clientInfo            string
}

const aclLogGroupMs = 60000

// denied logs a refused command: the object is the command's name, or
// the key (channel) at argv[pos].
func (s *Server) denied(cl *client, res acl.Result, ctx string, cmd *engine.Command, argv [][]byte, pos int) {
	obj := cmd.Name
	if res == acl.DeniedKey || res == acl.DeniedChannel {
		obj = string(argv[pos])
	}
	s.logDenied(cl, res, ctx, cl.user.Name, obj)
}

func (s *Server) logDenied(cl *client, res acl.Result, ctx, user, obj string) {
	now := time.Now()
	info := cl.appendInfo(nil, now, true)
	e := &aclLogEntry{count: 1, reason: res, context: ctx, object: obj, user: user, ctime: now.UnixMilli(), clientInfo: string(info[:len(info)-1])}
	l := &s.auth.log
	for i, old := range l.entries {
		if i == 10 {
			break
		}
		d := old.ctime - e.ctime
		if d < 0 {
			d = -d
		}
		if old.reason == e.reason && old.context == e.context && old.object == e.object && old.user == e.user && d <= aclLogGroupMs {
			old.count++
			old.ctime, old.clientInfo = e.ctime, e.clientInfo
			copy(l.entries[1:i+1], l.entries[:i])
			l.entries[0] = old
			return
		}
	}
	l.entries = append([]*aclLogEntry{e}, l.entries...)
	if len(l.entries) > l.max {
		l.entries = l.entries[:l.max]
	}
}
