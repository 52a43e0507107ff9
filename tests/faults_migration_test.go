package tests

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/redis/go-redis/v9"
)

// TestFaultsMigrationSmoke: the fault suite's migration workload
// (FAULTS.md, "Migrations"). Two groups of three; a driver moves a
// range of 128 slots (two batches) back and forth between them with
// CLUSTER MIGRATION IMPORT, and at a handover step held by DEBUG
// HANDOVER-PAUSE / HANDOVER-PAUSE-OWN kills, stops or cuts off a leader,
// or cancels; clients (go-redis ClusterClients, a client on one node, a
// client on a random node per operation) append unique tokens, INCR
// counters, SET/GET registers and call RL.ALLOW on keys of that range.
// After healing: every acknowledged token once, counters within the
// acknowledged and uncertain INCRs, porcupine per key, no limiter over
// its bound, one owner per slot on every node's map, redis-cli's check,
// equal digests within each group.
func TestFaultsMigrationSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("the migration fault smoke runs for a minute or two")
	}
	// go-redis logs every failed dial: the kills make thousands
	redis.SetLogger(quietRedisLog{})
	seed := int64(18)
	if v := os.Getenv("LIMITDB_FAULTS_SEED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("LIMITDB_FAULTS_SEED=%q: %v", v, err)
		}
		seed = n
	}
	secs := 45
	if v := os.Getenv("LIMITDB_FAULTS_MIG_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("LIMITDB_FAULTS_MIG_SECONDS=%q: want a positive integer", v)
		}
		secs = n
	}
	out := os.Getenv("LIMITDB_FAULTS_OUT")
	keepOut := out != ""
	if out == "" {
		var err error
		if out, err = os.MkdirTemp("", "limitdb-faults-mig-"); err != nil {
			t.Fatal(err)
		}
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	s := mustShards(t, 2, 3, "--leader-wait-ms", "1000", "--max-clock-skew-ms", strconv.Itoa(int(migSkew.Milliseconds())))
	r := newMigRun(t, s, seed)
	t.Logf("seed %d, %d s of faults, history %s", seed, secs, r.file(out))
	var verdicts []string
	ok := false
	t.Cleanup(func() { r.writeHistory(out, verdicts, ok && !t.Failed()) })

	stop := make(chan struct{})
	var wg sync.WaitGroup
	r.startClients(stop, &wg)
	time.Sleep(500 * time.Millisecond)
	deadline := time.Now().Add(time.Duration(secs) * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		r.migrate(n)
		time.Sleep(time.Duration(100+r.rng.Intn(400)) * time.Millisecond)
	}
	r.healAll()
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()

	s.waitOK(30 * time.Second)
	r.checkTasks()
	r.checkSlots()
	h := &handoverTest{s: s, t: t, src: 0, dst: 1}
	h.checkDigests()
	h.waitAgree()
	s.checkRedisCli()
	verdicts, ok = r.check()
	for _, v := range verdicts {
		t.Log(v)
	}
	t.Logf("seed %d: %d operations (%d done, %d refused, %d uncertain), faults %v, migrations %v",
		seed, r.nops, r.nDone, r.nRefused, r.nUnknown, r.faults, r.migs)
	nf := 0
	for _, n := range r.faults {
		nf += n
	}
	// the line scripts/faults.sh --migration prints at the end
	fmt.Printf("faults summary (migration): seconds=%d ok=%v faults=%d operations=%d migrations=%v seed=%d history=%s\n",
		secs, ok && !t.Failed(), nf, r.nops, r.migs, seed, r.file(out))
	if !ok || t.Failed() {
		t.Errorf("migration fault smoke, seed %d: violation; history %s\n%s", seed, r.file(out), s.logs())
		keepOut = true
	}
	if keepOut {
		t.Logf("history kept: %s", r.file(out))
	} else {
		t.Cleanup(func() { os.RemoveAll(out) })
	}
}

// migSkew is the run's max-clock-skew-ms: the rate bound's widening per
// leadership fault (as faultRun.widening per new term).
const migSkew = 500 * time.Millisecond

// migRange is the range moved back and forth: two batches of 64 slots
// in group 0's half at the start.
var migRange = [2]int{1000, 1127}

