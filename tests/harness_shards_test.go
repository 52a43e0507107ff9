package tests

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Several Raft groups as one Redis Cluster (SHARDS.md): G groups of M
// real limitdb processes, each group a testCluster of its own (made with
// --join as mustCluster does), then met and given an even split of the
// slots through the commands a Redis Cluster operator uses (CLUSTER MEET,
// ADDSLOTSRANGE).
//
// Addresses: node n listens for clients on 127.0.0.1:p and advertises
// 127.0.0.1:p+10000 as its Raft (inter-node, bus) address, Redis's
// default bus port, so `CLUSTER MEET 127.0.0.1 p` without a bus port
// reaches it, as redis-cli --cluster create sends it. That advertised
// address is a tcpProxy in front of the node's own Raft listener on
// 127.0.0.(11+k) (k counts the nodes of every group, so no two nodes share
// a source IP and a group's partition() cuts only its own nodes).

type testShards struct {
	t      *testing.T
	groups []*testCluster
	ranges [][2]int // each group's slots as the test assigned them
}

// mustShards starts groups × nodesPerGroup nodes in cluster mode (extra
// options for all), meets every group with the first, assigns group g
// slots [g·16384/G, (g+1)·16384/G) with ADDSLOTSRANGE on its leader, and
// waits until every node's CLUSTER INFO says cluster_state:ok and knows
// every node.
func mustShards(t *testing.T, groups, nodesPerGroup int, extra ...string) *testShards {
	t.Helper()
	s := mustShardGroups(t, groups, nodesPerGroup, extra...)
	for g := 0; g < groups; g++ {
		s.ranges = append(s.ranges, [2]int{g * 16384 / groups, (g+1)*16384/groups - 1})
	}
	s.meetAll()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for g := range s.groups {
		lo, hi := s.slotRange(g)
		l := s.leaderOf(g)
		if err := s.groups[g].cli(l).Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			t.Fatalf("group %d: CLUSTER ADDSLOTSRANGE %d %d: %v", g, lo, hi, err)
		}
	}
	s.waitOK(30 * time.Second)
	return s
}

// mustShardGroups starts the groups (cluster-enabled yes), each on its
// own: no MEET, no slots (what redis-cli --cluster create is given).
func mustShardGroups(t *testing.T, groups, nodesPerGroup int, extra ...string) *testShards {
	t.Helper()
	s := &testShards{t: t}
	opts := append([]string{"--cluster-enabled", "yes"}, extra...)
	for g := 0; g < groups; g++ {
		// laid out and started one group after the other: a group's ports
		// are bound before the next group's are picked
		c := newShardGroup(t, g, nodesPerGroup, opts)
		c.startAll()
		s.groups = append(s.groups, c)
	}
	return s
}

// newShardGroup lays out group g's nodes (ids s<g>n1…) without starting
// them: client port p, advertised Raft address 127.0.0.1:p+10000.
func newShardGroup(t *testing.T, g, n int, opts []string) *testCluster {
	t.Helper()
	c := &testCluster{t: t, bin: limitdbBinary(t), logs: t.TempDir()}
	for i := 0; i < n; i++ {
		port := pickPortPair(t)
		ip := "127.0.0." + strconv.Itoa(11+g*n+i)
		nd := &clusterNode{i: i, id: "s" + strconv.Itoa(g) + "n" + strconv.Itoa(i+1), port: port, ip: ip,
			raftAddr:  net.JoinHostPort(ip, strconv.Itoa(freePortOn(t, ip))),
			proxyAddr: "127.0.0.1:" + strconv.Itoa(port+10000),
			dir:       t.TempDir(), args: opts}
		nd.proxy = newTCPProxy(t, nd.proxyAddr, nd.raftAddr)
		c.nodes = append(c.nodes, nd)
	}
	t.Cleanup(c.stopAll)
	return c
}

// pickPortPair returns a port p free on 127.0.0.1 with p+10000 free too,
// both below the kernel's ephemeral range (pickPort's walk, restricted to
// the ports whose bus port stays under pickHigh).
func pickPortPair(t testing.TB) int {
	free := func(p int) bool {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			return false
		}
		l.Close()
		return true
	}
	for range pickHigh - pickLow {
		p := pickLow + int(pickNext.Add(1)%(pickHigh-pickLow))
		if p+10000 <= pickHigh && free(p) && free(p+10000) {
			return p
		}
	}
	t.Fatalf("no free port pair (p, p+10000) in %d-%d", pickLow, pickHigh)
	return 0
}

// addGroup starts one more group of n nodes (cluster-enabled yes and
// extra) and meets it with the first group; it owns no slots (ranges
// gets -1 -1 for it) until the test assigns some.
func (s *testShards) addGroup(n int, extra ...string) *testCluster {
	s.t.Helper()
	c := newShardGroup(s.t, len(s.groups), n, append([]string{"--cluster-enabled", "yes"}, extra...))
	c.startAll()
	s.groups = append(s.groups, c)
	s.ranges = append(s.ranges, [2]int{-1, -1})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l := s.leaderOf(len(s.groups) - 1)
	if err := c.cli(l).Do(ctx, "CLUSTER", "MEET", "127.0.0.1", s.groups[0].nodes[0].port).Err(); err != nil {
		s.t.Fatalf("new group: CLUSTER MEET: %v\n%s", err, c.log(l))
	}
	return c
}

