package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sharded sides (bench/README.md, "Shards"): with -shards N both sides
// are a Redis Cluster of N shards, driven through go-redis's
// ClusterClient, which routes every command by its key's slot as users'
// clients do. The reference is N redis-server masters (each with
// -redis-replicas replicas), in memory as the other parts run Redis; the
// candidate is N limitdb Raft groups of -shard-nodes nodes each, durable
// (limitdb's defaults), joined with CLUSTER MEET and given an even split
// of the slots. -ref-limitdb-shards K makes the reference a K-group
// limitdb instead (the CPU per operation of K groups against N in the
// same slices). The CPU columns sum every process of a side.

var (
	fShards     = flag.Int("shards", 0, "both sides a Redis Cluster of this many shards, driven through go-redis's ClusterClient (0: the unsharded sides)")
	fShardNodes = flag.Int("shard-nodes", 1, "with -shards: limitdb nodes per Raft group (1, 3 or 5)")
	fRefShards  = flag.Int("ref-limitdb-shards", 0, "with -shards: the reference side is a limitdb of this many groups instead of Redis")
	fCandConns  = flag.Int("cand-conns", 0, "with -shards: workers on the candidate side (0: -conns), e.g. -conns × shards to give each of its shards the commands per turn one shard gets from -conns (the CPU columns; the throughput ratio then compares different loads)")
	fIdle       = flag.Duration("idle", 20*time.Second, "-mode idle: how long the idle processes' CPU is measured")
)

// busOffset is Redis's cluster bus port rule (client port + 10000),
// which limitdb's Raft port follows in cluster mode so that CLUSTER MEET
// ip port reaches it.
const busOffset = 10000

// freeBusPort is a free loopback port whose +10000 is free too, both
// below the kernel's ephemeral range (freePort's reasons).
func freeBusPort() int {
	const low, high = 20000, 32767 - busOffset
	if portNext == 0 {
		portNext = os.Getpid() * 7919
	}
	for range high - low {
		portNext++
		port := low + portNext%(high-low)
		if portFree(port) && portFree(port+busOffset) {
			return port
		}
	}
	fatalf("no free loopback port pair in %d-%d", low, high)
	return 0
}

// shardGroup is one shard of a side: a Redis master and its replicas
// (master 0), or a limitdb Raft group (master: its leader at the start).
type shardGroup struct {
	nodes  []clusterNode
	master int
}

func (g shardGroup) masterAddr() string { return g.nodes[g.master].addr }

// slotRange is shard g's part of an even split of the 16,384 slots over
// n shards, as redis-cli --cluster create splits them.
func slotRange(g, n int) (string, string) {
	return strconv.Itoa(g * 16384 / n), strconv.Itoa((g+1)*16384/n - 1)
}

// doOn sends one command to addr on a connection of its own.
func doOn(addr string, args ...string) (string, error) {
	c, err := dial(addr, "", 1)
	if err != nil {
		return "", err
	}
	defer c.nc.Close()
	return c.do(args...)
}

// mustDo sends args to addr until it answers anything but an error
// (a group still electing, a MEET not yet applied) for up to 20 s.
func mustDo(addr string, args ...string) string {
	var last string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		r, err := doOn(addr, args...)
		if err == nil && !strings.HasPrefix(r, "-") {
			return r
		}
		last = strings.TrimSpace(r)
		if err != nil {
			last = err.Error()
		}
	}
	fatalf("%s %s: %s", addr, strings.Join(args, " "), last)
	return ""
}