type migRun struct {
	t     *testing.T
	s     *testShards
	seed  int64
	rng   *rand.Rand // the driver's
	start time.Time
	cc    *redis.ClusterClient

	// keys of the moved range (each kind spread over both batches) and
	// one of each kind outside it, a bystander
	lists, strs, ctrs, regs []string
	lims                    []rlSpec

	mu      sync.Mutex
	hist    []histLine
	tokens  map[string]map[string]opOutcome // append key -> token -> outcome
	ctrVals map[string][]int64              // acknowledged INCRs' values
	ctrUnk  map[string]int
	regOps  []porcupine.Operation
	ctrOps  []porcupine.Operation
	grants  map[string][]span
	faultAt [][2]time.Duration // leadership faults: the rate bound widens around them
	resumes []func()           // SIGSTOPped nodes

	nops, nDone, nRefused, nUnknown int
	faults                          map[string]int
	migs                            map[string]int
}

func newMigRun(t *testing.T, s *testShards, seed int64) *migRun {
	r := &migRun{t: t, s: s, seed: seed, rng: rand.New(rand.NewSource(seed)), start: time.Now(),
		tokens: map[string]map[string]opOutcome{}, ctrVals: map[string][]int64{}, ctrUnk: map[string]int{},
		grants: map[string][]span{}, faults: map[string]int{}, migs: map[string]int{}}
	r.cc = redis.NewClusterClient(&redis.ClusterOptions{Addrs: s.addrs(), Protocol: 2, MaxRedirects: 8, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: 4 * time.Second, WriteTimeout: 3 * time.Second, PoolSize: 8})
	t.Cleanup(func() { r.cc.Close() })
	lo, hi := migRange[0], migRange[1]
	mid := (lo + hi + 1) / 2
	pick := func(prefix string, n int) []string {
		var ks []string
		for b := 0; b < 2; b++ {
			blo, bhi := lo, mid-1
			if b == 1 {
				blo, bhi = mid, hi
			}
			for i, got := 0, 0; got < n/2; i++ {
				k := prefix + "{" + strconv.Itoa(i) + "}"
				if sl := testKeySlot(k); sl >= blo && sl <= bhi {
					ks = append(ks, k)
					got++
				}
			}
		}
		// the bystander: a slot of group 1 that never moves
		for i := 0; ; i++ {
			k := prefix + "{" + strconv.Itoa(i) + "}"
			if testKeySlot(k) >= 8192+100 {
				return append(ks, k)
			}
		}
	}
	r.lists, r.strs, r.ctrs, r.regs = pick("m:list", 4), pick("m:str", 2), pick("m:ctr", 4), pick("m:reg", 4)
	for i, k := range pick("m:rl", 2) {
		if i%2 == 0 {
			r.lims = append(r.lims, rlSpec{key: k, algo: "sliding-log", limit: 5, periodMs: 1000})
		} else {
			r.lims = append(r.lims, rlSpec{key: k, algo: "gcra", limit: 10, periodMs: 1000})
		}
	}
	return r
}

func (r *migRun) now() time.Duration { return time.Since(r.start) }

func (r *migRun) record(t0, t1 time.Duration, line string) {
	r.mu.Lock()
	r.hist = append(r.hist, histLine{t0, t1, fmt.Sprintf("%9.3f %9.3f %s", t0.Seconds(), t1.Seconds(), line)})
	r.mu.Unlock()
}

func (r *migRun) note(format string, a ...any) {
	t := r.now()
	r.record(t, t, "nemesis "+fmt.Sprintf(format, a...))
}

func (r *migRun) file(out string) string {
	return filepath.Join(out, fmt.Sprintf("migration-seed%d.txt", r.seed))
}

// migOutcome classifies an error: MOVED, ASK, CLUSTERDOWN, TRYAGAIN and
// a dial that failed were not executed (MOVED always means so, the
// handover's promise); anything else (UNCERTAIN, a timeout, a lost
// connection) may have been.
func migOutcome(err error) opOutcome {
	if err == nil || err == redis.Nil {
		return done
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return refused
	}
	for _, p := range []string{"MOVED ", "ASK ", "CLUSTERDOWN ", "TRYAGAIN "} {
		if strings.HasPrefix(err.Error(), p) {
			return refused
		}
	}
	return unknown
}

// migClient sends one command, once: through the ClusterClient (MOVED
// followed, nothing retried), or to one node of its own choice.
type migClient struct {
	name string
	rng  *rand.Rand
	cc   *redis.ClusterClient
	clis []*redis.Client // one node, or every node (drawn per operation)
}

