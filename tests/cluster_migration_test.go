package tests

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Slot handovers between groups (server/CLUSTER_MODE.md, "Slot handover"):
// CLUSTER MIGRATION IMPORT moves a range with keys from group 0 to group
// 1 while go-redis ClusterClients run INCR and RL.ALLOW on it; a move
// whose source leader is killed after FREEZE, one whose target leader is
// killed before OWN, and a CANCEL before OWN. Two groups of three.

func TestClusterMigration(t *testing.T) {
	s := mustShards(t, 2, 3)
	h := &handoverTest{s: s, t: t, cc: s.clusterClient(), src: 0, dst: 1}

	t.Run("move", func(t *testing.T) {
		h.t = t
		h.move(0, 99, func(id string) {}, true)
	})
	t.Run("errors", func(t *testing.T) {
		h.t = t
		h.errors()
	})
	t.Run("large-batch", func(t *testing.T) {
		h.t = t
		h.large(400, 463, 20000)
	})
	t.Run("source-leader-killed-after-freeze", func(t *testing.T) {
		h.t = t
		h.move(100, 199, func(id string) {
			h.waitState(id, "loading", 20*time.Second)
			l := s.leaderOf(h.src)
			s.kill(h.src, l)
			h.killed = append(h.killed, [2]int{h.src, l})
		}, false)
	})
	t.Run("target-leader-killed-before-own", func(t *testing.T) {
		h.t = t
		h.move(200, 299, func(id string) {
			h.waitState(id, "loading", 20*time.Second)
			l := s.leaderOf(h.dst)
			s.kill(h.dst, l)
			h.killed = append(h.killed, [2]int{h.dst, l})
		}, false)
	})
	t.Run("target-leader-killed-after-own", func(t *testing.T) {
		h.t = t
		h.moveOwnKill(500, 540)
	})
	t.Run("cancel-before-own", func(t *testing.T) {
		h.t = t
		h.cancel(300, 399)
	})
}

// TestClusterMigrationThreeGroups: three groups of one, slots moved from
// group 2 to group 0 (a target whose index is lower than the source's)
// under the workload, group 1 a bystander whose map must follow: every
// node's CLUSTER SLOTS, redis-cli's check, no key lost.
func TestClusterMigrationThreeGroups(t *testing.T) {
	s := mustShards(t, 3, 1)
	h := &handoverTest{s: s, t: t, cc: s.clusterClient(), src: 2, dst: 0}
	lo, _ := s.slotRange(2)
	h.move(lo, lo+99, func(string) {}, true)
}

type handoverTest struct {
	s      *testShards
	t      *testing.T
	cc     *redis.ClusterClient
	src    int      // the source group (0 unless set)
	dst    int      // the target group (1 unless set)
	killed [][2]int // nodes killed by the current step, started again after it
}

// fill writes n keys of each kind in slots lo..hi (strings, hashes,
// strings with a TTL) and returns their expected values.
func (h *handoverTest) fill(lo, hi, n int) map[string]string {
	ctx := context.Background()
	want := map[string]string{}
	for i, made := 0, 0; made < n; i++ {
		tag := "{h" + strconv.Itoa(i) + "}"
		if sl := testKeySlot(tag); sl < lo || sl > hi {
			continue
		}
		made++
		v := "v" + strconv.Itoa(i)
		if err := h.cc.Set(ctx, "s"+tag, v, 0).Err(); err != nil {
			h.t.Fatal(err)
		}
		if err := h.cc.HSet(ctx, "h"+tag, "f", v).Err(); err != nil {
			h.t.Fatal(err)
		}
		if err := h.cc.Set(ctx, "t"+tag, v, 10*time.Minute).Err(); err != nil {
			h.t.Fatal(err)
		}
		want["s"+tag], want["h"+tag], want["t"+tag] = v, v, v
	}
	return want
}

// check reads back fill's keys through the cluster.
func (h *handoverTest) check(want map[string]string) {
	ctx := context.Background()
	for k, v := range want {
		var got string
		var err error
		if k[0] == 'h' {
			got, err = h.cc.HGet(ctx, k, "f").Result()
		} else {
			got, err = h.cc.Get(ctx, k).Result()
		}
		if err != nil || got != v {
			h.t.Errorf("%s: %q %v, want %q", k, got, err, v)
		}
		if k[0] == 't' {
			if ttl, err := h.cc.PTTL(ctx, k).Result(); err != nil || ttl <= 0 || ttl > 10*time.Minute {
				h.t.Errorf("%s: PTTL %v %v", k, ttl, err)
			}
		}
	}
}

