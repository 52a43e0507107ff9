package server

import (
	"strconv"
	"strings"

	"limitdb/acl"
	"limitdb/engine"
	"limitdb/resp"
)

// Cluster-wide settings (engine/settings.go): the ACL and the encoding
// thresholds are the same on every node of a cluster. On the executing
// node, a change (ACL SETUSER/DELUSER/LOAD, CONFIG SET requirepass or a
// threshold) is recorded as a LIMITDB.ACL / LIMITDB.CONFIG unit; a
// follower forwards such commands to the leader and adopts what it
// applies; a new leader publishes both when it starts serving, so a new
// cluster takes its first leader's configuration.

// sharedConfig reports whether a CONFIG SET argv names cluster-wide
// parameters, and whether it mixes them with node-local ones.
func sharedConfig(argv [][]byte) (shared, mixed bool) {
	local := false
	for i := 2; i+1 < len(argv); i += 2 {
		n := strings.ToLower(string(argv[i]))
		if engine.SharedParams[n] || n == "requirepass" {
			shared = true
		} else {
			local = true
		}
	}
	return shared, shared && local
}

const errMixedConfig = "ERR CONFIG SET cannot change cluster-wide parameters (requirepass, encoding thresholds, proto-max-bulk-len, notify-keyspace-events) together with node-local ones on a cluster node"

// changesShared reports whether a connection command changes cluster-wide
// settings (a follower forwards it to the leader).
func changesShared(cmd *engine.Command, argv [][]byte) bool {
	switch cmd.Name {
	case "acl|setuser", "acl|deluser", "acl|load":
		return true
	case "config|set":
		shared, _ := sharedConfig(argv)
		return shared
	}
	return clusterChangesSlots(cmd.Name) // (cluster_mode_cmds.go)
}

// adoptACL is the engine's Settings.OnACL: the users become text's.
func (s *Server) adoptACL(text string) error {
	if text == s.auth.acl.Text() {
		return nil
	}
	a, err := acl.Load(text, "replicated")
	if err != nil {
		return err
	}
	gone := s.auth.acl.Adopt(a)
	s.syncAuth()
	s.dropUsers(nil, gone)
	s.killRevokedSubscribers(nil)
	return nil
}

// adoptConfig is the engine's Settings.OnConfig: CONFIG GET shows the
// replicated value (the engine applied it already).
func (s *Server) adoptConfig(name, value string) {
	p := findParam(name)
	if p == nil {
		return
	}
	if p.name == notifyParam {
		value = adoptNotify(value) // the engine has its bits already
	}
	s.conf.params[p.name] = value
	if p.name == "proto-max-bulk-len" {
		if n, err := strconv.ParseInt(value, 10, 64); err == nil {
			s.limits.MaxBulk.Store(n)
		}
	}
}

// publish records a settings effect when this node executes for a
// cluster (the lock is held). Without a node there is no log to carry it.
func (s *Server) publish(argv ...[]byte) {
	if !s.gated() {
		return
	}
	now, _ := s.door.Now()
	c := engine.Ctx{E: s.eng, DB: s.eng.DBs[0], W: resp.NewWriter(), Now: now}
	cmd := c.Resolve(argv)
	if cmd == nil {
		return
	}
	s.door.Exec(&c, cmd, argv)
	if len(c.W.B) > 0 && c.W.B[0] == '-' {
		s.log.Error("publishing cluster-wide settings failed", "err", strings.TrimSpace(string(c.W.B)))
	}
}

// publishACL records the users after a change.
func (s *Server) publishACL() {
	s.publish([]byte("LIMITDB.ACL"), []byte(s.auth.acl.Text()))
}

// publishConfig records the cluster-wide parameters' values.
func (s *Server) publishConfig() {
	argv := [][]byte{[]byte("LIMITDB.CONFIG")}
	for _, p := range params {
		if engine.SharedParams[p.name] {
			v := s.conf.params[p.name]
			if p.name == notifyParam {
				v = configNotifyShared(v)
			}
			argv = append(argv, []byte(p.name), []byte(v))
		}
	}
	s.publish(argv...)
}

// PublishSettings implements cluster.Executor: a leader that starts
// serving records both, so every node holds its cluster's.
func (s *Server) PublishSettings() {
	s.publishConfig()
	s.publishACL()
}