func (c *migClient) do(ctx context.Context, args ...any) (*redis.Cmd, string) {
	cmd := redis.NewCmd(ctx, args...)
	if c.cc != nil {
		c.cc.Process(ctx, noRetry{cmd})
		return cmd, "cc"
	}
	i := c.rng.Intn(len(c.clis))
	c.clis[i].Process(ctx, noRetry{cmd})
	return cmd, "node" + strconv.Itoa(i)
}

func (r *migRun) startClients(stop <-chan struct{}, wg *sync.WaitGroup) {
	s := r.s
	node := func(addr string) *redis.Client {
		return redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second,
			ReadTimeout: 4 * time.Second, WriteTimeout: 3 * time.Second, PoolSize: 2, Protocol: 2})
	}
	var all []*redis.Client
	for _, a := range s.addrs() {
		all = append(all, node(a))
	}
	// the single client: one node of group 1, a follower most of the time
	single := node(s.groups[1].addr((s.leaderOf(1) + 1) % len(s.groups[1].nodes)))
	r.t.Cleanup(func() {
		single.Close()
		for _, c := range all {
			c.Close()
		}
	})
	clients := []*migClient{{name: "cc0", cc: r.cc}, {name: "cc1", cc: r.cc}, {name: "cc2", cc: r.cc},
		{name: "one", clis: []*redis.Client{single}}, {name: "any", clis: all}}
	for k, c := range clients {
		c.rng = rand.New(rand.NewSource(r.seed*100 + int64(k)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 200000 && !stopped(stop); n++ {
				r.op(c, k, n)
				time.Sleep(time.Duration(1+c.rng.Intn(4)) * time.Millisecond)
			}
		}()
	}
}

// op runs one operation of client c and records it.
func (r *migRun) op(c *migClient, k, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	run := func(args ...any) (t0, t1 time.Duration, cmd *redis.Cmd, o opOutcome) {
		t0 = r.now()
		cmd, via := c.do(ctx, args...)
		t1 = r.now()
		o = migOutcome(cmd.Err())
		res := fmt.Sprint(cmd.Val())
		if cmd.Err() != nil {
			res = "ERR " + cmd.Err().Error()
		}
		r.record(t0, t1, fmt.Sprintf("%s %s %v -> %s", c.name, via, args, res))
		r.mu.Lock()
		r.nops++
		switch o {
		case done:
			r.nDone++
		case refused:
			r.nRefused++
		default:
			r.nUnknown++
		}
		r.mu.Unlock()
		return
	}
	token := c.name + "-" + strconv.Itoa(n)
	switch p := c.rng.Intn(100); {
	case p < 30: // RPUSH or APPEND of a unique token
		var key string
		var o opOutcome
		if p < 20 {
			key = r.lists[c.rng.Intn(len(r.lists))]
			_, _, _, o = run("RPUSH", key, token)
		} else {
			key = r.strs[c.rng.Intn(len(r.strs))]
			_, _, _, o = run("APPEND", key, token+",")
		}
		r.mu.Lock()
		if r.tokens[key] == nil {
			r.tokens[key] = map[string]opOutcome{}
		}
		r.tokens[key][token] = o
		r.mu.Unlock()
	case p < 55: // INCR
		key := r.ctrs[c.rng.Intn(len(r.ctrs))]
		t0, t1, cmd, o := run("INCR", key)
		op := porcupine.Operation{ClientId: k, Input: faultCtrInput{key, true}, Call: int64(t0), Return: int64(t1)}
		r.mu.Lock()
		defer r.mu.Unlock()
		switch o {
		case refused:
			return
		case unknown:
			op.Output, op.Return = int64(-1), math.MaxInt64
			r.ctrUnk[key]++
		default:
			v, _ := cmd.Int64()
			op.Output = v
			r.ctrVals[key] = append(r.ctrVals[key], v)
		}
		r.ctrOps = append(r.ctrOps, op)
	case p < 65: // GET a counter
		key := r.ctrs[c.rng.Intn(len(r.ctrs))]
		t0, t1, cmd, _ := run("GET", key)
		if cmd.Err() != nil && cmd.Err() != redis.Nil {
			return // a read without a reply tells nothing
		}
		var v int64
		if cmd.Err() == nil {
			v, _ = strconv.ParseInt(cmd.Val().(string), 10, 64)
		}
		r.mu.Lock()
		r.ctrOps = append(r.ctrOps, porcupine.Operation{ClientId: k, Input: faultCtrInput{key: key}, Output: v, Call: int64(t0), Return: int64(t1)})
		r.mu.Unlock()
	case p < 75: // SET a register
		key := r.regs[c.rng.Intn(len(r.regs))]
		t0, t1, _, o := run("SET", key, token)
		op := porcupine.Operation{ClientId: k, Input: faultRegInput{key, true, token}, Output: "", Call: int64(t0), Return: int64(t1)}
		switch o {
		case refused:
			return
		case unknown:
			op.Return = math.MaxInt64
		}
		r.mu.Lock()
		r.regOps = append(r.regOps, op)
		r.mu.Unlock()
	case p < 85: // GET a register
		key := r.regs[c.rng.Intn(len(r.regs))]
		t0, t1, cmd, _ := run("GET", key)
		if cmd.Err() != nil && cmd.Err() != redis.Nil {
			return
		}
		v := ""
		if cmd.Err() == nil {
			v = cmd.Val().(string)
		}
		r.mu.Lock()
		r.regOps = append(r.regOps, porcupine.Operation{ClientId: k, Input: faultRegInput{key: key}, Output: v, Call: int64(t0), Return: int64(t1)})
		r.mu.Unlock()
	default: // RL.ALLOW
		l := r.lims[c.rng.Intn(len(r.lims))]
		t0, t1, cmd, o := run("RL.ALLOW", l.key, l.limit, l.periodMs, "ALGO", l.algo)
		if o != done {
			return // an uncertain grant counts as not granted
		}
		vals, _ := cmd.Slice()
		for j := 0; j+1 < len(vals); j += 2 {
			if vals[j] == "allowed" && vals[j+1] == int64(1) {
				r.mu.Lock()
				r.grants[l.key] = append(r.grants[l.key], span{t0, t1})
				r.mu.Unlock()
			}
		}
	}
}

