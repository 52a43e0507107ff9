package tests

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/redis/go-redis/v9"
)

// The fault suite's workloads. Each runs a few clients (or one, when the
// schedule says so), every client sending each operation to a node drawn
// at random (leaders and followers alike: a follower forwards writes and
// serves linearizable reads), with retries off so that one call is one
// command. Every operation goes into the run's history (its text file)
// and into the workload's own record, which its checker reads at the end.

// faultWorkload is one workload: start launches its clients (they stop
// when stop closes), final reads the end state from the leader once the
// cluster is healed, check judges the record.
type faultWorkload interface {
	name() string
	start(r *faultRun, clients int, stop <-chan struct{}, wg *sync.WaitGroup)
	final(r *faultRun, cli *redis.Client) error
	check(r *faultRun) checkResult
}

type checkResult struct {
	ops      int    // operations checked
	ok       bool   // no violation found
	verdict  string // a line or a few for the history file
	inconclu bool   // the checker could not decide (porcupine's timeout)
}

var faultWorkloadNames = []string{"register", "counter", "queue", "cas", "lua", "ratelimit", "ttl"}

func newFaultWorkload(name string) faultWorkload {
	switch name {
	case "register":
		return &registerWL{}
	case "counter":
		return &counterWL{}
	case "queue":
		return &queueWL{}
	case "cas":
		return &casWL{}
	case "lua":
		return &luaWL{}
	case "ratelimit":
		return &rateWL{}
	case "ttl":
		return &ttlWL{}
	}
	return nil
}

// wclient is one workload client: its own connections to every node (the
// harness's shared clients are closed by kill, under the feet of other
// goroutines), its own random source.
type wclient struct {
	r    *faultRun
	w    string
	k    int
	rng  *rand.Rand
	clis []*redis.Client
}

func newWClient(r *faultRun, w string, k int) *wclient {
	wc := &wclient{r: r, w: w, k: k, rng: rand.New(rand.NewSource(r.seed*1000 + int64(len(w))*97 + int64(k)))}
	for i := range r.c.nodes {
		wc.clis = append(wc.clis, redis.NewClient(&redis.Options{Addr: r.c.addr(i), MaxRetries: -1,
			DialTimeout: time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 3 * time.Second,
			PoolSize: 2, Protocol: 2, ContextTimeoutEnabled: true}))
	}
	return wc
}

func (wc *wclient) close() {
	for _, c := range wc.clis {
		c.Close()
	}
}

// pick draws the node of the next operation.
func (wc *wclient) pick() (int, *redis.Client) {
	i := wc.rng.Intn(len(wc.clis))
	return i, wc.clis[i]
}

// op runs one operation with a bounded wait and logs it.
func (wc *wclient) op(node int, desc string, f func(ctx context.Context) (string, error)) (t0, t1 time.Duration, res string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	t0 = wc.r.now()
	res, err = f(ctx)
	t1 = wc.r.now()
	cancel()
	out := res
	if err != nil {
		out = "ERR " + err.Error()
	}
	// the node by its place (n1..n3): a wiped node's id changes
	wc.r.record(t0, t1, fmt.Sprintf("%s c%d n%d %s -> %s", wc.w, wc.k, node+1, desc, out))
	return
}

// opInt is op for a command whose reply is an integer.
func (wc *wclient) opInt(node int, desc string, f func(ctx context.Context) (int64, error)) (t0, t1 time.Duration, v int64, err error) {
	t0, t1, _, err = wc.op(node, desc, func(ctx context.Context) (string, error) {
		var err error
		v, err = f(ctx)
		return strconv.FormatInt(v, 10), err
	})
	return
}

// runWClients starts a workload's clients: each has its own wclient (named
// name) and calls body with its next operation's number and node until
// stop closes.
func runWClients(r *faultRun, name string, clients int, stop <-chan struct{}, wg *sync.WaitGroup, body func(wc *wclient, n, node int, cli *redis.Client)) {
	for k := 0; k < clients; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			wc := newWClient(r, name, k)
			defer wc.close()
			for n := 0; !stopped(stop); n++ {
				i, cli := wc.pick()
				body(wc, n, i, cli)
			}
		}(k)
	}
}

