package server

import "limitdb/engine"

// CLUSTER without cluster mode (cluster-enabled no, the default): the
// Raft cluster is one replicated data set, not shards (INFO cluster says
// cluster_enabled:0, also on a Raft node), so every CLUSTER subcommand,
// and ASKING, answer what Redis 7.0 answers with cluster support
// disabled. Tools that probe it (redis_exporter reads INFO's
// cluster_enabled first; cluster-aware clients send CLUSTER SLOTS or
// CLUSTER SHARDS) fall back to a standalone server, as they do against
// redis-server. With cluster-enabled yes the subcommands are
// cluster_mode_cmds.go's.

const errClusterDisabled = "ERR This instance has cluster support disabled"

// clusterSubs are Redis 7.0's CLUSTER subcommands: name, arity, flags.
var clusterSubs = []struct {
	name  string
	arity int
	flags string
}{
	{"addslots", -3, "admin stale"}, {"addslotsrange", -4, "admin stale"}, {"bumpepoch", 2, "admin stale"},
	{"count-failure-reports", 3, "admin stale"}, {"countkeysinslot", 3, "stale"}, {"delslots", -3, "admin stale"},
	{"delslotsrange", -4, "admin stale"}, {"failover", -2, "admin stale"}, {"flushslots", 2, "admin stale"},
	{"forget", 3, "admin stale"}, {"getkeysinslot", 4, "stale"}, {"help", 2, "loading stale"}, {"info", 2, "stale"},
	{"keyslot", 3, "stale"}, {"links", 2, "stale"}, {"meet", -4, "admin stale"}, {"migration", -4, "admin stale"}, {"myid", 2, "stale"},
	{"nodes", 2, "stale"}, {"replicas", 3, "admin stale"}, {"replicate", 3, "admin stale"},
	{"reset", -2, "admin stale noscript"}, {"saveconfig", 2, "admin stale"}, {"set-config-epoch", 3, "admin stale"},
	{"setslot", -4, "admin stale"}, {"shards", 2, "stale"}, {"slaves", 3, "admin stale"}, {"slots", 2, "stale"},
}

func init() {
	subs := make([]connSub, len(clusterSubs))
	for i, c := range clusterSubs {
		subs[i] = connSub{&engine.Command{Name: c.name, Arity: c.arity, Flags: c.flags, Group: "cluster", Since: "3.0.0",
			Summary: "A Redis Cluster command (cluster-enabled yes)."}, clusterSub(c.name)}
	}
	registerConn(&engine.Command{Name: "cluster", Arity: -2, Group: "cluster", Since: "3.0.0", Summary: "A container for Redis Cluster commands."}, nil, subs...)
}

// clusterSub is the handler of CLUSTER name: cluster_mode_cmds.go's in
// cluster mode, the disabled error otherwise.
func clusterSub(name string) connHandler {
	h := clusterModeCmds[name]
	if h == nil {
		h = cmdClusterUnsupported
	}
	return func(s *Server, cl *client, argv [][]byte) {
		if !s.clusterMode {
			cl.w.Error(errClusterDisabled)
			return
		}
		h(s, cl, argv)
	}
}
