package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// side is one server under test (ref = redis-server, cand = limitdb).
type side struct {
	name  string
	addr  string
	auth  string // AUTH arguments sent on every new connection
	pid   int
	conns []*conn
	shas  map[string]string // script file -> SHA from SCRIPT LOAD
	// others: the side's other processes (a primary's replicas, a
	// cluster's other nodes), whose CPU counts with pid's
	others []int
	// topology describes a replicated side for the header
	topology string
	// cc drives a sharded side (-shards): every worker's commands go
	// through go-redis's ClusterClient, which routes them by slot
	// (shards.go); conns then only hold the workers' key sequences
	cc     *redis.ClusterClient
	groups []shardGroup
	// CPU ns the side's processes used and ops it served during the
	// measured slices of the current case (pid known only)
	cpu, ops int64
	// selfCPU: the load generator's own CPU ns during those slices
	selfCPU int64
}

// cpuNs is the CPU time all the side's processes have run.
func (s *side) cpuNs() int64 {
	n := cpuNs(s.pid)
	for _, p := range s.others {
		n += cpuNs(p)
	}
	return n
}

// builder appends one operation (one or more commands) to b.
type builder func(c *conn, s *side, b []byte, nowMs int64) []byte

// workload is one measured operation. replies is the number of top-level
// replies one operation produces (a MULTI block produces four).
type workload struct {
	name    string
	replies int
	ref     builder
	cand    builder // nil: same as ref
	scripts []string
	// libs are seed scripts loaded on both sides as function libraries
	// (FUNCTION LOAD REPLACE of a library whose function runs the script's
	// body, as Redis's scripting.tcl wraps a script)
	libs []string
	// refOnly: the scripts are for redis only (cand runs a native command)
	refOnly bool
	// probe is a command whose reply on cand (and ref) tells whether the
	// workload can run; an error reply skips it.
	probe func(s *side, isRef bool) []string
	// preload fills the keyspace before measuring (GET).
	preload bool
	// subscribers: connections subscribed to the channel the workload
	// publishes to (pubsub.go)
	subscribers int
	// pingpong: pairs of connections, runPingPong (pingpong.go)
	pingpong bool
	// setup is sent once to each side before measuring (SORT's list).
	setup [][]string
}

var keySpace = 10000

// keyTag makes the random keys hash tags, {prefix<n>} (-shards sets it):
// Redis Cluster refuses a script's access to an undeclared key of
// another slot, and the token-bucket script derives KEYS[1].."_time",
// which the tag keeps in KEYS[1]'s slot.
var keyTag bool

func randKey(c *conn, b []byte, prefix string) []byte {
	n := int64(c.intn(keySpace))
	if keyTag {
		return appendTaggedKey(b, prefix, n)
	}
	return appendBulkKey(b, prefix, n)
}

var value16 = []byte("vvvvvvvvvvvvvvvv")

func cmd1(name string, prefix string) builder {
	return func(c *conn, s *side, b []byte, now int64) []byte {
		b = appendArrayHdr(b, 2)
		b = appendBulkStr(b, name)
		return randKey(c, b, prefix)
	}
}

func evalsha(file string, args func(c *conn, b []byte, now int64) (int, []byte)) builder {
	return func(c *conn, s *side, b []byte, now int64) []byte {
		// encode the arguments first (into the connection's scratch) to
		// know their count
		var n int
		n, c.scratch = args(c, c.scratch[:0], now)
		b = appendArrayHdr(b, 3+n)
		b = appendBulkStr(b, "EVALSHA")
		b = appendBulkStr(b, s.shas[file])
		b = appendBulkStr(b, "1")
		return append(b, c.scratch...)
	}
}

// script argument builders, as seed-scripts/README.md calls them
func tbArgs(c *conn, b []byte, now int64) (int, []byte) {
	// key capacity add interval-s now-s
	b = randKey(c, b, "tb:")
	b = appendBulkStr(b, "10")
	b = appendBulkStr(b, "1")
	b = appendBulkStr(b, "1")
	b = appendBulkInt(b, now/1000)
	return 5, b
}

func swArgs(c *conn, b []byte, now int64) (int, []byte) {
	// key window-ms now-ms limit
	b = randKey(c, b, "sw:")
	b = appendBulkStr(b, "1000")
	b = appendBulkInt(b, now)
	b = appendBulkStr(b, "10")
	return 4, b
}

func fwArgs(c *conn, b []byte, now int64) (int, []byte) {
	// key limit window-s
	b = randKey(c, b, "fw:")
	b = appendBulkStr(b, "10")
	b = appendBulkStr(b, "1")
	return 3, b
}

