// Command loadgen compares limitdb with a real redis-server on the same
// machine in one run. It keeps N connections open to each server and
// measures short alternating slices (ref, cand, cand, ref, …) so that both
// see the same machine conditions, then reports per workload the median of
// the per-pair throughput ratios (limitdb/redis) and p50/p99 latencies.
// A memory mode loads 1M INCR+EXPIRE keys (and GCRA limiters when RL.ALLOW
// exists) and compares Redis used_memory growth with limitdb RSS growth.
//
// See bench/README.md.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"
)

var (
	fRedis     = flag.String("redis", "", "address of a running redis-server (empty: start one on -redis-port)")
	fRedisPort = flag.Int("redis-port", 0, "port for the started redis-server (0: a free loopback port)")
	fRedisPid  = flag.Int("redis-pid", 0, "pid of the running -redis server (for the CPU ns/op columns)")
	fRedisBin  = flag.String("redis-bin", "redis-server", "redis-server binary")
	fLimit     = flag.String("limitdb", "", "address of a running limitdb (empty: start -limitdb-bin on -limitdb-port)")
	fLimitPort = flag.Int("limitdb-port", 0, "port for the started limitdb (0: a free loopback port)")
	fLimitBin  = flag.String("limitdb-bin", "", "limitdb binary to start (build it with go build -o … ./cmd/limitdb)")
	fLimitPid  = flag.Int("limitdb-pid", 0, "pid of a running limitdb (memory mode with -limitdb)")
	fProcs     = flag.Int("gomaxprocs", 0, "GOMAXPROCS for the started limitdb (0: limitdb's default, procs/DESIGN.md)")
	fConns     = flag.Int("conns", 50, "connections per server")
	fDepths    = flag.String("pipeline", "1,16", "pipeline depths, comma separated")
	fWork      = flag.String("workloads", "ping,get,set,incr,multi,lpush,zadd", "workloads, comma separated (all: "+allNames()+")")
	fSlice     = flag.Duration("slice", 250*time.Millisecond, "length of one measured slice")
	fPairs     = flag.Int("pairs", 8, "ref/cand slice pairs per case (order alternates ref,cand,cand,ref)")
	fWarm      = flag.Duration("warmup", 200*time.Millisecond, "unmeasured warm-up per server per case")
	fKeys      = flag.Int("keys", 10000, "key space of the random keys")
	fMaxTime   = flag.Duration("max-time", 60*time.Second, "stop starting new cases after this long")
	fMode      = flag.String("mode", "bench", "bench, memory or maxmemory")
	fMemKeys   = flag.Int("mem-keys", 1000000, "keys (and limiters) for the memory mode")
	fSeedDir   = flag.String("seed-dir", "../shared/seed-scripts", "folder of the seed Lua scripts (default: the project's shared folder, seen from the project root)")
	fEnv       = flag.String("limitdb-env", "", "extra environment for the started limitdb, e.g. GOGC=50,GOMEMLIMIT=1GiB")
	fSkipMem   = flag.String("mem-skip", "", "memory mode: comma-separated parts to skip (incr,gcra,zset,hash)")
	fRedisAuth = flag.String("redis-auth", "", "AUTH arguments for every connection to the reference server (\"pass\" or \"user pass\")")
	fLimitArgs = flag.String("limitdb-args", "", "extra command-line arguments for the started limitdb, space separated (e.g. \"--requirepass secret\")")
	fLimitAuth = flag.String("limitdb-auth", "", "AUTH arguments for every connection to limitdb (\"pass\" or \"user pass\")")
	fPreload   = flag.Int("preload", 0, "bench mode: load this many keys (INCR pre:i + EXPIRE) into both servers before the cases")
	fBgsave    = flag.String("bgsave-loop", "none", "bench mode: keep a BGSAVE running during the cases on none, limitdb or both")
	fBgEvery   = flag.Duration("bgsave-every", 0, "with -bgsave-loop: start a BGSAVE at most this often (0: back to back)")
	fFreePort  = flag.Bool("free-port", false, "print a free loopback port and exit (for scripts that start servers themselves)")
	fReplicas  = flag.Int("redis-replicas", 0, "replicas (--replicaof) of the started redis-server; measured at the primary")
	fNodes     = flag.Int("limitdb-nodes", 1, "start limitdb as a cluster of this many nodes (the README's recipe)")
	fAt        = flag.String("limitdb-at", "leader", "with -limitdb-nodes > 1: measure at the leader or at a follower")
	fSelf      = flag.Bool("self", false, "no redis-server: the reference side is the started limitdb itself, driven with the workload's ref builder on connections of its own (rl-policy: inline numbers against a policy), slices alternating as against Redis")
)

