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
		port := a.Port
		if ip := p["cluster-announce-ip"]; ip != "" {
			host = ip
		}
		if n := num("cluster-announce-port"); n != 0 {
			port = int(n)
		}
		clientAddr = net.JoinHostPort(host, strconv.Itoa(port))
	}
	linkTLS, err := s.linkTLS()
	if err != nil {
		return err
	}
	cfg := cluster.Config{
		NodeID:            p["node-id"],
		RaftAddr:          p["raft-addr"],
		Advertise:         s.raftAdvertise(),
		ClientAddr:        clientAddr,
		Dir:               p["dir"],
		Join:              p["join"],
		Secret:            p["cluster-secret"],
		TLS:               linkTLS,
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
	s.global.kick = make(chan struct{}, 1)
	s.wg.Add(1)
	go s.globalLoop() // the directory leader's pushes (cluster_global.go)
	return nil
}

// awaitCluster holds a cluster-mode node's clients back (Serve: they
// wait in the listeners' backlog) until it has applied what its log held
// at start and refreshed its map once, for at most leader-wait-ms. A
// node restarted as a follower applies its entries only once its leader
// reaches it, and learns the other groups' slots only from their
// answers: served before that, it gave CLUSTER SLOTS without them,
// cluster_state:fail, and -CLUSTERDOWN The cluster is down for every
// key for 0.3 s after a quick restart (ioredis reconnects on it, Jedis
// refuses the map). A node started afresh has nothing to apply and no
// slot to learn, and waits for one refresh.
func (s *Server) awaitCluster() {
	if !s.clusterMode || s.node == nil {
		return
	}
	deadline := time.NewTimer(s.leaderWait())
	defer deadline.Stop()
	poll := time.NewTicker(5 * time.Millisecond)
	defer poll.Stop()
	for !s.node.CaughtUp() {
		select {
		case <-s.stop:
			return
		case <-deadline.C:
			return
		case <-poll.C:
		}
	}
	select {
	case <-s.refreshMap():
	case <-s.stop:
	case <-deadline.C:
	}
}

// leaderWait is leader-wait-ms (at least 1: the parameter's minimum).
func (s *Server) leaderWait() time.Duration {
	n, _ := strconv.ParseInt(s.conf.params["leader-wait-ms"], 10, 64)
	return time.Duration(max(n, 1)) * time.Millisecond
}

// raftAdvertise is the inter-node address the others reach this node
// at: raft-advertise, else raft-addr with cluster-announce-ip and
// cluster-announce-bus-port in place of its host and port when set ("":
// raft-addr itself).
func (s *Server) raftAdvertise() string {
	p := s.conf.params
	if p["raft-advertise"] != "" {
		return p["raft-advertise"]
	}
	ip, bus := p["cluster-announce-ip"], p["cluster-announce-bus-port"]
	if ip == "" && bus == "0" {
		return ""
	}
	host, port, err := net.SplitHostPort(p["raft-addr"])
	if err != nil {
		return ""
	}
	if ip != "" {
		host = ip
	}
	if bus != "0" {
		port = bus
	}
	return net.JoinHostPort(host, port)
}

// linkTLS is the inter-node links' TLS when tls-cluster or
// tls-replication is yes: tls-cert-file and tls-key-file are this node's
// certificate at both ends of a link, tls-ca-cert-file (or -dir) what the
// peer's must chain to, tls-protocols the versions.
func (s *Server) linkTLS() (*cluster.LinkTLS, error) {
	p := s.conf.params
	if p["tls-cluster"] != "yes" && p["tls-replication"] != "yes" {
		return nil, nil
	}
	conf, detail := buildTLSConfig(p)
	if detail == "" && conf.ClientCAs == nil {
		detail = "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!"
	}
	if detail != "" {
		return nil, fmt.Errorf("tls-cluster: %s", detail)
	}
	return &cluster.LinkTLS{Cert: conf.Certificates[0], CAs: conf.ClientCAs, MinVersion: conf.MinVersion, MaxVersion: conf.MaxVersion}, nil
}

// Node returns the server's cluster node (nil without one).
func (s *Server) Node() *cluster.Node { return s.node }
