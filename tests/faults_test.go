package tests

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The fault-injection suite (tests/FAULTS.md): randomized schedules of
// nemeses over a 3-node cluster of real processes while the workloads
// run, then heal, convergence, final reads and the checkers. go test runs
// a short smoke (TestFaultsSmoke, fixed seed); scripts/faults.sh runs the
// soak through the same test with LIMITDB_FAULTS_MINUTES.

// faultConfig is what the LIMITDB_FAULTS_* variables choose.
type faultConfig struct {
	seed      int64
	schedules int           // smoke: this many schedules
	minutes   float64       // soak: schedules until this much time has gone (0: smoke)
	phase     time.Duration // the faulty part of one schedule
	nemeses   []string
	workloads []string
	out       string // where the histories go ("" : a temporary dir, removed when all passed)
	// in the soak, a passing schedule's file keeps its header and
	// verdicts only (a full one is ~5 MB) unless LIMITDB_FAULTS_FULL=1
	full bool
}

// faultsDefaultNemeses and faultsDefaultWorkloads are those the smoke
// runs by default: every nemesis and every workload (tests/FAULTS.md
// lists what each found before issue 18's fixes, and the two that were
// left out for a while: queue's lost element, wipe's replacement that
// did not answer).
var (
	faultsDefaultNemeses   = faultNemesisNames
	faultsDefaultWorkloads = faultWorkloadNames
)

func envList(name string, def, all []string, t *testing.T) []string {
	v := os.Getenv(name)
	switch v {
	case "":
		return def
	case "all":
		return all
	case "none":
		return nil
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		ok := false
		for _, a := range all {
			ok = ok || a == s
		}
		if !ok {
			t.Fatalf("%s: unknown name %q (known: %s)", name, s, strings.Join(all, ","))
		}
		out = append(out, s)
	}
	return out
}

func faultConfigFromEnv(t *testing.T) faultConfig {
	num := func(name string, def float64) float64 {
		if v := os.Getenv(name); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return f
		}
		return def
	}
	return faultConfig{
		seed:      int64(num("LIMITDB_FAULTS_SEED", 18)),
		schedules: int(num("LIMITDB_FAULTS_SCHEDULES", 3)),
		minutes:   num("LIMITDB_FAULTS_MINUTES", 0),
		phase:     time.Duration(num("LIMITDB_FAULTS_SECONDS", 20) * float64(time.Second)),
		nemeses:   envList("LIMITDB_FAULTS_NEMESES", faultsDefaultNemeses, faultNemesisNames, t),
		workloads: envList("LIMITDB_FAULTS_WORKLOADS", faultsDefaultWorkloads, faultWorkloadNames, t),
		out:       os.Getenv("LIMITDB_FAULTS_OUT"),
		full:      os.Getenv("LIMITDB_FAULTS_MINUTES") == "" || os.Getenv("LIMITDB_FAULTS_FULL") == "1",
	}
}

// scheduleSeed derives schedule k's seed from the run's (splitmix64).
func scheduleSeed(seed int64, k int) int64 {
	z := uint64(seed) + uint64(k+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return int64((z ^ (z >> 31)) >> 1)
}

// TestFaultsSmoke runs LIMITDB_FAULTS_SCHEDULES randomized schedules (3
// by default, ~30 s each with a 20 s faulty phase) from
// LIMITDB_FAULTS_SEED (18 by default), or, with LIMITDB_FAULTS_MINUTES, schedules until that many minutes have
// gone (the soak). Each schedule's history and verdicts go to a file
// whose path is printed.
func TestFaultsSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault suite takes minutes; -short skips it")
	}
	cfg := faultConfigFromEnv(t)
	// go-redis logs every failed dial of its pools; under kills and
	// partitions those are thousands of lines that say nothing the
	// history does not
	redis.SetLogger(quietRedisLog{})
	out := cfg.out
	keep := out != ""
	if out == "" {
		var err error
		if out, err = os.MkdirTemp("", "limitdb-faults-"); err != nil {
			t.Fatal(err)
		}
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("faults: seed %d, nemeses %s, workloads %s, histories in %s", cfg.seed, strings.Join(cfg.nemeses, ","), strings.Join(cfg.workloads, ","), out)
	began := time.Now()
	var total faultTotals
	for k := 0; ; k++ {
		if cfg.minutes > 0 {
			if time.Since(began) > time.Duration(cfg.minutes*float64(time.Minute)) {
				break
			}
		} else if k >= cfg.schedules {
			break
		}
		seed := scheduleSeed(cfg.seed, k)
		name := fmt.Sprintf("s%03d-seed%d", k, seed)
		t.Run(name, func(t *testing.T) {
			finished := false
			defer func() {
				if !finished {
					total.addStopped() // a harness Fatal ended it (its file says STOPPED)
				}
			}()
			s := runFaultSchedule(t, cfg, k, seed, filepath.Join(out, name+".txt"))
			total.add(s)
			finished = true
		})
	}
	t.Logf("faults: %d schedules checked (%d failed), %d stopped by the harness, %d faults injected, %d operations checked, %d checks inconclusive; seed %d; histories in %s",
		total.schedules, total.failed, total.stopped, total.faults, total.ops, total.inconclusive, cfg.seed, out)
	fmt.Printf("faults summary: schedules=%d failed=%d stopped=%d faults=%d operations=%d inconclusive=%d seed=%d histories=%s\n",
		total.schedules, total.failed, total.stopped, total.faults, total.ops, total.inconclusive, cfg.seed, out)
	if !t.Failed() && !keep {
		os.RemoveAll(out)
	}
}

func joinOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ",")
}

type quietRedisLog struct{}

func (quietRedisLog) Printf(context.Context, string, ...interface{}) {}

type faultTotals struct {
	mu                                                    sync.Mutex
	schedules, failed, stopped, faults, ops, inconclusive int
}

// addStopped counts a schedule that a harness wait ended before its
// checks (a node that did not start, join or answer in time).
func (a *faultTotals) addStopped() {
	a.mu.Lock()
	a.stopped++
	a.mu.Unlock()
}

func (a *faultTotals) add(s faultSummary) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.schedules++
	a.faults += s.faults
	a.ops += s.ops
	a.inconclusive += s.inconclusive
	if s.failed {
		a.failed++
	}
}

type faultSummary struct {
	faults, ops, inconclusive int
	failed                    bool
}

// faultRun is one schedule's state.
type faultRun struct {
	t                *testing.T
	c                *testCluster
	rng              *rand.Rand
	seed             int64
	file             string
	start            time.Time
	skew             time.Duration
	porcupineTimeout time.Duration
	shaper           *linkShaper
	paused           map[int]int // node -> PID stopped
	clockOff         []int64     // each node's current offset (ms)
	wipes            int
	diskMount        string // the tmpfs, when disk-full runs
	diskDir          string // the disk node's dir on it
	diskNode         int
	exited           []string // nodes found gone (restarted)
	hung             []string // nodes found alive but not answering (a violation)
	bigFill          bool     // snapshot-pause wrote its 17,000 more keys

	mu          sync.Mutex
	lines       []histLine
	clockEvents []clockEvent
	terms       []termPoint
}

type histLine struct {
	t0, t1 time.Duration
	s      string
}

type clockEvent struct {
	at    time.Duration
	delta time.Duration
}

type termPoint struct {
	at   time.Duration
	term uint64
}

func (r *faultRun) now() time.Duration { return time.Since(r.start) }

func (r *faultRun) record(t0, t1 time.Duration, s string) {
	r.mu.Lock()
	r.lines = append(r.lines, histLine{t0, t1, s})
	r.mu.Unlock()
}

// note records a nemesis event.
func (r *faultRun) note(format string, args ...any) {
	t := r.now()
	r.record(t, t, "nemesis "+fmt.Sprintf(format, args...))
}

// clockDraw draws a clock offset (ms) within ±0.4·max-clock-skew-ms, so
// that any two nodes stay within 0.8·max-clock-skew-ms of each other:
// inside the rule, with room for the error of measuring it (a leader
// must agree with a quorum; offsets at the very edge would make an
// unavailable cluster out of a measuring error, not a finding).
func (r *faultRun) clockDraw() int64 {
	m := r.skew.Milliseconds() * 2 / 5
	return r.rng.Int63n(2*m+1) - m
}

// path names a file beside the history.
func (r *faultRun) path(suffix string) string {
	return strings.TrimSuffix(r.file, ".txt") + "-" + suffix
}

