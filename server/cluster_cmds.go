package server

import (
	"strconv"
	"strings"
	"time"

	"limitdb/cluster"
	"limitdb/engine"
)

// The cluster's commands: RAFT (limitdb's), ROLE, READONLY/READWRITE
// (Redis Cluster's switch for replica reads), and INFO's replication and
// raft sections. Without a node (tests, embedding) the server is a
// master with no replicas, as a standalone Redis.

const errNoCluster = "ERR this server runs without a cluster (no Raft node)"

func init() {
	registerConn(&engine.Command{Name: "role", Arity: 1, Flags: "noscript loading stale fast", Group: "server", Since: "2.8.12", Summary: "Return the role of the instance in the context of replication"}, cmdRole)
	registerConn(&engine.Command{Name: "readonly", Arity: 1, Flags: "loading stale fast", Group: "cluster", Since: "3.0.0", Summary: "Enables read queries for a connection to a cluster replica node."}, cmdReadonly)
	registerConn(&engine.Command{Name: "readwrite", Arity: 1, Flags: "loading stale fast", Group: "cluster", Since: "3.0.0", Summary: "Disables read queries for a connection to a cluster replica node."}, cmdReadwrite)
	registerConn(&engine.Command{Name: "raft", Arity: -2, Group: "cluster", Since: "7.0.0", Summary: "limitdb's Raft membership and status."}, nil,
		connSub{&engine.Command{Name: "info", Arity: 2, Flags: "loading stale", Group: "cluster", Since: "7.0.0", Summary: "Returns the node's view of the Raft cluster."}, cmdRaftInfo},
		connSub{&engine.Command{Name: "join", Arity: -4, Flags: "admin noscript loading stale", Group: "cluster", Since: "7.0.0", Summary: "Adds a node to the cluster (sent by a joining node)."}, cmdRaftJoin},
		connSub{&engine.Command{Name: "remove", Arity: 3, Flags: "admin noscript loading stale", Group: "cluster", Since: "7.0.0", Summary: "Removes a node from the cluster."}, cmdRaftRemove},
		connSub{&engine.Command{Name: "transfer", Arity: -2, Flags: "admin noscript loading stale", Group: "cluster", Since: "7.0.0", Summary: "Hands leadership over to a voter (planned maintenance)."}, cmdRaftTransfer},
	)
}

// cmdRole: ROLE — Redis's reply shape: a leader (or a server without a
// cluster) is ["master", offset, [[ip, port, offset] …]]; a follower is
// ["slave", leader ip, leader port, "connected"|"connect", offset]. The
// offset is the Raft applied index.
func cmdRole(s *Server, cl *client, argv [][]byte) {
	if !s.replicated() {
		cl.w.Array(3)
		cl.w.BulkString("master")
		cl.w.Int(0)
		cl.w.Array(0)
		return
	}
	st := s.node.Status()
	if st.Serving {
		cl.w.Array(3)
		cl.w.BulkString("master")
		cl.w.Int(int64(st.AppliedIndex))
		var reps []cluster.Member
		for _, m := range st.Members {
			if !m.Leader {
				reps = append(reps, m)
			}
		}
		cl.w.Array(len(reps))
		for _, m := range reps {
			host, port := cluster.SplitHostPort(m.ClientAddr)
			cl.w.Array(3)
			cl.w.BulkString(host)
			cl.w.BulkString(strconv.Itoa(port))
			cl.w.BulkString(strconv.FormatUint(m.Applied, 10))
		}
		return
	}
	host, port := cluster.SplitHostPort(st.LeaderClient)
	state := "connected"
	if st.LeaderID == "" {
		state = "connect"
	}
	cl.w.Array(5)
	cl.w.BulkString("slave")
	cl.w.BulkString(host)
	cl.w.Int(int64(port))
	cl.w.BulkString(state)
	cl.w.Int(int64(st.AppliedIndex))
}

// cmdReadonly: READONLY — this connection's reads on a follower are
// served from its applied state without a read barrier (faster, possibly
// stale by the replication lag).
func cmdReadonly(s *Server, cl *client, argv [][]byte) {
	cl.readonly = true
	cl.w.OK()
}

// cmdReadwrite: READWRITE — reads are linearizable again (the default).
func cmdReadwrite(s *Server, cl *client, argv [][]byte) {
	cl.readonly = false
	cl.w.OK()
}

// cmdRaftInfo: RAFT INFO — the node's view as "field:value" lines.
func cmdRaftInfo(s *Server, cl *client, argv [][]byte) {
	if !s.replicated() {
		cl.w.Error(errNoCluster)
		return
	}
	cl.w.Verbatim(s.node.Status().Text())
}

// cmdRaftJoin: RAFT JOIN id raft-addr [proof] — sent by a node started
// with --join, authenticated with its masteruser/masterauth like any
// client (an administrative command: @admin @dangerous): the cluster adds
// it as a non-voter (and promotes it once it caught up). id is its Raft
// ID (node-id@incarnation). Without a cluster secret only loopback
// clients may ask; with one, proof must be its HMAC (cluster.JoinProof).
func cmdRaftJoin(s *Server, cl *client, argv [][]byte) {
	if !s.replicated() {
		cl.w.Error(errNoCluster)
		return
	}
	if len(argv) > 5 {
		cl.w.Error(engine.ErrSyntax)
		return
	}
	id, addr, proof := string(argv[2]), string(argv[3]), ""
	if len(argv) == 5 {
		proof = string(argv[4])
	}
	if cl.connless() {
		cl.w.Error(cluster.ErrJoinAuth.Error())
		return
	}
	if err := s.node.CheckJoin(id, addr, proof, cl.nc.RemoteAddr()); err != nil {
		cl.w.Error(err.Error())
		return
	}
	s.door.Unlock()
	err := s.node.Join(id, addr)
	s.door.Lock()
	if err != nil {
		cl.w.Error(errText(err))
		return
	}
	cl.w.OK()
}

