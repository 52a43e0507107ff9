package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Replicated sides (bench/README.md, "Replicated sides"): a Redis primary
// with -redis-replicas replicas, a limitdb cluster of -limitdb-nodes
// nodes. Each is measured at one process (the primary; the leader or a
// follower); the CPU columns count every process of the side, the price
// of its replication included.

// infoFields sends cmd (INFO replication, RAFT INFO) and returns its
// "field:value" lines, nil when it fails.
func infoFields(addr string, cmd ...string) map[string]string {
	c, err := dial(addr, "", 1)
	if err != nil {
		return nil
	}
	defer c.nc.Close()
	r, err := c.do(cmd...)
	if err != nil || strings.HasPrefix(r, "-") {
		return nil
	}
	m := map[string]string{}
	for _, l := range strings.Split(bulkValue(r), "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// waitUntil polls ok every 50 ms for up to d, and fails the run with what
// when it never holds.
func waitUntil(d time.Duration, what string, ok func() bool) {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ok() {
			return
		}
	}
	fatalf("%s within %v", what, d)
}

// startReplicas starts n redis-servers replicating the primary on
// primaryPort, in memory as it is (--save ” --appendonly no), and waits
// until the primary lists all of them online and each says its link is
// up. It returns their pids.
func startReplicas(primaryPort, n int) []int {
	var pids []int
	var addrs []string
	for i := 1; i <= n; i++ {
		port := freePort()
		addr, pid := startServer(fmt.Sprintf("redis-server replica %d", i), []string{*fRedisBin, "--port", strconv.Itoa(port),
			"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", serverDir(fmt.Sprintf("redis-replica%d", i)),
			"--replicaof", "127.0.0.1", strconv.Itoa(primaryPort)}, nil, port)
		pids, addrs = append(pids, pid), append(addrs, addr)
	}
	primary := "127.0.0.1:" + strconv.Itoa(primaryPort)
	waitUntil(20*time.Second, fmt.Sprintf("%d replicas online at the primary", n), func() bool {
		m := infoFields(primary, "INFO", "replication")
		online := 0
		for i := 0; i < n; i++ {
			if strings.Contains(m["slave"+strconv.Itoa(i)], "state=online") {
				online++
			}
		}
		if m["connected_slaves"] != strconv.Itoa(n) || online != n {
			return false
		}
		for _, a := range addrs {
			if infoFields(a, "INFO", "replication")["master_link_status"] != "up" {
				return false
			}
		}
		return true
	})
	return pids
}

// clusterNode is one started limitdb of a cluster.
type clusterNode struct {
	id, addr string
	pid      int
}

// startCluster starts n limitdb nodes as the README's three-node recipe
// does (the first bootstraps, the others --join its client port; Raft on
// loopback addresses, no cluster secret), with args added to each, and
// waits until a serving leader sees n voters and no node is still
// joining. It returns the nodes and the leader's index.
func startCluster(n int, args, env []string) ([]clusterNode, int) {
	return startGroup("", n, args, env, false)
}

// startGroup is startCluster with node ids prefix+"n1"…, and with busPlus
// each node's Raft port its client port + 10000 (Redis's bus port rule,
// so that CLUSTER MEET ip port finds it: shards.go).
func startGroup(prefix string, n int, args, env []string, busPlus bool) ([]clusterNode, int) {
	var nodes []clusterNode
	for i := 1; i <= n; i++ {
		id := prefix + "n" + strconv.Itoa(i)
		port, raftPort := 0, 0
		if busPlus {
			port = freeBusPort()
			raftPort = port + busOffset
		} else {
			port, raftPort = freePort(), freePort()
		}
		a := []string{*fLimitBin, "--node-id", id, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--raft-addr", "127.0.0.1:" + strconv.Itoa(raftPort), "--dir", serverDir("limitdb-" + id), "--loglevel", "warn"}
		if i > 1 {
			a = append(a, "--join", nodes[0].addr)
		}
		addr, pid := startServer("limitdb "+id, append(a, args...), env, port)
		nodes = append(nodes, clusterNode{id: id, addr: addr, pid: pid})
		if i == 1 {
			waitUntil(10*time.Second, id+" leading", func() bool { return clusterLeader(nodes) == 0 })
		}
	}
	leader := -1
	waitUntil(30*time.Second, fmt.Sprintf("%d voters", n), func() bool {
		leader = clusterLeader(nodes)
		if leader < 0 {
			return false
		}
		voters := 0
		for k, v := range infoFields(nodes[leader].addr, "RAFT", "INFO") {
			if strings.HasPrefix(k, "raft_member") && strings.Contains(v, "voter=1") {
				voters++
			}
		}
		for _, nd := range nodes {
			if infoFields(nd.addr, "RAFT", "INFO")["raft_joining"] != "0" {
				return false
			}
		}
		return voters == n
	})
	return nodes, leader
}

// clusterLeader is the index of the node that leads and serves, or -1;
// of two that say so for a moment, the later term's.
func clusterLeader(nodes []clusterNode) int {
	l, term := -1, uint64(0)
	for i, nd := range nodes {
		m := infoFields(nd.addr, "RAFT", "INFO")
		if m["raft_state"] == "leader" && m["raft_serving"] == "1" {
			if t, _ := strconv.ParseUint(m["raft_term"], 10, 64); l < 0 || t > term {
				l, term = i, t
			}
		}
	}
	return l
}

// measuredRole is what RAFT INFO says of the measured node's role and
// term (checked before and after the cases: a leadership that moved
// meanwhile measured another topology).
func measuredRole(addr string) string {
	m := infoFields(addr, "RAFT", "INFO")
	return m["raft_state"] + " in term " + m["raft_term"]
}