func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// faultOutcome classifies a write's error: nil is done; CLUSTERDOWN,
// TRYAGAIN, EXECABORT and a connection that could not be made were
// refused before running; anything else (UNCERTAIN, a timeout, a dropped
// connection) may or may not have taken effect.
func faultOutcome(err error) opOutcome {
	if err == nil {
		return done
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return refused
	}
	s := err.Error()
	if strings.HasPrefix(s, "EXECABORT") || strings.HasPrefix(s, "NOREPLICAS") || strings.HasPrefix(s, "OOM") {
		return refused
	}
	return outcome(err)
}

func nilOK(err error) error {
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}

// getCount reads a counter's key: its value, "0" when it does not exist.
func getCount(ctx context.Context, cli interface {
	Get(context.Context, string) *redis.StringCmd
}, key string) (string, error) {
	s, err := cli.Get(ctx, key).Result()
	if err = nilOK(err); err != nil {
		return "", err
	}
	if s == "" {
		s = "0"
	}
	return s, nil
}

// partitionByKey is a porcupine Partition: one history per key, the keys
// in the order of their first operation.
func partitionByKey(key func(input interface{}) string) func([]porcupine.Operation) [][]porcupine.Operation {
	return func(history []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := key(op.Input)
			if by[k] == nil {
				keys = append(keys, k)
			}
			by[k] = append(by[k], op)
		}
		var out [][]porcupine.Operation
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	}
}

// ---- register: SET/GET on three keys, checked with porcupine ----

// faultRegKeys are the register's keys: porcupine checks each key's
// history on its own (the model's partition), which keeps a history with
// many open-ended writes checkable in seconds.
var faultRegKeys = []string{"f:reg:0", "f:reg:1", "f:reg:2"}

type faultRegInput struct {
	key   string
	write bool
	v     string
}

var faultRegisterModel = porcupine.Model{
	Partition: partitionByKey(func(in interface{}) string { return in.(faultRegInput).key }),
	Init:      func() interface{} { return "" },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		in := input.(faultRegInput)
		if in.write {
			return true, in.v
		}
		return output.(string) == state.(string), state
	},
	DescribeOperation: func(input, output interface{}) string {
		in := input.(faultRegInput)
		if in.write {
			return "set(" + in.key + ", " + in.v + ")"
		}
		return "get(" + in.key + ") -> " + output.(string)
	},
}

type registerWL struct {
	mu  sync.Mutex
	ops []porcupine.Operation
}

func (w *registerWL) name() string { return "register" }

func (w *registerWL) start(r *faultRun, clients int, stop <-chan struct{}, wg *sync.WaitGroup) {
	runWClients(r, w.name(), clients, stop, wg, func(wc *wclient, n, i int, cli *redis.Client) {
		key := faultRegKeys[wc.rng.Intn(len(faultRegKeys))]
		op := porcupine.Operation{ClientId: wc.k}
		if wc.rng.Intn(2) == 0 {
			v := strconv.Itoa(wc.k*1000000 + n)
			t0, t1, _, err := wc.op(i, "SET "+key+" "+v, func(ctx context.Context) (string, error) {
				return cli.Set(ctx, key, v, 0).Result()
			})
			op.Input, op.Output, op.Call, op.Return = faultRegInput{key, true, v}, "", int64(t0), int64(t1)
			switch faultOutcome(err) {
			case unknown:
				op.Return = math.MaxInt64
			case refused:
				return
			}
		} else {
			t0, t1, v, err := wc.op(i, "GET "+key, func(ctx context.Context) (string, error) {
				v, err := cli.Get(ctx, key).Result()
				return v, nilOK(err)
			})
			if err != nil {
				return // a read without a reply tells nothing
			}
			op.Input, op.Output, op.Call, op.Return = faultRegInput{key: key}, v, int64(t0), int64(t1)
		}
		w.mu.Lock()
		w.ops = append(w.ops, op)
		w.mu.Unlock()
		time.Sleep(time.Duration(wc.rng.Intn(3)) * time.Millisecond)
	})
}

func (w *registerWL) final(r *faultRun, cli *redis.Client) error {
	for _, key := range faultRegKeys {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		t0 := r.now()
		v, err := cli.Get(ctx, key).Result()
		cancel()
		if err = nilOK(err); err != nil {
			return err
		}
		t1 := r.now()
		r.record(t0, t1, "register final GET "+key+" -> "+v)
		w.ops = append(w.ops, porcupine.Operation{ClientId: 1 << 20, Input: faultRegInput{key: key}, Output: v, Call: int64(t0), Return: int64(t1)})
	}
	return nil
}

