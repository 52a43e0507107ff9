// Package server is limitdb's network front end: it accepts connections,
// decodes requests with a size-bounded reader (resp.Reader), keeps each
// connection's state (protocol version, selected DB, MULTI queue, WATCHes,
// name) and runs commands against the engine under its lock.
package server

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"limitdb/cluster"
	"limitdb/door"
	"limitdb/engine"
	"limitdb/resp"
)

// RedisVersion is the Redis version whose behaviour limitdb reproduces; it
// is what HELLO and INFO report as the server version, since clients pick
// features by it.
const RedisVersion = "7.0.15"

// Version is limitdb's own version.
var Version = "0.1.0"

// Config holds the server's settings.
type Config struct {
	// Addr, when set ("host:port", port 0 = any free one), is the one
	// plain listener (tests, embedding); when empty the bind, port and
	// tls-port parameters decide (LoadConfig).
	Addr string
	Dir  string
	Log  *slog.Logger
	// QueryBufferLimit overrides client-query-buffer-limit (bytes) when > 0;
	// tests use a small one.
	QueryBufferLimit int64
	// RequirePass is requirepass at start-up (the default user's password).
	RequirePass string
	// Durable: appendonly defaults to yes, as the binary's does (a durable
	// cluster of one); servers embedded in tests keep Redis's no.
	Durable bool
	// Chdir: the process works in the dir parameter's directory, as
	// redis-server does (relative aclfile, dbfilename and Raft paths are
	// in it). Only the binary sets it: tests run many servers in one
	// process.
	Chdir bool
	// Effects, when set, receives the record of every unit that changed
	// something, in execution order: tests read the effect stream there.
	Effects door.Log
}

// Server serves the Redis protocol over TCP.
type Server struct {
	cfg  Config
	eng  *engine.Engine
	door *door.Door // the one way to the engine: its lock, its clock, every change
	// reloadRDB is the data set the last DEBUG RELOAD saved (in memory),
	// which DEBUG RELOAD NOSAVE loads; engine lock
	reloadRDB []byte
	// latency is the latency monitor's events (latency.go); latencyMs and
	// latencyTracking are latency-monitor-threshold and latency-tracking
	// (applyConfig); engine lock
	latency         map[string]*latencyEvent
	latencyMs       int64
	latencyTracking bool
	// latencyPercentiles: latency-tracking-info-percentiles (INFO
	// latencystats, info_latency.go); set by applyConfig
	latencyPercentiles []float64
	// minReplicas: min-replicas-to-write and -max-lag are both set, so
	// writes get NOREPLICAS while fewer good replicas are left
	// (min_replicas.go); set by applyConfig
	minReplicas           bool
	minToWrite, minMaxLag int64 // min-replicas-to-write, -max-lag
	node                  *cluster.Node
	// fwdClients are followers' clients with state on this leader
	// (WATCHes, a block being run); guarded by the engine lock
	fwdClients map[fwdKey]*client
	// global: the pushes of the cluster-wide state (cluster_global.go)
	global   globalState
	blocking blockingState // clients blocked on keys (blocked.go)
	log      *slog.Logger
	net      netState
	conf     *runtimeConfig

	configFile string // absolute path of the file LoadConfig read ("" when none)

	mu      sync.Mutex
	clients map[int64]*client
	nextID  atomic.Int64
	// event loops (evloop.go), started on the first connection that
	// joins one
	loopsOnce sync.Once
	loops     []*evLoop
	loopNext  atomic.Uint64
	closing   atomic.Bool
	wg        sync.WaitGroup

	started time.Time
	stats   serverStats
	stop    chan struct{}
	closed  chan struct{} // closed when Close has finished (Serve returns then)

	rdb rdbState // SAVE, BGSAVE, save rules, MISCONF (rdb_save.go); guarded by the engine lock
	// down is set once a SHUTDOWN is past its save: a client that gets
	// the engine lock afterwards runs nothing (shutdown.go)
	down       atomic.Bool
	shutdownMu sync.Mutex // one shutdown at a time

	limits     resp.Limits               // client-query-buffer-limit, proto-max-bulk-len
	maxClients atomic.Int64              // maxclients
	idleLimit  atomic.Int64              // timeout, seconds (0 = never)
	obufNormal atomic.Pointer[obufLimit] // client-output-buffer-limit, normal class
	outPause   atomic.Int64              // client-output-pause-size
	outTotal   atomic.Int64              // unsent reply bytes of all connections
	slow       slowlog                   // SLOWLOG entries; guarded by the engine lock
	hz         atomic.Int64              // hz: cron ticks per second
	peaks      outPeaks                  // client_recent_max_output_buffer
	peakMem    atomic.Uint64
	mem        memGauge    // used_memory and maxmemory (maxmemory.go); guarded by the engine lock
	ops        opsSampler  // touched by cron only (mean is atomic)
	auth       authState   // users, ACL LOG (auth.go)
	ps         pubsubState // subscriptions, deliveries to settle (pubsub.go); guarded by the engine lock
	runID      string

	// activeExpireOff: DEBUG SET-ACTIVE-EXPIRE 0 stopped the cron's expiry
	// walk (Redis's active_expire_enabled)
	activeExpireOff atomic.Bool

	metrics metricsState // the Prometheus endpoint (metrics.go)

	// clusterMode: cluster-enabled yes, set once by LoadConfig before
	// anything is served (cluster_mode.go); clusterStateOK is
	// cluster_state ok as last computed (updateClusterState); engine lock
	clusterMode    bool
	clusterStateOK bool
	clusterStateAt uint64                     // the engine's SlotsGen clusterStateOK was computed at
	cmap           clusterMap                 // the other groups (cluster_map.go)
	viewCache      atomic.Pointer[cachedView] // the last view answered (cluster_view.go)
	viewWatchers   viewWatchers               // the view answers held (cluster_view.go)
	hand           handoverState              // slot handovers (cluster_handover.go, cluster_migration.go)
}