func rlAllow(prefix, algo string) builder {
	return func(c *conn, s *side, b []byte, now int64) []byte {
		n := 4
		if algo != "" {
			n += 2
		}
		b = appendArrayHdr(b, n)
		b = appendBulkStr(b, "RL.ALLOW")
		b = randKey(c, b, prefix)
		b = appendBulkStr(b, "10")
		b = appendBulkStr(b, "1000")
		if algo != "" {
			b = appendBulkStr(b, "ALGO")
			b = appendBulkStr(b, algo)
		}
		return b
	}
}

// rlPolicy is RL.ALLOW key POLICY name.
func rlPolicy(prefix, name string) builder {
	return func(c *conn, s *side, b []byte, now int64) []byte {
		b = appendArrayHdr(b, 4)
		b = appendBulkStr(b, "RL.ALLOW")
		b = randKey(c, b, prefix)
		b = appendBulkStr(b, "POLICY")
		return appendBulkStr(b, name)
	}
}

const (
	scriptTB = "001-token-bucket.lua"
	scriptSW = "002-sliding-window-zset.lua"
	scriptFW = "001-counter.lua"
)

func probeCmd(args ...string) func(*side, bool) []string {
	return func(*side, bool) []string { return args }
}

// fcall calls the function that wraps file's body (libraryCode).
func fcall(file string, args func(c *conn, b []byte, now int64) (int, []byte)) builder {
	name := functionName(file)
	return func(c *conn, s *side, b []byte, now int64) []byte {
		var n int
		n, c.scratch = args(c, c.scratch[:0], now)
		b = appendArrayHdr(b, 3+n)
		b = appendBulkStr(b, "FCALL")
		b = appendBulkStr(b, name)
		b = appendBulkStr(b, "1")
		return append(b, c.scratch...)
	}
}

// functionName is the function (and library) that wraps a seed script.
func functionName(file string) string {
	return "bench_" + strings.NewReplacer("-", "_", ".lua", "").Replace(file)
}

// libraryCode wraps a seed script's body into a function library.
func libraryCode(file string, body []byte) string {
	name := functionName(file)
	return "#!lua name=" + name + "\nredis.register_function('" + name + "', function(KEYS, ARGV)\n" + string(body) + "\nend)"
}

func probeSha(file string, extra ...string) func(*side, bool) []string {
	return func(s *side, _ bool) []string {
		return append([]string{"EVALSHA", s.shas[file], "1", "probe:" + file}, extra...)
	}
}