// workDir holds the started servers' dirs (their dump.rdb, limitdb's Raft
// log), removed on exit, so that nothing lands in the working directory.
var workDir string

func allNames() string {
	var n []string
	for _, w := range workloads {
		n = append(n, w.name)
	}
	return strings.Join(n, ",")
}

var children []*exec.Cmd

func killChildren() {
	for _, c := range children {
		if c.Process != nil {
			c.Process.Kill()
			c.Wait()
		}
	}
	if workDir != "" {
		os.RemoveAll(workDir)
	}
}

// serverDir makes a directory for a started server under workDir.
func serverDir(name string) string {
	if workDir == "" {
		d, err := os.MkdirTemp("", "loadgen-")
		if err != nil {
			fatalf("%v", err)
		}
		workDir = d
	}
	d := workDir + "/" + name
	if err := os.MkdirAll(d, 0o755); err != nil {
		fatalf("%v", err)
	}
	return d
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "loadgen: "+format+"\n", a...)
	killChildren()
	os.Exit(1)
}

// freePort returns a loopback port nobody listens on now, from below the
// kernel's ephemeral range (32768-60999 on Linux): a port the kernel hands
// out for a listen on :0 is free again once closed, and any outgoing
// connection may take it as its source port before the server binds it (a
// cluster node dials its peers; tests/harness.go lost a Raft address to
// that). Fixed defaults (7701, 7801) collided when two runs shared a
// machine, so each process walks the range from its own offset. A port
// taken again between this and the server's start makes startServer fail
// rather than measure another server (INFO's process_id must be the
// started one's).
func freePort() int {
	const low, high = 20000, 32767
	if portNext == 0 {
		portNext = os.Getpid() * 7919
	}
	for range high - low {
		portNext++
		port := low + portNext%(high-low)
		if portFree(port) {
			return port
		}
	}
	fatalf("no free loopback port in %d-%d", low, high)
	return 0
}

// portFree reports whether nothing listens on the loopback port now.
func portFree(port int) bool {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

var portNext int

// portOr is port, or a free one when it is 0.
func portOr(port int) int {
	if port == 0 {
		return freePort()
	}
	return port
}

func startServer(name string, args []string, env []string, port int) (string, int) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		fatalf("start %s: %v", name, err)
	}
	children = append(children, cmd)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := dial(addr, "", 1)
		if err == nil {
			r, err := c.do("PING")
			info := ""
			if err == nil && strings.HasPrefix(r, "+PONG") {
				info, _ = c.do("INFO", "server")
			}
			c.nc.Close()
			// another server on the port (taken again since freePort)
			if i := strings.Index(info, "process_id:"); i >= 0 {
				if pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(info[i+len("process_id:"):], "\r\n", 2)[0])); pid != cmd.Process.Pid {
					fatalf("%s: port %d answers for process %d, not the one started (%d)", name, port, pid, cmd.Process.Pid)
				}
			}
			// -NOAUTH: up, with a password (-limitdb-args --requirepass …)
			if err == nil && (strings.HasPrefix(r, "+PONG") || strings.HasPrefix(r, "-NOAUTH")) {
				return addr, cmd.Process.Pid
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	fatalf("%s did not answer PING on %s", name, addr)
	return "", 0
}

