package tests

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Several Raft groups as one Redis Cluster (SHARDS.md's tests): the map
// every node serves, MOVED across groups, the arbiter's busy slots,
// go-redis's ClusterClient through a checked workload (with a leader kill
// in a group of three), redis-cli's --cluster check and --cluster create.

func TestClusterShardsMap(t *testing.T) {
	for _, m := range []int{1, 3} {
		t.Run(fmt.Sprintf("3x%d", m), func(t *testing.T) {
			s := mustShards(t, 3, m)
			s.checkSlots()
			s.checkInfoNodes()
			s.checkMoved()
			s.checkBusy()
			s.checkRedisCli()
		})
	}
}

// checkSlots: every node's CLUSTER SLOTS covers the 16,384 slots, each
// range inside one group's share with that group's leader as its master,
// and every node shows the same ranges and masters.
func (s *testShards) checkSlots() {
	t := s.t
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	first := ""
	for _, c := range s.groups {
		for i := range c.nodes {
			for {
				got, err := s.slotsView(ctx, c.cli(i))
				if err == nil && first == "" {
					first = got
				}
				if err == nil && got == first {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("node %s: CLUSTER SLOTS %q %v, the first node's %q", c.nodes[i].id, got, err, first)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
}

// slotsView checks one node's CLUSTER SLOTS against the split and the
// leaders, and returns it as text.
func (s *testShards) slotsView(ctx context.Context, cl *redis.Client) (string, error) {
	slots, err := cl.ClusterSlots(ctx).Result()
	if err != nil {
		return "", err
	}
	sort.Slice(slots, func(a, b int) bool { return slots[a].Start < slots[b].Start })
	next := 0
	var b strings.Builder
	for _, r := range slots {
		if int(r.Start) != next || r.End < r.Start {
			return "", fmt.Errorf("CLUSTER SLOTS has a hole or an overlap at %d: %+v", next, slots)
		}
		g := s.groupOf(int(r.Start))
		if lo, hi := s.slotRange(g); int(r.Start) < lo || int(r.End) > hi {
			return "", fmt.Errorf("range %d-%d spans groups: %+v", r.Start, r.End, slots)
		}
		if len(r.Nodes) == 0 || r.Nodes[0].Addr != s.leaderAddr(g) {
			return "", fmt.Errorf("range %d-%d: master %+v, group %d's leader is %s", r.Start, r.End, r.Nodes, g, s.leaderAddr(g))
		}
		if len(r.Nodes) != len(s.groups[g].nodes) {
			return "", fmt.Errorf("range %d-%d lists %d nodes, group %d has %d", r.Start, r.End, len(r.Nodes), g, len(s.groups[g].nodes))
		}
		fmt.Fprintf(&b, "%d-%d %s\n", r.Start, r.End, r.Nodes[0].Addr)
		next = int(r.End) + 1
	}
	if next != 16384 {
		return "", fmt.Errorf("CLUSTER SLOTS ends at %d: %+v", next, slots)
	}
	return b.String(), nil
}

// checkInfoNodes: every node's CLUSTER INFO counts every group (size,
// slots, known nodes, the largest epoch), and its CLUSTER NODES lists
// every node once: each group's leader a master with the group's share
// and config epoch index+1 (group g is index g: group 0 founded the
// directory, the others met it in order), the other members its replicas.
func (s *testShards) checkInfoNodes() {
	t := s.t
	t.Helper()
	ctx := context.Background()
	n, g := strconv.Itoa(s.nodes()), strconv.Itoa(len(s.groups))
	want := map[string]string{"cluster_state": "ok", "cluster_slots_assigned": "16384", "cluster_slots_ok": "16384",
		"cluster_slots_pfail": "0", "cluster_slots_fail": "0", "cluster_known_nodes": n, "cluster_size": g,
		"cluster_current_epoch": g}
	// one node's three views, or what is wrong with them
	check := func(gi, i int) error {
		c := s.groups[gi]
		m := s.clusterInfo(gi, i)
		for k, v := range want {
			if m[k] != v {
				return fmt.Errorf("CLUSTER INFO %s:%s, want %s", k, m[k], v)
			}
		}
		txt, err := c.cli(i).ClusterNodes(ctx).Result()
		if err == nil {
			err = s.nodesView(txt, c.addr(i))
		}
		if err != nil {
			return fmt.Errorf("CLUSTER NODES: %v\n%s", err, txt)
		}
		shards, err := c.cli(i).ClusterShards(ctx).Result()
		if err == nil {
			err = s.shardsView(shards)
		}
		if err != nil {
			return fmt.Errorf("CLUSTER SHARDS: %v\n%+v", err, shards)
		}
		return nil
	}
	// retried a while: a follower learns another's client address from its
	// leader's pong, a node the other groups' new leader within a refresh
	deadline := time.Now().Add(10 * time.Second)
	for gi, c := range s.groups {
		for i, nd := range c.nodes {
			for {
				err := check(gi, i)
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: %v", nd.id, err)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
}

// nodesView checks one node's CLUSTER NODES (self: its own address).
func (s *testShards) nodesView(txt, self string) error {
	lines := strings.Split(strings.TrimSpace(txt), "\n")
	if len(lines) != s.nodes() {
		return fmt.Errorf("%d lines, %d nodes", len(lines), s.nodes())
	}
	type line struct{ id, addr, flags, master, epoch, state, slots string }
	byAddr := map[string]line{}
	for _, ln := range lines {
		f := strings.Fields(ln)
		if len(f) < 8 {
			return fmt.Errorf("line %q", ln)
		}
		addr, _, _ := strings.Cut(f[1], "@")
		byAddr[addr] = line{id: f[0], addr: addr, flags: f[2], master: f[3], epoch: f[6], state: f[7], slots: strings.Join(f[8:], " ")}
	}
	if l, ok := byAddr[self]; !ok || !strings.Contains(l.flags, "myself") || strings.Count(txt, "myself") != 1 {
		return fmt.Errorf("myself is not %s", self)
	}
	for g, c := range s.groups {
		la := s.leaderAddr(g)
		m, ok := byAddr[la]
		lo, hi := s.slotRange(g)
		if !ok || !strings.Contains(m.flags, "master") || m.master != "-" || m.epoch != strconv.Itoa(g+1) ||
			m.state != "connected" || m.slots != fmt.Sprintf("%d-%d", lo, hi) {
			return fmt.Errorf("group %d's leader %s: %+v", g, la, m)
		}
		for i := range c.nodes {
			if a := c.addr(i); a != la {
				r, ok := byAddr[a]
				// a replica shows its master's epoch, as Redis's nodeEpoch does
				if !ok || !strings.Contains(r.flags, "slave") || r.master != m.id || r.epoch != m.epoch || r.state != "connected" || r.slots != "" {
					return fmt.Errorf("group %d's member %s: %+v, master %s", g, a, r, m.id)
				}
			}
		}
	}
	return nil
}

// shardsView checks one node's CLUSTER SHARDS: a shard per group with
// its share, its members, its leader the one master, every node online.
func (s *testShards) shardsView(shards []redis.ClusterShard) error {
	if len(shards) != len(s.groups) {
		return fmt.Errorf("%d shards, %d groups", len(shards), len(s.groups))
	}
	seen := map[int]bool{}
	for _, sh := range shards {
		if len(sh.Slots) != 1 {
			return fmt.Errorf("shard with slots %+v", sh.Slots)
		}
		g := s.groupOf(int(sh.Slots[0].Start))
		lo, hi := s.slotRange(g)
		if seen[g] || int(sh.Slots[0].Start) != lo || int(sh.Slots[0].End) != hi || len(sh.Nodes) != len(s.groups[g].nodes) {
			return fmt.Errorf("group %d's shard: %+v", g, sh)
		}
		seen[g] = true
		masters := 0
		for _, n := range sh.Nodes {
			addr := fmt.Sprintf("%s:%d", n.IP, n.Port)
			if n.Role == "master" {
				masters++
				if addr != s.leaderAddr(g) {
					return fmt.Errorf("group %d's master %s, its leader %s", g, addr, s.leaderAddr(g))
				}
			} else if n.Role != "replica" {
				return fmt.Errorf("group %d: role %q", g, n.Role)
			}
			if n.Health != "online" {
				return fmt.Errorf("group %d: %s health %q", g, addr, n.Health)
			}
		}
		if masters != 1 {
			return fmt.Errorf("group %d: %d masters", g, masters)
		}
	}
	return nil
}

// keyIn returns a key whose slot group g owns.
func (s *testShards) keyIn(g int) (string, int) {
	for i := 0; ; i++ {
		k := "k" + strconv.Itoa(i)
		if slot := testKeySlot(k); s.groupOf(slot) == g {
			return k, slot
		}
	}
}

// checkMoved: every node answers a keyed command on a slot of another
// group with MOVED to that group's leader, byte for byte (a follower does
// so for its own group's slots too: to its leader).
func (s *testShards) checkMoved() {
	t := s.t
	t.Helper()
	for g, c := range s.groups {
		for i := range c.nodes {
			conn := mustDial(t, c.addr(i))
			for o := range s.groups {
				if o == g && i == s.leaderOf(g) {
					continue
				}
				k, slot := s.keyIn(o)
				for _, cmd := range [][]string{{"GET", k}, {"SET", k, "1"}, {"INCR", k}} {
					// the map follows a change of leader within a refresh
					// (100 ms and a 50 ms view cache): a leader that changed
					// between leaderAddr and the reply is asked again
					var r, want string
					for try := 0; try < 20; try++ {
						want = "-MOVED " + strconv.Itoa(slot) + " " + s.leaderAddr(o) + "\r\n"
						if r = string(mustDo(t, conn, cmd...)); r == want {
							break
						}
						time.Sleep(100 * time.Millisecond)
					}
					if r != want {
						t.Errorf("%s: %q of group %d's slot %d: %q, want %q", c.nodes[i].id, cmd, o, slot, r, want)
					}
				}
			}
			// after READONLY a follower serves its own group's reads and
			// still redirects another group's (as a Redis replica does for
			// slots its master does not serve) and every write
			if i != s.leaderOf(g) {
				mustDo(t, conn, "READONLY")
				k, _ := s.keyIn(g)
				if r := string(mustDo(t, conn, "GET", k)); strings.HasPrefix(r, "-") {
					t.Errorf("%s: GET %s of its group after READONLY: %q", c.nodes[i].id, k, r)
				}
				o := (g + 1) % len(s.groups)
				k, slot := s.keyIn(o)
				want := "-MOVED " + strconv.Itoa(slot) + " " + s.leaderAddr(o) + "\r\n"
				if r := string(mustDo(t, conn, "GET", k)); r != want {
					t.Errorf("%s: GET %s of group %d after READONLY: %q, want %q", c.nodes[i].id, k, o, r, want)
				}
			}
			conn.Close()
		}
	}
}

// checkBusy: ADDSLOTS / ADDSLOTSRANGE of a slot another group owns are
// refused with Redis's text, on the leader and through a follower.
func (s *testShards) checkBusy() {
	t := s.t
	t.Helper()
	for g, c := range s.groups {
		o := (g + 1) % len(s.groups)
		lo, hi := s.slotRange(o)
		for i := range c.nodes {
			conn := mustDial(t, c.addr(i))
			want := "-ERR Slot " + strconv.Itoa(lo) + " is already busy\r\n"
			if r := string(mustDo(t, conn, "CLUSTER", "ADDSLOTS", strconv.Itoa(lo))); r != want {
				t.Errorf("%s: ADDSLOTS %d (group %d's): %q, want %q", c.nodes[i].id, lo, o, r, want)
			}
			want = "-ERR Slot " + strconv.Itoa(hi) + " is already busy\r\n"
			if r := string(mustDo(t, conn, "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(hi), strconv.Itoa(hi))); r != want {
				t.Errorf("%s: ADDSLOTSRANGE %d %d (group %d's): %q, want %q", c.nodes[i].id, hi, hi, o, r, want)
			}
			conn.Close()
		}
	}
	// nothing moved: the map is as before
	s.checkSlots()
}

// checkRedisCli: redis-cli --cluster check from every group's first node
// is clean: exit 0, no [ERR], every slot covered, every node agreeing,
// each master with its group's other members as replicas.
func (s *testShards) checkRedisCli() {
	t := s.t
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli not installed")
	}
	for _, c := range s.groups {
		out, err := runBounded(exec.Command("redis-cli", "--cluster", "check", c.addr(0)), 30*time.Second)
		// printed for a master with replicas only
		reps, n := fmt.Sprintf("%d additional replica(s)", len(c.nodes)-1), len(s.groups)
		if len(c.nodes) == 1 {
			n = 0
		}
		if err != nil || strings.Contains(out, "[ERR]") || !strings.Contains(out, "[OK] All 16384 slots covered.") ||
			!strings.Contains(out, "[OK] All nodes agree about slots configuration.") || strings.Count(out, reps) != n {
			t.Errorf("redis-cli --cluster check %s: %v\n%s", c.addr(0), err, out)
		}
	}
	// redis-cli -c follows MOVED: a key of the last group set through the
	// first group's node, read back through the second group's
	k, _ := s.keyIn(len(s.groups) - 1)
	cli := func(c *testCluster, args ...string) string {
		out, err := runBounded(exec.Command("redis-cli", append([]string{"-c", "-p", strconv.Itoa(c.nodes[0].port)}, args...)...), 10*time.Second)
		if err != nil {
			t.Errorf("redis-cli -c %q: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(out)
	}
	if out := cli(s.groups[0], "SET", k, "via-redis-cli"); out != "OK" {
		t.Errorf("redis-cli -c SET %s: %q", k, out)
	}
	if out := cli(s.groups[1], "GET", k); out != "via-redis-cli" {
		t.Errorf("redis-cli -c GET %s: %q", k, out)
	}
}

// TestClusterShardsGoRedis: go-redis's ClusterClient over three groups of
// one, every reply checked against a model, no error at all.
func TestClusterShardsGoRedis(t *testing.T) {
	s := mustShards(t, 3, 1)
	r := s.workload(shardLoad{workers: 8, ops: 3000, d: 20 * time.Second})
	if r.errs > 0 {
		t.Errorf("%d errors without a fault", r.errs)
	}
}

// TestClusterShardsGoRedisLeaderKill: the same over three groups of
// three, group 1's leader killed a quarter of the way in, then the leader
// of group 0 (which holds the directory) half way (both started again
// after the load), then group 2's leader paused for 3 s (SIGSTOP: an
// election happens without it; continued, it finds itself deposed) three
// quarters of the way: no acknowledged INCR lost, none applied twice,
// every group's members equal after quiescence.
func TestClusterShardsGoRedisLeaderKill(t *testing.T) {
	s := mustShards(t, 3, 3)
	r := s.workload(shardLoad{workers: 8, ops: 3000, d: 20 * time.Second, faults: []shardFault{{group: 1}, {group: 0}, {group: 2, pause: 3 * time.Second}}})
	for i, n := range r.afterFault {
		if n == 0 {
			t.Errorf("no operation on the slots of fault %d's group succeeded after it", i)
		}
	}
	for _, c := range s.groups {
		c.mustConverge(30 * time.Second)
	}
	// the map after the failover: the new leader everywhere, MOVED to it,
	// redis-cli's check clean
	s.checkSlots()
	s.checkInfoNodes()
	s.checkMoved()
	s.checkRedisCli()
}

// shardLoad is a bounded workload: workers goroutines, each ops
// operations at most, for d at most; faults happen one after the other,
// the k-th (of n) once k/(n+1) of the operations (or of d) has passed.
type shardLoad struct {
	workers, ops int
	d            time.Duration
	faults       []shardFault
}

// shardFault is group's leader killed (started again after the load), or
// with pause, stopped (SIGSTOP) for that long and continued.
type shardFault struct {
	group int
	pause time.Duration
}

// shardLoadResult: operations, errors, and per fault the operations on
// that group's slots that succeeded after it.
type shardLoadResult struct {
	ops, errs  int64
	afterFault []int64
}

// noRetry makes go-redis send a command once: a write whose reply was
// lost (the leader killed after it committed) must not be sent again, or
// the check could not tell a server's double apply from the client's.
// MOVED is still followed (a MOVED means not executed).
type noRetry struct{ redis.Cmder }

func (noRetry) NoRetry() bool { return true }

// notSent tells an error on which the command was certainly not
// executed: the dial failed, or Redis's errors for a command refused
// before it ran.
func notSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	msg := err.Error()
	for _, p := range []string{"NOSCRIPT ", "CLUSTERDOWN ", "MOVED ", "TRYAGAIN "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

const shardScript = `return redis.call('INCRBY', KEYS[1], ARGV[1])`

// ctrModel is one INCR key's model: the sum of acknowledged increments and
// of those whose fate is unknown (an error after it may have run).
type ctrModel struct{ acked, unsure int64 }

// rlModel is one RL.ALLOW key's model (limit 5 per hour: no refill within
// the test): allowed replies acknowledged, and calls of unknown fate.
type rlModel struct{ allowed, unsure int64 }

// workload runs the load through a ClusterClient and checks every reply:
// each worker owns its keys (strings, counters, limiters over every
// slot), so its model is sequential; after the load (and a restart of a
// killed node) every counter is read back: acknowledged ≤ value ≤
// acknowledged + unsure.
func (s *testShards) workload(l shardLoad) shardLoadResult {
	t := s.t
	t.Helper()
	cc := s.clusterClient()
	ctx, cancel := context.WithTimeout(context.Background(), l.d+60*time.Second)
	defer cancel()
	sum := sha1.Sum([]byte(shardScript))
	sha := hex.EncodeToString(sum[:])
	const keysPerWorker = 64
	var ops, errs, errsBefore atomic.Int64
	// faults begun (counted before each: the first errors come while kill
	// waits for the exit), the leader each one hit
	var faulted atomic.Int32
	hit := make([]int, len(l.faults))
	afterFault := make([]atomic.Int64, len(l.faults))
	var failures []string
	var mu sync.Mutex
	fail := func(f string, a ...any) {
		mu.Lock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(f, a...))
		}
		mu.Unlock()
	}
	counters := make([][]ctrModel, l.workers)
	start := time.Now()
	stop := make(chan struct{})
	timer := time.AfterFunc(l.d, func() { close(stop) })
	defer timer.Stop()
	// while the load runs, every node that answers must answer a whole
	// map: CLUSTER SLOTS covering every slot, cluster_state:ok (Jedis
	// refuses a map with holes, ioredis reconnects on fail); a node that
	// does not answer (killed, paused) is skipped
	watchDone := make(chan struct{})
	var watchWG sync.WaitGroup
	var views atomic.Int64
	watchWG.Add(1)
	go func() {
		defer watchWG.Done()
		for {
			for g, c := range s.groups {
				for i := range c.nodes {
					select {
					case <-watchDone:
						return
					default:
					}
					if err := s.wholeMap(g, i); err != nil {
						fail("during the load, %v", err)
					}
					views.Add(1)
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	var faultWG sync.WaitGroup
	faultWG.Add(1)
	go func() {
		defer faultWG.Done()
		for k, f := range l.faults {
			g := f.group
			frac := func(n int64) int64 { return n * int64(k+1) / int64(len(l.faults)+1) }
			for ops.Load() < frac(int64(l.workers*l.ops)) && time.Since(start) < time.Duration(frac(int64(l.d))) {
				time.Sleep(10 * time.Millisecond)
			}
			hit[k] = s.leaderOf(g)
			faulted.Add(1)
			what := "killed"
			if f.pause > 0 {
				what = "paused for " + f.pause.String()
				time.AfterFunc(f.pause, pauseNodes(t, s.groups[g], hit[k]))
			} else {
				s.kill(g, hit[k])
			}
			t.Logf("%s group %d's leader %s after %d operations (%v)", what, g,
				s.groups[g].nodes[hit[k]].id, ops.Load(), time.Since(start).Round(time.Millisecond))
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < l.workers; w++ {
		counters[w] = make([]ctrModel, keysPerWorker)
		strs := make([]map[string]bool, keysPerWorker) // possible values; "" is nil
		lims := make([]rlModel, keysPerWorker)
		for j := range strs {
			strs[j] = map[string]bool{"": true}
		}
		ctrs := counters[w]
		loadLoop(&wg, stop, l.ops, func(i int) bool {
			j := (i / 5) % keysPerWorker
			sk, ck, rk := fmt.Sprintf("s:%d:%d", w, j), fmt.Sprintf("c:%d:%d", w, j), fmt.Sprintf("r:%d:%d", w, j)
			var err error
			var key string
			switch i % 5 {
			case 0: // SET
				key = sk
				v := strconv.Itoa(i)
				cmd := redis.NewStatusCmd(ctx, "SET", sk, v)
				if err = cc.Process(ctx, noRetry{cmd}); err == nil {
					if cmd.Val() != "OK" {
						fail("SET %s: %q", sk, cmd.Val())
					}
					strs[j] = map[string]bool{v: true}
				} else if !notSent(err) {
					strs[j][v] = true
				}
			case 1: // GET (retried by go-redis: a read)
				key = sk
				v, e := cc.Get(ctx, sk).Result()
				if e == redis.Nil {
					v, e = "", nil
				}
				if err = e; err == nil {
					if !strs[j][v] {
						fail("GET %s: %q, possible %v", sk, v, strs[j])
					}
					strs[j] = map[string]bool{v: true}
				}
			case 2, 4: // INCR, or EVALSHA of INCRBY 2 (EVAL on NOSCRIPT)
				key = ck
				inc := int64(1)
				var cmd *redis.IntCmd
				if i%5 == 2 {
					cmd = redis.NewIntCmd(ctx, "INCR", ck)
					err = cc.Process(ctx, noRetry{cmd})
				} else {
					inc = 2
					cmd = redis.NewIntCmd(ctx, "EVALSHA", sha, 1, ck, inc)
					err = cc.Process(ctx, noRetry{cmd})
					if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT ") {
						cmd = redis.NewIntCmd(ctx, "EVAL", shardScript, 1, ck, inc)
						err = cc.Process(ctx, noRetry{cmd})
					}
				}
				c := &ctrs[j]
				if err == nil {
					if v := cmd.Val(); v < c.acked+inc || v > c.acked+c.unsure+inc {
						fail("%s %s +%d: %d, acknowledged %d, unsure %d", cmd.Name(), ck, inc, v, c.acked, c.unsure)
					}
					c.acked += inc
				} else if !notSent(err) {
					c.unsure += inc
				}
			case 3: // RL.ALLOW, 5 per hour
				key = rk
				cmd := redis.NewSliceCmd(ctx, "RL.ALLOW", rk, 5, 3600000)
				lm := &lims[j]
				if err = cc.Process(ctx, noRetry{cmd}); err == nil {
					res := cmd.Val()
					if len(res) != 10 || res[0] != "allowed" || res[2] != "limit" || res[3] != int64(5) || res[4] != "remaining" {
						fail("RL.ALLOW %s: %v", rk, res)
						break
					}
					allowed, remaining := res[1] == int64(1), res[5].(int64)
					switch {
					case allowed && lm.allowed >= 5:
						fail("RL.ALLOW %s allowed a 6th: %v", rk, res)
					case !allowed && lm.allowed+lm.unsure < 5:
						fail("RL.ALLOW %s refused after %d allowed (%d unsure): %v", rk, lm.allowed, lm.unsure, res)
					}
					if allowed {
						lm.allowed++
					}
					if remaining > 5-lm.allowed || remaining < 5-lm.allowed-lm.unsure {
						fail("RL.ALLOW %s remaining %d after %d allowed (%d unsure)", rk, remaining, lm.allowed, lm.unsure)
					}
				} else if !notSent(err) {
					lm.unsure++
				}
			}
			ops.Add(1)
			if err != nil {
				// an error before any fault is allowed too (a loaded machine's
				// election answers UNCERTAIN: a group of three keeps no
				// leader for sure), counted: the test of groups of one
				// requires none
				errs.Add(1)
				if faulted.Load() == 0 {
					errsBefore.Add(1)
					if errsBefore.Load() <= 3 {
						t.Logf("%s before any fault: %v", key, err)
					}
				}
				// a node gone: the client's map is refreshed now rather than
				// on its own timer (a command sent once does not mark the
				// node failing the way go-redis's retry does)
				cc.ReloadState(ctx)
				time.Sleep(20 * time.Millisecond)
			} else {
				g := s.groupOf(testKeySlot(key))
				for k := range int(faulted.Load()) {
					if l.faults[k].group == g {
						afterFault[k].Add(1)
					}
				}
			}
			return ctx.Err() == nil
		})
	}
	wg.Wait()
	faultWG.Wait()
	close(watchDone)
	watchWG.Wait()
	elapsed := time.Since(start)
	for _, f := range failures {
		t.Error(f)
	}
	for k, f := range l.faults {
		if f.pause == 0 {
			s.restart(f.group, hit[k])
		}
	}
	if len(l.faults) > 0 {
		s.waitOK(30 * time.Second)
	}
	// quiescence: every counter read back (a read may be retried)
	var acked, unsure, total int64
	for w := range counters {
		for j, c := range counters[w] {
			ck := fmt.Sprintf("c:%d:%d", w, j)
			var v int64
			var err error
			for try := 0; try < 50; try++ {
				if v, err = cc.Get(ctx, ck).Int64(); err == nil || err == redis.Nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil && err != redis.Nil {
				t.Fatalf("GET %s after the load: %v", ck, err)
			}
			if v < c.acked {
				t.Errorf("%s: %d, but %d acknowledged: an acknowledged increment lost", ck, v, c.acked)
			} else if v > c.acked+c.unsure {
				t.Errorf("%s: %d, but %d acknowledged and %d unsure: an increment applied twice", ck, v, c.acked, c.unsure)
			}
			acked, unsure, total = acked+c.acked, unsure+c.unsure, total+v
		}
	}
	res := shardLoadResult{ops: ops.Load(), errs: errs.Load()}
	for k := range afterFault {
		res.afterFault = append(res.afterFault, afterFault[k].Load())
	}
	t.Logf("%d operations in %v (%d errors, %d before any fault; on each fault's group's slots after it: %v); counters: %d acknowledged, %d unsure, %d read back; %d nodes' maps read during the load",
		res.ops, elapsed.Round(time.Millisecond), res.errs, errsBefore.Load(), res.afterFault, acked, unsure, total, views.Load())
	return res
}

// wholeMap reads node i of group g's CLUSTER SLOTS and CLUSTER INFO (1 s
// each) and says what is not whole in them; a node that does not answer
// in time (killed, paused, restarting) is no error. It reads no field a
// kill writes (it runs beside the faults).
func (s *testShards) wholeMap(g, i int) error {
	nd := s.groups[g].nodes[i]
	cl := redis.NewClient(&redis.Options{Addr: s.groups[g].addr(i), MaxRetries: -1, DialTimeout: time.Second,
		ReadTimeout: time.Second, Protocol: 2, PoolSize: 1})
	defer cl.Close()
	ctx := context.Background()
	slots, err := cl.ClusterSlots(ctx).Result()
	var rerr redis.Error
	if err != nil && !errors.As(err, &rerr) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: CLUSTER SLOTS: %v", nd.id, err)
	}
	n := 0
	for _, r := range slots {
		n += int(r.End - r.Start + 1)
	}
	if n != 16384 {
		return fmt.Errorf("%s: CLUSTER SLOTS covers %d slots: %+v", nd.id, n, slots)
	}
	info, err := cl.ClusterInfo(ctx).Result()
	if err != nil {
		return nil
	}
	if !strings.Contains(info, "cluster_state:ok\r\n") {
		return fmt.Errorf("%s: CLUSTER INFO:\n%s", nd.id, info)
	}
	return nil
}

// TestClusterShardsRedisCliCreate: redis-cli --cluster create over three
// fresh groups of one (no MEET by the test) makes a working cluster: the
// sequence Redis 7.0's redis-cli sends (CLUSTER ADDSLOTS of its split on
// each node, SET-CONFIG-EPOCH 1, 2, 3, then CLUSTER MEET <first> from the
// others, then a wait until every node's CLUSTER NODES agrees).
func TestClusterShardsRedisCliCreate(t *testing.T) {
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli not installed")
	}
	s := mustShardGroups(t, 3, 1)
	args := append([]string{"--cluster", "create"}, s.addrs()...)
	args = append(args, "--cluster-yes")
	// redis-cli waits for the join without a bound of its own
	out, err := runBounded(exec.Command("redis-cli", args...), 60*time.Second)
	if err != nil || strings.Contains(out, "[ERR]") || !strings.Contains(out, "[OK] All 16384 slots covered.") {
		t.Fatalf("redis-cli --cluster create: %v\n%s\n%s", err, out, s.logs())
	}
	t.Logf("redis-cli --cluster create:\n%s", out)
	s.waitOK(30 * time.Second)
	// redis-cli's split (lround of 16384/3: 0-5460, 5461-10922,
	// 10923-16383) on the nodes in the order given
	ctx := context.Background()
	want := [][2]int{{0, 5460}, {5461, 10922}, {10923, 16383}}
	for g, c := range s.groups {
		slots, err := c.cli(0).ClusterSlots(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		sort.Slice(slots, func(a, b int) bool { return slots[a].Start < slots[b].Start })
		if len(slots) != 3 {
			t.Fatalf("%s: CLUSTER SLOTS %+v", c.nodes[0].id, slots)
		}
		for i, r := range slots {
			if r.Start != want[i][0] || r.End != want[i][1] || r.Nodes[0].Addr != s.groups[i].addr(0) {
				t.Errorf("node of group %d: CLUSTER SLOTS %+v", g, slots)
			}
		}
	}
	out, err = runBounded(exec.Command("redis-cli", "--cluster", "check", s.groups[1].addr(0)), 30*time.Second)
	if err != nil || strings.Contains(out, "[ERR]") || !strings.Contains(out, "[OK] All nodes agree about slots configuration.") {
		t.Errorf("redis-cli --cluster check: %v\n%s", err, out)
	}
	cc := s.clusterClient()
	clusterWorkload(t, cc, 300)
}

// TestClusterShardsRestart: every process of a 3×1 cluster killed and
// started again on its dir (the directory group's first): the groups find
// each other again from their persisted records, every node's map and
// redis-cli's check are as before, and every acknowledged write is there.
func TestClusterShardsRestart(t *testing.T) {
	s := mustShards(t, 3, 1)
	cc := s.clusterClient()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 300
	for i := 0; i < n; i++ {
		if err := cc.Set(ctx, fmt.Sprintf("r:%d", i), i, 0).Err(); err != nil {
			t.Fatalf("SET r:%d: %v", i, err)
		}
	}
	for g := range s.groups {
		s.kill(g, 0)
	}
	for g := range s.groups {
		s.restart(g, 0)
	}
	s.waitOK(30 * time.Second)
	s.checkSlots()
	s.checkInfoNodes()
	s.checkMoved()
	s.checkRedisCli()
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("r:%d", i)
		if v, err := cc.Get(ctx, k).Int(); err != nil || v != i {
			t.Fatalf("GET %s after the restart: %d %v", k, v, err)
		}
	}
}

// TestClusterShardsAddGroup: a group started later joins a running
// cluster of two with CLUSTER MEET and owns nothing (the map shows it, its
// master has no slots); slots that group 1 gives up (DELSLOTSRANGE: the
// directory frees them, every node's map has a hole, CLUSTERDOWN for them)
// it then claims (ADDSLOTSRANGE), and the cluster of three is whole again:
// every view, MOVED, busy, redis-cli's check, a ClusterClient workload.
// (Their keys stay behind in group 1, as Redis leaves them on the node that
// DELSLOTS ran on: moving them is a migration, not this.)
func TestClusterShardsAddGroup(t *testing.T) {
	s := mustShards(t, 2, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s.addGroup(1)
	s.waitOK(30 * time.Second)
	txt, err := s.groups[0].cli(0).ClusterNodes(ctx).Result()
	if err != nil || !strings.Contains(txt, "127.0.0.1:"+strconv.Itoa(s.groups[2].nodes[0].port)+"@") {
		t.Fatalf("the new group is not in the first's CLUSTER NODES: %v\n%s", err, txt)
	}
	// group 1 gives up its upper half
	lo, hi := s.slotRange(1)
	mid := (lo + hi + 1) / 2
	if err := s.groups[1].cli(s.leaderOf(1)).Do(ctx, "CLUSTER", "DELSLOTSRANGE", mid, hi).Err(); err != nil {
		t.Fatalf("DELSLOTSRANGE %d %d: %v", mid, hi, err)
	}
	s.ranges[1][1] = mid - 1
	k, slot := "", 0
	for i := 0; slot < mid; i++ {
		k = "free" + strconv.Itoa(i)
		slot = testKeySlot(k)
	}
	conn := mustDial(t, s.groups[0].addr(0))
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := string(mustDo(t, conn, "GET", k))
		if r == "-CLUSTERDOWN Hash slot not served\r\n" && s.clusterInfo(0, 0)["cluster_state"] == "fail" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s (slot %d, freed): %q, CLUSTER INFO %v", k, slot, r, s.clusterInfo(0, 0))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// the new group claims them
	if err := s.groups[2].cli(0).Do(ctx, "CLUSTER", "ADDSLOTSRANGE", mid, hi).Err(); err != nil {
		t.Fatalf("new group: ADDSLOTSRANGE %d %d: %v", mid, hi, err)
	}
	s.ranges[2] = [2]int{mid, hi}
	s.waitOK(30 * time.Second)
	s.checkSlots()
	s.checkInfoNodes()
	s.checkMoved()
	s.checkBusy()
	s.checkRedisCli()
	clusterWorkload(t, s.clusterClient(), 300)
}