// waitClusterReady waits until every node says cluster_state:ok, all
// 16,384 slots assigned and n shards serving them (Redis's
// cluster_size); when that never holds, the failure names what each
// node said last.
func waitClusterReady(what string, d time.Duration, nodes []clusterNode, n int) {
	var seen []string
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		seen = seen[:0]
		for _, nd := range nodes {
			m := infoFields(nd.addr, "CLUSTER", "INFO")
			if m["cluster_state"] != "ok" || m["cluster_slots_assigned"] != "16384" || m["cluster_size"] != strconv.Itoa(n) {
				seen = append(seen, fmt.Sprintf("%s: state %s, slots assigned %s, size %s", nd.id,
					m["cluster_state"], m["cluster_slots_assigned"], m["cluster_size"]))
			}
		}
		if len(seen) == 0 {
			return
		}
	}
	fatalf("%s: cluster_state:ok with %d shards on every node within %v; %s", what, n, d, strings.Join(seen, "; "))
}

func allNodes(gs []shardGroup) []clusterNode {
	var out []clusterNode
	for _, g := range gs {
		out = append(out, g.nodes...)
	}
	return out
}

// startRedisCluster starts masters redis-servers with cluster-enabled
// yes (in memory: --save ” --appendonly no), each with replicas more,
// assigns each master its even share of the slots, meets every node to
// the first, makes the replicas replicate their master, and waits until
// every node says cluster_state:ok with every master serving and every
// replica's link up.
func startRedisCluster(masters, replicas int) []shardGroup {
	var gs []shardGroup
	for g := 0; g < masters; g++ {
		var sg shardGroup
		for i := 0; i <= replicas; i++ {
			name := fmt.Sprintf("redis-s%dn%d", g, i)
			port := freeBusPort()
			addr, pid := startServer(name, []string{*fRedisBin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
				"--save", "", "--appendonly", "no", "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
				"--dir", serverDir(name)}, nil, port)
			sg.nodes = append(sg.nodes, clusterNode{id: name, addr: addr, pid: pid})
		}
		gs = append(gs, sg)
	}
	for g, sg := range gs {
		lo, hi := slotRange(g, masters)
		mustDo(sg.masterAddr(), "CLUSTER", "ADDSLOTSRANGE", lo, hi)
	}
	all := allNodes(gs)
	host, port, _ := net.SplitHostPort(all[0].addr)
	for _, nd := range all[1:] {
		mustDo(nd.addr, "CLUSTER", "MEET", host, port)
	}
	waitUntil(30*time.Second, fmt.Sprintf("every redis node knowing all %d", len(all)), func() bool {
		for _, nd := range all {
			r, err := doOn(nd.addr, "CLUSTER", "NODES")
			lines := strings.Split(strings.TrimSpace(bulkValue(r)), "\n")
			if err != nil || len(lines) != len(all) || strings.Contains(r, "handshake") || strings.Contains(r, "noaddr") {
				return false
			}
		}
		return true
	})
	for _, sg := range gs {
		id := bulkValue(mustDo(sg.masterAddr(), "CLUSTER", "MYID"))
		for _, nd := range sg.nodes[1:] {
			mustDo(nd.addr, "CLUSTER", "REPLICATE", id)
		}
	}
	waitClusterReady("redis", 30*time.Second, all, masters)
	waitUntil(30*time.Second, "the redis replicas' links up", func() bool {
		for _, sg := range gs {
			if infoFields(sg.masterAddr(), "INFO", "replication")["connected_slaves"] != strconv.Itoa(replicas) {
				return false
			}
			for _, nd := range sg.nodes[1:] {
				if infoFields(nd.addr, "INFO", "replication")["master_link_status"] != "up" {
					return false
				}
			}
		}
		return true
	})
	return gs
}

// startLimitdbShards starts groups Raft groups of per nodes each in
// cluster mode (cluster-enabled yes, Raft port = client port + 10000),
// ids prefix+"g<i>n<j>", meets every group to the first at its leader
// (CLUSTER MEET ip port), assigns each group its even share of the slots
// at its leader, and waits until every node says cluster_state:ok with
// every group serving (one group: ADDSLOTSRANGE 0 16383, no MEET).
func startLimitdbShards(prefix string, groups, per int, args, env []string) []shardGroup {
	var gs []shardGroup
	for g := 0; g < groups; g++ {
		nodes, leader := startGroup(fmt.Sprintf("%sg%d", prefix, g), per, args, env, true)
		gs = append(gs, shardGroup{nodes: nodes, master: leader})
	}
	host, port, _ := net.SplitHostPort(gs[0].masterAddr())
	for _, sg := range gs[1:] {
		mustDo(sg.masterAddr(), "CLUSTER", "MEET", host, port)
	}
	for g, sg := range gs {
		lo, hi := slotRange(g, groups)
		mustDo(sg.masterAddr(), "CLUSTER", "ADDSLOTSRANGE", lo, hi)
	}
	waitClusterReady("limitdb", 60*time.Second, allNodes(gs), groups)
	return gs
}

