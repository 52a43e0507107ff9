package server

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"limitdb/engine"
)

// paramKind says how a CONFIG parameter's value is checked and shown.
type paramKind int

const (
	pInt paramKind = iota
	pMem
	pBool
	pEnum
	pString
	pSave
	pEvents
	pOctal // an integer written in octal (unixsocketperm)
	pObuf  // client-output-buffer-limit: classes with hard, soft, seconds
	pOOM   // oom-score-adj-values: three scores (oom_score_adj.go)
	pPerc  // latency-tracking-info-percentiles: doubles in [0, 100] (info_latency.go)
)

// param is one CONFIG parameter, with Redis 7.0's name, default, checks
// and mutability.
type param struct {
	name      string
	alias     string // another name for the same value (lua-time-limit)
	kind      paramKind
	def       string
	min, max  int64 // pInt bounds, inclusive
	clampMin  int64 // pInt: values are clamped into [clampMin, clampMax] when set
	clampMax  int64
	enum      []string
	immutable bool
	// startup: CONFIG SET validates the value as Redis does (the
	// parameter is mutable there) and accepts only the current one:
	// limitdb reads it at start-up (errStartupOnly)
	startup   bool
	protected bool
	// debug: CONFIG SET only from a connection DEBUG is allowed from
	// (enable-debug-command): a test's fault, not a setting
	debug bool
	// cannot, when set, returns why limitdb refuses a valid value it
	// cannot honour (see config_refusals.go); "" when it can.
	cannot func(v string) string
}