// widening is what the rate bound adds to a window [a, b]:
// max-clock-skew-ms for each new term seen around it (a leader change,
// or an election that made none: counted too, conservatively) and the
// size of each clock change made around it. "Around": a second either
// side, for the term monitor's polling and the step's own latency.
func (r *faultRun) widening(a, b time.Duration) time.Duration {
	lo, hi := a-time.Second, b+time.Second
	r.mu.Lock()
	defer r.mu.Unlock()
	termAt := func(x time.Duration) uint64 {
		var t uint64
		if len(r.terms) > 0 {
			t = r.terms[0].term // the term the run began in
		}
		for _, p := range r.terms {
			if p.at <= x && p.term > t {
				t = p.term
			}
		}
		return t
	}
	w := time.Duration(termAt(hi)-termAt(lo)) * r.skew
	for _, e := range r.clockEvents {
		if e.at >= lo && e.at <= hi {
			w += e.delta
		}
	}
	return w
}

// monitorTerms polls every node's RAFT INFO and records each new highest
// term, until stop closes.
func (r *faultRun) monitorTerms(stop <-chan struct{}, wg *sync.WaitGroup) {
	var mu sync.Mutex
	var max uint64
	for i := range r.c.nodes {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			cli := redis.NewClient(&redis.Options{Addr: r.c.addr(i), MaxRetries: -1, DialTimeout: 300 * time.Millisecond,
				ReadTimeout: 500 * time.Millisecond, PoolSize: 1, Protocol: 2})
			defer cli.Close()
			for !stopped(stop) {
				s, err := cli.Do(context.Background(), "RAFT", "INFO").Text()
				if err == nil {
					for _, l := range strings.Split(s, "\r\n") {
						if v, ok := strings.CutPrefix(l, "raft_term:"); ok {
							term, _ := strconv.ParseUint(v, 10, 64)
							mu.Lock()
							if term > max {
								max = term
								r.mu.Lock()
								r.terms = append(r.terms, termPoint{r.now(), term})
								r.mu.Unlock()
							}
							mu.Unlock()
						}
					}
				}
				time.Sleep(100 * time.Millisecond)
			}
		}(i)
	}
}

