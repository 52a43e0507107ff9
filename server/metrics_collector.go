package server

// The scrape-time collector behind /metrics (metrics.go). It reads what
// limitdb keeps anyway for INFO, RAFT INFO and RL.STATS: nothing is
// counted per decision or per command for it. What the engine lock
// guards is copied in one short hold (lockedView) and turned into
// metrics after it is released; a scrape that cannot get the lock within
// metricsLockWait answers the rest (clients, network, Raft, Go runtime)
// with limitdb_scrape_engine_lock_timeout 1.

import (
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"limitdb/engine"
	"limitdb/ratelimit"
)

// metricsLockWait is how long a scrape waits for the engine lock.
const metricsLockWait = time.Second

// censusBudget is how many keys a scrape's census step walks at most
// (engine.CensusStep): under a millisecond of the lock.
const censusBudget = 20000

// latencyBounds are the command latency histogram's bucket bounds: every
// other bucket of LATENCY HISTOGRAM's (1024<<i ns, i = 0, 2, … 20: about
// 1 µs to 1.07 s), whose counts are cumulative sums of those buckets.
var latencyBounds = func() []int {
	var b []int
	for i := 0; i <= 20; i += 2 {
		b = append(b, i)
	}
	return b
}()

// Policy label values that are not policy names.
const (
	policyOther  = "_other"  // policies past metrics-policy-labels
	policyInline = "_inline" // calls with inline numbers
)

type mdef struct {
	name, help string
	typ        prometheus.ValueType
	labels     []string
}

const (
	gauge   = prometheus.GaugeValue
	counter = prometheus.CounterValue
)