func (w *registerWL) check(r *faultRun) checkResult {
	return checkPorcupine("register", faultRegisterModel, w.ops, r.porcupineTimeout, r.path("register.html"))
}

// ---- counter: INCR / GET on three keys ----

// faultCtrKeys are the counter's keys: each its own counter, so that
// porcupine checks three shorter histories (an INCR with an unknown
// outcome stays open to the end, and a single long history with a dozen
// of them timed out after 30 s of checking in every schedule).
var faultCtrKeys = []string{"f:ctr:0", "f:ctr:1", "f:ctr:2"}

type faultCtrInput struct {
	key  string
	incr bool
}

var faultCounterModel = porcupine.Model{
	Partition: partitionByKey(func(in interface{}) string { return in.(faultCtrInput).key }),
	Init:      func() interface{} { return int64(0) },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		s := state.(int64)
		if input.(faultCtrInput).incr {
			out := output.(int64)
			return out == -1 || out == s+1, s + 1
		}
		return output.(int64) == s, s
	},
	DescribeOperation: func(input, output interface{}) string {
		in := input.(faultCtrInput)
		if in.incr {
			return fmt.Sprintf("incr(%s) -> %d", in.key, output)
		}
		return fmt.Sprintf("get(%s) -> %d", in.key, output)
	},
}

type counterWL struct {
	mu       sync.Mutex
	ops      []porcupine.Operation
	acked    map[string][]int64 // values returned by acknowledged INCRs
	unknowns map[string]int     // INCRs whose outcome is unknown
	finalV   map[string]int64
}

func (w *counterWL) name() string { return "counter" }

func (w *counterWL) start(r *faultRun, clients int, stop <-chan struct{}, wg *sync.WaitGroup) {
	w.acked, w.unknowns, w.finalV = map[string][]int64{}, map[string]int{}, map[string]int64{}
	runWClients(r, w.name(), clients, stop, wg, func(wc *wclient, _, i int, cli *redis.Client) {
		key := faultCtrKeys[wc.rng.Intn(len(faultCtrKeys))]
		op := porcupine.Operation{ClientId: wc.k}
		if wc.rng.Intn(3) > 0 {
			t0, t1, v, err := wc.opInt(i, "INCR "+key, func(ctx context.Context) (int64, error) {
				return cli.Incr(ctx, key).Result()
			})
			op.Input, op.Output, op.Call, op.Return = faultCtrInput{key, true}, v, int64(t0), int64(t1)
			w.mu.Lock()
			switch faultOutcome(err) {
			case done:
				w.acked[key] = append(w.acked[key], v)
			case unknown:
				op.Return, op.Output = math.MaxInt64, int64(-1)
				w.unknowns[key]++
			case refused:
				w.mu.Unlock()
				return
			}
			w.ops = append(w.ops, op)
			w.mu.Unlock()
		} else {
			var v int64
			t0, t1, _, err := wc.op(i, "GET "+key, func(ctx context.Context) (string, error) {
				s, err := getCount(ctx, cli, key)
				if err != nil {
					return "", err
				}
				v, err = strconv.ParseInt(s, 10, 64)
				return s, err
			})
			if err != nil {
				return
			}
			op.Input, op.Output, op.Call, op.Return = faultCtrInput{key: key}, v, int64(t0), int64(t1)
			w.mu.Lock()
			w.ops = append(w.ops, op)
			w.mu.Unlock()
		}
		time.Sleep(time.Duration(wc.rng.Intn(3)) * time.Millisecond)
	})
}

func (w *counterWL) final(r *faultRun, cli *redis.Client) error {
	for _, key := range faultCtrKeys {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := getCount(ctx, cli, key)
		cancel()
		if err != nil {
			return err
		}
		if w.finalV[key], err = strconv.ParseInt(s, 10, 64); err != nil {
			return err
		}
		r.record(r.now(), r.now(), "counter final GET "+key+" -> "+s)
	}
	return nil
}