var workloads = []*workload{
	{name: "ping", replies: 1, ref: func(c *conn, s *side, b []byte, now int64) []byte {
		return append(b, "*1\r\n$4\r\nPING\r\n"...)
	}, probe: probeCmd("PING")},
	{name: "get", replies: 1, ref: cmd1("GET", "key:"), probe: probeCmd("GET", "key:0"), preload: true},
	{name: "set", replies: 1, ref: func(c *conn, s *side, b []byte, now int64) []byte {
		b = appendArrayHdr(b, 3)
		b = appendBulkStr(b, "SET")
		b = randKey(c, b, "skey:") // not key:, which INCR needs as integers
		return appendBulk(b, value16)
	}, probe: probeCmd("SET", "probe:set", "1")},
	{name: "incr", replies: 1, ref: cmd1("INCR", "key:"), probe: probeCmd("INCR", "probe:incr")},
	{name: "multi", replies: 4, ref: func(c *conn, s *side, b []byte, now int64) []byte {
		b = append(b, "*1\r\n$5\r\nMULTI\r\n"...)
		k := int64(c.intn(keySpace))
		b = appendArrayHdr(b, 2)
		b = appendBulkStr(b, "INCR")
		b = appendBulkKey(b, "mk:", k)
		b = appendArrayHdr(b, 3)
		b = appendBulkStr(b, "EXPIRE")
		b = appendBulkKey(b, "mk:", k)
		b = appendBulkStr(b, "60")
		return append(b, "*1\r\n$4\r\nEXEC\r\n"...)
	}, probe: probeCmd("EXPIRE", "probe:multi", "60")},
	{name: "lpush", replies: 1, ref: func(c *conn, s *side, b []byte, now int64) []byte {
		b = appendArrayHdr(b, 3)
		b = appendBulkStr(b, "LPUSH")
		b = randKey(c, b, "list:")
		return appendBulk(b, value16)
	}, probe: probeCmd("LPUSH", "probe:lpush", "x")},
	{name: "zadd", replies: 1, ref: func(c *conn, s *side, b []byte, now int64) []byte {
		b = appendArrayHdr(b, 4)
		b = appendBulkStr(b, "ZADD")
		b = randKey(c, b, "z:")
		b = appendBulkInt(b, int64(c.intn(1000000)))
		return appendBulkKey(b, "m", int64(c.intn(100)))
	}, probe: probeCmd("ZADD", "probe:zadd", "1", "a")},
	{name: "blpop", replies: 2, pingpong: true, probe: probeCmd("BLPOP", "probe:blpop", "0.001")},
	{name: "evalsha-tb", replies: 1, ref: evalsha(scriptTB, tbArgs), scripts: []string{scriptTB},
		probe: probeSha(scriptTB, "10", "1", "1", "1700000000")},
	{name: "evalsha-sw", replies: 1, ref: evalsha(scriptSW, swArgs), scripts: []string{scriptSW},
		probe: probeSha(scriptSW, "1000", "1700000000000", "10")},
	{name: "evalsha-fw", replies: 1, ref: evalsha(scriptFW, fwArgs), scripts: []string{scriptFW},
		probe: probeSha(scriptFW, "10", "1")},
	// the fixed-window counter as a function (FCALL) on both sides
	{name: "fcall-fw", replies: 1, ref: fcall(scriptFW, fwArgs), libs: []string{scriptFW},
		probe: probeCmd("FCALL", functionName(scriptFW), "1", "probe:fcall", "10", "1")},
	// EVALSHA on the reference, FCALL of the same body on the candidate:
	// with a limitdb as the reference (-redis), FCALL's cost against
	// EVALSHA's in the same slices
	{name: "fcall-vs-evalsha-fw", replies: 1, ref: evalsha(scriptFW, fwArgs), cand: fcall(scriptFW, fwArgs),
		scripts: []string{scriptFW}, libs: []string{scriptFW},
		probe: func(s *side, isRef bool) []string {
			if isRef {
				return probeSha(scriptFW, "10", "1")(s, true)
			}
			return []string{"FCALL", functionName(scriptFW), "1", "probe:fcall", "10", "1"}
		}},
	// RL.ALLOW on limitdb against the equivalent Lua on Redis
	{name: "rl-tb", replies: 1, ref: evalsha(scriptTB, tbArgs), cand: rlAllow("rl:", ""), scripts: []string{scriptTB}, refOnly: true,
		probe: func(s *side, isRef bool) []string {
			if isRef {
				return probeSha(scriptTB, "10", "1", "1", "1700000000")(s, true)
			}
			return []string{"RL.ALLOW", "probe:rl", "10", "1000"}
		}},
	// RL.ALLOW on both sides: for a reference server that is itself a
	// limitdb (e.g. the same binary without AUTH, see bench/README.md)
	{name: "rl-native", replies: 1, ref: rlAllow("rl:", ""),
		probe: probeCmd("RL.ALLOW", "probe:rl", "10", "1000")},
	// RL.ALLOW key POLICY p against RL.ALLOW key 10 1000, the same limit
	// inline, on one limitdb (-self; RUNS=rl-policy): what the policy
	// lookup, RL.STATS's counting and RL.TOP's sketch cost per decision
	{name: "rl-policy", replies: 1, ref: rlAllow("rli:", ""), cand: rlPolicy("rlp:", "bench"),
		setup: [][]string{{"RL.POLICY", "SET", "bench", "LIMIT", "10", "PERIOD", "1000"}},
		probe: func(s *side, isRef bool) []string {
			if isRef {
				return []string{"RL.ALLOW", "probe:rl", "10", "1000"}
			}
			return []string{"RL.ALLOW", "probe:rl", "POLICY", "bench"}
		}},
	{name: "rl-fw", replies: 1, ref: evalsha(scriptFW, fwArgs), cand: rlAllow("rlfw:", "fixed-window"), scripts: []string{scriptFW}, refOnly: true,
		probe: func(s *side, isRef bool) []string {
			if isRef {
				return probeSha(scriptFW, "10", "1")(s, true)
			}
			return []string{"RL.ALLOW", "probe:rlfw", "10", "1000", "ALGO", "fixed-window"}
		}},
	// PUBLISH to 50 subscribers (pubsub.go)
	{name: "publish", replies: 1, ref: publishBuilder, subscribers: 50,
		probe: probeCmd("PUBLISH", "probe:publish", "x")},
	// SORT of a 100-element list, numeric and ALPHA (the same list)
	{name: "sort", replies: 1, ref: sortCmd("SORT", "sortlist"),
		setup: [][]string{{"DEL", "sortlist"}, sortList()}, probe: probeCmd("SORT", "sortlist")},
	{name: "sort-alpha", replies: 1, ref: sortCmd("SORT", "sortlist", "ALPHA"),
		setup: [][]string{{"DEL", "sortlist"}, sortList()}, probe: probeCmd("SORT", "sortlist", "ALPHA")},
}