var params = []*param{
	{name: "maxmemory", kind: pMem, def: "0"},
	{name: "maxmemory-policy", kind: pEnum, def: "noeviction", enum: []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"}},
	{name: "databases", kind: pInt, def: "16", immutable: true},
	// the Raft log is the append-only file (cluster/): yes makes the node
	// a durable cluster (of one unless joined), no keeps everything in
	// memory. The binary's default is yes (Config.Durable); a server
	// embedded without it has no log, as its default says.
	{name: "appendonly", kind: pBool, def: "no", startup: true},
	// RDB files (rdb_save.go). save's default is Redis 7.0's; a server
	// embedded without Config.Chdir (tests) starts with "" (initConfig).
	{name: "save", kind: pSave, def: "3600 1 300 100 60 10000"},
	{name: "dbfilename", kind: pString, def: "dump.rdb", protected: true, cannot: baseName},
	{name: "rdbcompression", kind: pBool, def: "yes"},
	{name: "rdbchecksum", kind: pBool, def: "yes", immutable: true},
	{name: "stop-writes-on-bgsave-error", kind: pBool, def: "yes"},
	{name: "timeout", kind: pInt, def: "0", min: 0, max: 2147483647},
	{name: "maxclients", kind: pInt, def: "10000", min: 1, max: 4294967295},
	{name: "busy-reply-threshold", alias: "lua-time-limit", kind: pInt, def: "5000", min: 0, max: 9223372036854775807},
	{name: "proto-max-bulk-len", kind: pMem, def: "536870912", min: 1024 * 1024, max: 9223372036854775807},
	{name: "client-query-buffer-limit", kind: pMem, def: "1073741824", min: 1024 * 1024, max: 9223372036854775807},
	{name: "hz", kind: pInt, def: "10", min: 0, max: 2147483647, clampMin: 1, clampMax: 500},
	{name: "port", kind: pInt, def: "6379", min: 0, max: 65535},
	{name: "bind", kind: pString, def: "* -::*"},
	// with enable-protected-configs CONFIG SET may name dir, but only its
	// current value: the Raft log and the RDB file were opened in it
	{name: "dir", kind: pString, def: ".", protected: true, startup: true},
	{name: "loglevel", kind: pEnum, def: "notice", enum: []string{"debug", "verbose", "notice", "warning"}},
	{name: "notify-keyspace-events", kind: pEvents, def: ""}, // config_notify.go
	{name: "slowlog-log-slower-than", kind: pInt, def: "10000", min: -1, max: 9223372036854775807},
	{name: "slowlog-max-len", kind: pInt, def: "128", min: 0, max: 9223372036854775807},
	{name: "maxmemory-samples", kind: pInt, def: "5", min: 1, max: 2147483647},
	{name: "lazyfree-lazy-user-del", kind: pBool, def: "no", cannot: only("no", errNoLazyfree)},
	{name: "appendfsync", kind: pEnum, def: "everysec", enum: []string{"always", "everysec", "no"}, startup: true},
	// stored and shown: a limitdb list is one ring, not a quicklist of
	// listpack nodes, so there is nothing to size or compress (Redis 7.0
	// reports every list as quicklist whatever these say)
	{name: "list-max-listpack-size", alias: "list-max-ziplist-size", kind: pInt, def: "-2", min: -2147483648, max: 2147483647},
	{name: "list-compress-depth", kind: pInt, def: "0", min: 0, max: 2147483647},
	{name: "hash-max-listpack-entries", alias: "hash-max-ziplist-entries", kind: pInt, def: "512", min: 0, max: 9223372036854775807},
	{name: "hash-max-listpack-value", alias: "hash-max-ziplist-value", kind: pMem, def: "64", max: 9223372036854775807},
	{name: "set-max-intset-entries", kind: pInt, def: "512", min: 0, max: 9223372036854775807},
	{name: "zset-max-listpack-entries", alias: "zset-max-ziplist-entries", kind: pInt, def: "128", min: 0, max: 9223372036854775807},
	{name: "zset-max-listpack-value", alias: "zset-max-ziplist-value", kind: pMem, def: "64", max: 9223372036854775807},
	{name: "tcp-keepalive", kind: pInt, def: "300", min: 0, max: 2147483647},
	{name: "protected-mode", kind: pBool, def: "yes"},
	// limitdb's: how plain-TCP connections are served, a goroutine each
	// or event loops (evloop.go); applies to connections accepted after
	// it is set
	{name: "io-model", kind: pEnum, def: "loop", enum: []string{"goroutine", "loop"}},
	{name: "unixsocket", kind: pString, def: "", immutable: true},
	{name: "unixsocketperm", kind: pOctal, def: "0", min: 0, max: 0o777, immutable: true},
	{name: "tls-port", kind: pInt, def: "0", min: 0, max: 65535},
	{name: "tls-cert-file", kind: pString, def: ""},
	{name: "tls-key-file", kind: pString, def: ""},
	{name: "tls-ca-cert-file", kind: pString, def: ""},
	{name: "tls-ca-cert-dir", kind: pString, def: ""},
	{name: "tls-auth-clients", kind: pEnum, def: "yes", enum: []string{"no", "yes", "optional"}},
	{name: "tls-protocols", kind: pString, def: ""},
	{name: "requirepass", kind: pString, def: ""},
	// what a cluster node authenticates its join and its links to the
	// other nodes with (cluster_auth.go), as a Redis replica authenticates
	// to its master
	{name: "masteruser", kind: pString, def: ""},
	{name: "masterauth", kind: pString, def: ""},
	{name: "aclfile", kind: pString, def: "", immutable: true},
	{name: "acllog-max-len", kind: pInt, def: "128", min: 0, max: 9223372036854775807},
	{name: "client-output-buffer-limit", kind: pObuf, def: obufDefault},
	{name: "client-output-pause-size", kind: pMem, def: "67108864", min: 16384, max: 9223372036854775807},
	{name: "enable-debug-command", kind: pEnum, def: "no", enum: []string{"no", "yes", "local"}, immutable: true},
	{name: "enable-protected-configs", kind: pEnum, def: "no", enum: []string{"no", "yes", "local"}, immutable: true},
	// accepted for redis.conf files and Redis's CI command line; limitdb
	// has no MODULE command whatever its value
	{name: "enable-module-command", kind: pEnum, def: "no", enum: []string{"no", "yes", "local"}, immutable: true},
	{name: "lua-memory-limit", kind: pMem, def: "268435456"}, // limitdb only: see commands.md
	// the latency monitor's threshold (ms, 0: off) and the per-command
	// histograms of LATENCY HISTOGRAM (latency.go)
	{name: "latency-monitor-threshold", kind: pInt, def: "0", min: 0, max: 9223372036854775807},
	{name: "latency-tracking", kind: pBool, def: "yes"},
	// the percentiles INFO latencystats reports (info_latency.go)
	{name: "latency-tracking-info-percentiles", kind: pPerc, def: "50 99 99.9"},
	// Redis 7.0 parameters; those without a comment are accepted, checked
	// and shown as Redis does but not used (commands.md, "Inert
	// parameters"): they tune replication, AOF rewriting, defragmentation,
	// streams, client tracking or HyperLogLogs, which a primary without
	// replicas does not use either; clients and tools that set them keep
	// working
	{name: "repl-ping-replica-period", alias: "repl-ping-slave-period", kind: pInt, def: "10", min: 1, max: 2147483647},
	{name: "repl-timeout", kind: pInt, def: "60", min: 1, max: 2147483647},
	{name: "repl-backlog-size", kind: pMem, def: "1048576", min: 1, max: 9223372036854775807},
	{name: "replica-serve-stale-data", alias: "slave-serve-stale-data", kind: pBool, def: "yes"},
	{name: "replica-read-only", alias: "slave-read-only", kind: pBool, def: "yes"},
	{name: "replica-lazy-flush", alias: "slave-lazy-flush", kind: pBool, def: "no"},
	// with both above 0 writes get NOREPLICAS (min_replicas.go)
	{name: "min-replicas-to-write", alias: "min-slaves-to-write", kind: pInt, def: "0", min: 0, max: 2147483647},
	{name: "min-replicas-max-lag", alias: "min-slaves-max-lag", kind: pInt, def: "10", min: 0, max: 2147483647},
	{name: "aof-use-rdb-preamble", kind: pBool, def: "yes"},
	{name: "auto-aof-rewrite-percentage", kind: pInt, def: "100", min: 0, max: 2147483647},
	// µs slept after each key an RDB save writes or a load reads
	// (applyRDBConfig; engine keyDelay)
	{name: "rdb-key-save-delay", kind: pInt, def: "0", min: -2147483648, max: 2147483647},
	{name: "key-load-delay", kind: pInt, def: "0", min: -2147483648, max: 2147483647},
	// only no, as a Redis built without its jemalloc; the active-defrag-*
	// knobs below tune the defragmenter it cannot enable
	{name: "activedefrag", kind: pBool, def: "no", cannot: only("no", errNoDefrag)},
	{name: "active-defrag-ignore-bytes", kind: pMem, def: "104857600", min: 1, max: 9223372036854775807},
	{name: "active-defrag-threshold-lower", kind: pInt, def: "10", min: 0, max: 1000},
	{name: "active-defrag-threshold-upper", kind: pInt, def: "100", min: 0, max: 1000},
	{name: "active-defrag-cycle-min", kind: pInt, def: "1", min: 1, max: 99},
	{name: "active-defrag-cycle-max", kind: pInt, def: "25", min: 1, max: 99},
	{name: "active-defrag-max-scan-fields", kind: pInt, def: "1000", min: 1, max: 9223372036854775807},
	{name: "stream-node-max-entries", kind: pInt, def: "100", min: 0, max: 9223372036854775807},
	{name: "stream-node-max-bytes", kind: pMem, def: "4096", min: 0, max: 9223372036854775807},
	{name: "hll-sparse-max-bytes", kind: pMem, def: "3000", min: 0, max: 9223372036854775807},
	{name: "tracking-table-max-keys", kind: pInt, def: "1000000", min: 0, max: 9223372036854775807},
	// the time one eviction may run (applyMaxmemory, evictionTimeLimit)
	{name: "maxmemory-eviction-tenacity", kind: pInt, def: "10", min: 0, max: 100},
	// the process's /proc/self/oom_score_adj (oom_score_adj.go); relative is shown
	// as yes, Redis's first name of the same value
	{name: "oom-score-adj", kind: pEnum, def: "no", enum: []string{"no", "yes", "relative", "absolute"}},
	{name: "oom-score-adj-values", kind: pOOM, def: oomValuesDef},
	// limitdb's cluster (cluster/DESIGN.md), start-up settings
	{name: "node-id", kind: pString, def: "", immutable: true},
	// Redis Cluster's protocol over this Raft group (cluster_mode.go);
	// immutable, as in Redis
	{name: "cluster-enabled", kind: pBool, def: "no", immutable: true},
	// inert (commands.md): the Raft log in dir holds the cluster's
	// configuration, and Raft's election timeout decides failures
	{name: "cluster-config-file", kind: pString, def: "nodes.conf", immutable: true},
	{name: "cluster-node-timeout", kind: pInt, def: "15000", min: 0, max: 9223372036854775807},
	{name: "raft-addr", kind: pString, def: "", immutable: true},
	{name: "raft-advertise", kind: pString, def: "", immutable: true},
	// what this node tells the others and clients its addresses are, when
	// not the listeners' (containers, NAT): the client address (MOVED,
	// CLUSTER SLOTS) and the inter-node one (cluster_start.go)
	{name: "cluster-announce-ip", kind: pString, def: "", immutable: true},
	{name: "cluster-announce-port", kind: pInt, def: "0", min: 0, max: 65535, immutable: true},
	{name: "cluster-announce-bus-port", kind: pInt, def: "0", min: 0, max: 65535, immutable: true},
	// TLS on every inter-node link (cluster/tls.go): the two share the
	// one inter-node listener, so either turns it on
	{name: "tls-cluster", kind: pBool, def: "no", immutable: true},
	{name: "tls-replication", kind: pBool, def: "no", immutable: true},
	{name: "join", kind: pString, def: "", immutable: true},
	{name: "cluster-secret", kind: pString, def: "", immutable: true},
	{name: "leader-wait-ms", kind: pInt, def: "2000", min: 1, max: 3600000, immutable: true},
	{name: "max-clock-skew-ms", kind: pInt, def: "500", min: 1, max: 3600000, immutable: true},
	{name: "raft-snapshot-threshold", kind: pInt, def: "8192", min: 1, max: 9223372036854775807, immutable: true},
	{name: "raft-trailing-logs", kind: pInt, def: "10240", min: 0, max: 9223372036854775807, immutable: true},
	{name: "raft-snapshot-interval", kind: pInt, def: "120", min: 1, max: 86400, immutable: true},
	// a test-only offset added to this node's clock (ms): the cluster
	// tests show its effect on limits and INFO, and CONFIG SET steps a
	// running node's clock (an NTP step, for the fault tests)
	// the Prometheus endpoint (metrics.go): off while metrics-port is 0;
	// metrics-policy-labels caps the policy label's values (the registry's
	// first names in byte order; the others count as _other)
	{name: "metrics-port", kind: pInt, def: "0", min: 0, max: 65535},
	{name: "metrics-bind", kind: pString, def: "127.0.0.1"},
	{name: "metrics-policy-labels", kind: pInt, def: "64", min: 0, max: 100000},
	{name: "debug-clock-offset-ms", kind: pInt, def: "0", min: -86400000, max: 86400000, debug: true},
}

// applyFn is what CONFIG SET runs after storing a new value, before
// answering; a failure restores every value of the command (Redis's apply
// functions). Parameters sharing one applyFn run it once.
type applyFn struct {
	volatile bool // run even when the value did not change (reload files)
	// atLoad: also run as a config file sets the value, in file order (the
	// listeners are opened later, by Listen, so the network ones are not)
	atLoad bool
	run    func(s *Server) string
}

// paramApply names the parameters whose new value needs more than
// applyConfig (which re-reads every value into the fields running code
// reads) to take effect.
var paramApply = map[string]*applyFn{
	"port":             applyPort,
	"bind":             applyBind,
	"tls-port":         applyTLSPort,
	"tls-cert-file":    applyTLSCfg,
	"tls-key-file":     applyTLSCfg,
	"tls-ca-cert-file": applyTLSCfg,
	"tls-ca-cert-dir":  applyTLSCfg,
	"tls-protocols":    applyTLSSet,
	"tls-auth-clients": applyTLSSet,
	"requirepass":      applyRequirePass,
	"masteruser":       applyMasterAuth,
	"masterauth":       applyMasterAuth,
	"acllog-max-len":   applyACLLogMax,
}

// setParams stores CONFIG SET's values and runs their apply functions. If
// one fails, every value is put back and the apply functions run again
// (Redis's restoreBackupConfig); it returns the failing parameter's name
// and the reason. The engine lock is held.
func (s *Server) setParams(ps []*param, vals []string) (string, string) {
	old := make([]string, len(ps))
	var fns []*applyFn
	var owner []*param
	for i, p := range ps {
		old[i] = s.conf.params[p.name]
		s.conf.params[p.name] = vals[i]
		fn := paramApply[p.name]
		if fn == nil || old[i] == vals[i] && !fn.volatile {
			continue
		}
		dup := false
		for _, f := range fns {
			dup = dup || f == fn
		}
		if !dup {
			fns = append(fns, fn)
			owner = append(owner, p)
		}
	}
	for i, fn := range fns {
		if why := fn.run(s); why != "" {
			s.log.Warn("Failed applying new configuration. Possibly related to new " + owner[i].name + " setting. Restoring previous settings.")
			for j, p := range ps {
				s.conf.params[p.name] = old[j]
			}
			for _, f := range fns {
				f.run(s)
			}
			s.applyConfig()
			return owner[i].name, why
		}
	}
	return "", ""
}

// runtimeConfig holds the CONFIG GET/SET values. Guarded by the engine lock.
type runtimeConfig struct {
	params map[string]string // by canonical name
}

func newRuntimeConfig() *runtimeConfig {
	c := &runtimeConfig{params: map[string]string{}}
	for _, p := range params {
		c.params[p.name] = p.def
	}
	return c
}

func findParam(name string) *param {
	name = strings.ToLower(name)
	for _, p := range params {
		if p.name == name || (p.alias != "" && p.alias == name) {
			return p
		}
	}
	return nil
}

// ConfigValue returns the current value of a CONFIG parameter ("" when
// unknown), e.g. "busy-reply-threshold" for the scripting engine. The
// caller holds the engine lock.
func (s *Server) ConfigValue(name string) string {
	if p := findParam(name); p != nil {
		return s.conf.params[p.name]
	}
	return ""
}

func init() {
	sub := func(name string, arity int, flags, summary string, h connHandler) connSub {
		return connSub{&engine.Command{Name: name, Arity: arity, Flags: flags, Group: "server", Since: "2.0.0", Summary: summary}, h}
	}
	registerConn(&engine.Command{Name: "config", Arity: -2, Group: "server", Since: "2.0.0", Summary: "A container for server configuration commands."}, nil,
		sub("get", -3, "admin noscript loading stale", "Returns the effective values of configuration parameters.", cmdConfigGet),
		sub("set", -4, "admin noscript loading stale", "Sets configuration parameters in-flight.", cmdConfigSet),
		sub("resetstat", 2, "admin noscript loading stale", "Resets the server's statistics.", cmdConfigResetstat),
		sub("rewrite", 2, "admin noscript loading stale", "Persists the effective configuration to file.", cmdConfigRewrite),
		sub("help", 2, "loading stale", "Returns helpful text about the different subcommands.", cmdConfigHelp),
	)
}

func hasGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// cmdConfigGet: CONFIG GET pattern [pattern …] — a map (flat array in
// RESP2) of every parameter whose name (or alias) matches a pattern
// (Redis glob, case-insensitive). A pattern without glob characters is
// echoed as given (Redis does so: CONFIG GET HZ answers "HZ"). Each name
// appears once, but a parameter and its alias are two names (Redis 7.0
// answers both, e.g. for hash-max-*); glob matches come in name order
// (Redis's order is its hash table's).
func cmdConfigGet(s *Server, cl *client, argv [][]byte) {
	type kv struct{ k, v string }
	var out []kv
	seen := map[string]bool{} // by lower-case name
	for _, a := range argv[2:] {
		pat := string(a)
		if !hasGlob(pat) {
			if p := findParam(pat); p != nil && !seen[strings.ToLower(pat)] {
				seen[strings.ToLower(pat)] = true
				out = append(out, kv{pat, shownParam(p, s.conf.params[p.name])})
			}
			continue
		}
		var m []kv
		lp := pat
		for _, p := range params {
			for _, n := range []string{p.name, p.alias} {
				if n != "" && !seen[n] && engine.Match(lp, n, true) {
					seen[n] = true
					m = append(m, kv{n, shownParam(p, s.conf.params[p.name])})
				}
			}
		}
		sort.Slice(m, func(i, j int) bool { return m[i].k < m[j].k })
		out = append(out, m...)
	}
	cl.w.Map(len(out))
	for _, e := range out {
		cl.w.BulkString(e.k)
		cl.w.BulkString(e.v)
	}
}

func setFailed(name, why string) string {
	return "ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + why
}

// cmdConfigSet: CONFIG SET param value [param value …] — OK when every
// value is valid; nothing is applied otherwise. Errors (Redis 7.0 texts):
// unknown parameter, syntax error for an odd count, duplicate parameter,
// immutable/protected config, not an integer, out of range, not a memory
// value, not one of the enum values, not yes/no, invalid save parameters,
// invalid event class character.
func cmdConfigSet(s *Server, cl *client, argv [][]byte) {
	if len(argv)%2 != 0 {
		cl.w.Error(engine.ErrSyntax)
		return
	}
	var sets []*param
	var vals []string
	for i := 2; i < len(argv); i += 2 {
		name := string(argv[i])
		p := findParam(name)
		if p == nil {
			cl.w.Error("ERR Unknown option or number of arguments for CONFIG SET - '" + name + "'")
			return
		}
		// a name twice is refused; a name and its alias are not (Redis
		// 7.0 keeps an alias as a config of its own: the last one wins)
		for j := 2; j < i; j += 2 {
			if strings.EqualFold(string(argv[j]), name) {
				cl.w.Error(setFailed(name, "duplicate parameter"))
				return
			}
		}
		if p.immutable {
			cl.w.Error(setFailed(name, "can't set immutable config"))
			return
		}
		if p.protected && !s.protectedAllowed(cl, "enable-protected-configs") {
			cl.w.Error(setFailed(name, "can't set protected config"))
			return
		}
		if p.debug && !s.debugAllowed(cl) {
			cl.w.Error(setFailed(name, errDebugConfig))
			return
		}
		v, why := s.value(p, string(argv[i+1]))
		if why == "" && p.startup && v != s.conf.params[p.name] {
			why = errStartupOnly
		}
		if why != "" {
			cl.w.Error(setFailed(name, why))
			return
		}
		sets = append(sets, p)
		vals = append(vals, v)
	}
	shared, mixed := sharedConfig(argv)
	if mixed && s.replicated() {
		cl.w.Error(errMixedConfig)
		return
	}
	if name, why := s.setParams(sets, vals); why != "" {
		cl.w.Error(setFailed(name, why))
		return
	}
	s.applyConfig()
	if shared {
		s.publishConfig()
		s.publishACL() // requirepass is the default user's password
	}
	cl.w.OK()
}

// applyConfig pushes values that running code reads from fields (the
// connection loops read them atomically, so changes apply at once).
func (s *Server) applyConfig() {
	for name, dst := range map[string]*atomic.Int64{
		"client-query-buffer-limit": &s.limits.MaxQuery,
		"proto-max-bulk-len":        &s.limits.MaxBulk,
		"maxclients":                &s.maxClients,
		"timeout":                   &s.idleLimit,
		"client-output-pause-size":  &s.outPause,
		"busy-reply-threshold":      &s.eng.Guard.LimitMs,
		"lua-memory-limit":          &s.eng.Guard.MemLimit,
	} {
		if n, err := strconv.ParseInt(s.conf.params[name], 10, 64); err == nil {
			dst.Store(n)
		}
	}
	s.applyObuf(s.conf.params["client-output-buffer-limit"])
	s.slow.slower, _ = strconv.ParseInt(s.conf.params["slowlog-log-slower-than"], 10, 64)
	s.slow.maxLen, _ = strconv.ParseInt(s.conf.params["slowlog-max-len"], 10, 64)
	s.latencyMs, _ = strconv.ParseInt(s.conf.params["latency-monitor-threshold"], 10, 64)
	s.latencyTracking = s.conf.params["latency-tracking"] == "yes"
	s.latencyPercentiles, _, _ = parsePercentiles(s.conf.params["latency-tracking-info-percentiles"])
	hz, _ := strconv.ParseInt(s.conf.params["hz"], 10, 64)
	s.hz.Store(hz)
	for _, p := range params {
		if n, err := strconv.ParseInt(s.conf.params[p.name], 10, 64); err == nil {
			s.eng.SetEncodingLimit(p.name, n) // ignored unless an encoding threshold
		}
	}
	s.applyMaxmemory()
	s.applyNet()
	s.applyRDBConfig()
	s.applyMinReplicas()
	skew, _ := strconv.ParseInt(s.conf.params["debug-clock-offset-ms"], 10, 64)
	s.door.SetSkew(skew)
}

// errDebugConfig refuses CONFIG SET of a debug parameter where DEBUG
// itself is refused.
const errDebugConfig = "can't set debug config: enable-debug-command does not allow DEBUG from this connection"

// value validates v for p as CONFIG SET and a config file both do:
// Redis's checks, then client-output-buffer-limit's merge into the current
// value (classes not named keep theirs), then what limitdb cannot honour.
// It returns the value to store, or the reason it is refused.
func (s *Server) value(p *param, v string) (string, string) {
	v, why := p.check(v)
	if why == "" && p.kind == pObuf {
		v, why = parseObuf(s.conf.params[p.name], v)
	}
	if why == "" && p.cannot != nil {
		why = p.cannot(v)
	}
	return v, why
}

// check validates v for p and returns the value to store, or the reason
// (after "… - ") it is refused.
func (p *param) check(v string) (string, string) {
	switch p.kind {
	case pInt:
		n, ok := engine.ParseIntB([]byte(v))
		if !ok {
			return "", "argument couldn't be parsed into an integer"
		}
		if n < p.min || n > p.max {
			return "", "argument must be between " + strconv.FormatInt(p.min, 10) + " and " + strconv.FormatInt(p.max, 10) + " inclusive"
		}
		if p.clampMax != 0 {
			n = max(p.clampMin, min(n, p.clampMax))
		}
		return strconv.FormatInt(n, 10), ""
	case pOctal:
		n, err := strconv.ParseInt(v, 8, 64)
		if err != nil {
			return "", "argument couldn't be parsed as an octal number"
		}
		if n < p.min || n > p.max {
			return "", "argument must be between " + strconv.FormatInt(p.min, 8) + " and " + strconv.FormatInt(p.max, 8) + " inclusive"
		}
		return strconv.FormatInt(n, 8), ""
	case pMem:
		n, ok := parseMemory(v)
		if !ok {
			return "", "argument must be a memory value"
		}
		if p.max != 0 && (n < uint64(p.min) || n > uint64(p.max)) {
			return "", "argument must be between " + strconv.FormatInt(p.min, 10) + " and " + strconv.FormatInt(p.max, 10) + " inclusive"
		}
		return strconv.FormatUint(n, 10), ""
	case pBool:
		switch strings.ToLower(v) {
		case "yes":
			return "yes", ""
		case "no":
			return "no", ""
		}
		return "", "argument must be 'yes' or 'no'"
	case pEnum:
		for _, e := range p.enum {
			if strings.EqualFold(e, v) {
				if e == "relative" {
					e = "yes" // oom-score-adj: the same value as yes
				}
				return e, ""
			}
		}
		return "", "argument(s) must be one of the following: " + strings.Join(p.enum, ", ")
	case pSave:
		// Redis's setConfigSaveOption: pairs of seconds ≥ 1, changes ≥ 0
		f := strings.Fields(v)
		if len(f)%2 != 0 {
			return "", "Invalid save parameters"
		}
		for i, x := range f {
			if n, ok := engine.ParseIntB([]byte(x)); !ok || n < 0 || i%2 == 0 && n < 1 {
				return "", "Invalid save parameters"
			}
		}
		return strings.Join(f, " "), ""
	case pEvents:
		return checkNotify(v) // config_notify.go
	case pOOM:
		return checkOOMValues(v)
	case pPerc:
		_, norm, why := parsePercentiles(v)
		return norm, why
	}
	return v, ""
}

// parseMemory is Redis's memtoull: digits (none means 0) with an optional
// unit b, k, kb, m, mb, g, gb (case-insensitive; k = 1000, kb = 1024). Like
// Redis 7.0, a number past the unsigned range saturates and the unit
// multiplication wraps.
func parseMemory(s string) (uint64, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	mul := uint64(1)
	switch strings.ToLower(s[i:]) {
	case "", "b":
	case "k":
		mul = 1000
	case "kb":
		mul = 1024
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1024 * 1024
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1024 * 1024 * 1024
	default:
		return 0, false
	}
	if i >= 128 {
		return 0, false
	}
	var n uint64
	if i > 0 {
		var err error
		if n, err = strconv.ParseUint(s[:i], 10, 64); err != nil {
			n = math.MaxUint64
		}
	}
	return n * mul, true
}

// cmdConfigResetstat: CONFIG RESETSTAT — zero the INFO statistics
// (commandstats, errorstats, counters). OK.
func cmdConfigResetstat(s *Server, cl *client, argv [][]byte) {
	s.stats.cmdStats = make(map[string]*cmdStat)
	s.stats.byID = nil
	s.stats.errorStats = make(map[string]int64)
	s.stats.totalErrorReply = 0
	s.stats.connsReceived.Store(0)
	s.stats.commands.Store(0)
	s.stats.rejectedConns.Store(0)
	s.stats.netInput.Store(0)
	s.stats.netOutput.Store(0)
	s.eng.Stats.KeyspaceHits = 0
	s.eng.Stats.KeyspaceMisses = 0
	s.eng.Stats.ExpiredKeys = 0
	s.eng.Stats.EvictedKeys = 0
	s.mem.exceededSince, s.mem.exceededTotal = time.Time{}, 0
	cl.w.OK()
}

// cmdConfigHelp: CONFIG HELP.
func cmdConfigHelp(s *Server, cl *client, argv [][]byte) {
	help(cl,
		"CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"GET <pattern>",
		"    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>",
		"    Set the configuration <directive> to <value>.",
		"RESETSTAT",
		"    Reset statistics reported by the INFO command.",
		"REWRITE",
		"    Rewrite the configuration file.",
		"HELP",
		"    Prints this help.",
	)
}

// initConfig applies the startup settings to the CONFIG values.
func (s *Server) initConfig() {
	if s.cfg.QueryBufferLimit > 0 {
		s.conf.params["client-query-buffer-limit"] = strconv.FormatInt(s.cfg.QueryBufferLimit, 10)
	}
	if s.cfg.Dir != "" {
		s.conf.params["dir"] = s.cfg.Dir
	}
	if s.cfg.Durable {
		s.conf.params["appendonly"] = "yes"
	}
	if !s.cfg.Chdir {
		// An embedded server (tests, which run many in one process from
		// the package's directory) writes no dump.rdb unless configured
		// to: without this the save rules would drop one into the
		// working directory. The binary keeps Redis's default rules.
		s.conf.params["save"] = ""
	}
	if s.cfg.RequirePass != "" {
		s.conf.params["requirepass"] = s.cfg.RequirePass
		s.setRequirePass(s.cfg.RequirePass)
	}
	s.applyConfig()
}