func (w *counterWL) check(r *faultRun) checkResult {
	res := checkResult{ok: true}
	var notes []string
	for _, key := range faultCtrKeys {
		c := checkCounter(w.acked[key], w.unknowns[key], w.finalV[key])
		res.ops += c.ops
		res.ok = res.ok && c.ok
		notes = append(notes, key+" "+c.verdict)
	}
	res.verdict = strings.Join(notes, "; ")
	if !res.ok {
		return res
	}
	p := checkPorcupine("counter", faultCounterModel, w.ops, r.porcupineTimeout, r.path("counter.html"))
	p.verdict = res.verdict + "; " + p.verdict
	return p
}

// ---- queue: LPUSH of unique elements, BLPOP consumers ----

type pushRec struct {
	out  opOutcome
	call time.Duration // when its LPUSH was sent
}

type queueWL struct {
	mu        sync.Mutex
	pushed    map[string]pushRec // every element sent, and how its LPUSH ended
	delivered map[string]int     // element -> times a BLPOP returned it
	uncertain []time.Duration    // pops whose outcome is unknown: the latest time each may have taken effect
	left      []string           // the list at the end
}

func (w *queueWL) name() string { return "queue" }

func (w *queueWL) start(r *faultRun, clients int, stop <-chan struct{}, wg *sync.WaitGroup) {
	w.pushed, w.delivered = map[string]pushRec{}, map[string]int{}
	runWClients(r, "queue-push", clients, stop, wg, func(wc *wclient, n, i int, cli *redis.Client) {
		e := fmt.Sprintf("e%d-%d", wc.k, n)
		t0, _, _, err := wc.opInt(i, "LPUSH f:q "+e, func(ctx context.Context) (int64, error) {
			return cli.LPush(ctx, "f:q", e).Result()
		})
		w.mu.Lock()
		w.pushed[e] = pushRec{faultOutcome(err), t0}
		w.mu.Unlock()
		time.Sleep(time.Duration(wc.rng.Intn(5)) * time.Millisecond)
	})
	runWClients(r, "queue-pop", clients, stop, wg, func(wc *wclient, _, i int, cli *redis.Client) {
		_, t1, _, err := wc.op(i, "BLPOP f:q 1", func(ctx context.Context) (string, error) {
			kv, err := cli.BLPop(ctx, time.Second, "f:q").Result()
			if errors.Is(err, redis.Nil) {
				return "(nil)", nil
			}
			if err != nil {
				return "", err
			}
			w.mu.Lock()
			w.delivered[kv[1]]++
			w.mu.Unlock()
			return kv[1], nil
		})
		if faultOutcome(err) == unknown {
			// a server's error reply (UNCERTAIN) comes after
			// whatever the pop did; a timeout or a lost
			// connection says nothing about when
			end := time.Duration(math.MaxInt64)
			var rerr redis.Error
			if errors.As(err, &rerr) {
				end = t1
			}
			w.mu.Lock()
			w.uncertain = append(w.uncertain, end)
			w.mu.Unlock()
		}
	})
}

func (w *queueWL) final(r *faultRun, cli *redis.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var err error
	w.left, err = cli.LRange(ctx, "f:q", 0, -1).Result()
	r.record(r.now(), r.now(), fmt.Sprintf("queue final LRANGE f:q -> %d elements", len(w.left)))
	return err
}

func (w *queueWL) check(r *faultRun) checkResult {
	return checkQueue(w.pushed, w.delivered, w.uncertain, w.left)
}

// ---- cas: WATCH/GET/MULTI/SET v+1/EXEC ----

type casWL struct {
	mu       sync.Mutex
	wrote    []int64 // values written by EXECs that committed
	unknowns int
	finalV   int64
}

func (w *casWL) name() string { return "cas" }

