package server

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"limitdb/cluster"
)

// StartCluster makes this server a Raft node as its configuration says
// (appendonly yes, the default: a durable cluster of one in dir, or a
// member of the cluster it joins). Call it after Listen (the node
// announces the client address) and before Serve. With appendonly no it
// does nothing: everything stays in memory, as in a Redis without
// persistence.
func (s *Server) StartCluster() error {
	p := s.conf.params
	if p["appendonly"] != "yes" {
		if p["raft-addr"] != "" || p["join"] != "" {
			return fmt.Errorf("raft-addr and join need appendonly yes (the Raft log)")
		}
		return nil
	}
	num := func(name string) int64 {
		n, _ := strconv.ParseInt(p[name], 10, 64)
		return n
	}
	clientAddr := ""
	if a, ok := s.Addr().(*net.TCPAddr); ok {
		// announce an address the others can reach: a listener on every
		// interface is announced on the raft-addr's host
		host := a.IP.String()
		if a.IP.IsUnspecified() {
			host = "127.0.0.1"
			if h, _, err := net.SplitHostPort(p["raft-addr"]); err == nil && h != "" {
				host = h
			}
		}
		clientAddr = net.JoinHostPort(host, strconv.Itoa(a.Port))
	}
	cfg := cluster.Config{
		NodeID:            p["node-id"],
		RaftAddr:          p["raft-addr"],
		Advertise:         p["raft-advertise"],
		ClientAddr:        clientAddr,
		Dir:               p["dir"],
		Join:              p["join"],
		Secret:            p["cluster-secret"],
		AppendFsync:       p["appendfsync"],
		LeaderWait:        time.Duration(num("leader-wait-ms")) * time.Millisecond,
		MaxClockSkew:      time.Duration(num("max-clock-skew-ms")) * time.Millisecond,
		SnapshotThreshold: uint64(num("raft-snapshot-threshold")),
		TrailingLogs:      uint64(num("raft-trailing-logs")),
		SnapshotInterval:  time.Duration(num("raft-snapshot-interval")) * time.Second,
		Log:               s.log,
		Link:              linkAuth{s},
	}
	// a follower never deletes on its own; the node lifts this while it leads
	s.door.Lock()
	s.eng.NoLazyDelete = true
	s.door.Unlock()
	n, err := cluster.New(cfg, s.door, s)
	if err != nil {
		return err
	}
	s.node = n
	s.door.Lock()
	s.mem.log = n.LogMemory // maxmemory leaves the log's memory out (maxmemory.go)
	s.door.Unlock()
	n.OnMessages(s.deliverRemote) // other nodes' Pub/Sub messages (pubsub.go)
	n.OnQuery(s.answerQuery)      // other nodes' queries (rl_stats_cluster.go)
	return nil
}

// Node returns the server's cluster node (nil without one).
func (s *Server) Node() *cluster.Node { return s.node }