type serverStats struct {
	connsReceived atomic.Int64
	commands      atomic.Int64
	rejectedConns atomic.Int64
	netInput      atomic.Int64
	netOutput     atomic.Int64
	// reads and writes of client sockets (total_reads_processed,
	// total_writes_processed): one per read or write call that moved bytes
	reads, writes atomic.Int64
	// SYNC readers (sync_cmds.go): full syncs served, bytes written to
	// them, bytes queued for them and not yet written
	syncFull, replOutput, replQueued atomic.Int64
	// the cron's active expiry (server.go cron): its time in µs, the runs
	// that stopped at their time limit with keys left to expire, and the
	// expired share of the keys with a TTL it looked at (a running
	// estimate, as Redis's stat_expired_stale_perc), per mille
	expireNs        int64 // engine lock
	expireCapped    atomic.Int64
	expireStale     float64             // engine lock
	cmdStats        map[string]*cmdStat // guarded by the engine lock
	errorStats      map[string]int64    // guarded by the engine lock
	totalErrorReply int64
	byID            []*cmdStat // cmdStats indexed by Command.ID (statOf); guarded by the engine lock
}

type cmdStat struct {
	calls, usec, rejected, failed int64
	ns                            int64 // time not yet counted in usec (< 1000)
	fast                          bool  // the command is flagged fast (latency event name)
	// hist counts the command's durations in power-of-two buckets from
	// 1024 ns (LATENCY HISTOGRAM, latency.go)
	hist [latencyBuckets]int64
}