func (w *casWL) start(r *faultRun, clients int, stop <-chan struct{}, wg *sync.WaitGroup) {
	runWClients(r, w.name(), clients, stop, wg, func(wc *wclient, _, i int, cli *redis.Client) {
		var read int64 = -1
		inTx := false
		_, _, _, err := wc.op(i, "WATCH f:cas; GET; MULTI; SET f:cas GET+1; EXEC", func(ctx context.Context) (string, error) {
			err := cli.Watch(ctx, func(tx *redis.Tx) error {
				s, err := getCount(ctx, tx, "f:cas")
				if err != nil {
					return err
				}
				if read, err = strconv.ParseInt(s, 10, 64); err != nil {
					return err
				}
				inTx = true
				_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Set(ctx, "f:cas", read+1, 0)
					return nil
				})
				return err
			}, "f:cas")
			if errors.Is(err, redis.TxFailedErr) {
				return fmt.Sprintf("read %d, aborted", read), err
			}
			return fmt.Sprintf("read %d, wrote %d", read, read+1), err
		})
		w.mu.Lock()
		switch {
		case err == nil:
			w.wrote = append(w.wrote, read+1)
		case errors.Is(err, redis.TxFailedErr), !inTx:
			// aborted, or failed before MULTI: nothing written
		case faultOutcome(err) == unknown:
			w.unknowns++
		}
		w.mu.Unlock()
	})
}

func (w *casWL) final(r *faultRun, cli *redis.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := getCount(ctx, cli, "f:cas")
	if err != nil {
		return err
	}
	w.finalV, err = strconv.ParseInt(s, 10, 64)
	r.record(r.now(), r.now(), "cas final GET f:cas -> "+s)
	return err
}

func (w *casWL) check(r *faultRun) checkResult {
	return checkCAS(w.wrote, w.unknowns, w.finalV)
}

// ---- lua: one EVAL increments a counter and appends a tag atomically ----

const faultLuaScript = `local n = redis.call('INCR', KEYS[1]) redis.call('RPUSH', KEYS[2], ARGV[1]) return n`

type luaWL struct {
	mu       sync.Mutex
	acked    map[string]int64 // tag -> the n its EVAL returned
	unknown  map[string]bool
	finalN   int64
	finalLst []string
}

func (w *luaWL) name() string { return "lua" }

func (w *luaWL) start(r *faultRun, clients int, stop <-chan struct{}, wg *sync.WaitGroup) {
	w.acked, w.unknown = map[string]int64{}, map[string]bool{}
	runWClients(r, w.name(), clients, stop, wg, func(wc *wclient, n, i int, cli *redis.Client) {
		tag := fmt.Sprintf("t%d-%d", wc.k, n)
		_, _, v, err := wc.opInt(i, "EVAL incr+rpush f:lc f:ll "+tag, func(ctx context.Context) (int64, error) {
			return cli.Eval(ctx, faultLuaScript, []string{"f:lc", "f:ll"}, tag).Int64()
		})
		w.mu.Lock()
		switch faultOutcome(err) {
		case done:
			w.acked[tag] = v
		case unknown:
			w.unknown[tag] = true
		}
		w.mu.Unlock()
	})
}

func (w *luaWL) final(r *faultRun, cli *redis.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := getCount(ctx, cli, "f:lc")
	if err != nil {
		return err
	}
	if w.finalN, err = strconv.ParseInt(s, 10, 64); err != nil {
		return err
	}
	w.finalLst, err = cli.LRange(ctx, "f:ll", 0, -1).Result()
	r.record(r.now(), r.now(), fmt.Sprintf("lua final GET f:lc -> %s, LLEN f:ll -> %d", s, len(w.finalLst)))
	return err
}

func (w *luaWL) check(r *faultRun) checkResult {
	return checkLua(w.acked, w.unknown, w.finalN, w.finalLst)
}

// ---- ratelimit: RL.ALLOW on a gcra and a sliding-log limiter ----

// The limiters: 10 units a second (gcra, capacity 10) and 5 in any 500 ms
// (sliding-log): small enough that the clients are refused most of the
// time, so the bound is what limits the grants.
var faultLimiters = []rlSpec{
	{key: "f:rl:gcra", algo: "gcra", limit: 10, periodMs: 1000},
	{key: "f:rl:slog", algo: "sliding-log", limit: 5, periodMs: 500},
}

type rlSpec struct {
	key, algo       string
	limit, periodMs int64
}

type rateWL struct {
	mu     sync.Mutex
	grants map[string][]span // key -> acknowledged `allowed 1` replies
	asked  int
}

type span struct{ t0, t1 time.Duration }

func (w *rateWL) name() string { return "ratelimit" }

