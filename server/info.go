package server

import (
	cryptorand "crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"limitdb/engine"
	"limitdb/luavm"
)

func init() {
	registerConn(&engine.Command{Name: "info", Arity: -1, Flags: "loading stale", Group: "server", Since: "1.0.0", Summary: "Returns information and statistics about the server."}, cmdInfo)
}

// infoSections are Redis 7.0's INFO sections in output order, and whether
// each belongs to "default" (all of them belong to "all"/"everything").
var infoSections = []struct {
	name string
	def  bool
	gen  func(s *Server, b []byte) []byte
}{
	{"server", true, infoServer},
	{"clients", true, infoClients},
	{"memory", true, infoMemory},
	{"persistence", true, infoPersistence},
	{"stats", true, infoStats},
	{"replication", true, infoReplication},
	{"cpu", true, infoCPU},
	{"modules", true, nil},
	{"commandstats", false, infoCommandstats},
	{"errorstats", true, infoErrorstats},
	{"latencystats", false, infoLatencystats}, // info_latency.go
	{"cluster", true, infoCluster},
	{"raft", true, infoRaft},
	{"keyspace", true, infoKeyspace},
}

// cmdInfo: INFO [section …] — the named sections (case-insensitive; also
// "default", "all", "everything"; unknown names add nothing), or the
// default ones. A bulk string of "# Section\r\nfield:value\r\n…" blocks
// separated by an empty line; a verbatim string (txt) in RESP3.
func cmdInfo(s *Server, cl *client, argv [][]byte) {
	want := map[string]bool{}
	if len(argv) == 1 {
		want["default"] = true
	}
	for _, a := range argv[1:] {
		want[strings.ToLower(string(a))] = true
	}
	var b []byte
	for _, sec := range infoSections {
		if sec.name == "raft" && !s.replicated() {
			continue // limitdb's own section, on cluster nodes only
		}
		if !want[sec.name] && !want["all"] && !want["everything"] && !(want["default"] && sec.def) {
			continue
		}
		if len(b) > 0 {
			b = append(b, "\r\n"...)
		}
		b = append(b, "# "...)
		b = append(b, strings.ToUpper(sec.name[:1])...)
		b = append(b, sec.name[1:]...)
		b = append(b, "\r\n"...)
		if sec.gen != nil {
			b = sec.gen(s, b)
		}
	}
	cl.w.Verbatim(string(b))
}

func kv(b []byte, k string, v any) []byte {
	b = append(b, k...)
	b = append(b, ':')
	switch x := v.(type) {
	case string:
		b = append(b, x...)
	case int:
		b = strconv.AppendInt(b, int64(x), 10)
	case int64:
		b = strconv.AppendInt(b, x, 10)
	case uint64:
		b = strconv.AppendUint(b, x, 10)
	case float64:
		b = strconv.AppendFloat(b, x, 'f', 2, 64)
	default:
		b = fmt.Append(b, x)
	}
	return append(b, "\r\n"...)
}

// humanBytes is Redis's bytesToHuman: B, K, M, G … with two decimals.
func humanBytes(n uint64) string {
	d := float64(n)
	switch {
	case n < 1024:
		return strconv.FormatUint(n, 10) + "B"
	case n < 1024*1024:
		return strconv.FormatFloat(d/1024, 'f', 2, 64) + "K"
	case n < 1024*1024*1024:
		return strconv.FormatFloat(d/(1024*1024), 'f', 2, 64) + "M"
	case n < 1024*1024*1024*1024:
		return strconv.FormatFloat(d/(1024*1024*1024), 'f', 2, 64) + "G"
	default:
		return strconv.FormatFloat(d/(1024*1024*1024*1024), 'f', 2, 64) + "T"
	}
}

func (s *Server) port() string { return s.conf.params["port"] }