// slotRange is group g's slots (the even split unless the test changed
// them).
func (s *testShards) slotRange(g int) (lo, hi int) { return s.ranges[g][0], s.ranges[g][1] }

// groupOf is the group that owns slot (slotRange's).
func (s *testShards) groupOf(slot int) int {
	for g := range s.ranges {
		if lo, hi := s.slotRange(g); slot >= lo && slot <= hi {
			return g
		}
	}
	s.t.Fatalf("slot %d out of range", slot)
	return -1
}

// leaderOf is the index of group g's leader (waiting for one).
func (s *testShards) leaderOf(g int) int { return s.groups[g].waitLeader(15 * time.Second) }

// leaderAddr is group g's leader's client address.
func (s *testShards) leaderAddr(g int) string { return s.groups[g].addr(s.leaderOf(g)) }

// addrs is every node's client address, group by group.
func (s *testShards) addrs() []string {
	var out []string
	for _, c := range s.groups {
		for i := range c.nodes {
			out = append(out, c.addr(i))
		}
	}
	return out
}

// nodes is the number of nodes of every group.
func (s *testShards) nodes() int { return len(s.addrs()) }

// meetAll sends CLUSTER MEET 127.0.0.1 <first group's first node's port>
// (no bus port: it is port+10000) to every other group's leader.
func (s *testShards) meetAll() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first := s.groups[0].nodes[0].port
	for g := 1; g < len(s.groups); g++ {
		l := s.leaderOf(g)
		if err := s.groups[g].cli(l).Do(ctx, "CLUSTER", "MEET", "127.0.0.1", first).Err(); err != nil {
			s.t.Fatalf("group %d: CLUSTER MEET 127.0.0.1 %d: %v\n%s", g, first, err, s.groups[g].log(l))
		}
	}
}

// clusterInfo is node i of group g's CLUSTER INFO fields (nil when it
// does not answer).
func (s *testShards) clusterInfo(g, i int) map[string]string {
	return s.groups[g].fields(i, "CLUSTER", "INFO")
}

// waitOK waits until every running node's CLUSTER INFO says
// cluster_state:ok and cluster_known_nodes is every node.
func (s *testShards) waitOK(d time.Duration) {
	s.t.Helper()
	want := strconv.Itoa(s.nodes())
	deadline := time.Now().Add(d)
	for g, c := range s.groups {
		for i, nd := range c.nodes {
			if nd.cmd == nil {
				continue
			}
			for {
				m := s.clusterInfo(g, i)
				if m["cluster_state"] == "ok" && m["cluster_known_nodes"] == want {
					break
				}
				if time.Now().After(deadline) {
					s.t.Fatalf("node %s: CLUSTER INFO not ok with %s known nodes within %v: %v\n%s", nd.id, want, d, m, c.log(i))
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
}

// clusterClient is a go-redis ClusterClient over every node (RESP2,
// bounded timeouts), closed at the end of the test.
func (s *testShards) clusterClient() *redis.ClusterClient {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: s.addrs(), Protocol: 2, MaxRedirects: 8,
		DialTimeout: 2 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 5 * time.Second, PoolSize: 16})
	s.t.Cleanup(func() { cc.Close() })
	return cc
}

// kill ends node i of group g with SIGKILL; restart runs it again on its
// dir and waits until it answers.
func (s *testShards) kill(g, i int)    { s.groups[g].kill(i) }
func (s *testShards) restart(g, i int) { s.groups[g].start(i) }

// logs is every node's log tail (for failure messages).
func (s *testShards) logs() string {
	var b strings.Builder
	for _, c := range s.groups {
		for i, nd := range c.nodes {
			fmt.Fprintf(&b, "--- %s\n%s\n", nd.id, c.log(i))
		}
	}
	return b.String()
}

// moveSlots moves lo..hi from group src to group dst with CLUSTER
// MIGRATION IMPORT (sent to a node of dst, as handoverTest.importOn),
// waits (at most d) until its STATUS says completed and every running
// node's CLUSTER SLOTS gives lo..hi to dst's leader, and returns the time
// from IMPORT to completed. ranges keeps the split as first assigned.
// Call it from the test's goroutine (it fails the test with Fatal).
func (s *testShards) moveSlots(lo, hi, src, dst int, d time.Duration) time.Duration {
	s.t.Helper()
	h := &handoverTest{s: s, t: s.t, src: src, dst: dst}
	t0 := time.Now()
	id := h.importOn(lo, hi)
	h.waitState(id, "completed", d)
	took := time.Since(t0)
	h.waitSlotsOn(lo, hi, dst)
	return took
}

// keysInSlots is how many of keys hash to a slot in lo..hi.
func keysInSlots(keys []string, lo, hi int) int {
	n := 0
	for _, k := range keys {
		if sl := testKeySlot(k); sl >= lo && sl <= hi {
			n++
		}
	}
	return n
}

// densestSlots is the window of width slots inside lo..hi that holds the
// most of keys (a move of a range the workload uses, kept to one batch).
func densestSlots(keys []string, lo, hi, width int) (int, int) {
	var per [16384]int
	for _, k := range keys {
		per[testKeySlot(k)]++
	}
	n := 0
	for sl := lo; sl < lo+width; sl++ {
		n += per[sl]
	}
	best, bestN := lo, n
	for a := lo + 1; a+width-1 <= hi; a++ {
		n += per[a+width-1] - per[a-1]
		if n > bestN {
			best, bestN = a, n
		}
	}
	return best, best + width - 1
}