// groupLeaders names each limitdb group's serving leader and its term
// (printed before and after the cases: a leadership that moved meanwhile
// measured another topology).
func groupLeaders(gs []shardGroup) string {
	var out []string
	for _, g := range gs {
		l := clusterLeader(g.nodes)
		if l < 0 {
			out = append(out, "none")
			continue
		}
		out = append(out, g.nodes[l].id+" "+measuredRole(g.nodes[l].addr))
	}
	return strings.Join(out, ", ")
}

// shardSide makes s a sharded side over gs: its CPU counts every process,
// its ClusterClient knows every node and has seen every shard's master.
func shardSide(s *side, gs []shardGroup, topology string) {
	s.groups = gs
	all := allNodes(gs)
	var addrs []string
	for i, nd := range all {
		addrs = append(addrs, nd.addr)
		if i > 0 {
			s.others = append(s.others, nd.pid)
		}
	}
	s.addr, s.pid, s.topology = all[0].addr+"…", all[0].pid, topology
	s.cc = redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Protocol: 2, DisableIdentity: true,
		PoolSize: max(*fConns, candConns()) + 8, MaxRedirects: 8})
	ctx := context.Background()
	waitUntil(20*time.Second, fmt.Sprintf("%s: ClusterClient seeing %d masters", s.name, len(gs)), func() bool {
		s.cc.ReloadState(ctx)
		var n atomic.Int32
		err := s.cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			n.Add(1)
			return nil
		})
		return err == nil && int(n.Load()) == len(gs)
	})
}

func shardsMain() {
	if *fLimitBin == "" {
		fatalf("-shards: give -limitdb-bin path")
	}
	keyTag = true
	env, procs := limitdbEnv()
	args := append([]string{"--cluster-enabled", "yes"}, strings.Fields(*fLimitArgs)...)
	ref := &side{name: "redis", shas: map[string]string{}}
	cand := &side{name: "limitdb", shas: map[string]string{}}
	nodesWord := plural(*fShardNodes, "node")
	if *fRefShards > 0 {
		ref.name = "limitdb (ref)"
		gs := startLimitdbShards("r", *fRefShards, *fShardNodes, args, env)
		shardSide(ref, gs, fmt.Sprintf(" (limitdb: %s × %s; leaders %s)", plural(*fRefShards, "group"), nodesWord, groupLeaders(gs)))
		fmt.Println("-ref-limitdb-shards: the \"redis\" columns are a limitdb of", *fRefShards, "groups")
	} else {
		gs := startRedisCluster(*fShards, *fReplicas)
		shardSide(ref, gs, fmt.Sprintf(" (Redis Cluster: %s, %d replicas each)", plural(*fShards, "master"), *fReplicas))
	}
	gs := startLimitdbShards("", *fShards, *fShardNodes, args, env)
	shardSide(cand, gs, fmt.Sprintf(" (%s × %s; leaders %s)", plural(*fShards, "group"), nodesWord, groupLeaders(gs)))
	defer ref.cc.Close()
	defer cand.cc.Close()
	fmt.Printf("through go-redis ClusterClient: redis %s%s, limitdb %s%s (GOMAXPROCS=%s%s), %d CPUs\n",
		ref.addr, ref.topology, cand.addr, cand.topology, procs, strings.ReplaceAll(" "+*fEnv, ",", " "), runtime.NumCPU())
	switch *fMode {
	case "bench":
		refShares, candShares := cpuByProcess(ref), cpuByProcess(cand)
		benchMode(ref, cand)
		fmt.Printf("limitdb's group leaders at the end: %s\n", groupLeaders(cand.groups))
		fmt.Printf("each process's share of its side's CPU over the cases:\n  %s: %s\n  %s: %s\n",
			ref.name, refShares(), cand.name, candShares())
	case "idle":
		idleMode(ref, cand)
	default:
		fatalf("-shards: -mode bench or idle, not %q", *fMode)
	}
}

