// Package cluster replicates limitdb's state with Raft (hashicorp/raft, the
// log in raft-wal, term and vote in raft-boltdb): the leader executes
// units through the door, the log carries their effects, followers apply
// them, and a client's reply waits until its effects are committed. See
// DESIGN.md.
package cluster

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"github.com/hashicorp/raft-wal/fs"
	"go.etcd.io/bbolt"

	"limitdb/door"
)

// Config is one node's cluster settings.
type Config struct {
	NodeID   string // stable across restarts; kept in Dir when generated
	RaftAddr string // host:port for Raft, forwarding and joins; "" = a cluster of one that nobody can join
	// Advertise is the Raft address the others use, when not RaftAddr
	// (a proxy or NAT in between).
	Advertise string
	// ClientAddr is where clients reach this node (ROLE, INFO replication).
	ClientAddr string
	Dir        string // the Raft log, stable store and snapshots live in Dir/raft
	Join       string // a member's client address (host:port) to join through, on first start
	Secret     string // cluster-secret: required of every peer when set
	// TLS, when set, wraps every inter-node connection (tls.go): the
	// listener's side and the dialing side, both with this node's
	// certificate, each verifying the other's against the CAs.
	TLS *LinkTLS
	// AppendFsync is Redis's appendfsync: always, everysec or no.
	AppendFsync string
	// LeaderWait bounds how long a command waits for a leader before
	// -CLUSTERDOWN (default 2 s).
	LeaderWait time.Duration
	// MaxClockSkew: a leader serves only while its clock agrees within it
	// with a quorum of the voters, and a replicated time floor is kept
	// within it of each node's clock (default 500 ms; clock.go).
	MaxClockSkew time.Duration
	// Snapshot policy (0: defaults). Tests lower them.
	SnapshotThreshold uint64
	TrailingLogs      uint64
	SnapshotInterval  time.Duration
	Log               *slog.Logger
	// Link authenticates RAFT JOIN on the member's client port and, without
	// a cluster secret, the inter-node links (transport.go); nil: neither
	// is authenticated.
	Link LinkAuth
}

func (c *Config) applyTimeout() time.Duration { return 10 * time.Second }

func (c *Config) leaderWait() time.Duration {
	if c.LeaderWait > 0 {
		return c.LeaderWait
	}
	return 2 * time.Second
}

func (c *Config) maxSkew() time.Duration {
	if c.MaxClockSkew > 0 {
		return c.MaxClockSkew
	}
	return 500 * time.Millisecond
}