func infoServer(s *Server, b []byte) []byte {
	up := int64(time.Since(s.started) / time.Second)
	exe, _ := os.Executable()
	hz, _ := strconv.Atoi(s.conf.params["hz"])
	b = kv(b, "redis_version", RedisVersion)
	b = kv(b, "redis_git_sha1", "00000000")
	b = kv(b, "redis_git_dirty", 0)
	b = kv(b, "redis_build_id", "0")
	b = kv(b, "redis_mode", s.redisMode())
	b = kv(b, "os", runtime.GOOS+" "+runtime.GOARCH)
	b = kv(b, "arch_bits", strconv.Itoa(32<<(^uint(0)>>63)))
	b = kv(b, "multiplexing_api", "go")
	b = kv(b, "process_id", os.Getpid())
	b = kv(b, "process_supervised", "no")
	b = kv(b, "run_id", s.runID)
	b = kv(b, "tcp_port", s.port())
	b = kv(b, "server_time_usec", time.Now().UnixMicro())
	b = kv(b, "uptime_in_seconds", up)
	b = kv(b, "uptime_in_days", up/86400)
	b = kv(b, "hz", hz)
	b = kv(b, "configured_hz", hz)
	b = kv(b, "executable", exe)
	b = kv(b, "config_file", s.configFile)
	b = kv(b, "io_threads_active", 0)
	b = kv(b, "limitdb_version", Version)
	b = kv(b, "go_version", runtime.Version())
	return b
}

func infoClients(s *Server, b []byte) []byte {
	s.mu.Lock()
	n := len(s.clients)
	s.mu.Unlock()
	b = kv(b, "connected_clients", n)
	b = kv(b, "cluster_connections", 0)
	b = kv(b, "maxclients", s.conf.params["maxclients"])
	b = kv(b, "client_recent_max_input_buffer", 0)
	b = kv(b, "client_recent_max_output_buffer", s.recentMaxOutput())
	b = kv(b, "blocked_clients", s.blockedClients())
	b = kv(b, "tracking_clients", 0)
	b = kv(b, "clients_in_timeout_table", len(s.blocking.timeouts))
	return b
}

func infoMemory(s *Server, b []byte) []byte {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	used := uint64(s.usedNow())
	rss := ms.Sys - ms.HeapReleased
	if used > s.peakMem.Load() {
		s.peakMem.Store(used)
	}
	peak := s.peakMem.Load()
	maxm, _ := strconv.ParseUint(s.conf.params["maxmemory"], 10, 64)
	b = kv(b, "used_memory", used)
	b = kv(b, "used_memory_human", humanBytes(used))
	b = kv(b, "used_memory_rss", rss)
	b = kv(b, "used_memory_rss_human", humanBytes(rss))
	b = kv(b, "used_memory_peak", peak)
	b = kv(b, "used_memory_peak_human", humanBytes(peak))
	b = kv(b, "used_memory_peak_perc", strconv.FormatFloat(float64(used)*100/float64(peak), 'f', 2, 64)+"%")
	mb := s.memBreakdown(used)
	b = kv(b, "used_memory_overhead", mb.overhead)
	b = kv(b, "used_memory_startup", mb.startup)
	b = kv(b, "used_memory_dataset", mb.dataset)
	b = kv(b, "used_memory_dataset_perc", strconv.FormatFloat(mb.datasetPerc, 'f', 2, 64)+"%")
	// the Go allocator's figures in jemalloc's terms (info_memory.go)
	al := allocatorOf(&ms)
	b = kv(b, "allocator_allocated", al.allocated)
	b = kv(b, "allocator_active", al.active)
	b = kv(b, "allocator_resident", al.resident)
	// the scripting fields of Redis 7.0, in its order
	lm := luavm.Memory(s.eng)
	b = kv(b, "used_memory_lua", lm.VMEval)
	b = kv(b, "used_memory_vm_eval", lm.VMEval)
	b = kv(b, "used_memory_lua_human", humanBytes(uint64(lm.VMEval)))
	b = kv(b, "used_memory_scripts_eval", lm.ScriptsEval)
	b = kv(b, "number_of_cached_scripts", lm.Scripts)
	b = kv(b, "number_of_functions", lm.Functions)
	b = kv(b, "number_of_libraries", lm.Libraries)
	b = kv(b, "used_memory_vm_functions", lm.VMFunctions)
	b = kv(b, "used_memory_vm_total", lm.VMEval+lm.VMFunctions)
	b = kv(b, "used_memory_vm_total_human", humanBytes(uint64(lm.VMEval+lm.VMFunctions)))
	b = kv(b, "used_memory_functions", lm.FunctionsMem)
	b = kv(b, "used_memory_scripts", lm.ScriptsEval+lm.FunctionsMem)
	b = kv(b, "used_memory_scripts_human", humanBytes(uint64(lm.ScriptsEval+lm.FunctionsMem)))
	b = kv(b, "maxmemory", maxm)
	b = kv(b, "maxmemory_human", humanBytes(maxm))
	b = kv(b, "maxmemory_policy", s.conf.params["maxmemory-policy"])
	b = kv(b, "allocator_frag_ratio", ratio(al.active, al.allocated))
	b = kv(b, "allocator_frag_bytes", int64(al.active)-int64(al.allocated))
	b = kv(b, "allocator_rss_ratio", ratio(al.resident, al.active))
	b = kv(b, "allocator_rss_bytes", int64(al.resident)-int64(al.active))
	b = kv(b, "rss_overhead_ratio", ratio(rss, al.resident))
	b = kv(b, "rss_overhead_bytes", int64(rss)-int64(al.resident))
	b = kv(b, "mem_fragmentation_ratio", float64(rss)/float64(max(used, 1)))
	b = kv(b, "mem_fragmentation_bytes", int64(rss)-int64(used))
	// what the log holds, left out of the figure eviction compares with
	// maxmemory up to logAllowance (maxmemory.go), as Redis leaves out
	// its AOF buffer and replicas' output buffers
	b = kv(b, "mem_not_counted_for_evict", s.mem.notCounted())
	// no replication backlog (infoBacklog); the replicas' buffers are
	// what is queued for SYNC readers
	b = kv(b, "mem_replication_backlog", 0)
	b = kv(b, "mem_total_replication_buffers", mb.replicas)
	b = kv(b, "mem_clients_slaves", mb.replicas)
	b = kv(b, "mem_clients_normal", mb.clients)
	// the Raft log's entries held in memory: limitdb's append-only file
	b = kv(b, "mem_aof_buffer", mb.log)
	b = kv(b, "mem_allocator", "go")
	// activedefrag can only be no (a Redis without its jemalloc answers
	// the same): the defragmenter never runs
	b = kv(b, "active_defrag_running", 0)
	b = kv(b, "lazyfree_pending_objects", 0)
	return b
}