func (w *rateWL) start(r *faultRun, clients int, stop <-chan struct{}, wg *sync.WaitGroup) {
	w.grants = map[string][]span{}
	runWClients(r, w.name(), clients, stop, wg, func(wc *wclient, _, i int, cli *redis.Client) {
		l := faultLimiters[wc.rng.Intn(len(faultLimiters))]
		allowed := int64(-1)
		t0, t1, _, err := wc.op(i, fmt.Sprintf("RL.ALLOW %s %d %d ALGO %s", l.key, l.limit, l.periodMs, l.algo), func(ctx context.Context) (string, error) {
			vals, err := cli.Do(ctx, "RL.ALLOW", l.key, l.limit, l.periodMs, "ALGO", l.algo).Slice()
			if err != nil {
				return "", err
			}
			var parts []string
			for j := 0; j+1 < len(vals); j += 2 {
				parts = append(parts, fmt.Sprint(vals[j], "=", vals[j+1]))
				if vals[j] == "allowed" {
					allowed, _ = vals[j+1].(int64)
				}
			}
			return strings.Join(parts, " "), nil
		})
		w.mu.Lock()
		w.asked++
		// an UNCERTAIN reply counts as not granted here
		if err == nil && allowed == 1 {
			w.grants[l.key] = append(w.grants[l.key], span{t0, t1})
		}
		w.mu.Unlock()
		time.Sleep(time.Duration(wc.rng.Intn(8)) * time.Millisecond)
	})
}

func (w *rateWL) final(r *faultRun, cli *redis.Client) error { return nil }

func (w *rateWL) check(r *faultRun) checkResult {
	res := checkResult{ok: true, ops: w.asked}
	var notes []string
	for _, l := range faultLimiters {
		g := append([]span(nil), w.grants[l.key]...)
		sort.Slice(g, func(a, b int) bool { return g[a].t0 < g[b].t0 })
		ok, note := checkRateBound(l, g, r.widening)
		notes = append(notes, note)
		res.ok = res.ok && ok
	}
	res.verdict = "ratelimit: " + strings.Join(notes, "; ")
	return res
}

// ---- ttl: SET k v PX 1000, then GETs of k around its deadline ----

// faultTTL is the keys' time to live; the reads fall within 1.4 of it
// after the SET's reply.
const faultTTL = 1000 * time.Millisecond

type ttlWL struct {
	mu    sync.Mutex
	reads []ttlRead
	sets  int
}

type ttlRead struct {
	key             string
	setCall, setRet time.Duration
	getCall, getRet time.Duration
	found           bool
	node            int
}

func (w *ttlWL) name() string { return "ttl" }

func (w *ttlWL) start(r *faultRun, clients int, stop <-chan struct{}, wg *sync.WaitGroup) {
	runWClients(r, w.name(), clients, stop, wg, func(wc *wclient, n, i int, cli *redis.Client) {
		key := fmt.Sprintf("f:ttl:%d:%d", wc.k, n)
		s0, s1, _, err := wc.op(i, "SET "+key+" v PX 1000", func(ctx context.Context) (string, error) {
			return cli.Set(ctx, key, "v", faultTTL).Result()
		})
		if err != nil {
			return // only an acknowledged SET has a known deadline
		}
		w.mu.Lock()
		w.sets++
		w.mu.Unlock()
		// four reads at random points of [0, 1.4 TTL] after the reply
		var at []time.Duration
		for j := 0; j < 4; j++ {
			at = append(at, time.Duration(wc.rng.Int63n(int64(faultTTL)*14/10)))
		}
		sort.Slice(at, func(a, b int) bool { return at[a] < at[b] })
		for _, a := range at {
			if d := s1 + a - r.now(); d > 0 {
				time.Sleep(d)
			}
			j, cli := wc.pick()
			found := false
			g0, g1, _, err := wc.op(j, "GET "+key, func(ctx context.Context) (string, error) {
				v, err := cli.Get(ctx, key).Result()
				found = err == nil
				return v, nilOK(err)
			})
			if err != nil {
				continue
			}
			w.mu.Lock()
			w.reads = append(w.reads, ttlRead{key, s0, s1, g0, g1, found, j})
			w.mu.Unlock()
		}
	})
}

func (w *ttlWL) final(r *faultRun, cli *redis.Client) error { return nil }

func (w *ttlWL) check(r *faultRun) checkResult {
	return checkTTL(w.reads, w.sets, faultTTL, r.widening)
}