// sortList is the RPUSH of the list the SORT workloads sort: 100
// decimals with three places (Redis reads them with strtod), from a fixed
// xorshift sequence.
func sortList() []string {
	out := []string{"RPUSH", "sortlist"}
	x := uint64(88172645463325252)
	for i := 0; i < 100; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		out = append(out, strconv.FormatFloat(float64(x%100000000)/1000, 'f', 3, 64))
	}
	return out
}

func sortCmd(args ...string) builder {
	return func(c *conn, s *side, b []byte, now int64) []byte {
		b = appendArrayHdr(b, len(args))
		for _, a := range args {
			b = appendBulkStr(b, a)
		}
		return b
	}
}

func findWorkload(name string) *workload {
	for _, w := range workloads {
		if w.name == name {
			return w
		}
	}
	return nil
}

// loadScripts loads the workload's scripts the side has no SHA of yet
// (for the reference only, when the candidate runs a native command)
// with load, which returns the SHA.
func (w *workload) loadScripts(s *side, isRef bool, seedDir string, load func(file string, body []byte) (string, error)) error {
	for _, f := range w.scripts {
		if s.shas[f] != "" || (w.refOnly && !isRef) {
			continue
		}
		body, err := os.ReadFile(filepath.Join(seedDir, f))
		if err != nil {
			return fmt.Errorf("read script: %v", err)
		}
		sha, err := load(f, body)
		if err != nil {
			return err
		}
		s.shas[f] = sha
	}
	return nil
}

// prepare loads scripts, probes the command and preloads keys on one side.
// A non-nil error means the workload must be skipped.
func (w *workload) prepare(s *side, isRef bool, seedDir string) error {
	if s.cc != nil {
		return w.prepareCluster(s, isRef, seedDir)
	}
	c := s.conns[0]
	err := w.loadScripts(s, isRef, seedDir, func(f string, body []byte) (string, error) {
		r, err := c.do("SCRIPT", "LOAD", string(body))
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(r, "-") {
			return "", fmt.Errorf("%s: SCRIPT LOAD %s: %s", s.name, f, short(r[1:]))
		}
		return bulkValue(r), nil
	})
	if err != nil {
		return err
	}
	for _, f := range w.libs {
		body, err := os.ReadFile(filepath.Join(seedDir, f))
		if err != nil {
			return fmt.Errorf("read script: %v", err)
		}
		r, err := c.do("FUNCTION", "LOAD", "REPLACE", libraryCode(f, body))
		if err != nil {
			return err
		}
		if strings.HasPrefix(r, "-") {
			return fmt.Errorf("%s: FUNCTION LOAD %s: %s", s.name, f, short(r[1:]))
		}
	}
	for _, args := range w.setup {
		r, err := c.do(args...)
		if err != nil {
			return err
		}
		if strings.HasPrefix(r, "-") {
			return fmt.Errorf("%s: %s: %s", s.name, args[0], short(r[1:]))
		}
	}
	if w.probe != nil {
		args := w.probe(s, isRef)
		r, err := c.do(args...)
		if err != nil {
			return err
		}
		if strings.HasPrefix(r, "-") {
			return fmt.Errorf("%s: %s: %s", s.name, args[0], short(r[1:]))
		}
	}
	if w.subscribers > 0 {
		if err := startSubscribers(s, w.subscribers); err != nil {
			return fmt.Errorf("%s: subscribers: %v", s.name, err)
		}
	}
	if w.preload {
		incr := func(b []byte, j int) []byte {
			b = appendArrayHdr(b, 2)
			b = appendBulkStr(b, "INCR")
			return appendBulkKey(b, "key:", int64(j))
		}
		const batch = 1000
		for i := 0; i < keySpace; i += batch {
			if err := c.sendBatch(i, min(i+batch, keySpace), 1, incr); err != nil {
				return err
			}
		}
	}
	return nil
}

func parseDepths(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad pipeline depth %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// short trims an error reply for the table's notes.
func short(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 90 {
		s = s[:90] + "…"
	}
	return s
}