// metricDefs are every metric the collector can export (Describe sends
// them all; a scrape emits those that apply: the raft ones on cluster
// nodes).
var metricDefs = []mdef{
	{"limitdb_build_info", "limitdb's version, the Redis version it answers as, and the Go release it was built with (always 1).", gauge, []string{"version", "redis_version", "go_version"}},
	{"limitdb_start_time_seconds", "When the server started, unix time.", gauge, nil},
	{"limitdb_scrape_engine_lock_timeout", "1 when this scrape did not get the engine lock within 1 s and left out what it guards.", gauge, nil},
	{"limitdb_scrape_engine_lock_wait_seconds", "How long this scrape waited for the engine lock.", gauge, nil},
	// clients and network
	{"limitdb_connected_clients", "Client connections (INFO connected_clients).", gauge, nil},
	{"limitdb_blocked_clients", "Clients blocked on keys (INFO blocked_clients).", gauge, nil},
	{"limitdb_max_clients", "maxclients.", gauge, nil},
	{"limitdb_connections_received_total", "Connections accepted (INFO total_connections_received).", counter, nil},
	{"limitdb_connections_rejected_total", "Connections refused for maxclients (INFO rejected_connections).", counter, nil},
	{"limitdb_net_input_bytes_total", "Bytes read from clients.", counter, nil},
	{"limitdb_net_output_bytes_total", "Bytes written to clients.", counter, nil},
	// commands (INFO commandstats, errorstats)
	{"limitdb_commands_processed_total", "Commands processed (INFO total_commands_processed).", counter, nil},
	{"limitdb_command_calls_total", "Calls of each command (INFO commandstats calls).", counter, []string{"cmd"}},
	{"limitdb_command_rejected_calls_total", "Calls refused before running (INFO commandstats rejected_calls).", counter, []string{"cmd"}},
	{"limitdb_command_failed_calls_total", "Calls that ran and answered an error (INFO commandstats failed_calls).", counter, []string{"cmd"}},
	{"limitdb_command_duration_seconds_total", "Time spent in each command, as INFO commandstats usec charges it.", counter, []string{"cmd"}},
	{"limitdb_command_latency_seconds", "Each command's latency while latency-tracking is yes (LATENCY HISTOGRAM's buckets); the sum is commandstats' time.", gauge, []string{"cmd"}},
	{"limitdb_error_replies_total", "Error replies by their first word (INFO errorstats).", counter, []string{"error"}},
	// memory
	{"limitdb_memory_used_bytes", "INFO used_memory.", gauge, nil},
	{"limitdb_memory_peak_bytes", "INFO used_memory_peak.", gauge, nil},
	{"limitdb_memory_rss_bytes", "INFO used_memory_rss: memory the Go runtime holds from the system.", gauge, nil},
	{"limitdb_memory_max_bytes", "maxmemory (0: no limit).", gauge, nil},
	{"limitdb_memory_not_counted_for_eviction_bytes", "INFO mem_not_counted_for_evict: what the Raft log and snapshot captures hold, left out of the eviction figure.", gauge, nil},
	{"limitdb_memory_eviction_exceeded_seconds_total", "Time used_memory spent over maxmemory (INFO total_eviction_exceeded_time).", counter, nil},
	// keyspace
	{"limitdb_db_keys", "Keys of each database.", gauge, []string{"db"}},
	{"limitdb_db_keys_expiring", "Keys with a time to live, of each database.", gauge, []string{"db"}},
	{"limitdb_keyspace_hits_total", "Lookups that found their key.", counter, nil},
	{"limitdb_keyspace_misses_total", "Lookups that did not.", counter, nil},
	{"limitdb_expired_keys_total", "Keys removed by their expiry.", counter, nil},
	{"limitdb_evicted_keys_total", "Keys removed by maxmemory eviction.", counter, nil},
	{"limitdb_pubsub_channels", "Channels with subscribers.", gauge, nil},
	{"limitdb_pubsub_patterns", "Pattern subscriptions.", gauge, nil},
	// persistence (RDB; the Raft log is below)
	{"limitdb_rdb_changes_since_last_save", "Changes since the last RDB save.", gauge, nil},
	{"limitdb_rdb_bgsave_in_progress", "1 while a BGSAVE runs.", gauge, nil},
	{"limitdb_rdb_last_save_timestamp_seconds", "When the last RDB save succeeded, unix time.", gauge, nil},
	{"limitdb_rdb_last_bgsave_success", "1 when the last BGSAVE succeeded.", gauge, nil},
	{"limitdb_rdb_last_bgsave_duration_seconds", "How long the last BGSAVE took (-1: none yet).", gauge, nil},
	{"limitdb_rdb_saves_total", "SAVEs and BGSAVEs started.", counter, nil},
	// replication
	{"limitdb_connected_replicas", "Replicas (the other cluster members, on the leader; 0 elsewhere) as INFO connected_slaves.", gauge, nil},
	// Raft (cluster nodes)
	{"limitdb_raft_term", "The current Raft term.", gauge, nil},
	{"limitdb_raft_state", "1 for this node's Raft state.", gauge, []string{"state"}},
	{"limitdb_raft_leader", "1 when this node is the serving leader.", gauge, nil},
	{"limitdb_raft_has_leader", "1 when this node knows a leader.", gauge, nil},
	{"limitdb_raft_commit_index", "The last committed log index this node knows.", gauge, nil},
	{"limitdb_raft_applied_index", "The last log index applied to the data.", gauge, nil},
	{"limitdb_raft_apply_lag_entries", "Committed entries not yet applied (commit index - applied index).", gauge, nil},
	{"limitdb_raft_first_index", "The oldest index the log holds.", gauge, nil},
	{"limitdb_raft_last_index", "The newest index the log holds.", gauge, nil},
	{"limitdb_raft_last_contact_seconds", "Time since the leader was last heard from (followers; 0 on the leader, -1: never).", gauge, nil},
	{"limitdb_raft_snapshot_index", "The index of the newest snapshot.", gauge, nil},
	{"limitdb_raft_snapshots_installed_total", "Snapshots installed from the leader.", counter, nil},
	{"limitdb_raft_log_fsync_duration_seconds", "fsyncs of the Raft log and the time they took.", gauge, nil},
	{"limitdb_raft_leader_changes_total", "Leaders this node saw take over since it started, after the first.", counter, nil},
	{"limitdb_raft_pubsub_batches_dropped_total", "Pub/Sub batches (messages, keyspace events) this node dropped for an unreachable or slow peer.", counter, nil},
	{"limitdb_raft_forwarded_units_total", "Units (commands, MULTI blocks) this follower forwarded to the leader.", counter, nil},
	{"limitdb_raft_forward_errors_total", "Forwarded units that failed.", counter, nil},
	{"limitdb_raft_read_barriers_total", "Linearizable read barriers.", counter, nil},
	{"limitdb_raft_lease_checks_total", "Leaderships confirmed with Raft.", counter, nil},
	{"limitdb_raft_clusterdown_replies_total", "CLUSTERDOWN replies.", counter, nil},
	{"limitdb_raft_unknown_outcomes_total", "Writes answered with an unknown outcome.", counter, nil},
	{"limitdb_raft_members", "Servers of the configuration.", gauge, nil},
	{"limitdb_raft_voters", "Voters of the configuration.", gauge, nil},
	{"limitdb_raft_member_applied_index", "Each member's applied index as the leader last heard it.", gauge, []string{"member"}},
	{"limitdb_raft_clock_offset_seconds", "This follower's clock offset from the leader's.", gauge, nil},
	{"limitdb_raft_clock_error_seconds", "The leader's largest clock measuring error among agreeing voters.", gauge, nil},
	{"limitdb_raft_clock_agreeing_voters", "Voters whose clocks agree with the leader's within max-clock-skew-ms.", gauge, nil},
	{"limitdb_raft_clock_max_skew_seconds", "max-clock-skew-ms.", gauge, nil},
	// the limiter
	{"limitdb_rl_requests_total", "Limiter decisions (RL.STATS) by policy and result: allowed, denied, shadow_denied, error.", counter, []string{"policy", "result"}},
	{"limitdb_rl_units_total", "Units (COST) the decided calls asked for, by policy and result (allowed, denied, shadow_denied; they add up to RL.STATS's units).", counter, []string{"policy", "result"}},
	{"limitdb_rl_near_limit_total", "Allowed decisions with the used share at or above the policy's NEAR.", counter, []string{"policy"}},
	{"limitdb_rl_policies", "Policies in the registry.", gauge, nil},
	{"limitdb_rl_policy_shadow", "1 when the policy is in shadow mode (labelled policies only).", gauge, []string{"policy"}},
	{"limitdb_rl_policy_limit", "The policy's LIMIT (labelled policies only).", gauge, []string{"policy"}},
	{"limitdb_rl_policy_period_seconds", "The policy's PERIOD (labelled policies only).", gauge, []string{"policy"}},
	{"limitdb_rl_keys", "Limiter keys by algorithm, as the last complete census counted them.", gauge, []string{"algorithm"}},
	{"limitdb_rl_keys_census_passes_total", "Complete census passes (a pass walks at most 20000 keys a scrape).", counter, nil},
}