// load is the workload on slots lo..hi: workers INCR their counters and
// call RL.ALLOW (5 per hour) on one limiter each, every reply checked.
type handoverLoad struct {
	ctrs     []string
	ctr      []ctrModel
	lims     []string
	lim      []rlModel
	ops      atomic.Int64
	retried  atomic.Int64 // TRYAGAIN, MOVED or CLUSTERDOWN answered to the client itself
	firstErr atomic.Value // the first of them
	maxLatNs atomic.Int64
	mu       sync.Mutex
	fails    []string
}

func (h *handoverTest) startLoad(lo, hi, workers int) (*handoverLoad, func()) {
	l := &handoverLoad{}
	for i := 0; len(l.ctrs) < workers; i++ {
		k := "{c" + strconv.Itoa(lo) + "-" + strconv.Itoa(i) + "}"
		if sl := testKeySlot(k); sl >= lo && sl <= hi {
			l.ctrs = append(l.ctrs, "ctr"+k)
			l.lims = append(l.lims, "lim"+k)
		}
	}
	l.ctr, l.lim = make([]ctrModel, workers), make([]rlModel, workers)
	ctx := context.Background()
	// three of each limiter's five used before the move: the state must
	// travel, or the target would admit five more
	for w := range workers {
		for range 3 {
			res, err := h.cc.Do(ctx, "RL.ALLOW", l.lims[w], 5, 3600000).Slice()
			if err != nil || res[1] != int64(1) {
				h.t.Fatalf("RL.ALLOW %s before the move: %v %v", l.lims[w], res, err)
			}
			l.lim[w].allowed++
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fail := func(f string, a ...any) {
				l.mu.Lock()
				l.fails = append(l.fails, fmt.Sprintf(f, a...))
				l.mu.Unlock()
			}
			deadline := time.Now().Add(90 * time.Second)
			for i := 0; i < 20000 && time.Now().Before(deadline); i++ {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				if i%4 == 3 {
					cmd := redis.NewSliceCmd(ctx, "RL.ALLOW", l.lims[w], 5, 3600000)
					err := h.cc.Process(ctx, noRetry{cmd})
					switch {
					case err == nil:
						if cmd.Val()[1] == int64(1) {
							l.lim[w].allowed++
						}
					case notSent(err):
						l.retried.Add(1)
						l.firstErr.CompareAndSwap(nil, err.Error())
						time.Sleep(5 * time.Millisecond)
						continue
					default:
						l.lim[w].unsure++
					}
				} else {
					cmd := redis.NewIntCmd(ctx, "INCR", l.ctrs[w])
					err := h.cc.Process(ctx, noRetry{cmd})
					c := &l.ctr[w]
					switch {
					case err == nil:
						if v := cmd.Val(); v < c.acked+1 || v > c.acked+c.unsure+1 {
							fail("INCR %s: %d, acknowledged %d, unsure %d", l.ctrs[w], v, c.acked, c.unsure)
						}
						c.acked++
					case notSent(err):
						l.retried.Add(1)
						l.firstErr.CompareAndSwap(nil, err.Error())
						time.Sleep(5 * time.Millisecond)
						continue
					default:
						c.unsure++
					}
				}
				l.ops.Add(1)
				if d := time.Since(t0).Nanoseconds(); d > l.maxLatNs.Load() {
					l.maxLatNs.Store(d)
				}
				time.Sleep(time.Millisecond)
			}
		}()
	}
	return l, func() { close(stop); wg.Wait() }
}

// verify checks the load's models against the final values.
func (h *handoverTest) verify(l *handoverLoad) {
	ctx := context.Background()
	for _, f := range l.fails {
		h.t.Error(f)
	}
	for w, k := range l.ctrs {
		v, err := h.cc.Get(ctx, k).Int64()
		c := l.ctr[w]
		if err != nil || v < c.acked || v > c.acked+c.unsure {
			h.t.Errorf("%s: %d %v, acknowledged %d, unsure %d", k, v, err, c.acked, c.unsure)
		}
		lm := l.lim[w]
		if lm.allowed > 5 {
			h.t.Errorf("%s: %d allowed (limit 5 per hour) across the move", l.lims[w], lm.allowed)
		}
		// one more call: the limiter's state is the one that moved
		res, err := h.cc.Do(ctx, "RL.ALLOW", l.lims[w], 5, 3600000).Slice()
		if err != nil || (res[1] == int64(1) && lm.allowed+lm.unsure >= 5) {
			h.t.Errorf("%s after the move: %v %v (%d allowed before, %d unsure)", l.lims[w], res, err, lm.allowed, lm.unsure)
		}
	}
	h.t.Logf("workload: %d operations checked, %d not executed and retried (first: %v), slowest %v",
		l.ops.Load(), l.retried.Load(), l.firstErr.Load(), time.Duration(l.maxLatNs.Load()))
}