// ---- the migration driver and its nemeses ----

// migSteps are the faults a migration meets: at a step held by DEBUG
// HANDOVER-PAUSE (after FREEZE: "loading") or HANDOVER-PAUSE-OWN (after
// OWN: "takeover"), or at a random moment.
var migSteps = []string{"plain", "kill-src@loading", "kill-dst@loading", "kill-dst@takeover", "kill-src@takeover",
	"pause-src@loading", "pause-dst@loading", "cut@loading", "cut@takeover", "cancel@loading", "kill-any@random"}

// owners is, per slot of migRange, the group whose own leader lists it
// as its own in CLUSTER SLOTS (-1: neither, in transition).
func (r *migRun) owners() []int {
	out := make([]int, migRange[1]-migRange[0]+1)
	for i := range out {
		out[i] = -1
	}
	for g := range r.s.groups {
		l := r.s.groups[g].leader()
		if l < 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		slots, err := r.s.groups[g].cli(l).ClusterSlots(ctx).Result()
		cancel()
		if err != nil {
			continue
		}
		me := r.s.groups[g].addr(l)
		for _, sr := range slots {
			if len(sr.Nodes) == 0 || sr.Nodes[0].Addr != me {
				continue
			}
			for sl := max(int(sr.Start), migRange[0]); sl <= min(int(sr.End), migRange[1]); sl++ {
				if out[sl-migRange[0]] >= 0 {
					// both leaders list it (the source until its map
					// shows the target's OWN): in transition
					out[sl-migRange[0]] = -2
				} else if out[sl-migRange[0]] == -1 {
					out[sl-migRange[0]] = g
				}
			}
		}
	}
	return out
}

// setPause sets DEBUG HANDOVER-PAUSE(-OWN) on every running node of
// group g (a new leader drives the task on with its own).
func (r *migRun) setPause(g int, sub string, ms int) {
	for i, nd := range r.s.groups[g].nodes {
		if nd.cmd == nil || r.isPaused(g, i) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		r.s.groups[g].cli(i).Do(ctx, "DEBUG", sub, ms)
		cancel()
	}
}

var migPaused = map[[2]int]bool{}
var migPausedMu sync.Mutex

func (r *migRun) isPaused(g, i int) bool {
	migPausedMu.Lock()
	defer migPausedMu.Unlock()
	return migPaused[[2]int{g, i}]
}