// Node is one member of a limitdb cluster.
type Node struct {
	cfg  Config
	log  *slog.Logger
	door *door.Door
	// rid is the node's Raft server ID: node-id@incarnation (membership.go)
	rid raft.ServerID
	// startIndex is the log's last index when the node started: what it
	// has applied once a leader told it the commit (CaughtUp)
	startIndex uint64

	raft   *raft.Raft
	logs   raft.LogStore
	cache  *peerLogCache // logs, the log cache over the store
	mem    logMem        // the log's memory (logmem.go)
	stable *raftboltdb.BoltStore
	logFS  *syncFS // the log's files, synced as appendfsync says
	store  *logStore
	snaps  *snapStore // Raft's file snapshot store, its listing kept
	trans  raft.Transport
	mux    *mux
	fsm    *fsm
	prop   *proposer
	fwd    *forwarder
	fsrv   *forwardServer
	fan    *fanout                      // Pub/Sub messages to and from the other nodes (fanout.go)
	query  atomic.Pointer[QueryHandler] // answers other nodes' queries (query.go)
	// queries are the query connections this node opened, kept for reuse
	queries queryConns
	clk     *clocks // the leader's view of the voters' clocks (clock.go)
	exec    Executor

	// serving is the epoch this node executes under while it is the
	// leader and has applied everything before its term (0 otherwise).
	// Written with the engine lock held; read by the server under it.
	serving atomic.Uint64
	// role for INFO and ROLE: raft.RaftState, refreshed by the monitor
	state atomic.Uint32

	skewMs       atomic.Int64 // measured offset of this node's clock from the leader's
	leaderClient atomic.Value // the leader's client address, from pings (string)
	// leaderPinged is the Raft address of the leader whose pong gave
	// leaderClient (LeaderClient: "" once another leads); string
	leaderPinged atomic.Value
	// otherClients are the other members' client addresses by Raft ID as
	// the leader's last pong listed them (a follower's Status shows
	// them: cluster mode's map lists every replica); map[string]string
	otherClients atomic.Value
	appliedW     appliedWaiter
	stats        Stats
	lease        lease    // the read lease across pauses (lease.go)
	acks         peerAcks // the followers' acknowledgements, by send time (lease.go)
	closing      chan struct{}
	closeOnce    sync.Once
	wg           sync.WaitGroup
	fatalOnce    sync.Once
	lastSnap     atomic.Int64
	fsyncs       atomic.Int64 // log syncs: one per stored batch (always), at most one a second (everysec)
	// leaderChanges counts the leaders this node has seen take over
	// (monitor): a new term with a known leader, or another leader
	leaderChanges atomic.Int64
	ready         atomic.Bool // n.raft is set (the listener runs before)
	promoting     atomic.Bool // a maybePromote's AddVoter is in flight
	// peers: the configuration has other servers (the proposer keeps
	// more entries in flight then); refreshed by the monitor
	peers atomic.Bool
	// pause is set while the leader holds the engine lock for a snapshot
	// (snapshot.go): the FSM captures under that lock and closes the channel
	pause atomic.Pointer[chan struct{}]
	// transferring: a handover runs (transfer.go); the monitor starts no
	// epoch meanwhile
	transferring atomic.Bool
	// joining: started with --join on an empty dir and not added yet
	// (joinLoop)
	joining atomic.Bool
}

// Stats are the slow-path counters INFO shows.
type Stats struct {
	Forwarded     atomic.Int64 // units forwarded to the leader
	ForwardErrors atomic.Int64
	ReadBarriers  atomic.Int64 // linearizable read barriers (ReadIndex)
	LeaseChecks   atomic.Int64 // leaderships confirmed with Raft: after a pause, a stalled log write, or with no quorum's fresh acknowledgement (lease.go)
	LeaderWaits   atomic.Int64 // commands that waited for a leader
	ClusterDown   atomic.Int64 // -CLUSTERDOWN replies
	Unknown       atomic.Int64 // units answered with an unknown outcome
}

// errStalled ends an epoch whose entry in flight made no progress: it
// was lost without Raft changing state where the monitor could see it.
var errStalled = errors.New("cluster: the entry in flight made no progress")

// errRefused ends an epoch one of whose entries Raft refused (proposer.ack).
var errRefused = errors.New("cluster: Raft refused an entry of this epoch")