func main() {
	flag.Parse()
	if *fFreePort {
		fmt.Println(freePort())
		return
	}
	keySpace = *fKeys
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sig
		killChildren()
		os.Exit(130)
	}()
	defer killChildren()
	if *fShards > 0 {
		shardsMain()
		return
	}

	ref := &side{name: "redis", auth: *fRedisAuth, shas: map[string]string{}}
	cand := &side{name: "limitdb", auth: *fLimitAuth, shas: map[string]string{}}
	if *fSelf {
		ref.name = "limitdb (ref)" // its address and pid are the candidate's, below
	} else if *fRedis != "" {
		ref.addr = *fRedis
		ref.pid = *fRedisPid
	} else {
		port := portOr(*fRedisPort)
		ref.addr, ref.pid = startServer("redis-server", []string{*fRedisBin, "--port", strconv.Itoa(port),
			"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", serverDir("redis")}, nil, port)
		if *fReplicas > 0 {
			ref.others = startReplicas(port, *fReplicas)
			ref.topology = fmt.Sprintf(" (primary of %d replicas)", *fReplicas)
		}
	}
	procs := "unknown (external)"
	if *fLimit != "" {
		cand.addr = *fLimit
		cand.pid = *fLimitPid
	} else {
		if *fLimitBin == "" {
			fatalf("give -limitdb addr or -limitdb-bin path")
		}
		var env []string
		env, procs = limitdbEnv()
		if *fNodes > 1 {
			nodes, leader := startCluster(*fNodes, strings.Fields(*fLimitArgs), env)
			at := leader
			switch *fAt {
			case "leader":
			case "follower":
				at = (leader + 1) % len(nodes)
			default:
				fatalf("-limitdb-at: leader or follower, not %q", *fAt)
			}
			for i, nd := range nodes {
				if i != at {
					cand.others = append(cand.others, nd.pid)
				}
			}
			cand.addr, cand.pid = nodes[at].addr, nodes[at].pid
			cand.topology = fmt.Sprintf(" (%s %s of %d nodes, %s)", *fAt, nodes[at].id, len(nodes), measuredRole(cand.addr))
		} else {
			port := portOr(*fLimitPort)
			args := append([]string{*fLimitBin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--loglevel", "warn",
				"--dir", serverDir("limitdb")}, strings.Fields(*fLimitArgs)...)
			cand.addr, cand.pid = startServer("limitdb", args, env, port)
		}
	}
	if *fSelf {
		ref.addr, ref.pid, ref.others = cand.addr, cand.pid, cand.others
		fmt.Println("-self: the \"redis\" columns are limitdb itself with the workload's reference commands")
	}
	fmt.Printf("redis %s%s, limitdb %s%s (GOMAXPROCS=%s%s), %d CPUs, loadgen GOMAXPROCS=%d\n",
		ref.addr, ref.topology, cand.addr, cand.topology, procs, strings.ReplaceAll(" "+*fEnv, ",", " "), runtime.NumCPU(), runtime.GOMAXPROCS(0))

	switch *fMode {
	case "memory":
		memoryMode(ref, cand)
	case "bench":
		benchMode(ref, cand)
		if cand.topology != "" {
			fmt.Printf("limitdb's measured node at the end: %s\n", measuredRole(cand.addr))
		}
	case "maxmemory":
		maxmemoryMode(ref, cand)
	default:
		fatalf("unknown -mode %q", *fMode)
	}
}

// limitdbEnv is the started limitdb's environment (-limitdb-env,
// -gomaxprocs) and the header's words for its GOMAXPROCS.
func limitdbEnv() ([]string, string) {
	var env []string
	if *fEnv != "" {
		env = strings.Split(*fEnv, ",")
	}
	procs := "limitdb's default: 1, 2 during a background save"
	if *fProcs > 0 {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(*fProcs))
		procs = strconv.Itoa(*fProcs)
	}
	return env, procs
}