var metricDesc = func() map[string]*prometheus.Desc {
	m := make(map[string]*prometheus.Desc, len(metricDefs))
	for _, d := range metricDefs {
		m[d.name] = prometheus.NewDesc(d.name, d.help, d.labels, nil)
	}
	return m
}()

var metricType = func() map[string]prometheus.ValueType {
	m := make(map[string]prometheus.ValueType, len(metricDefs))
	for _, d := range metricDefs {
		m[d.name] = d.typ
	}
	return m
}()

type metricsCollector struct {
	s      *Server
	census engine.LimiterCensus // engine lock
}

func newMetricsCollector(s *Server) *metricsCollector { return &metricsCollector{s: s} }

func (c *metricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range metricDefs {
		ch <- metricDesc[d.name]
	}
}

// lockedView is what the engine lock guards, copied in one hold.
type lockedView struct {
	cmds          []cmdRow
	errs          map[string]int64
	stats         engine.Stats
	dbs           [][3]int64 // id, keys, expires
	used, notCnt  int64
	maxmem        float64
	exceeded      time.Duration
	channels      int
	patterns      int
	lastSave      int64
	lastFailed    bool
	lastBgSecs    int64
	saves         int64
	bgsave        bool
	maxClients    float64
	maxSkewMs     float64
	policyLabels  int
	policies      []policyRow
	rl            []engine.RLStat
	census        [engine.LimiterAlgos]int64
	censusPasses  int64
	censusKnown   bool
	blockedClient int
}

// policyRow is what the metrics show of a policy (copied: the record
// lives on in the registry after the lock is released).
type policyRow struct {
	name          string
	shadow        bool
	limit, period int64
}

type cmdRow struct {
	name string
	st   cmdStat
}