// migrate runs one migration: the part of migRange that group src owns
// goes to the other group, under the step drawn for it.
func (r *migRun) migrate(n int) {
	var own []int
	for try := 0; ; try++ {
		own = r.owners()
		undecided := false
		for _, g := range own {
			undecided = undecided || g < 0
		}
		if !undecided {
			break
		}
		if try == 100 {
			r.t.Fatalf("slots %d-%d without an owner on either group's leader for 10 s: %v", migRange[0], migRange[1], own)
		}
		time.Sleep(100 * time.Millisecond)
	}
	src := own[0]
	dst := 1 - src
	var args []any
	for i := 0; i < len(own); {
		if own[i] != src {
			i++
			continue
		}
		j := i
		for j+1 < len(own) && own[j+1] == src {
			j++
		}
		args = append(args, migRange[0]+i, migRange[0]+j)
		i = j + 1
	}
	step := migSteps[r.rng.Intn(len(migSteps))]
	if n == 0 {
		step = "plain"
	}
	what, at, _ := strings.Cut(step, "@")
	r.setPause(dst, "HANDOVER-PAUSE", 0)
	r.setPause(dst, "HANDOVER-PAUSE-OWN", 0)
	switch at {
	case "loading":
		r.setPause(dst, "HANDOVER-PAUSE", 1500)
	case "takeover":
		r.setPause(dst, "HANDOVER-PAUSE-OWN", 1500)
	}
	h := &handoverTest{s: r.s, t: r.t, src: src, dst: dst}
	var id string
	for try := 0; ; try++ {
		c := r.s.groups[dst]
		i := r.rng.Intn(len(c.nodes))
		if c.nodes[i].cmd == nil || r.isPaused(dst, i) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := c.cli(i).Do(ctx, append([]any{"CLUSTER", "MIGRATION", "IMPORT"}, args...)...).Text()
		cancel()
		t := r.now()
		r.record(t, t, fmt.Sprintf("driver migration %d group %d -> %d %v (%s) via %s: %q %v", n, src, dst, args, step, c.nodes[i].id, res, err))
		if err == nil {
			id = res
			break
		}
		// a refusal after an earlier try that timed out but was logged
		// (the task ran, the slots are the target's now), or a target
		// whose map has not seen the last move yet: the next migration
		// looks at the owners again
		if strings.HasPrefix(err.Error(), "ERR ") || try == 20 {
			r.migs["not started"]++
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	// the step's fault
	hold := func(state string) bool {
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			m := h.status(id)
			if m != nil && m["state"] == state {
				return true
			}
			if m != nil && (m["state"] == "completed" || m["state"] == "failed" || m["state"] == "canceled") {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		r.note("migration %d never %s: the fault is not injected", n, state)
		return false
	}
	var killed [][2]int
	reached := at == "random"
	if at == "random" {
		time.Sleep(time.Duration(r.rng.Intn(300)) * time.Millisecond)
	} else if hold(at) {
		reached = true
	}
	if reached {
		t0 := r.now()
		switch what {
		case "kill-src", "kill-dst", "kill-any":
			g := src
			if what == "kill-dst" || (what == "kill-any" && r.rng.Intn(2) == 0) {
				g = dst
			}
			i := r.s.groups[g].leader()
			if what == "kill-any" {
				i = r.rng.Intn(len(r.s.groups[g].nodes))
			}
			if i >= 0 {
				r.note("SIGKILL %s (group %d) at %s of migration %d", r.s.groups[g].nodes[i].id, g, at, n)
				r.s.kill(g, i)
				killed = append(killed, [2]int{g, i})
				r.faults["kill"]++
			}
		case "pause-src", "pause-dst":
			g := src
			if what == "pause-dst" {
				g = dst
			}
			if i := r.s.groups[g].leader(); i >= 0 {
				r.note("SIGSTOP %s (group %d) at %s of migration %d", r.s.groups[g].nodes[i].id, g, at, n)
				pid := r.s.groups[g].nodes[i].cmd.Process.Pid
				migPausedMu.Lock()
				migPaused[[2]int{g, i}] = true
				migPausedMu.Unlock()
				syscall.Kill(pid, syscall.SIGSTOP)
				resume := sync.OnceFunc(func() {
					syscall.Kill(pid, syscall.SIGCONT)
					migPausedMu.Lock()
					delete(migPaused, [2]int{g, i})
					migPausedMu.Unlock()
				})
				r.resumes = append(r.resumes, resume)
				time.Sleep(time.Duration(1000+r.rng.Intn(1500)) * time.Millisecond)
				resume()
				r.note("SIGCONT %s", r.s.groups[g].nodes[i].id)
				r.faults["pause"]++
			}
		case "cut":
			r.note("links between group 0 and group 1 cut at %s of migration %d", at, n)
			r.cutGroups()
			time.Sleep(time.Duration(1000+r.rng.Intn(1500)) * time.Millisecond)
			r.healLinks()
			r.note("links between the groups healed")
			r.faults["cut"]++
		case "cancel":
			l := r.s.groups[dst].leader()
			if l >= 0 {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				v, err := r.s.groups[dst].cli(l).Do(ctx, "CLUSTER", "MIGRATION", "CANCEL", "ID", id).Result()
				cancel()
				r.note("CLUSTER MIGRATION CANCEL ID %s at %s of migration %d: %v %v", id, at, n, v, err)
				r.faults["cancel"]++
			}
		}
		if what != "plain" && what != "cancel" {
			r.mu.Lock()
			r.faultAt = append(r.faultAt, [2]time.Duration{t0, r.now()})
			r.mu.Unlock()
		}
	}
	r.setPause(dst, "HANDOVER-PAUSE", 0)
	r.setPause(dst, "HANDOVER-PAUSE-OWN", 0)
	if len(killed) > 0 {
		time.Sleep(time.Duration(300+r.rng.Intn(700)) * time.Millisecond)
		for _, k := range killed {
			r.s.restart(k[0], k[1])
			r.note("restarted %s", r.s.groups[k[0]].nodes[k[1]].id)
		}
		r.mu.Lock()
		r.faultAt[len(r.faultAt)-1][1] = r.now()
		r.mu.Unlock()
	}
	// wait for the end of the task
	deadline := time.Now().Add(60 * time.Second)
	var m map[string]any
	var unknownSince time.Time
	st := ""
	for time.Now().Before(deadline) {
		m = h.status(id)
		if st, _ = m["state"].(string); st == "completed" || st == "failed" || st == "canceled" {
			break
		}
		// a task table is the leader's memory: a task finished before its
		// leader was killed is listed by no node (the new leader resumes
		// only the imports its engine still holds); the next migration
		// reads the owners
		if m != nil {
			unknownSince = time.Time{}
		} else if unknownSince.IsZero() {
			unknownSince = time.Now()
		} else if len(killed) > 0 && time.Since(unknownSince) > 5*time.Second {
			st = "listed by no node after a kill"
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st != "completed" && st != "failed" && st != "canceled" && st != "listed by no node after a kill" {
		r.t.Fatalf("migration %d (%s) not finished within 60 s: %v\n%s", n, id, m, r.s.logs())
	}
	r.migs[st]++
	r.note("migration %d %s: %v", n, st, m)
}

// cutGroups cuts every Raft / inter-node link between the two groups:
// each node's proxy refuses the other group's nodes.
func (r *migRun) cutGroups() {
	for g, c := range r.s.groups {
		for _, nd := range c.nodes {
			for _, other := range r.s.groups[1-g].nodes {
				nd.proxy.block(other.ip)
			}
		}
	}
}

func (r *migRun) healLinks() {
	for _, c := range r.s.groups {
		for _, nd := range c.nodes {
			nd.proxy.unblock()
		}
	}
}

// healAll: links open, stopped nodes continued, every node running, no
// handover pause left.
func (r *migRun) healAll() {
	r.healLinks()
	for _, f := range r.resumes {
		f()
	}
	for g, c := range r.s.groups {
		for i, nd := range c.nodes {
			if nd.cmd == nil {
				r.s.restart(g, i)
			}
		}
		r.setPause(g, "HANDOVER-PAUSE", 0)
		r.setPause(g, "HANDOVER-PAUSE-OWN", 0)
	}
	r.note("healed")
}

// ---- the checks after quiescence ----

// checkTasks: once healed, no migration task is left in progress on
// either group's leader (waited for: 20 s), and both lists go into the
// history.
func (r *migRun) checkTasks() {
	deadline := time.Now().Add(20 * time.Second)
	for {
		var busy []string
		for g, c := range r.s.groups {
			l := r.s.leaderOf(g)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			res, err := c.cli(l).Do(ctx, "CLUSTER", "MIGRATION", "STATUS", "ALL").Slice()
			cancel()
			if err != nil {
				busy = append(busy, fmt.Sprintf("group %d: %v", g, err))
				continue
			}
			for _, row := range res {
				kv, _ := row.([]any)
				m := map[string]any{}
				for j := 0; j+1 < len(kv); j += 2 {
					m[fmt.Sprint(kv[j])] = kv[j+1]
				}
				if st := m["state"]; st != "completed" && st != "failed" && st != "canceled" {
					busy = append(busy, fmt.Sprintf("group %d (%s): %v", g, c.nodes[l].id, m))
				}
			}
		}
		if len(busy) == 0 {
			return
		}
		if time.Now().After(deadline) {
			r.note("tasks in progress after quiescence: %v", busy)
			r.t.Errorf("migration tasks still in progress 20 s after the faults were healed: %v", busy)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkSlots: every node's CLUSTER SLOTS covers the 16,384 slots once
// and all agree on each slot's master (waited for: 15 s, the maps follow
// a leader change within a period or two).
func (r *migRun) checkSlots() {
	deadline := time.Now().Add(15 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		last = ""
		var ref []string
		for g, c := range r.s.groups {
			for i := range c.nodes {
				owner, err := slotMasters(c.cli(i))
				if err != "" {
					last += fmt.Sprintf("%s: %s; ", c.nodes[i].id, err)
					continue
				}
				if ref == nil {
					ref = owner
				} else {
					for sl := range owner {
						if owner[sl] != ref[sl] {
							last += fmt.Sprintf("%s (group %d) gives slot %d to %s, another node to %s; ", c.nodes[i].id, g, sl, owner[sl], ref[sl])
							break
						}
					}
				}
			}
		}
		if last == "" {
			r.checkStranded(ref)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.t.Errorf("CLUSTER SLOTS: not exactly one agreed owner per slot after quiescence: %s", last)
}

// checkStranded: no member of the group that does not own a workload
// key's slot (owner: the agreed map) holds keys of that slot (a move's
// DONE, or a CANCEL's ABORT, left none behind).
func (r *migRun) checkStranded(owner []string) {
	var keys []string
	keys = append(append(append(append(keys, r.lists...), r.strs...), r.ctrs...), r.regs...)
	for _, l := range r.lims {
		keys = append(keys, l.key)
	}
	for g, c := range r.s.groups {
		mine := map[string]bool{}
		for i := range c.nodes {
			mine[c.addr(i)] = true
		}
		for _, k := range keys {
			sl := testKeySlot(k)
			if mine[owner[sl]] {
				continue
			}
			for i := range c.nodes {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				n, err := c.cli(i).Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", sl).Int64()
				cancel()
				if err != nil || n != 0 {
					r.t.Errorf("%s (group %d) holds %d keys of slot %d (%s's, owned by %s) (%v)", c.nodes[i].id, g, n, sl, k, owner[sl], err)
				}
			}
		}
	}
}

// slotMasters is a node's CLUSTER SLOTS as slot -> master address, or
// what is wrong with it (a slot twice, a slot uncovered).
func slotMasters(cl *redis.Client) ([]string, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	slots, err := cl.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, err.Error()
	}
	owner := make([]string, 16384)
	for _, sr := range slots {
		for sl := sr.Start; sl <= sr.End; sl++ {
			if sl < 0 || sl >= 16384 || len(sr.Nodes) == 0 {
				return nil, fmt.Sprintf("bad range %v", sr)
			}
			if owner[sl] != "" {
				return nil, fmt.Sprintf("slot %d twice (%s, %s)", sl, owner[sl], sr.Nodes[0].Addr)
			}
			owner[sl] = sr.Nodes[0].Addr
		}
	}
	for sl, o := range owner {
		if o == "" {
			return nil, fmt.Sprintf("slot %d uncovered", sl)
		}
	}
	return owner, ""
}

// check reads the final state through the ClusterClient and runs the
// checkers; it returns their verdicts and whether all passed.
func (r *migRun) check() ([]string, bool) {
	ctx := context.Background()
	ok := true
	var verdicts []string
	add := func(c checkResult) {
		verdicts = append(verdicts, c.verdict)
		ok = ok && c.ok
	}
	// appends: every acknowledged token once
	for _, key := range append(append([]string(nil), r.lists...), r.strs...) {
		var got []string
		var err error
		if strings.HasPrefix(key, "m:list") {
			got, err = r.cc.LRange(ctx, key, 0, -1).Result()
		} else {
			var v string
			v, err = r.cc.Get(ctx, key).Result()
			got = strings.Split(strings.TrimSuffix(v, ","), ",")
			if v == "" {
				got = nil
			}
		}
		if err != nil && err != redis.Nil {
			r.t.Fatalf("final read of %s: %v", key, err)
		}
		add(checkAppends(key, r.tokens[key], got))
	}
	// counters
	for _, key := range r.ctrs {
		v, err := r.cc.Get(ctx, key).Int64()
		if err != nil && err != redis.Nil {
			r.t.Fatalf("final GET %s: %v", key, err)
		}
		c := checkCounter(r.ctrVals[key], r.ctrUnk[key], v)
		c.verdict = key + ": " + c.verdict
		add(c)
		t := r.now()
		r.ctrOps = append(r.ctrOps, porcupine.Operation{ClientId: 1 << 20, Input: faultCtrInput{key: key}, Output: v, Call: int64(t), Return: int64(t)})
	}
	for _, key := range r.regs {
		t0 := r.now()
		v, err := r.cc.Get(ctx, key).Result()
		if err != nil && err != redis.Nil {
			r.t.Fatalf("final GET %s: %v", key, err)
		}
		r.regOps = append(r.regOps, porcupine.Operation{ClientId: 1 << 20, Input: faultRegInput{key: key}, Output: v, Call: int64(t0), Return: int64(r.now())})
	}
	add(checkPorcupine("register", faultRegisterModel, r.regOps, 60*time.Second, ""))
	add(checkPorcupine("counter", faultCounterModel, r.ctrOps, 60*time.Second, ""))
	// limiters: the bound over every window, widened around the
	// leadership faults only (a move itself earns no widening)
	for _, l := range r.lims {
		g := append([]span(nil), r.grants[l.key]...)
		sort.Slice(g, func(a, b int) bool { return g[a].t0 < g[b].t0 })
		pass, note := checkRateBound(l, g, r.widening)
		verdicts = append(verdicts, "ratelimit: "+note)
		ok = ok && pass
	}
	return verdicts, ok
}

// widening: max-clock-skew-ms for each leadership fault (kill, stop,
// cut) within a second of the window [a, b].
func (r *migRun) widening(a, b time.Duration) time.Duration {
	var w time.Duration
	for _, f := range r.faultAt {
		if f[0] <= b+time.Second && f[1] >= a-time.Second {
			w += migSkew
		}
	}
	return w
}

// checkAppends: in the final value of key, every token whose append was
// acknowledged is present once, an uncertain one at most once, a refused
// one (MOVED, CLUSTERDOWN, TRYAGAIN) never, and nothing unsent.
func checkAppends(key string, sent map[string]opOutcome, got []string) checkResult {
	r := checkResult{ops: len(sent), ok: true}
	var bad []string
	count := map[string]int{}
	for _, tok := range got {
		count[tok]++
	}
	acked := 0
	for tok, o := range sent {
		n := count[tok]
		switch {
		case o == done:
			acked++
			if n != 1 {
				bad = append(bad, fmt.Sprintf("acknowledged %s present %d times", tok, n))
			}
		case o == refused && n > 0:
			bad = append(bad, fmt.Sprintf("%s was refused (not executed), yet present %d times", tok, n))
		case n > 1:
			bad = append(bad, fmt.Sprintf("uncertain %s present %d times", tok, n))
		}
	}
	for tok := range count {
		if _, ok := sent[tok]; !ok {
			bad = append(bad, tok+" present, never sent")
		}
	}
	sort.Strings(bad)
	r.verdict = fmt.Sprintf("appends %s: %d sent, %d acknowledged, %d in the final value", key, len(sent), acked, len(got))
	if len(bad) > 0 {
		r.ok = false
		r.verdict += ": VIOLATION: " + strings.Join(firstN(bad, 10), "; ")
	}
	return r
}

// writeHistory writes the run: header, verdicts, then every operation and
// nemesis line in call order.
func (r *migRun) writeHistory(out string, verdicts []string, ok bool) {
	var b strings.Builder
	res := "ok"
	if !ok {
		res = "VIOLATION"
	}
	fmt.Fprintf(&b, "# limitdb migration fault run, seed %d (LIMITDB_FAULTS_SEED=%d go test -count=1 -run TestFaultsMigrationSmoke ./tests)\n", r.seed, r.seed)
	fmt.Fprintf(&b, "# RESULT: %s\n# operations %d (done %d, refused %d, uncertain %d), faults %v, migrations %v\n",
		res, r.nops, r.nDone, r.nRefused, r.nUnknown, r.faults, r.migs)
	for _, v := range verdicts {
		b.WriteString("# " + v + "\n")
	}
	b.WriteString("# each line: call time, reply time (since the cluster started), client, node (cc: the ClusterClient), command -> reply; driver and nemesis lines\n")
	r.mu.Lock()
	sort.SliceStable(r.hist, func(a, c int) bool { return r.hist[a].t0 < r.hist[c].t0 })
	for _, l := range r.hist {
		b.WriteString(l.s + "\n")
	}
	r.mu.Unlock()
	os.WriteFile(r.file(out), []byte(b.String()), 0o644)
}