func openConns(s *side, n int, seed uint64) {
	for i := 0; i < n; i++ {
		if s.cc != nil {
			// a ClusterClient's worker: the conn only for its key
			// sequence, request buffer and error count (shards.go)
			s.conns = append(s.conns, &conn{wbuf: make([]byte, 0, 4096), rng: rngSeed(seed + uint64(i))})
			continue
		}
		c, err := dial(s.addr, s.auth, seed+uint64(i))
		if err != nil {
			fatalf("%s: %v", s.name, err)
		}
		s.conns = append(s.conns, c)
	}
}

// --- latency histogram -------------------------------------------------------

const histBuckets = 4600

type hist [histBuckets]uint32

func bucketOf(us int64) int {
	switch {
	case us < 1000:
		return int(us)
	case us < 10000:
		return 1000 + int((us-1000)/10)
	case us < 100000:
		return 1900 + int((us-10000)/100)
	case us < 1000000:
		return 2800 + int((us-100000)/1000)
	default:
		return 3700 + int(min((us-1000000)/10000, 899))
	}
}

func bucketUs(b int) float64 {
	switch {
	case b < 1000:
		return float64(b)
	case b < 1900:
		return 1000 + float64(b-1000)*10
	case b < 2800:
		return 10000 + float64(b-1900)*100
	case b < 3700:
		return 100000 + float64(b-2800)*1000
	default:
		return 1000000 + float64(b-3700)*10000
	}
}

func (h *hist) add(o *hist) {
	for i := range h {
		h[i] += o[i]
	}
}

func (h *hist) quantile(q float64) float64 {
	var total uint64
	for _, v := range h {
		total += uint64(v)
	}
	if total == 0 {
		return 0
	}
	want := uint64(q * float64(total))
	var acc uint64
	for i, v := range h {
		acc += uint64(v)
		if acc > want {
			return bucketUs(i)
		}
	}
	return bucketUs(histBuckets - 1)
}

// --- measurement -----------------------------------------------------------

type worker struct {
	c   *conn
	h   hist
	ops int64
	err error
}

// runSlice drives every connection of s with workload w at pipeline depth
// d for dur and returns ops/s. Latency is the round trip of one pipelined
// batch (one command when d == 1).
func runSlice(s *side, ws []*worker, w *workload, b builder, d int, dur time.Duration, measure bool) float64 {
	if w.pingpong {
		return runPingPong(s, ws, dur, measure)
	}
	batch := func(c *conn, now int64) error {
		c.wbuf = c.wbuf[:0]
		for i := 0; i < d; i++ {
			c.wbuf = b(c, s, c.wbuf, now)
		}
		return c.roundTrip(d * w.replies)
	}
	if s.cc != nil {
		batch = clusterBatch(s, b, d)
	}
	var wg sync.WaitGroup
	cpu0, self0 := s.cpuNs(), cpuNs(os.Getpid())
	start := time.Now()
	stop := start.Add(dur)
	for _, wk := range ws {
		wg.Add(1)
		go func(wk *worker) {
			defer wg.Done()
			c := wk.c
			for {
				t0 := time.Now()
				if !t0.Before(stop) {
					return
				}
				if err := batch(c, t0.UnixMilli()); err != nil {
					wk.err = err
					return
				}
				if measure {
					wk.h[bucketOf(time.Since(t0).Microseconds())]++
					wk.ops += int64(d)
				}
			}
		}(wk)
	}
	wg.Wait()
	el := time.Since(start)
	if measure && s.pid != 0 {
		s.cpu += s.cpuNs() - cpu0
	}
	if measure {
		s.selfCPU += cpuNs(os.Getpid()) - self0
	}
	var ops int64
	for _, wk := range ws {
		if wk.err != nil {
			fatalf("%s: %s: %v", s.name, w.name, wk.err)
		}
		ops += wk.ops
		wk.ops = 0
	}
	if measure {
		s.ops += ops
	}
	return float64(ops) / el.Seconds()
}