// view copies the locked state; the engine lock is held.
func (c *metricsCollector) view() *lockedView {
	s := c.s
	v := &lockedView{errs: make(map[string]int64, len(s.stats.errorStats)), stats: s.eng.Stats}
	for n, st := range s.stats.cmdStats {
		v.cmds = append(v.cmds, cmdRow{n, *st})
	}
	for n, k := range s.stats.errorStats {
		v.errs[n] = k
	}
	for i, db := range s.eng.DBs {
		if db.Len() > 0 {
			v.dbs = append(v.dbs, [3]int64{int64(i), int64(db.Len()), int64(db.Expires())})
		}
	}
	v.used, v.notCnt = s.usedNow(), s.mem.notCounted()
	if u := uint64(v.used); u > s.peakMem.Load() {
		s.peakMem.Store(u)
	}
	v.exceeded, _ = s.mem.exceeded()
	v.channels, v.patterns = len(s.ps.channels), len(s.ps.patterns)
	r := &s.rdb
	v.lastSave, v.lastFailed, v.lastBgSecs, v.saves, v.bgsave = r.lastSave, r.lastFailed, r.lastBgSecs, r.saves, r.bg != nil
	v.blockedClient = s.blockedClients()
	num := func(name string) float64 {
		f, _ := strconv.ParseFloat(s.conf.params[name], 64)
		return f
	}
	v.maxmem, v.maxClients, v.maxSkewMs = num("maxmemory"), num("maxclients"), num("max-clock-skew-ms")
	v.policyLabels = int(num("metrics-policy-labels"))
	for _, n := range s.eng.Policies.Names() {
		p := s.eng.Policies.Get([]byte(n))
		v.policies = append(v.policies, policyRow{p.Name, p.Shadow, p.Params.Limit, p.Params.Period})
	}
	v.rl = append([]engine.RLStat(nil), s.eng.RLStats()...) // read after the lock is released
	s.eng.CensusStep(&c.census, censusBudget)
	v.census, v.censusPasses, v.censusKnown = c.census.Counts, c.census.Passes, c.census.Passes > 0
	return v
}

// sink.put passes on a metric, dropping one whose label values client_golang
// refuses (not UTF-8: an error reply's first word or a node id can be
// any bytes). With the Must constructors that one value would panic,
// and the registry, which recovers, would lose the rest of the scrape.
type sink chan<- prometheus.Metric

func (k sink) put(m prometheus.Metric, err error) {
	if err == nil {
		k <- m
	}
}

func (c *metricsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	emit := func(name string, val float64, labels ...string) {
		sink(ch).put(prometheus.NewConstMetric(metricDesc[name], metricType[name], val, labels...))
	}
	emit("limitdb_build_info", 1, Version, RedisVersion, runtime.Version())
	emit("limitdb_start_time_seconds", float64(s.started.UnixNano())/1e9)

	t0 := time.Now()
	timer := time.NewTimer(metricsLockWait)
	var v *lockedView
	if s.door.LockOrTimer(timer.C) {
		v = c.view()
		s.door.Unlock()
	}
	timer.Stop()
	emit("limitdb_scrape_engine_lock_wait_seconds", time.Since(t0).Seconds())
	emit("limitdb_scrape_engine_lock_timeout", float64(boolInt(v == nil)))

	s.mu.Lock()
	nclients := len(s.clients)
	s.mu.Unlock()
	emit("limitdb_connected_clients", float64(nclients))
	emit("limitdb_connections_received_total", float64(s.stats.connsReceived.Load()))
	emit("limitdb_connections_rejected_total", float64(s.stats.rejectedConns.Load()))
	emit("limitdb_net_input_bytes_total", float64(s.stats.netInput.Load()))
	emit("limitdb_net_output_bytes_total", float64(s.stats.netOutput.Load()))
	emit("limitdb_commands_processed_total", float64(s.stats.commands.Load()))
	emit("limitdb_memory_peak_bytes", float64(s.peakMem.Load()))
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	emit("limitdb_memory_rss_bytes", float64(ms.Sys-ms.HeapReleased))
	c.collectRaft(ch, emit, v)
	if v != nil {
		c.collectLocked(ch, emit, v)
	}
}