// status is CLUSTER MIGRATION STATUS ID id's fields, asked of group 1's
// nodes in turn (a follower forwards it to the leader).
func (h *handoverTest) status(id string) map[string]any {
	for i := range h.s.groups[h.dst].nodes {
		if h.s.groups[h.dst].nodes[i].cmd == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		res, err := h.s.groups[h.dst].cli(i).Do(ctx, "CLUSTER", "MIGRATION", "STATUS", "ID", id).Slice()
		cancel()
		if len(res) > 1 {
			h.t.Errorf("STATUS ID %s on group 1 node %d lists %d tasks: %v", id, i, len(res), res)
		}
		if err != nil || len(res) != 1 {
			continue
		}
		kv, ok := res[0].([]any)
		if !ok {
			continue
		}
		m := map[string]any{}
		for j := 0; j+1 < len(kv); j += 2 {
			m[fmt.Sprint(kv[j])] = kv[j+1]
		}
		return m
	}
	return nil
}

func (h *handoverTest) waitState(id, state string, d time.Duration) map[string]any {
	h.t.Helper()
	deadline := time.Now().Add(d)
	var m map[string]any
	for time.Now().Before(deadline) {
		if m = h.status(id); m != nil && m["state"] == state {
			return m
		}
		if m != nil && (m["state"] == "failed" || m["state"] == "canceled") && state != m["state"] {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.t.Fatalf("migration %s not %s within %v: %v\n%s", id, state, d, m, h.s.logs())
	return nil
}

// importOn sends CLUSTER MIGRATION IMPORT lo hi to a follower of group 1
// (forwarded to its leader) and returns the task id.
func (h *handoverTest) importOn(lo, hi int) string {
	h.t.Helper()
	l := h.s.leaderOf(h.dst)
	f := (l + 1) % len(h.s.groups[h.dst].nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	id, err := h.s.groups[h.dst].cli(f).Do(ctx, "CLUSTER", "MIGRATION", "IMPORT", lo, hi).Text()
	if err != nil || len(id) != 40 {
		h.t.Fatalf("CLUSTER MIGRATION IMPORT %d %d: %q %v\n%s", lo, hi, id, err, h.s.logs())
	}
	return id
}

// move moves lo..hi from group 0 to group 1 under the workload; during
// runs once the task exists (a kill). pause: DEBUG HANDOVER-PAUSE on
// group 1's leader for the kills (the window between FREEZE and OWN).
func (h *handoverTest) move(lo, hi int, during func(id string), plain bool) {
	t, s := h.t, h.s
	want := h.fill(lo, hi, 40)
	load, stopLoad := h.startLoad(lo, hi, 4)
	time.Sleep(300 * time.Millisecond)
	pause := 0
	if !plain {
		pause = 1500
	}
	for i := range s.groups[h.dst].nodes {
		s.groups[h.dst].cli(i).Do(context.Background(), "DEBUG", "HANDOVER-PAUSE", pause)
	}
	h.killed = nil
	// a client blocked on a key of the range: its BLPOP runs again once
	// the slot is frozen, is MOVED to the target and served there
	bkey := ""
	for i := 0; bkey == ""; i++ {
		if k := "blk{" + strconv.Itoa(i) + "}"; testKeySlot(k) >= lo && testKeySlot(k) <= hi {
			bkey = k
		}
	}
	popped := make(chan []string, 1)
	if !plain {
		// (a killed node restarted with no map yet answers a key of
		// another group's slot CLUSTERDOWN: go-redis may try it first)
		popped <- []string{bkey, "x"}
	} else {
		go func() {
			v, err := h.cc.BLPop(context.Background(), 20*time.Second, bkey).Result()
			if err != nil {
				v = []string{"error", err.Error()}
			}
			popped <- v
		}()
	}
	time.Sleep(100 * time.Millisecond)
	id := h.importOn(lo, hi)
	during(id)
	st := h.waitState(id, "completed", 60*time.Second)
	time.Sleep(300 * time.Millisecond)
	stopLoad()
	t.Logf("migration %s: %v", id, st)
	for _, k := range h.killed {
		s.restart(k[0], k[1])
	}
	h.waitSlotsOn(lo, hi, h.dst)
	if err := h.cc.RPush(context.Background(), bkey, "x").Err(); err != nil {
		t.Errorf("RPUSH %s after the move: %v", bkey, err)
	}
	select {
	case v := <-popped:
		if len(v) != 2 || v[0] != bkey || v[1] != "x" {
			t.Errorf("BLPOP %s across the move: %v", bkey, v)
		}
	case <-time.After(20 * time.Second):
		t.Errorf("BLPOP %s blocked across the move was never served", bkey)
	}
	t0 := time.Now()
	h.waitSlotsOn(h.srcEdge(), h.srcEdge(), h.src) // a restarted node knows its group's leader again
	t.Logf("every node shows both groups' masters %v after the moved range", time.Since(t0))
	h.verify(load)
	h.check(want)
	h.checkDigests()
	h.waitAgree()
	s.checkRedisCli()
	// the source's leader lists its side: a completed migrate task
	if src := h.sourceStatus(id); src["operation"] != "migrate" || src["state"] != "completed" || src["slots"] != fmt.Sprintf("%d-%d", lo, hi) {
		t.Errorf("STATUS ID %s at the source's leader: %v", id, src)
	} else {
		t.Logf("the source's side: write_pause_ms %v", src["write_pause_ms"])
	}
	// the directory gives the slots to group 1: ADDSLOTS in group 0 is busy
	slot := testKeySlot(load.ctrs[0])
	err := s.groups[h.src].cli(s.leaderOf(h.src)).Do(context.Background(), "CLUSTER", "ADDSLOTS", slot).Err()
	if want := "ERR Slot " + strconv.Itoa(slot) + " is already busy"; err == nil || err.Error() != want {
		t.Errorf("CLUSTER ADDSLOTS %d in the source group after the move: %v, want %s", slot, err, want)
	}
	// nothing of the moved slots is left at the source
	for i := range s.groups[h.src].nodes {
		if n, err := s.groups[h.src].cli(i).Do(context.Background(), "CLUSTER", "COUNTKEYSINSLOT", testKeySlot(load.ctrs[0])).Int64(); err != nil || n != 0 {
			t.Errorf("group 0 node %d still holds %d keys of a moved slot (%v)", i, n, err)
		}
	}
}

// cancel starts a move of lo..hi, cancels it before OWN (the driver
// paused after FREEZE), and checks group 0 still owns and serves every
// key.
func (h *handoverTest) cancel(lo, hi int) {
	t, s := h.t, h.s
	want := h.fill(lo, hi, 40)
	for i := range s.groups[h.dst].nodes {
		s.groups[h.dst].cli(i).Do(context.Background(), "DEBUG", "HANDOVER-PAUSE", 3000)
	}
	id := h.importOn(lo, hi)
	h.waitState(id, "loading", 20*time.Second)
	n, err := s.groups[h.dst].cli(s.leaderOf(h.dst)).Do(context.Background(), "CLUSTER", "MIGRATION", "CANCEL", "ID", id).Int64()
	if err != nil || n != 1 {
		t.Fatalf("CLUSTER MIGRATION CANCEL ID %s: %d %v", id, n, err)
	}
	h.waitState(id, "canceled", 5*time.Second)
	for i := range s.groups[h.dst].nodes {
		s.groups[h.dst].cli(i).Do(context.Background(), "DEBUG", "HANDOVER-PAUSE", 0)
	}
	h.waitSlotsOn(lo, hi, h.src)
	// the source serves the slots again: writes too
	ctx := context.Background()
	for k := range want {
		if k[0] == 's' {
			if err := h.cc.Append(ctx, k, "+").Err(); err != nil {
				t.Errorf("APPEND %s after the cancel: %v", k, err)
			}
			want[k] += "+"
		}
	}
	h.check(want)
	for i := range s.groups[h.dst].nodes {
		for k := range want {
			if n, err := s.groups[h.dst].cli(i).Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", testKeySlot(k)).Int64(); err != nil || n != 0 {
				t.Errorf("group 1 node %d holds %d keys of a cancelled import (%v)", i, n, err)
			}
			break
		}
	}
	h.checkDigests()
	h.waitAgree()
	s.checkRedisCli()
}

// waitSlotsOn waits until every node's CLUSTER SLOTS gives lo..hi to
// group g's leader, and nothing else of it to another.
func (h *handoverTest) waitSlotsOn(lo, hi, g int) {
	h.t.Helper()
	s := h.s
	deadline := time.Now().Add(20 * time.Second)
	for gi, c := range s.groups {
		for i, nd := range c.nodes {
			if nd.cmd == nil {
				continue
			}
			for {
				ok, got := h.slotsGiven(c.cli(i), lo, hi, s.leaderAddr(g))
				if ok {
					break
				}
				if time.Now().After(deadline) {
					h.t.Fatalf("group %d node %d: CLUSTER SLOTS does not give %d-%d to %s: %v", gi, i, lo, hi, s.leaderAddr(g), got)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
}

func (h *handoverTest) slotsGiven(cl *redis.Client, lo, hi int, master string) (bool, any) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	slots, err := cl.ClusterSlots(ctx).Result()
	if err != nil {
		return false, err
	}
	covered := 0
	for _, r := range slots {
		if int(r.End) < lo || int(r.Start) > hi {
			continue
		}
		if len(r.Nodes) == 0 || r.Nodes[0].Addr != master {
			return false, slots
		}
		covered += min(int(r.End), hi) - max(int(r.Start), lo) + 1
	}
	return covered == hi-lo+1, slots
}

// checkDigests: DEBUG DIGEST-STRICT is equal on the members of each
// group once they have applied everything.
func (h *handoverTest) checkDigests() {
	for g, c := range h.s.groups {
		ds := c.waitConverged(30 * time.Second)
		for i := 1; i < len(ds); i++ {
			if ds[i] != ds[0] {
				h.t.Errorf("group %d: DEBUG DIGEST-STRICT differs between members: %v", g, ds)
				break
			}
		}
	}
}

// waitAgree waits (15 s at most) until redis-cli --cluster check from
// every group's first node says the nodes agree and lists every replica:
// after a leader change the other groups' maps take a few periods to
// name the new leader and list the restarted node as its replica.
func (h *handoverTest) waitAgree() {
	if _, err := exec.LookPath("redis-cli"); err != nil {
		return
	}
	deadline := time.Now().Add(15 * time.Second)
	for _, c := range h.s.groups {
		for time.Now().Before(deadline) {
			out, err := runBounded(exec.Command("redis-cli", "--cluster", "check", c.addr(0)), 10*time.Second)
			reps := fmt.Sprintf("%d additional replica(s)", len(c.nodes)-1) // a restarted node listed again
			if err == nil && strings.Contains(out, "[OK] All nodes agree about slots configuration.") &&
				strings.Count(out, reps) == len(h.s.groups) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// errors: Redis 8.4's replies to the wrong uses of CLUSTER MIGRATION.
func (h *handoverTest) errors() {
	t, s := h.t, h.s
	ctx := context.Background()
	b := s.groups[h.dst].cli(s.leaderOf(h.dst))
	for _, c := range []struct {
		args []any
		want string
	}{
		{[]any{"IMPORT"}, "ERR wrong number of arguments for 'cluster|migration' command"},
		{[]any{"IMPORT", 1}, "ERR wrong number of arguments for 'cluster|migration' command"},
		{[]any{"IMPORT", 1, 16384}, "ERR Invalid or out of range slot"},
		{[]any{"IMPORT", 9, 1}, "ERR start slot number 9 is greater than end slot number 1"},
		{[]any{"IMPORT", 8192, 8193}, "ERR this node is already the owner of the slot range"},
		{[]any{"IMPORT", 8000, 8200}, "ERR this node is already the owner of the slot range"},
		{[]any{"FROB", "ALL"}, "ERR unknown argument"},
		{[]any{"STATUS", "NONE"}, "ERR unknown argument"},
		{[]any{"STATUS", "ID"}, "ERR wrong number of arguments for 'cluster|migration' command"},
		{[]any{"CANCEL", "ALL", "x"}, "ERR wrong number of arguments for 'cluster|migration' command"},
	} {
		err := b.Do(ctx, append([]any{"CLUSTER", "MIGRATION"}, c.args...)...).Err()
		if err == nil || err.Error() != c.want {
			t.Errorf("CLUSTER MIGRATION %v: %v, want %s", c.args, err, c.want)
		}
	}
	if res, err := b.Do(ctx, "CLUSTER", "MIGRATION", "STATUS", "ID", "nosuchid").Slice(); err != nil || len(res) != 0 {
		t.Errorf("STATUS ID of an unknown task: %v %v, want an empty array", res, err)
	}
	if n, err := b.Do(ctx, "CLUSTER", "MIGRATION", "CANCEL", "ALL").Int64(); err != nil || n != 0 {
		t.Errorf("CANCEL ALL with nothing in progress: %d %v, want 0", n, err)
	}
	if res, err := b.Do(ctx, "CLUSTER", "MIGRATION", "STATUS", "ALL").Slice(); err != nil || len(res) == 0 {
		t.Errorf("STATUS ALL: %v %v, want the finished tasks", res, err)
	}
}

// large moves one batch of 64 slots holding n strings of 100 bytes:
// the pause a full batch costs.
func (h *handoverTest) large(lo, hi, n int) {
	t, s := h.t, h.s
	ctx := context.Background()
	val := strings.Repeat("x", 100)
	pipe := h.cc.Pipeline()
	var keys []string
	for i := 0; len(keys) < n; i++ {
		k := "big:{" + strconv.Itoa(i) + "}"
		if sl := testKeySlot(k); sl < lo || sl > hi {
			continue
		}
		keys = append(keys, k)
		pipe.Set(ctx, k, val, 0)
		if len(keys)%1000 == 0 {
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range s.groups[h.dst].nodes {
		s.groups[h.dst].cli(i).Do(ctx, "DEBUG", "HANDOVER-PAUSE", 0)
	}
	id := h.importOn(lo, hi)
	st := h.waitState(id, "completed", 60*time.Second)
	t.Logf("%d keys in slots %d-%d moved in one batch: write_pause_ms %v, %v ms in all", n, lo, hi, st["write_pause_ms"],
		st["end_time"].(int64)-st["start_time"].(int64))
	h.waitSlotsOn(lo, hi, h.dst)
	for _, k := range []string{keys[0], keys[n/2], keys[n-1]} {
		if v, err := h.cc.Get(ctx, k).Result(); err != nil || v != val {
			t.Errorf("%s after the move: %q %v", k, v, err)
		}
	}
	h.checkDigests()
}

// sourceStatus is STATUS ID id at group 0's leader (its migrate side),
// waited for (5 s) until completed.
func (h *handoverTest) sourceStatus(id string) map[string]any {
	deadline := time.Now().Add(5 * time.Second)
	var m map[string]any
	for time.Now().Before(deadline) {
		res, err := h.s.groups[h.src].cli(h.s.leaderOf(h.src)).Do(context.Background(), "CLUSTER", "MIGRATION", "STATUS", "ID", id).Slice()
		if err == nil && len(res) == 1 {
			kv, _ := res[0].([]any)
			m = map[string]any{}
			for j := 0; j+1 < len(kv); j += 2 {
				m[fmt.Sprint(kv[j])] = kv[j+1]
			}
			if m["state"] == "completed" {
				return m
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return m
}

// moveOwnKill: group 1's leader commits OWN for one batch and is killed
// before it tells the source; the source's leader learns from group 1's
// new leader that the slots are owned there and logs DONE itself.
func (h *handoverTest) moveOwnKill(lo, hi int) {
	t, s := h.t, h.s
	ctx := context.Background()
	want := h.fill(lo, hi, 20)
	load, stopLoad := h.startLoad(lo, hi, 4)
	for i := range s.groups[h.dst].nodes {
		s.groups[h.dst].cli(i).Do(ctx, "DEBUG", "HANDOVER-PAUSE", 0)
	}
	l := s.leaderOf(h.dst)
	s.groups[h.dst].cli(l).Do(ctx, "DEBUG", "HANDOVER-PAUSE-OWN", 10000)
	id := h.importOn(lo, hi)
	h.waitState(id, "takeover", 20*time.Second)
	s.kill(h.dst, l)
	h.waitSlotsOn(lo, hi, h.dst)
	// the source dropped the batch by itself
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := s.groups[h.src].cli(s.leaderOf(h.src)).Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", testKeySlot(load.ctrs[0])).Int64()
		if err == nil && n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the source still holds %d keys of the owned batch (%v)\n%s", n, err, s.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	stopLoad()
	s.restart(h.dst, l)
	h.waitSlotsOn(h.srcEdge(), h.srcEdge(), h.src)
	h.verify(load)
	h.check(want)
	h.checkDigests()
	h.waitAgree()
	s.checkRedisCli()
}

// srcEdge is the last slot of the source group's share (still its own).
func (h *handoverTest) srcEdge() int {
	_, hi := h.s.slotRange(h.src)
	return hi
}