type result struct {
	name              string
	depth             int
	refOps, candOps   float64 // median over slices
	ratio, rmin, rmax float64
	refP50, refP99    float64
	candP50, candP99  float64
	refErrs, candErrs int64
	refCPU, candCPU   float64 // server CPU ns per op (0: unknown)
	// the load generator's own CPU ns per op on each side's slices
	// (-shards: the ClusterClient's cost, which shares the cores)
	refSelf, candSelf float64
	// the median and range over the pairs of each pair's CPU-per-op ratio
	cpuPair, cpuMin, cpuMax float64
	skipped, firstErrRef    string
	firstErrCand            string
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func benchMode(ref, cand *side) {
	depths, err := parseDepths(*fDepths)
	if err != nil {
		fatalf("%v", err)
	}
	openConns(ref, *fConns, 1000)
	openConns(cand, candConns(), 1000) // same seeds: same key sequences
	mkWorkers := func(s *side) []*worker {
		ws := make([]*worker, len(s.conns))
		for i, c := range s.conns {
			ws[i] = &worker{c: c}
		}
		return ws
	}
	refW, candW := mkWorkers(ref), mkWorkers(cand)
	if *fPreload > 0 {
		preload(ref, *fPreload)
		preload(cand, *fPreload)
	}
	stopLoops := startBgsaveLoops(ref, cand)
	begin := time.Now()
	var results []result
	for _, name := range strings.Split(*fWork, ",") {
		name = strings.TrimSpace(name)
		w := findWorkload(name)
		if w == nil {
			fatalf("unknown workload %q (have %s)", name, allNames())
		}
		for _, d := range depths {
			res := result{name: name, depth: d}
			if time.Since(begin) > *fMaxTime {
				res.skipped = "max-time reached"
				results = append(results, res)
				continue
			}
			if err := w.prepare(ref, true, *fSeedDir); err != nil {
				res.skipped = err.Error()
				results = append(results, res)
				fmt.Fprintf(os.Stderr, "skip %s/P%d: %s\n", name, d, res.skipped)
				continue
			}
			if err := w.prepare(cand, false, *fSeedDir); err != nil {
				res.skipped = err.Error()
				results = append(results, res)
				fmt.Fprintf(os.Stderr, "skip %s/P%d: %s\n", name, d, res.skipped)
				continue
			}
			candB := w.cand
			if candB == nil {
				candB = w.ref
			}
			for _, wk := range append(append([]*worker(nil), refW...), candW...) {
				wk.h = hist{}
				wk.c.errs = 0
				wk.c.lastErr = ""
			}
			ref.cpu, ref.ops, cand.cpu, cand.ops = 0, 0, 0, 0
			ref.selfCPU, cand.selfCPU = 0, 0
			runSlice(ref, refW, w, w.ref, d, *fWarm, false)
			runSlice(cand, candW, w, candB, d, *fWarm, false)
			var refOps, candOps, ratios, cpuRatios []float64
			for p := 0; p < *fPairs; p++ {
				var r, c float64
				rc, ro, cc, co := ref.cpu, ref.ops, cand.cpu, cand.ops
				if p%2 == 0 {
					r = runSlice(ref, refW, w, w.ref, d, *fSlice, true)
					c = runSlice(cand, candW, w, candB, d, *fSlice, true)
				} else {
					c = runSlice(cand, candW, w, candB, d, *fSlice, true)
					r = runSlice(ref, refW, w, w.ref, d, *fSlice, true)
				}
				refOps = append(refOps, r)
				candOps = append(candOps, c)
				ratios = append(ratios, c/r)
				if ref.pid != 0 && cand.pid != 0 && ref.ops > ro && cand.ops > co {
					// this pair's server CPU per op, candidate over reference
					cpuRatios = append(cpuRatios, (float64(cand.cpu-cc)/float64(cand.ops-co))/(float64(ref.cpu-rc)/float64(ref.ops-ro)))
				}
			}
			if len(cpuRatios) > 0 {
				res.cpuPair = median(cpuRatios)
				res.cpuMin, res.cpuMax = slices.Min(cpuRatios), slices.Max(cpuRatios)
			}
			res.refOps, res.candOps, res.ratio = median(refOps), median(candOps), median(ratios)
			s := append([]float64(nil), ratios...)
			sort.Float64s(s)
			res.rmin, res.rmax = s[0], s[len(s)-1]
			var hr, hc hist
			for _, wk := range refW {
				hr.add(&wk.h)
				res.refErrs += wk.c.errs
				if res.firstErrRef == "" {
					res.firstErrRef = wk.c.lastErr
				}
			}
			for _, wk := range candW {
				hc.add(&wk.h)
				res.candErrs += wk.c.errs
				if res.firstErrCand == "" {
					res.firstErrCand = wk.c.lastErr
				}
			}
			if ref.pid != 0 && ref.ops > 0 {
				res.refCPU = float64(ref.cpu) / float64(ref.ops)
			}
			if cand.pid != 0 && cand.ops > 0 {
				res.candCPU = float64(cand.cpu) / float64(cand.ops)
			}
			if cand.cc != nil && ref.ops > 0 && cand.ops > 0 {
				res.refSelf, res.candSelf = float64(ref.selfCPU)/float64(ref.ops), float64(cand.selfCPU)/float64(cand.ops)
			}
			res.refP50, res.refP99 = hr.quantile(0.5), hr.quantile(0.99)
			res.candP50, res.candP99 = hc.quantile(0.5), hc.quantile(0.99)
			results = append(results, res)
			if w.subscribers > 0 {
				reportDelivery(ref, cand)
			}
		}
	}
	stopLoops()
	printTable(results)
}

func printTable(rs []result) {
	conns := strconv.Itoa(*fConns)
	if candConns() != *fConns {
		conns += fmt.Sprintf(" (limitdb %d)", candConns())
	}
	fmt.Printf("\n%s conns/server, slices %v x %d pairs (alternating), keys %d, latency = one batch round trip (µs)\n\n",
		conns, *fSlice, *fPairs, *fKeys)
	tw := tabwriter.NewWriter(os.Stdout, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tP\tredis ops/s\tlimitdb ops/s\tratio\t(min–max)\tredis p50\tp99\tlimitdb p50\tp99\tp99 ratio\tCPU ns/op r\tl\tCPU ratio\tpairs' CPU ratio\t(min–max)\terrors r/l\t")
	var notes []string
	for _, r := range rs {
		if r.skipped != "" {
			fmt.Fprintf(tw, "%s\t%d\tskipped\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\n", r.name, r.depth)
			notes = append(notes, fmt.Sprintf("%s/P%d skipped: %s", r.name, r.depth, r.skipped))
			continue
		}
		p99r := 0.0
		if r.refP99 > 0 {
			p99r = r.candP99 / r.refP99
		}
		cpu := "-\t-\t-\t-\t-"
		if r.refCPU > 0 && r.candCPU > 0 {
			cpu = fmt.Sprintf("%.0f\t%.0f\t%.2f\t%.3f\t(%.3f–%.3f)", r.refCPU, r.candCPU, r.candCPU/r.refCPU, r.cpuPair, r.cpuMin, r.cpuMax)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\t%.2f\t(%.2f–%.2f)\t%.0f\t%.0f\t%.0f\t%.0f\t%.2f\t%s\t%d/%d\t\n",
			r.name, r.depth, r.refOps, r.candOps, r.ratio, r.rmin, r.rmax,
			r.refP50, r.refP99, r.candP50, r.candP99, p99r, cpu, r.refErrs, r.candErrs)
		if r.firstErrRef != "" {
			notes = append(notes, fmt.Sprintf("%s/P%d redis error reply: %s", r.name, r.depth, r.firstErrRef))
		}
		if r.firstErrCand != "" {
			notes = append(notes, fmt.Sprintf("%s/P%d limitdb error reply: %s", r.name, r.depth, r.firstErrCand))
		}
		if r.candSelf > 0 {
			notes = append(notes, fmt.Sprintf("%s/P%d the load generator's CPU per op (ClusterClient): redis side %.0f ns, limitdb side %.0f ns",
				r.name, r.depth, r.refSelf, r.candSelf))
		}
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Println("  " + n)
	}
}