// New returns a server over eng (a fresh engine when nil).
func New(cfg Config, eng *engine.Engine) *Server {
	if eng == nil {
		eng = engine.New()
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	s := &Server{
		cfg:     cfg,
		eng:     eng,
		door:    door.New(eng, cfg.Effects),
		log:     cfg.Log,
		clients: make(map[int64]*client),
		started: time.Now(),
		stop:    make(chan struct{}),
		closed:  make(chan struct{}),
		conf:    newRuntimeConfig(),

		fwdClients: map[fwdKey]*client{},
	}
	s.log = slog.New(levelHandler{cfg.Log.Handler(), &s.net.level})
	eng.Log = s.scriptLog
	eng.Settings.OnACL = s.adoptACL
	eng.Settings.OnConfig = s.adoptConfig
	s.stats.cmdStats = make(map[string]*cmdStat)
	s.stats.errorStats = make(map[string]int64)
	s.mem.init()
	s.mem.captures = s.eng.CaptureMemory
	s.mem.startup = s.usedNow() // used_memory_startup: before any data or client
	s.initAuth()
	s.ps.init()
	s.initRDB()
	s.initConfig()
	s.runID = newRunID()
	return s
}

// Engine returns the server's engine.
func (s *Server) Engine() *engine.Engine { return s.eng }

// Door returns the server's door (the cluster proposes its records).
func (s *Server) Door() *door.Door { return s.door }

// SetNode makes the server a member of a cluster (before Serve).
func (s *Server) SetNode(n *cluster.Node) { s.node = n }

// ListenAndServe is Listen then Serve.
func (s *Server) ListenAndServe() error {
	if err := s.Listen(); err != nil {
		return err
	}
	return s.Serve()
}

// Close stops accepting, closes every connection and waits for them,
// aborts a BGSAVE in progress, and closes the cluster node. It saves
// nothing (Shutdown does, as SHUTDOWN). A second call waits for the first.
func (s *Server) Close() error {
	if s.closing.Swap(true) {
		<-s.closed
		return nil
	}
	defer close(s.closed)
	close(s.stop)
	s.door.Lock()
	s.stopBgsave()
	s.door.Unlock()
	var err error
	s.net.mu.Lock()
	for _, l := range s.net.listeners {
		if e := l.ln.Close(); err == nil {
			err = e
		}
	}
	s.net.listeners = nil
	s.net.mu.Unlock()
	s.closeMetrics()
	s.mu.Lock()
	for _, cl := range s.clients {
		cl.nc.Close()
	}
	s.mu.Unlock()
	s.viewWatchers.close()
	s.wg.Wait()
	if s.replicated() {
		s.node.Close()
	}
	// give back this server's share of the process's Go memory limit
	s.door.Lock()
	s.mem.limit = 0
	s.setGoMemoryLimit()
	s.door.Unlock()
	return err
}

// cron runs the active expiry cycle like Redis's serverCron: hz times a
// second (the hz parameter, read at every tick so CONFIG SET applies at
// once) each database gets a bounded walk of its table, repeated while the
// walk keeps finding many expired keys, for at most 25% of the tick's
// period (Redis's ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC). Idle clients are
// checked every tick; the ops/sec sample is taken every 100 ms whatever
// hz is (Redis's run_with_period(100)).
func (s *Server) cron() {
	defer s.wg.Done()
	t := time.NewTimer(s.cronPeriod())
	defer t.Stop()
	lastSample := time.Now()
	lastAge := lastSample
	var sc scavenger
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		period := s.cronPeriod()
		t.Reset(period)
		if time.Since(lastSample) >= 100*time.Millisecond {
			lastSample = time.Now()
			s.sampleOps()
		}
		s.closeIdleClients()
		s.trackOutputPeaks()
		s.rdbCron()
		if time.Since(lastAge) >= captureSpareAge {
			// the arrays a released capture leaves for the next one are
			// dropped 5–10 s after the last capture (engine/cow.go)
			lastAge = time.Now()
			s.eng.AgeCaptureSpare()
		}
		s.scavenge(&sc)
		deadline := time.Now().Add(period / 4)
		for {
			s.door.Lock()
			now, _ := s.door.Now()
			ctx := engine.Ctx{E: s.eng, Now: now, Pub: nodePub{s}}
			found := 0
			if !s.activeExpireOff.Load() && s.executes() {
				t0 := door.Nanotime()
				checked := s.eng.Stats.ExpireChecked
				found = s.door.ActiveExpire(&ctx, 64)
				d := door.Nanotime() - t0
				s.latencySample("expire-cycle", d/1e6)
				s.noteExpireRun(d, found, s.eng.Stats.ExpireChecked-checked)
			}
			s.memCron(&ctx)
			if s.clusterMode {
				s.updateClusterState() // (cluster_mode_cmds.go)
			}
			s.settleAsync() // expired and evicted keys' events
			s.refreshLogFailure()
			s.door.Unlock()
			if found < 16 {
				break
			}
			if !time.Now().Before(deadline) {
				s.stats.expireCapped.Add(1) // keys left to expire: expired_time_cap_reached_count
				break
			}
		}
	}
}

// captureSpareAge is the period of AgeCaptureSpare: BGSAVEs and Raft
// snapshots closer together than that capture without allocating.
const captureSpareAge = 5 * time.Second

// cronPeriod is 1 s / hz (hz is kept within 1..500 by CONFIG SET).
func (s *Server) cronPeriod() time.Duration {
	return time.Second / time.Duration(max(s.hz.Load(), 1))
}