// New opens (or creates) the node's Raft state in cfg.Dir and starts it.
// d is the door of the node's engine; its log becomes the node's.
func New(cfg Config, d *door.Door, exec Executor) (*Node, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	n := &Node{cfg: cfg, log: cfg.Log, door: d, exec: exec, closing: make(chan struct{})}
	n.lease.wake = make(chan struct{}, 1)
	n.leaderClient.Store("")
	n.leaderPinged.Store("")
	n.otherClients.Store(map[string]string{})
	n.appliedW.cond = sync.NewCond(&n.appliedW.mu)
	n.fsm = newFSM(n)
	n.prop = newProposer(n)
	n.clk = newClocks(n)
	// a floor further ahead of this node's clock than max-clock-skew-ms,
	// written by a clock that was wrong, holds time here no longer than
	// that (DESIGN.md, "Time")
	d.SetMaxLead(n.cfg.maxSkew().Milliseconds())
	dir := filepath.Join(cfg.Dir, "raft")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	if n.cfg.NodeID == "" {
		id, err := nodeID(dir)
		if err != nil {
			return nil, err
		}
		n.cfg.NodeID = id
	}
	if err := n.openStores(dir); err != nil {
		n.closeStores()
		return nil, err
	}
	existing, err := raft.HasExistingState(n.logs, n.stable, n.snaps)
	if err != nil {
		n.closeStores()
		return nil, err
	}
	inc, err := incarnation(dir, existing)
	if err != nil {
		n.closeStores()
		return nil, err
	}
	n.rid = raftID(n.cfg.NodeID, inc)
	if err := n.openTransport(); err != nil {
		n.closeStores()
		return nil, err
	}
	rc := raft.DefaultConfig()
	rc.LocalID = n.rid
	rc.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: os.Stderr})
	rc.SnapshotThreshold = 8192
	rc.TrailingLogs = 10240
	if cfg.SnapshotThreshold > 0 {
		rc.SnapshotThreshold = cfg.SnapshotThreshold
	}
	if cfg.TrailingLogs > 0 {
		rc.TrailingLogs = cfg.TrailingLogs
	}
	if cfg.SnapshotInterval > 0 {
		rc.SnapshotInterval = cfg.SnapshotInterval
	}
	// Faster failure detection than the defaults (1 s), suited to a LAN:
	// the bound is a new leader within 3 s of a kill.
	rc.HeartbeatTimeout = 500 * time.Millisecond
	rc.ElectionTimeout = 500 * time.Millisecond
	rc.LeaderLeaseTimeout = leaderLease
	rc.BatchApplyCh = true
	// Raft's default: processLogs allocates a batch of this many
	// pointers per commit, and each entry is a group commit already
	// (DESIGN.md, "The commit path"; ../bench/RESULTS.md, "Cluster measurements")
	rc.MaxAppendEntries = 64
	r, err := raft.NewRaft(rc, n.fsm, n.logs, n.stable, n.snaps, n.trans)
	if err != nil {
		n.close()
		return nil, err
	}
	n.raft = r
	n.startIndex = r.LastIndex()
	n.fan = newFanout(n)
	d.SetLog(n.prop)
	n.fwd = newForwarder(n)
	n.ready.Store(true)
	n.wg.Add(5)
	go func() { defer n.wg.Done(); n.leaseTicker() }()
	go func() { defer n.wg.Done(); n.snapshotLoop(rc.SnapshotThreshold, time.Second) }()
	go func() { defer n.wg.Done(); n.prop.run() }()
	go func() { defer n.wg.Done(); n.monitor() }()
	go func() { defer n.wg.Done(); n.syncLoop() }()
	switch {
	case existing:
		n.log.Info("cluster: restarting from the Raft state in dir", "node", string(n.rid), "dir", dir)
	case cfg.Join != "":
		if cfg.RaftAddr == "" {
			n.Close()
			return nil, errors.New("cluster: --join needs --raft-addr (the address the others reach this node at)")
		}
		n.joining.Store(true)
		n.wg.Add(1)
		go func() { defer n.wg.Done(); n.joinLoop() }()
	default:
		addr := n.trans.LocalAddr()
		f := r.BootstrapCluster(raft.Configuration{Servers: []raft.Server{{ID: rc.LocalID, Address: addr}}})
		if err := f.Error(); err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
			n.Close()
			return nil, err
		}
		n.log.Info("cluster: bootstrapped a cluster of one", "node", string(n.rid), "raft-addr", string(addr))
	}
	n.electAlone()
	return n, nil
}

// electAlone starts the election at once when this node is the only
// voter (a cluster of one, at its first start or a restart): Raft would
// first wait out a heartbeat timeout for a leader that cannot exist, and a
// plain limitdb took 0.8 s to serve its first write, 1 s its first read
// after a restart. Lowering the heartbeat timeout wakes a follower's timer
// (Raft's ReloadConfig), and with no contact ever it stands at once.
func (n *Node) electAlone() {
	cf := n.raft.GetConfiguration()
	if cf.Error() != nil {
		return
	}
	servers := cf.Configuration().Servers
	if len(servers) != 1 || servers[0].ID != n.rid || servers[0].Suffrage != raft.Voter {
		return
	}
	rc := n.raft.ReloadableConfig()
	rc.HeartbeatTimeout -= time.Millisecond
	if n.raft.ReloadConfig(rc) == nil {
		rc.HeartbeatTimeout += time.Millisecond
		n.raft.ReloadConfig(rc)
	}
}