func (c *metricsCollector) collectLocked(ch chan<- prometheus.Metric, emit func(string, float64, ...string), v *lockedView) {
	emit("limitdb_blocked_clients", float64(v.blockedClient))
	emit("limitdb_max_clients", v.maxClients)
	sort.Slice(v.cmds, func(i, j int) bool { return v.cmds[i].name < v.cmds[j].name })
	for _, r := range v.cmds {
		st := &r.st
		emit("limitdb_command_calls_total", float64(st.calls), r.name)
		emit("limitdb_command_rejected_calls_total", float64(st.rejected), r.name)
		emit("limitdb_command_failed_calls_total", float64(st.failed), r.name)
		secs := float64(st.usec)/1e6 + float64(st.ns)/1e9
		emit("limitdb_command_duration_seconds_total", secs, r.name)
		if n := histCalls(st); n > 0 {
			buckets := make(map[float64]uint64, len(latencyBounds))
			var cum uint64
			next := 0
			for i, k := range st.hist {
				cum += uint64(k)
				if next < len(latencyBounds) && i == latencyBounds[next] {
					buckets[float64(int64(1024)<<i)/1e9] = cum
					next++
				}
			}
			sink(ch).put(prometheus.NewConstHistogram(metricDesc["limitdb_command_latency_seconds"], uint64(n), secs, buckets, r.name))
		}
	}
	for n, k := range v.errs {
		emit("limitdb_error_replies_total", float64(k), n)
	}
	emit("limitdb_memory_used_bytes", float64(v.used))
	emit("limitdb_memory_max_bytes", v.maxmem)
	emit("limitdb_memory_not_counted_for_eviction_bytes", float64(v.notCnt))
	emit("limitdb_memory_eviction_exceeded_seconds_total", v.exceeded.Seconds())
	for _, d := range v.dbs {
		db := "db" + strconv.FormatInt(d[0], 10)
		emit("limitdb_db_keys", float64(d[1]), db)
		emit("limitdb_db_keys_expiring", float64(d[2]), db)
	}
	emit("limitdb_keyspace_hits_total", float64(v.stats.KeyspaceHits))
	emit("limitdb_keyspace_misses_total", float64(v.stats.KeyspaceMisses))
	emit("limitdb_expired_keys_total", float64(v.stats.ExpiredKeys))
	emit("limitdb_evicted_keys_total", float64(v.stats.EvictedKeys))
	emit("limitdb_pubsub_channels", float64(v.channels))
	emit("limitdb_pubsub_patterns", float64(v.patterns))
	emit("limitdb_rdb_changes_since_last_save", float64(v.stats.Dirty))
	emit("limitdb_rdb_bgsave_in_progress", float64(boolInt(v.bgsave)))
	emit("limitdb_rdb_last_save_timestamp_seconds", float64(v.lastSave))
	emit("limitdb_rdb_last_bgsave_success", float64(boolInt(!v.lastFailed)))
	emit("limitdb_rdb_last_bgsave_duration_seconds", float64(v.lastBgSecs))
	emit("limitdb_rdb_saves_total", float64(v.saves))
	if c.s.replicated() {
		emit("limitdb_raft_clock_max_skew_seconds", v.maxSkewMs/1000)
	}
	c.collectLimiter(emit, v)
}

// policyLabel maps the policies to label values: the registry's first
// metrics-policy-labels names in byte order keep theirs; the others, and
// names that cannot be a label value or would read as one of the
// reserved ones, count as _other. Calls with inline numbers (RL.STATS's
// "") are _inline. A name RL.STATS has that the registry does not (a
// deleted policy's counters) is _other: label values only come from the
// registry.
func policyLabels(policies []policyRow, cap int) map[string]string {
	m := make(map[string]string, min(len(policies), cap)+1)
	m[""] = policyInline
	n := 0
	for _, p := range policies {
		if n >= cap || !utf8.ValidString(p.name) || strings.HasPrefix(p.name, "_") {
			continue
		}
		m[p.name] = p.name
		n++
	}
	return m
}

func (c *metricsCollector) collectLimiter(emit func(string, float64, ...string), v *lockedView) {
	labels := policyLabels(v.policies, v.policyLabels)
	label := func(name string) string {
		if l, ok := labels[name]; ok {
			return l
		}
		return policyOther
	}
	emit("limitdb_rl_policies", float64(len(v.policies)))
	sums := map[string]*engine.RLCounters{}
	order := []string{}
	add := func(l string) *engine.RLCounters {
		if sums[l] == nil {
			sums[l] = &engine.RLCounters{}
			order = append(order, l)
		}
		return sums[l]
	}
	for _, p := range v.policies {
		if l := label(p.name); l != policyOther {
			add(l)
			emit("limitdb_rl_policy_shadow", float64(boolInt(p.shadow)), l)
			emit("limitdb_rl_policy_limit", float64(p.limit), l)
			emit("limitdb_rl_policy_period_seconds", float64(p.period)/1000, l)
		}
	}
	for _, r := range v.rl {
		add(label(r.Policy)).Add(&r.RLCounters)
	}
	for _, l := range order {
		t := sums[l]
		emit("limitdb_rl_requests_total", float64(t.Allowed), l, "allowed")
		emit("limitdb_rl_requests_total", float64(t.Denied), l, "denied")
		emit("limitdb_rl_requests_total", float64(t.ShadowDenied), l, "shadow_denied")
		emit("limitdb_rl_requests_total", float64(t.Errors), l, "error")
		emit("limitdb_rl_units_total", float64(t.UnitsAllowed), l, "allowed")
		emit("limitdb_rl_units_total", float64(t.UnitsDenied), l, "denied")
		emit("limitdb_rl_units_total", float64(t.UnitsShadowDenied), l, "shadow_denied")
		emit("limitdb_rl_near_limit_total", float64(t.NearLimit), l)
	}
	if v.censusKnown {
		for a := 0; a < engine.LimiterAlgos; a++ {
			emit("limitdb_rl_keys", float64(v.census[a]), ratelimit.Algo(a).String())
		}
	}
	emit("limitdb_rl_keys_census_passes_total", float64(v.censusPasses))
}

