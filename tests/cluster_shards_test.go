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
				want := "-MOVED " + strconv.Itoa(slot) + " " + s.leaderAddr(o) + "\r\n"
				for _, cmd := range [][]string{{"GET", k}, {"SET", k, "1"}, {"INCR", k}} {
					if r := string(mustDo(t, conn, cmd...)); r != want {
						t.Errorf("%s: %q of group %d's slot %d: %q, want %q", c.nodes[i].id, cmd, o, slot, r, want)
					}
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
// three, group 1's leader killed a third of the way in (and started again
// after the load): no acknowledged INCR lost, none applied twice, every
// group's members equal after quiescence.
func TestClusterShardsGoRedisLeaderKill(t *testing.T) {
	s := mustShards(t, 3, 3)
	r := s.workload(shardLoad{workers: 8, ops: 3000, d: 20 * time.Second, killGroup: 1})
	if r.afterKill == 0 {
		t.Errorf("no operation on the killed group's slots succeeded after the kill")
	}
	for _, c := range s.groups {
		c.mustConverge(30 * time.Second)
	}
}

// shardLoad is a bounded workload: workers goroutines, each ops
// operations at most, for d at most; killGroup > 0 kills that group's
// leader once a third of the operations (or of d) has passed.
type shardLoad struct {
	workers, ops int
	d            time.Duration
	killGroup    int
}

type shardLoadResult struct {
	ops, errs, afterKill int64
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
	var ops, errs, afterKill atomic.Int64
	var killed atomic.Bool
	killedAt := -1
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
	var killWG sync.WaitGroup
	if l.killGroup > 0 {
		killWG.Add(1)
		go func() {
			defer killWG.Done()
			for ops.Load() < int64(l.workers*l.ops/3) && time.Since(start) < l.d/3 {
				time.Sleep(10 * time.Millisecond)
			}
			killedAt = s.leaderOf(l.killGroup)
			s.kill(l.killGroup, killedAt)
			killed.Store(true)
			t.Logf("killed group %d's leader %s after %d operations (%v)", l.killGroup,
				s.groups[l.killGroup].nodes[killedAt].id, ops.Load(), time.Since(start).Round(time.Millisecond))
		}()
	}
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
				errs.Add(1)
				if !killed.Load() {
					fail("%s before any kill: %v", key, err)
				}
				// a node gone: the client's map is refreshed now rather than
				// on its own timer (a command sent once does not mark the
				// node failing the way go-redis's retry does)
				cc.ReloadState(ctx)
				time.Sleep(20 * time.Millisecond)
			} else if killed.Load() && s.groupOf(testKeySlot(key)) == l.killGroup {
				afterKill.Add(1)
			}
			return ctx.Err() == nil
		})
	}
	wg.Wait()
	killWG.Wait()
	elapsed := time.Since(start)
	for _, f := range failures {
		t.Error(f)
	}
	if killedAt >= 0 {
		s.restart(l.killGroup, killedAt)
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
	t.Logf("%d operations in %v (%d errors, %d on the killed group's slots after the kill); counters: %d acknowledged, %d unsure, %d read back",
		ops.Load(), elapsed.Round(time.Millisecond), errs.Load(), afterKill.Load(), acked, unsure, total)
	return shardLoadResult{ops: ops.Load(), errs: errs.Load(), afterKill: afterKill.Load()}
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