// candConns is the candidate's worker count (-cand-conns, only with
// -shards).
func candConns() int {
	if *fCandConns > 0 && *fShards > 0 {
		return *fCandConns
	}
	return *fConns
}

// plural is "1 node", "3 nodes".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// cpuByProcess reads the CPU time of each of s's processes now; the
// function it returns names each one's share of the side's CPU since
// (a leader's against its followers': what the model in RESULTS.md's
// "Shards" rests on).
func cpuByProcess(s *side) func() string {
	all := allNodes(s.groups)
	before := make([]int64, len(all))
	for i, nd := range all {
		before[i] = cpuNs(nd.pid)
	}
	return func() string {
		d := make([]int64, len(all))
		var total int64
		for i, nd := range all {
			d[i] = cpuNs(nd.pid) - before[i]
			total += d[i]
		}
		var parts []string
		for i, nd := range all {
			parts = append(parts, fmt.Sprintf("%s %.1f %%", nd.id, 100*float64(d[i])/float64(max(total, 1))))
		}
		return strings.Join(parts, ", ")
	}
}

// respArgs reads the one command a builder wrote (a RESP array of bulk
// strings) back into go-redis's arguments: the sharded sides send the
// very commands the unsharded ones do.
func respArgs(b []byte) []any {
	n, p := respLen(b, 1)
	args := make([]any, 0, n)
	for range n {
		l, q := respLen(b, p+1)
		args = append(args, string(b[q:q+l]))
		p = q + l + 2
	}
	return args
}

// respLen reads the decimal at b[p:] up to its CRLF and returns it and
// the offset after the CRLF.
func respLen(b []byte, p int) (int, int) {
	n := 0
	for ; b[p] != '\r'; p++ {
		n = n*10 + int(b[p]-'0')
	}
	return n, p + 2
}

// countErr counts an error reply (or a client-side failure) as roundTrip
// does, keeping the first text.
func (c *conn) countErr(err error) {
	if err == nil || errors.Is(err, redis.Nil) {
		return
	}
	c.errs++
	if c.lastErr == "" {
		var re redis.Error
		if errors.As(err, &re) {
			c.lastErr = "-" + err.Error()
		} else {
			c.lastErr = "client: " + err.Error()
		}
	}
}

// clusterBatch is runSlice's batch for a sharded side: one command
// (d = 1) or a pipeline of d, which the ClusterClient splits by shard
// and sends to the shards at once; error replies are counted.
func clusterBatch(s *side, b builder, d int) func(c *conn, now int64) error {
	ctx := context.Background()
	return func(c *conn, now int64) error {
		if d == 1 {
			c.wbuf = b(c, s, c.wbuf[:0], now)
			c.countErr(s.cc.Do(ctx, respArgs(c.wbuf)...).Err())
			return nil
		}
		pipe := s.cc.Pipeline()
		for range d {
			c.wbuf = b(c, s, c.wbuf[:0], now)
			pipe.Do(ctx, respArgs(c.wbuf)...)
		}
		cmds, _ := pipe.Exec(ctx)
		for _, cmd := range cmds {
			c.countErr(cmd.Err())
		}
		return nil
	}
}