// cmdRaftRemove: RAFT REMOVE id — removes a node (through the leader).
func cmdRaftRemove(s *Server, cl *client, argv [][]byte) {
	if !s.replicated() {
		cl.w.Error(errNoCluster)
		return
	}
	s.door.Unlock()
	err := s.node.Remove(string(argv[2]))
	s.door.Lock()
	if err != nil {
		cl.w.Error(errText(err))
		return
	}
	cl.w.OK()
}

// cmdRaftTransfer: RAFT TRANSFER [id] — hands leadership to voter id,
// or to the most up-to-date voter, through the leader (a follower asks
// it), and answers +OK once another node leads (cluster/transfer.go).
func cmdRaftTransfer(s *Server, cl *client, argv [][]byte) {
	if !s.replicated() {
		cl.w.Error(errNoCluster)
		return
	}
	if len(argv) > 3 {
		cl.w.Error(engine.ErrSyntax)
		return
	}
	id := ""
	if len(argv) == 3 {
		id = string(argv[2])
	}
	s.door.Unlock()
	err := s.node.Transfer(id)
	s.door.Lock()
	if err != nil {
		cl.w.Error(errText(err))
		return
	}
	cl.w.OK()
}

// errText makes an error a RESP error text with a code word.
func errText(err error) string {
	m := err.Error()
	if i := strings.IndexByte(m, ' '); i > 0 && strings.ToUpper(m[:i]) == m[:i] {
		return m
	}
	return "ERR " + m
}

// infoRaft is INFO's # Raft section (empty without a cluster), with the
// slow path's counters.
func infoRaft(s *Server, b []byte) []byte {
	if !s.replicated() {
		return b
	}
	b = append(b, s.node.Status().Text()...)
	st := s.node.Counters()
	b = kv(b, "raft_forwarded_units", st.Forwarded)
	b = kv(b, "raft_forward_errors", st.ForwardErrors)
	b = kv(b, "raft_read_barriers", st.ReadBarriers)
	b = kv(b, "raft_lease_checks", st.LeaseChecks)
	b = kv(b, "raft_leader_waits", st.LeaderWaits)
	b = kv(b, "raft_clusterdown_replies", st.ClusterDown)
	b = kv(b, "raft_unknown_outcomes", st.Unknown)
	b = kv(b, "raft_forwarded_clients", s.node.ForwardedClients())
	return b
}

// infoReplicationCluster is INFO replication on a cluster node, in
// Redis's fields: the leader is the master, the other members its
// replicas; offsets are Raft applied indexes.
func infoReplicationCluster(s *Server, b []byte) []byte {
	st := s.node.Status()
	if st.Serving {
		b = kv(b, "role", "master")
		i := 0
		for _, m := range st.Members {
			if !m.Leader {
				i++
			}
		}
		b = kv(b, "connected_slaves", i)
		if s.minReplicas {
			b = kv(b, "min_slaves_good_slaves", s.goodReplicas())
		}
		i = 0
		for _, m := range st.Members {
			if m.Leader {
				continue
			}
			host, port := cluster.SplitHostPort(m.ClientAddr)
			// lag: seconds since the follower's last report (its ping,
			// limitdb's REPLCONF ACK), as Redis's unixtime - repl_ack_time
			var lag int64
			if !m.Reported.IsZero() {
				lag = max(time.Now().Unix()-m.Reported.Unix(), 0)
			}
			b = kv(b, "slave"+strconv.Itoa(i), "ip="+host+",port="+strconv.Itoa(port)+",state=online,offset="+strconv.FormatUint(m.Applied, 10)+",lag="+strconv.FormatInt(lag, 10))
			i++
		}
	} else {
		host, port := cluster.SplitHostPort(st.LeaderClient)
		b = kv(b, "role", "slave")
		b = kv(b, "master_host", host)
		b = kv(b, "master_port", port)
		link := "up"
		if st.LeaderID == "" {
			link = "down"
		}
		b = kv(b, "master_link_status", link)
		b = kv(b, "master_last_io_seconds_ago", max(st.LastContactMs, 0)/1000)
		b = kv(b, "master_sync_in_progress", 0)
		b = kv(b, "slave_read_repl_offset", st.AppliedIndex)
		b = kv(b, "slave_repl_offset", st.AppliedIndex)
		b = kv(b, "slave_priority", 100)
		b = kv(b, "slave_read_only", 1)
		b = kv(b, "replica_announced", 1)
		b = kv(b, "connected_slaves", 0)
	}
	b = kv(b, "master_failover_state", "no-failover")
	b = kv(b, "master_replid", s.runID)
	b = kv(b, "master_replid2", strings.Repeat("0", 40))
	b = kv(b, "master_repl_offset", st.AppliedIndex)
	b = kv(b, "second_repl_offset", -1)
	return s.infoBacklog(b)
}