// runFaultSchedule runs one schedule and writes its history to file.
func runFaultSchedule(t *testing.T, cfg faultConfig, k int, seed int64, file string) (sum faultSummary) {
	rng := rand.New(rand.NewSource(seed))
	r := &faultRun{t: t, rng: rng, seed: seed, file: file, skew: 500 * time.Millisecond,
		porcupineTimeout: 20 * time.Second, paused: map[int]int{}, clockOff: make([]int64, 3), diskNode: -1}
	var header []string
	header = append(header, fmt.Sprintf("schedule %d, seed %d, derived from LIMITDB_FAULTS_SEED=%d", k, seed, cfg.seed))
	header = append(header, fmt.Sprintf("rerun (same choices; the timing differs): LIMITDB_FAULTS_SEED=%d LIMITDB_FAULTS_SCHEDULES=%d LIMITDB_FAULTS_SECONDS=%g LIMITDB_FAULTS_NEMESES=%s LIMITDB_FAULTS_WORKLOADS=%s go test -count=1 -run 'TestFaultsSmoke/%s$' ./tests",
		cfg.seed, k+1, cfg.phase.Seconds(), joinOrNone(cfg.nemeses), joinOrNone(cfg.workloads), filepath.Base(strings.TrimSuffix(file, ".txt"))))

	has := func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	// the clock nemesis also sets offsets at start
	if has(cfg.nemeses, "clock") {
		for i := range r.clockOff {
			r.clockOff[i] = r.clockDraw()
		}
	}
	snapshots := rng.Intn(2) == 0
	if has(cfg.nemeses, "disk-full") {
		if !r.mountDisk(t, rng.Intn(3)) {
			r.diskNode = -1
		}
	}
	opts := func(i int) []string {
		o := []string{"--leader-wait-ms", "1000", "--max-clock-skew-ms", strconv.FormatInt(r.skew.Milliseconds(), 10)}
		if r.clockOff[i] != 0 {
			o = append(o, "--debug-clock-offset-ms", strconv.FormatInt(r.clockOff[i], 10))
		}
		if snapshots {
			// snapshot and truncate the log every few seconds
			o = append(o, "--raft-snapshot-threshold", "400", "--raft-trailing-logs", "200")
		}
		if i == r.diskNode {
			o = append(o, "--dir", r.diskDir)
		}
		return o
	}
	for i := 0; i < 3; i++ {
		header = append(header, fmt.Sprintf("node n%d: %s", i+1, strings.Join(opts(i), " ")))
	}
	clients := 1 + rng.Intn(4)
	if rng.Intn(4) == 0 {
		clients = 1
	}
	header = append(header, fmt.Sprintf("workloads %s, %d client(s) each; nemeses %s", strings.Join(cfg.workloads, ","), clients, strings.Join(cfg.nemeses, ",")))

	r.c = mustClusterWith(t, 3, opts)
	r.start = time.Now()
	// A harness wait that gives up (t.Fatal: a node that did not start,
	// join or answer in time) ends the schedule before its checks; its
	// file still gets the steps so far, the events and the node logs
	// (the deferred stops of the clients below run first). Two soak
	// schedules stopped so left nothing to read before.
	checked := false
	defer func() {
		if !checked {
			// the node logs the history keeps get every goroutine's stack
			// (a soak schedule that stopped with its leader silent for a
			// minute left no clue where it waited)
			r.c.dumpStacks()
			r.writeHistory(header, []string{"harness: the schedule stopped before its checks; the test's log says which wait gave up; the node logs end with each node's goroutine stacks"}, resultStopped, true)
		}
	}()
	r.shaper = installShaper(r.c)
	// some bulk, so that snapshots take a moment. The SETs are
	// idempotent, so a fill cut by a leadership change (a leader starved
	// of CPU for 260 ms stepped down in the middle of one: soak seed
	// 20261215, s006, before any fault) is sent again to the next leader.
	ctx := context.Background()
	for attempt := 1; ; attempt++ {
		l := r.c.waitLeader(10 * time.Second)
		pipe := r.c.cli(l).Pipeline()
		for k := 0; k < 3000; k++ {
			pipe.Set(ctx, "f:fill:"+strconv.Itoa(k), strings.Repeat("x", 200), 0)
		}
		_, err := pipe.Exec(ctx)
		if err == nil {
			break
		}
		if attempt == 3 {
			t.Fatalf("fill: %v", err)
		}
		t.Logf("fill, attempt %d: %v; again", attempt, err)
	}

	var wls []faultWorkload
	for _, n := range cfg.workloads {
		wls = append(wls, newFaultWorkload(n))
	}
	stop, stopMon := make(chan struct{}), make(chan struct{})
	var wg, monWG sync.WaitGroup
	var stopOnce, stopMonOnce sync.Once
	stopLoad := func() { stopOnce.Do(func() { close(stop) }); wg.Wait() }
	stopMonitor := func() { stopMonOnce.Do(func() { close(stopMon) }); monWG.Wait() }
	// a harness Fatal (a node that does not start) must not leave the
	// clients running into the next schedule
	defer stopMonitor()
	defer stopLoad()
	r.monitorTerms(stopMon, &monWG)
	for _, w := range wls {
		w.start(r, clients, stop, &wg)
	}

	// the schedule: nemesis, target, duration; one after another
	time.Sleep(time.Second)
	step := 1
	for end := time.Now().Add(cfg.phase); len(cfg.nemeses) > 0 && time.Now().Before(end); {
		nm := faultNemeses[cfg.nemeses[rng.Intn(len(cfg.nemeses))]]
		role := []string{"leader", "follower", "any"}[rng.Intn(3)]
		d := time.Duration(500+rng.Intn(2500)) * time.Millisecond
		i := r.target(role)
		if nm.name == "disk-full" && r.diskNode >= 0 {
			i, role = r.diskNode, "disk node"
		}
		r.note("step %d: %s on %s (%s) for %v", step, nm.name, r.c.nodes[i].id, role, d)
		at := r.now().Round(time.Millisecond)
		if nm.run(r, i, d) {
			sum.faults++
			header = append(header, fmt.Sprintf("step %d at %v: %s on %s (%s) for %v", step, at, nm.name, r.c.nodes[i].id, role, d))
		} else {
			header = append(header, fmt.Sprintf("step %d at %v: %s on %s: not injected (see the history)", step, at, nm.name, r.c.nodes[i].id))
		}
		step++
		time.Sleep(time.Duration(300+rng.Intn(1200)) * time.Millisecond)
	}
	r.note("heal all")
	r.healAll()
	time.Sleep(2 * time.Second)
	stopLoad()
	stopMonitor()

	// convergence, final reads, checks
	var verdicts []string
	failed := false
	r.c.waitLeader(30 * time.Second)
	digests := r.c.waitConverged(60 * time.Second)
	for _, d := range digests[1:] {
		if d != digests[0] {
			failed = true
			verdicts = append(verdicts, fmt.Sprintf("convergence: VIOLATION: the nodes' digests differ after healing: %v", digests))
			verdicts = append(verdicts, r.divergence()...)
			break
		}
	}
	if !failed {
		verdicts = append(verdicts, fmt.Sprintf("convergence: %d nodes, digests equal", len(digests)))
	}
	if len(r.hung) > 0 {
		failed = true
		verdicts = append(verdicts, "liveness: VIOLATION: hung (alive, no PING answered for 10 s after the fault was undone; goroutines in its log): "+strings.Join(r.hung, " "))
	}
	if len(r.exited) > 0 {
		verdicts = append(verdicts, "note: processes that exited and were restarted: "+strings.Join(r.exited, " "))
	}
	for _, w := range wls {
		var err error
		for try := 0; try < 10; try++ {
			l := r.c.waitLeader(30 * time.Second)
			if err = w.final(r, r.c.cli(l)); err == nil {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		if err != nil {
			failed = true
			verdicts = append(verdicts, fmt.Sprintf("%s: final read failed: %v", w.name(), err))
			continue
		}
		res := w.check(r)
		sum.ops += res.ops
		if res.inconclu {
			sum.inconclusive++
		}
		if !res.ok {
			failed = true
		}
		verdicts = append(verdicts, res.verdict)
	}
	sum.failed = failed
	checked = true
	result := resultOK
	if failed {
		result = resultViolation
	}
	r.writeHistory(header, verdicts, result, failed || cfg.full)
	for _, v := range verdicts {
		t.Log(v)
	}
	if failed {
		t.Errorf("faults: VIOLATION in schedule seed %d; history and verdicts: %s", seed, file)
	} else {
		t.Logf("faults: %d faults, %d operations checked; history: %s", sum.faults, sum.ops, file)
	}
	return sum
}

// target resolves a role to a node: the leader (any node when there is
// none), a follower, or any node.
func (r *faultRun) target(role string) int {
	x := r.rng.Intn(6) // one draw whatever the cluster's state, so the schedule's later choices do not depend on it
	l := r.c.leader()
	switch {
	case role == "leader" && l >= 0:
		return l
	case role == "follower" && l >= 0:
		return (l + 1 + x%2) % 3
	}
	return x % 3
}

// A schedule's result, in its file's RESULT line.
const (
	resultOK        = "ok"
	resultViolation = "VIOLATION"
	resultStopped   = "STOPPED" // by the harness, before the checks
)

func (r *faultRun) writeHistory(header, verdicts []string, result string, full bool) {
	failed := result != resultOK
	r.mu.Lock()
	lines := append([]histLine(nil), r.lines...)
	r.mu.Unlock()
	sort.SliceStable(lines, func(a, b int) bool { return lines[a].t0 < lines[b].t0 })
	var b strings.Builder
	fmt.Fprintf(&b, "# limitdb fault schedule\n")
	for _, h := range header {
		fmt.Fprintf(&b, "# %s\n", h)
	}
	fmt.Fprintf(&b, "# RESULT: %s\n", result)
	for _, v := range verdicts {
		fmt.Fprintf(&b, "# %s\n", v)
	}
	if failed {
		fmt.Fprintf(&b, "# node logs: %s\n", r.path("*.log"))
	}
	if !full {
		fmt.Fprintf(&b, "# %d operations and events not kept (a passing soak schedule; LIMITDB_FAULTS_FULL=1 keeps them)\n", len(lines))
		lines = nil
	} else {
		fmt.Fprintf(&b, "# each line: call time, reply time (since the cluster started), workload client node command -> reply\n")
	}
	for _, l := range lines {
		fmt.Fprintf(&b, "%10.3f %10.3f %s\n", l.t0.Seconds(), l.t1.Seconds(), l.s)
	}
	if err := os.WriteFile(r.file, []byte(b.String()), 0o644); err != nil {
		r.t.Errorf("writing the history: %v", err)
	}
	if failed {
		// the nodes' logs live in the test's temp dir, which goes
		logs, _ := filepath.Glob(filepath.Join(r.c.logs, "*.log"))
		for _, l := range logs {
			if data, err := os.ReadFile(l); err == nil {
				os.WriteFile(r.path(filepath.Base(l)), data, 0o644)
			}
		}
	}
}