// nodeID reads the node's ID from dir, or makes one and keeps it there.
func nodeID(dir string) (string, error) {
	p := filepath.Join(dir, "node-id")
	if b, err := os.ReadFile(p); err == nil && len(b) > 0 {
		return string(b), nil
	}
	var r [8]byte
	rand.Read(r[:])
	id := fmt.Sprintf("%x", r[:])
	return id, os.WriteFile(p, []byte(id), 0o640)
}

// walSegmentSize is the size of the log's segment files (raft-wal
// preallocates each): a quarter of raft-wal's default, so an idle node
// holds 16 MB of log on disk, not 64; a segment fills in ~2 s of SETs at
// full speed, and a rotation costs a metadata commit and a new file.
const walSegmentSize = 16 << 20

// openStores opens the Raft log (raft-wal in dir/wal, synced as
// appendfsync says; an older node's raft-boltdb log is moved into it
// first) and the stable store (term and vote: raft-boltdb, always
// synced — a node that forgets its vote after a power cut can vote twice
// in one term).
//
// Why raft-wal for the log: raft-boltdb's StoreLogs is a bolt write
// transaction per batch of entries (B+tree pages read, split, spilled,
// the meta page written, msgpack encoding) — 25 % of a cluster of one's
// CPU at INCR P=1; raft-wal appends the encoded entries to the tail
// segment with one pwrite (../bench/RESULTS.md, "Cluster measurements").
func (n *Node) openStores(dir string) error {
	var err error
	n.stable, err = raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "stable.db"), BoltOptions: &bbolt.Options{Timeout: time.Second}})
	if err != nil {
		return err
	}
	if err := migrateBoltLog(dir, n.log); err != nil {
		return err
	}
	wdir := filepath.Join(dir, walDir)
	if err := os.MkdirAll(wdir, 0o750); err != nil {
		return err
	}
	n.logFS = newSyncFS(fs.New(), n.cfg.AppendFsync, &n.fsyncs, func(err error) {
		n.log.Error("cluster: fsync of the Raft log failed", "err", err.Error())
	})
	n.store, err = newLogStore(openWAL(wdir, n.logFS, walSegmentSize))
	if err != nil {
		return err
	}
	n.store.mem = &n.mem
	n.cache = newPeerLogCache(ackingStore{n.store, n.prop}, &n.peers, &n.mem)
	n.logs = n.cache
	fs, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, hclog.New(&hclog.LoggerOptions{Name: "snapshot", Level: hclog.Warn, Output: os.Stderr}))
	n.snaps = &snapStore{FileSnapshotStore: fs}
	return err
}

// closeStores syncs the log (appendfsync everysec, as Redis fsyncs its
// AOF on shutdown) and closes the stores.
func (n *Node) closeStores() {
	if n.logFS != nil {
		if err := n.logFS.syncAll(); err != nil {
			n.log.Error("cluster: fsync of the Raft log failed", "err", err.Error())
		}
	}
	if n.store != nil {
		n.store.close()
	}
	if n.stable != nil {
		n.stable.Close()
	}
}

// syncLoop is appendfsync everysec: the log is written without syncing,
// and this makes the last second's entries durable.
func (n *Node) syncLoop() {
	if n.cfg.AppendFsync != "everysec" {
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-n.closing:
			return
		case <-t.C:
			if err := n.logFS.syncAll(); err != nil {
				n.log.Error("cluster: fsync of the Raft log failed", "err", err.Error())
			}
		}
	}
}

