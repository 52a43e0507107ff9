package server

import (
	"crypto/sha1"
	"encoding/hex"
	"net"
	"strconv"

	"limitdb/cluster"
)

// Cluster mode (cluster-enabled yes, issue 22): limitdb speaks Redis
// Cluster's protocol over Raft groups. A group is one shard: its leader
// is the shard's master and its other members are the master's replicas;
// the slots it owns (CLUSTER ADDSLOTS, replicated state in the engine:
// engine/cluster_slots.go) are served by it. The other groups of its
// cluster, and the slots they own, are in the node's map
// (cluster_map.go); a slot no group owns is unassigned. Keyed commands
// are checked against the slots before they run (cluster_slots_route.go).
//
// Node ids are 40 hex digits, as Redis's: the SHA-1 of the Raft server
// id (node-id, kept in the node's dir when generated), so every member
// names every other the same way without exchanging ids, and a node
// keeps its id across restarts. A server without a Raft node (appendonly
// no) keeps nothing across restarts, its id included: it is its run_id.

const (
	errSelectCluster = "ERR SELECT is not allowed in cluster mode"
)

// enableClusterMode reads cluster-enabled once, at start-up (LoadConfig,
// engine lock held): the engine starts its per-slot bookkeeping before
// any key exists.
func (s *Server) enableClusterMode() {
	if s.conf.params["cluster-enabled"] != "yes" {
		return
	}
	s.clusterMode = true
	s.eng.EnableSlots()
}

// redisMode is INFO's redis_mode and HELLO's mode.
func (s *Server) redisMode() string {
	if s.clusterMode {
		return "cluster"
	}
	return "standalone"
}

// clusterNodeID is the Redis Cluster node id of the Raft server raftID.
func clusterNodeID(raftID string) string {
	h := sha1.Sum([]byte("limitdb cluster node " + raftID))
	return hex.EncodeToString(h[:])
}

// myNodeID is CLUSTER MYID.
func (s *Server) myNodeID() string {
	if s.node == nil {
		return s.runID
	}
	return clusterNodeID(s.node.ID())
}

// shardNode is one node of the group as CLUSTER NODES, SLOTS and SHARDS
// show it: the address a client connects to, the bus port (the Raft
// port: what the nodes talk over), the Raft applied index as the
// replication offset.
type shardNode struct {
	id      string
	host    string
	port    int
	busPort int
	offset  int64
	master  bool
	myself  bool
}

// shardView is the group as this node sees it (engine lock held): its
// master first, then its replicas. The master is the Raft leader; while
// this node knows of none it shows itself as the master, so that a
// client's map never has a hole (its keyed commands then wait for a
// leader as unsharded ones do, cluster_slots_route.go). A follower lists
// the members whose client address it knows: itself and the leader
// always, the other followers once the leader has passed their address
// on (followers report to the leader, not to each other).
func (s *Server) shardView() []shardNode {
	if s.node == nil {
		host, port := s.clientHostPort()
		return []shardNode{{id: s.myNodeID(), host: host, port: port, busPort: port + 10000, master: true, myself: true}}
	}
	st := s.node.Status()
	hasLeader := false
	for _, m := range st.Members {
		if m.Leader && (m.ClientAddr != "" || st.LeaderClient != "") {
			hasLeader = true
		}
	}
	var master []shardNode
	var reps []shardNode
	for _, m := range st.Members {
		self := m.ID == st.NodeID
		addr := m.ClientAddr
		if m.Leader && addr == "" {
			addr = st.LeaderClient
		}
		if addr == "" && !self {
			continue
		}
		n := shardNode{id: clusterNodeID(m.ID), offset: int64(m.Applied), myself: self,
			master: m.Leader || (!hasLeader && self)}
		if self {
			n.offset = int64(st.AppliedIndex)
		}
		if addr != "" {
			n.host, n.port = cluster.SplitHostPort(addr)
		} else {
			n.host, n.port = s.clientHostPort()
		}
		if _, p, err := net.SplitHostPort(m.RaftAddr); err == nil {
			n.busPort, _ = strconv.Atoi(p)
		}
		if n.master {
			master = append(master, n)
		} else {
			reps = append(reps, n)
		}
	}
	return append(master, reps...)
}

// clientHostPort is this server's client address (a server without a
// node: its listener; one on every interface is shown as 127.0.0.1).
func (s *Server) clientHostPort() (string, int) {
	a, ok := s.Addr().(*net.TCPAddr)
	if !ok {
		return "", 0
	}
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return host, a.Port
}