// collectRaft reads the node's status (no engine lock: the node keeps
// it); on a server without a node, the replication gauge is INFO's 0.
func (c *metricsCollector) collectRaft(ch chan<- prometheus.Metric, emit func(string, float64, ...string), v *lockedView) {
	s := c.s
	if !s.replicated() {
		emit("limitdb_connected_replicas", 0)
		return
	}
	st := s.node.Status()
	replicas := 0
	if st.Serving {
		replicas = max(len(st.Members)-1, 0)
	}
	emit("limitdb_connected_replicas", float64(replicas))
	emit("limitdb_raft_term", float64(st.Term))
	for _, state := range []string{"Follower", "Candidate", "Leader", "Shutdown"} {
		emit("limitdb_raft_state", float64(boolInt(st.State == state)), strings.ToLower(state))
	}
	emit("limitdb_raft_leader", float64(boolInt(st.Serving)))
	emit("limitdb_raft_has_leader", float64(boolInt(st.LeaderID != "")))
	emit("limitdb_raft_commit_index", float64(st.CommitIndex))
	emit("limitdb_raft_applied_index", float64(st.AppliedIndex))
	lag := 0.0
	if st.CommitIndex > st.AppliedIndex {
		lag = float64(st.CommitIndex - st.AppliedIndex)
	}
	emit("limitdb_raft_apply_lag_entries", lag)
	emit("limitdb_raft_first_index", float64(st.FirstIndex))
	emit("limitdb_raft_last_index", float64(st.LastIndex))
	contact := -1.0
	if st.LastContactMs >= 0 {
		contact = float64(st.LastContactMs) / 1000
	}
	emit("limitdb_raft_last_contact_seconds", contact)
	emit("limitdb_raft_snapshot_index", float64(st.SnapshotIndex))
	emit("limitdb_raft_snapshots_installed_total", float64(st.SnapshotsInstalled))
	sink(ch).put(prometheus.NewConstSummary(metricDesc["limitdb_raft_log_fsync_duration_seconds"], uint64(st.LogFsyncs), float64(st.LogFsyncNs)/1e9, nil))
	emit("limitdb_raft_leader_changes_total", float64(st.LeaderChanges))
	emit("limitdb_raft_pubsub_batches_dropped_total", float64(st.PubsubDropped))
	k := s.node.Counters()
	emit("limitdb_raft_forwarded_units_total", float64(k.Forwarded))
	emit("limitdb_raft_forward_errors_total", float64(k.ForwardErrors))
	emit("limitdb_raft_read_barriers_total", float64(k.ReadBarriers))
	emit("limitdb_raft_lease_checks_total", float64(k.LeaseChecks))
	emit("limitdb_raft_clusterdown_replies_total", float64(k.ClusterDown))
	emit("limitdb_raft_unknown_outcomes_total", float64(k.Unknown))
	voters := 0
	for _, m := range st.Members {
		if m.Voter {
			voters++
		}
		if st.Serving {
			emit("limitdb_raft_member_applied_index", float64(m.Applied), m.ID)
		}
	}
	emit("limitdb_raft_members", float64(len(st.Members)))
	emit("limitdb_raft_voters", float64(voters))
	emit("limitdb_raft_clock_offset_seconds", float64(st.ClockOffsetMs)/1000)
	emit("limitdb_raft_clock_error_seconds", float64(st.ClockErrorMs)/1000)
	emit("limitdb_raft_clock_agreeing_voters", float64(st.ClockAgreeing))
}