// openTransport starts the inter-node listener, or an in-memory
// transport for a node without raft-addr (a cluster of one).
func (n *Node) openTransport() error {
	if n.cfg.RaftAddr == "" {
		_, t := raft.NewInmemTransport(raft.ServerAddress("inmem:" + n.cfg.NodeID))
		n.trans = t
		return nil
	}
	ln, err := net.Listen("tcp", n.cfg.RaftAddr)
	if err != nil {
		return err
	}
	a := &auth{secret: []byte(n.cfg.Secret), link: n.cfg.Link, tls: n.cfg.TLS != nil}
	if n.cfg.Secret == "" && n.cfg.TLS == nil {
		n.log.Warn("cluster: no cluster-secret set: Raft, forwarding and joins are accepted from loopback addresses only", "raft-addr", n.cfg.RaftAddr)
	}
	n.mux = newMux(ln, a, func(msg string, args ...any) { n.log.Warn(msg, args...) })
	n.mux.ready = &n.ready
	n.mux.tls = n.cfg.TLS
	n.mux.self = string(n.rid)
	n.mux.dialedAs = n.dialedAs
	if ta, ok := ln.Addr().(*net.TCPAddr); ok && !ta.IP.IsUnspecified() {
		n.mux.local = &net.TCPAddr{IP: ta.IP}
	}
	if n.cfg.Advertise != "" {
		adv, err := net.ResolveTCPAddr("tcp", n.cfg.Advertise)
		if err != nil {
			ln.Close()
			return fmt.Errorf("raft-advertise: %w", err)
		}
		n.mux.advertise = adv
	}
	n.fsrv = newForwardServer(n)
	n.mux.fwd = n.fsrv.serveConn
	n.mux.clock = n.serveClock
	n.mux.query = n.serveQuery
	go n.mux.serve()
	n.trans = identTransport{acks: &n.acks, NetworkTransport: raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:                raftLayer{n.mux},
		MaxPool:               3,
		Timeout:               10 * time.Second,
		Logger:                hclog.New(&hclog.LoggerOptions{Name: "raft-net", Level: hclog.Warn, Output: os.Stderr}),
		ServerAddressProvider: nil,
	})}
	return nil
}

// ID is the node's ID.
func (n *Node) ID() string { return n.cfg.NodeID }

// closeDrain bounds how long Close waits for the units already executed
// to be committed (their clients may have gone; the data may not).
const closeDrain = 2 * time.Second

// closeNode does Close (api.go).
func (n *Node) closeNode() error {
	n.closeOnce.Do(func() {
		if n.Serving() && n.otherVoters() {
			n.handOverOnClose()
		}
		if n.Serving() {
			n.prop.cutNow()
			n.prop.Wait(n.prop.seq.Load(), closeDrain)
		}
		close(n.closing)
		n.prop.stop()
		if n.fwd != nil {
			n.fwd.close()
		}
		if n.raft != nil {
			n.raft.Shutdown().Error()
		}
		if n.mux != nil {
			n.mux.close()
			n.queries.closeAll()
		}
		if n.fsrv != nil {
			n.fsrv.close()
		}
		n.wg.Wait()
		n.closeStores()
	})
	return nil
}

func (n *Node) close() { n.closeStores() }

// fatal stops the process: an effect that cannot be applied means this
// node can no longer follow the log, and going on would serve a state no
// other node has.
func (n *Node) fatal(err error) {
	n.fatalOnce.Do(func() {
		n.log.Error("cluster: stopping: this node cannot apply the replicated log", "node", n.cfg.NodeID, "err", err.Error())
		os.Exit(1)
	})
}

// newEpoch is a random nonzero epoch: unique enough that no two stints of
// leadership, on any node, share one.
func newEpoch() uint64 {
	var b [8]byte
	for {
		rand.Read(b[:])
		if e := binary.LittleEndian.Uint64(b[:]); e != 0 {
			return e
		}
	}
}