// prepareCluster is prepare for a sharded side: scripts are loaded on
// every master (SCRIPT LOAD's reply is the same SHA everywhere), the
// probe goes through the ClusterClient. Workloads of more than one
// command per operation, Pub/Sub and the BLPOP ping-pong are not driven
// through it.
func (w *workload) prepareCluster(s *side, isRef bool, seedDir string) error {
	if w.replies != 1 || w.pingpong || w.subscribers > 0 || len(w.libs) > 0 || w.preload || len(w.setup) > 0 {
		return fmt.Errorf("%s: not driven through the ClusterClient (-shards)", w.name)
	}
	ctx := context.Background()
	err := w.loadScripts(s, isRef, seedDir, func(f string, body []byte) (string, error) {
		var mu sync.Mutex
		var sha string
		err := s.cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			r, err := c.ScriptLoad(ctx, string(body)).Result()
			if err != nil {
				return fmt.Errorf("%s: SCRIPT LOAD %s at %s: %v", s.name, f, c.Options().Addr, err)
			}
			mu.Lock()
			sha = r
			mu.Unlock()
			return nil
		})
		return sha, err
	})
	if err != nil {
		return err
	}
	if w.probe != nil {
		args := w.probe(s, isRef)
		a := make([]any, len(args))
		for i, v := range args {
			a[i] = v
		}
		if args[0] == "EVALSHA" {
			a[3] = "{" + args[3] + "}" // keyTag's reason
		}
		if err := s.cc.Do(ctx, a...).Err(); err != nil && !errors.Is(err, redis.Nil) {
			return fmt.Errorf("%s: %s: %s", s.name, args[0], short(err.Error()))
		}
	}
	return nil
}

// idleMode measures what the started sides cost while nobody sends
// them anything: after 2 s for the set-up's traffic to end, each
// process's CPU over -idle, from /proc/<pid>/task/*/schedstat (as the
// other CPU columns) and from /proc/<pid>/stat's utime+stime (clock
// ticks), as CPU seconds per second, per process and per shard.
func idleMode(ref, cand *side) {
	time.Sleep(2 * time.Second)
	type sample struct {
		side, shard, node string
		pid               int
		ns, ticks         int64
	}
	var ss []*sample
	for _, s := range []*side{ref, cand} {
		for g, sg := range s.groups {
			for _, nd := range sg.nodes {
				ss = append(ss, &sample{side: s.name, shard: strconv.Itoa(g), node: nd.id, pid: nd.pid})
			}
		}
	}
	for _, x := range ss {
		x.ns, x.ticks = cpuNs(x.pid), statTicks(x.pid)
	}
	t0 := time.Now()
	time.Sleep(*fIdle)
	el := time.Since(t0).Seconds()
	for _, x := range ss {
		x.ns, x.ticks = cpuNs(x.pid)-x.ns, statTicks(x.pid)-x.ticks
	}
	fmt.Printf("\nidle for %.1f s: CPU seconds per second (%% of one core), schedstat and /proc/<pid>/stat (%d ticks/s)\n\n", el, clkTck)
	shardSum := map[string][2]float64{}
	var order []string
	for _, x := range ss {
		a, b := float64(x.ns)/1e9/el, float64(x.ticks)/float64(clkTck)/el
		fmt.Printf("  %-14s shard %s  %-8s  %.4f (%.2f %%)  stat %.4f\n", x.side, x.shard, x.node, a, 100*a, b)
		k := x.side + " shard " + x.shard
		if _, ok := shardSum[k]; !ok {
			order = append(order, k)
		}
		v := shardSum[k]
		shardSum[k] = [2]float64{v[0] + a, v[1] + b}
	}
	fmt.Println()
	for _, k := range order {
		v := shardSum[k]
		fmt.Printf("  %-24s  %.4f (%.2f %%)  stat %.4f\n", k, v[0], 100*v[0], v[1])
	}
}

// clkTck is USER_HZ, the unit of /proc/<pid>/stat's times (100 on
// Linux's usual builds; sysconf is not reachable without cgo).
const clkTck = 100

// statTicks is utime + stime of /proc/<pid>/stat (fields 14 and 15,
// counted after the parenthesised command name).
func statTicks(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}