// infoPersistence: Redis 7.0.15's fields in its order. limitdb loads
// before serving (loading is always 0) and saves from a capture, not a
// fork: the cow fields stay 0, and the progress fields count the keys the
// BGSAVE in progress has written. The aof fields describe Redis's AOF,
// which limitdb does not have (its Raft log is in the Raft section).
func infoPersistence(s *Server, b []byte) []byte {
	r := &s.rdb
	var done, total int64
	cur := int64(-1)
	if r.bg != nil {
		if r.bg.snap != nil {
			done, total = r.bg.snap.Keys()
		}
		cur = int64(time.Since(r.bg.start) / time.Second)
	}
	perc := 0.0
	if total > 0 {
		perc = float64(done) * 100 / float64(total)
	}
	status := "ok"
	if r.lastFailed {
		status = "err"
	}
	b = kv(b, "loading", 0)
	b = kv(b, "async_loading", 0)
	b = kv(b, "current_cow_peak", 0)
	b = kv(b, "current_cow_size", 0)
	b = kv(b, "current_cow_size_age", 0)
	b = kv(b, "current_fork_perc", perc)
	b = kv(b, "current_save_keys_processed", done)
	b = kv(b, "current_save_keys_total", total)
	b = kv(b, "rdb_changes_since_last_save", s.eng.Stats.Dirty)
	b = kv(b, "rdb_bgsave_in_progress", boolInt(r.bg != nil))
	b = kv(b, "rdb_last_save_time", r.lastSave)
	b = kv(b, "rdb_last_bgsave_status", status)
	b = kv(b, "rdb_last_bgsave_time_sec", r.lastBgSecs)
	b = kv(b, "rdb_current_bgsave_time_sec", cur)
	b = kv(b, "rdb_saves", r.saves)
	b = kv(b, "rdb_last_cow_size", 0)
	b = kv(b, "rdb_last_load_keys_expired", r.loadExpired)
	b = kv(b, "rdb_last_load_keys_loaded", r.loaded)
	b = kv(b, "aof_enabled", 0)
	b = kv(b, "aof_rewrite_in_progress", 0)
	b = kv(b, "aof_rewrite_scheduled", 0)
	b = kv(b, "aof_last_rewrite_time_sec", -1)
	b = kv(b, "aof_current_rewrite_time_sec", -1)
	b = kv(b, "aof_last_bgrewrite_status", "ok")
	b = kv(b, "aof_rewrites", 0)
	b = kv(b, "aof_rewrites_consecutive_failures", 0)
	b = kv(b, "aof_last_write_status", "ok")
	b = kv(b, "aof_last_cow_size", 0)
	b = kv(b, "module_fork_in_progress", 0)
	b = kv(b, "module_fork_last_cow_size", 0)
	return b
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func infoStats(s *Server, b []byte) []byte {
	b = kv(b, "total_connections_received", s.stats.connsReceived.Load())
	b = kv(b, "total_commands_processed", s.stats.commands.Load())
	b = kv(b, "instantaneous_ops_per_sec", s.opsPerSec())
	b = kv(b, "total_net_input_bytes", s.stats.netInput.Load())
	b = kv(b, "total_net_output_bytes", s.stats.netOutput.Load())
	// SYNC readers (sync_cmds.go); limitdb reads no replication stream
	b = kv(b, "total_net_repl_output_bytes", s.stats.replOutput.Load())
	b = kv(b, "rejected_connections", s.stats.rejectedConns.Load())
	b = kv(b, "sync_full", s.stats.syncFull.Load())
	b = kv(b, "expired_keys", s.eng.Stats.ExpiredKeys)
	b = kv(b, "expired_stale_perc", s.stats.expireStale)
	b = kv(b, "expired_time_cap_reached_count", s.stats.expireCapped.Load())
	b = kv(b, "expire_cycle_cpu_milliseconds", s.stats.expireNs/1e6)
	b = kv(b, "evicted_keys", s.eng.Stats.EvictedKeys)
	b = kv(b, "evicted_clients", 0) // limitdb never evicts clients
	total, current := s.mem.exceeded()
	b = kv(b, "total_eviction_exceeded_time", total.Milliseconds())
	b = kv(b, "current_eviction_exceeded_time", current.Milliseconds())
	b = kv(b, "keyspace_hits", s.eng.Stats.KeyspaceHits)
	b = kv(b, "keyspace_misses", s.eng.Stats.KeyspaceMisses)
	b = kv(b, "pubsub_channels", int64(len(s.ps.channels)))
	b = kv(b, "pubsub_patterns", int64(len(s.ps.patterns)))
	b = kv(b, "pubsubshard_channels", int64(len(s.ps.shard)))
	// no child processes (saves and snapshots are goroutines) and no
	// MIGRATE connections to cache
	b = kv(b, "latest_fork_usec", 0)
	b = kv(b, "total_forks", 0)
	b = kv(b, "migrate_cached_sockets", 0)
	// the defragmenter never runs (active_defrag_running)
	b = kv(b, "active_defrag_hits", 0)
	b = kv(b, "active_defrag_misses", 0)
	b = kv(b, "active_defrag_key_hits", 0)
	b = kv(b, "active_defrag_key_misses", 0)
	b = kv(b, "unexpected_error_replies", 0)
	b = kv(b, "total_error_replies", s.stats.totalErrorReply)
	b = kv(b, "total_reads_processed", s.stats.reads.Load())
	b = kv(b, "total_writes_processed", s.stats.writes.Load())
	return b
}

func infoReplication(s *Server, b []byte) []byte {
	if s.replicated() {
		return infoReplicationCluster(s, b)
	}
	b = kv(b, "role", "master")
	b = kv(b, "connected_slaves", 0)
	if s.minReplicas {
		b = kv(b, "min_slaves_good_slaves", s.goodReplicas())
	}
	b = kv(b, "master_failover_state", "no-failover")
	b = kv(b, "master_replid", s.runID)
	b = kv(b, "master_replid2", strings.Repeat("0", 40))
	b = kv(b, "master_repl_offset", 0)
	b = kv(b, "second_repl_offset", -1)
	return s.infoBacklog(b)
}

// infoBacklog: limitdb keeps no replication backlog (a SYNC reader is fed
// from the door's effects as they happen; Raft followers catch up from the
// log or a snapshot), so it shows what Redis shows before its first
// replica creates one: inactive, repl-backlog-size, nothing held.
func (s *Server) infoBacklog(b []byte) []byte {
	b = kv(b, "repl_backlog_active", 0)
	b = kv(b, "repl_backlog_size", s.conf.params["repl-backlog-size"])
	b = kv(b, "repl_backlog_first_byte_offset", 0)
	return kv(b, "repl_backlog_histlen", 0)
}

func infoCPU(s *Server, b []byte) []byte {
	sys, user := cpuTimes()
	b = append(b, "used_cpu_sys:"...)
	b = strconv.AppendFloat(b, sys, 'f', 6, 64)
	b = append(b, "\r\nused_cpu_user:"...)
	b = strconv.AppendFloat(b, user, 'f', 6, 64)
	// no child processes (saves are goroutines)
	b = append(b, "\r\nused_cpu_sys_children:0.000000\r\nused_cpu_user_children:0.000000\r\n"...)
	if msys, muser, ok := mainThreadCPU(); ok {
		b = append(b, "used_cpu_sys_main_thread:"...)
		b = strconv.AppendFloat(b, msys, 'f', 6, 64)
		b = append(b, "\r\nused_cpu_user_main_thread:"...)
		b = strconv.AppendFloat(b, muser, 'f', 6, 64)
		b = append(b, "\r\n"...)
	}
	return b
}

func infoCommandstats(s *Server, b []byte) []byte {
	names := make([]string, 0, len(s.stats.cmdStats))
	for n := range s.stats.cmdStats {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		st := s.stats.cmdStats[n]
		per := 0.0
		if st.calls > 0 {
			per = float64(st.usec) / float64(st.calls)
		}
		b = fmt.Appendf(b, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n",
			n, st.calls, st.usec, per, st.rejected, st.failed)
	}
	return b
}

func infoErrorstats(s *Server, b []byte) []byte {
	names := make([]string, 0, len(s.stats.errorStats))
	for n := range s.stats.errorStats {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b = fmt.Appendf(b, "errorstat_%s:count=%d\r\n", n, s.stats.errorStats[n])
	}
	return b
}

func infoCluster(s *Server, b []byte) []byte { return kv(b, "cluster_enabled", boolInt(s.clusterMode)) }

func infoKeyspace(s *Server, b []byte) []byte {
	for i, db := range s.eng.DBs {
		if db.Len() == 0 {
			continue
		}
		b = fmt.Appendf(b, "db%d:keys=%d,expires=%d,avg_ttl=0\r\n", i, db.Len(), db.Expires())
	}
	return b
}

// opsSampler keeps instantaneous_ops_per_sec as Redis does: the mean of
// the last 16 samples of commands per second, taken by cron.
type opsSampler struct {
	lastT   time.Time
	lastN   int64
	samples [16]int64
	idx     int
	mean    atomic.Int64
}

func (s *Server) sampleOps() {
	o := &s.ops
	now := time.Now()
	n := s.stats.commands.Load()
	if !o.lastT.IsZero() {
		if dt := now.Sub(o.lastT); dt > 0 {
			o.samples[o.idx] = (n - o.lastN) * int64(time.Second) / int64(dt)
			o.idx = (o.idx + 1) % len(o.samples)
			var sum int64
			for _, v := range o.samples {
				sum += v
			}
			o.mean.Store(sum / int64(len(o.samples)))
		}
	}
	o.lastT, o.lastN = now, n
}

func (s *Server) opsPerSec() int64 { return s.ops.mean.Load() }

// newRunID is a random 40-hex-digit id (run_id, master_replid). It is
// server identity, not engine state, so crypto/rand is fine here.
func newRunID() string {
	var b [20]byte
	_, _ = cryptorand.Read(b[:])
	return hex.EncodeToString(b[:])
}
