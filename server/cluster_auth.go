package server

import (
	"sync"

	"limitdb/acl"
	"limitdb/engine"
)

// linkAuth gives the cluster node what authenticates joins and the
// inter-node links (cluster/DESIGN.md, "Security"): whether this node's
// clients must authenticate, masteruser/masterauth (what this node
// authenticates with, as a Redis replica authenticates to its master),
// and the password hashes of the users a peer may authenticate as. Each
// is published by the change that makes it (syncAuth, CONFIG SET), so
// the node reads it without the engine lock, which a script may hold
// for seconds.
type linkAuth struct{ s *Server }

func (l linkAuth) LinkRequired() bool { return l.s.auth.needAuth.Load() }

func (l linkAuth) LinkCredentials() (user, pass string) {
	if c := l.s.auth.master.Load(); c != nil {
		return c[0], c[1]
	}
	return "", ""
}

func (l linkAuth) LinkKeys(user string) []string {
	if m := l.s.auth.linkKeys.Load(); m != nil {
		return (*m)[user]
	}
	return nil
}

// applyMasterAuth publishes masteruser and masterauth for the node's
// next join or link.
var applyMasterAuth = &applyFn{atLoad: true, run: func(s *Server) string {
	s.auth.master.Store(&[2]string{s.conf.params["masteruser"], s.conf.params["masterauth"]})
	return ""
}}

var raftJoinCmd = sync.OnceValue(func() *engine.Command {
	if c := engine.Lookup([]byte("raft")); c != nil {
		for _, sc := range c.Subs {
			if sc.Name == "raft|join" {
				return sc
			}
		}
	}
	return nil
})

// publishLinkKeys records, for each enabled user with passwords that may
// run RAFT JOIN, its password hashes: a peer proving one of them may open
// a link, which can do what a member can. Called by syncAuth.
func (s *Server) publishLinkKeys() {
	cmd := raftJoinCmd()
	m := map[string][]string{}
	if cmd != nil {
		argv := [][]byte{[]byte("raft"), []byte("join")}
		for _, u := range s.auth.acl.Users() {
			if !u.Enabled() || u.NoPass() || len(u.Passwords()) == 0 {
				continue
			}
			if res, _ := u.Check(cmd, argv); res == acl.OK {
				m[u.Name] = append([]string(nil), u.Passwords()...)
			}
		}
	}
	s.auth.linkKeys.Store(&m)
}