// monitor follows Raft's state: on winning an election it waits for every
// earlier entry to be applied and for an entry of its own term to commit
// (Barrier) and for its clock to agree with a quorum of the voters'
// (clock.go), then starts an epoch and serves; on losing leadership, or
// the clock's agreement, it stops executing and rebuilds the engine from
// the log. LeaderCh can drop transitions, so the state is polled too.
func (n *Node) monitor() {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	var lastConf time.Time
	// barrier: Barrier succeeded since this node last became leader or
	// stopped serving (waiting for the clocks, it is not asked again
	// every tick: each one is a log entry)
	barrier := false
	var lastLeader string
	var lastTerm uint64
	for {
		select {
		case <-n.closing:
			return
		case <-n.raft.LeaderCh():
		case <-t.C:
		}
		if _, id := n.raft.LeaderWithID(); id != "" {
			if term := n.raft.CurrentTerm(); string(id) != lastLeader || term != lastTerm {
				if lastLeader != "" {
					n.leaderChanges.Add(1)
				}
				lastLeader, lastTerm = string(id), term
			}
		}
		st := n.raft.State()
		n.state.Store(uint32(st))
		if st == raft.Leader {
			n.leaseLeading()
		}
		n.clk.reconcile(st == raft.Leader)
		if st != raft.Leader {
			barrier = false
		} else {
			n.refreshAckView()
		}
		// refreshed every second, and before an epoch starts: a leader
		// of three must not begin with a cluster of one's commit path
		// (proposer.solo) for its first second
		if time.Since(lastConf) > time.Second || st == raft.Leader && n.serving.Load() == 0 {
			lastConf = time.Now()
			if cf := n.raft.GetConfiguration(); cf.Error() == nil {
				n.peers.Store(len(cf.Configuration().Servers) > 1)
			}
		}
		switch {
		case st == raft.Leader && n.serving.Load() == 0 && !n.transferring.Load():
			if !barrier {
				if err := n.raft.Barrier(n.cfg.applyTimeout()).Error(); err != nil {
					continue
				}
				barrier = true
			}
			if n.raft.State() != raft.Leader {
				continue
			}
			if v := n.clk.settle(); v.state != ClockOK && v.state != ClockExempt {
				n.clk.disagrees(v)
				continue
			}
			n.startEpoch()
		case st != raft.Leader && n.serving.Load() != 0:
			n.leadershipLost(n.serving.Load(), raft.ErrLeadershipLost)
		case n.serving.Load() != 0 && n.prop.stalled(n.cfg.applyTimeout()):
			n.leadershipLost(n.serving.Load(), errStalled)
			barrier = false
		case n.serving.Load() != 0:
			if v := n.clk.view(); v.state != ClockOK && v.state != ClockExempt {
				n.leadershipLost(n.serving.Load(), errClockQuorum)
				barrier = false
				n.clk.disagrees(v)
			}
		}
	}
}

func (n *Node) startEpoch() {
	epoch := newEpoch()
	f := n.fsm
	f.mu.Lock()
	n.door.Lock()
	f.ownEpoch = epoch
	f.ownSeq = n.prop.seq.Load()
	n.prop.begin(epoch)
	n.door.E.NoLazyDelete = false
	n.serving.Store(epoch)
	n.exec.PublishSettings()
	n.door.Unlock()
	f.mu.Unlock()
	n.log.Info("cluster: leader, serving", "node", n.cfg.NodeID, "term", n.raft.CurrentTerm())
}

// leadershipLost ends epoch (if it is still the one served): clients
// waiting on its uncommitted units get ErrUnknown, and the engine is
// rebuilt from the committed log. It holds the state-machine lock, then
// the engine lock (fsm.mu's order), from the end of the epoch until the
// engine is the committed state again: no reader in between sees effects
// that were never committed, or the older states of the rebuild.
func (n *Node) leadershipLost(epoch uint64, cause error) {
	f := n.fsm
	f.mu.Lock()
	defer f.mu.Unlock()
	n.door.Lock()
	if n.serving.Load() != epoch || epoch == 0 {
		n.door.Unlock()
		return
	}
	n.serving.Store(0)
	n.door.E.NoLazyDelete = true
	f.ownEpoch = 0
	n.prop.abort()
	n.exec.StopServing()
	n.log.Warn("cluster: leadership lost; rebuilding the engine from the log", "node", n.cfg.NodeID, "cause", cause.Error())
	err := f.reset()
	n.door.Unlock()
	if err != nil {
		n.fatal(err)
	}
	n.exec.DropSession(0, 0)
}

// snapshotTaken notes a snapshot (INFO).
func (n *Node) snapshotTaken() { n.lastSnap.Store(time.Now().Unix()) }

var _ io.Closer = (*Node)(nil)
