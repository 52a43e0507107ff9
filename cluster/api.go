package cluster

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"time"
)

// The seam between the server and its node, in one file: every method
// and type of the Node that package server uses, and what the server
// implements for the node to call. Bodies longer than a few lines stay
// in the file of their concern (lease.go, snapshot.go …), named after
// the method in lower case; the methods here say what they promise.
//
// The server calls, in the order of the sections below:
//   - per command and per batch (engine lock held): Serving, Epoch,
//     LeaseHeld and ConfirmLease, Ticket, Wait, Settled, Committed,
//     TurnStart and TurnEnd, OnSettled;
//   - on a follower: Forward and ForwardBlocking (a unit that may write
//     runs on the leader), CancelForward, DropClient, ReadBarrier (a
//     linearizable read);
//   - on the leader, for followers' units: NoteServed, ForwardedClients;
//   - Pub/Sub across nodes: Fanout, FanoutSettle, OnMessages;
//   - queries between nodes: OnQuery, QueryPeers;
//   - administration (RAFT, INFO, ROLE, min-replicas): Status, Counters,
//     GoodReplicas, CheckJoin, Join, Remove, Transfer;
//   - persistence and life: New and Config (node.go), Snapshot,
//     SnapshotState, HoldsNoData, Import, LogFailure, LogMemory, Halt,
//     Close;
//   - DEBUG: PowerCut, InjectLogFailure, InjectLogStall;
//   - and the functions JoinProof (membership.go), SplitHostPort
//     (status.go), DecodeMessages (fanout.go), SyncDir (migrate.go).
//
// The node calls up into the server through:
//   - Executor (New's exec): a follower's unit runs on the leader as
//     that client would run it (LockForwarded, ExecForwarded; one whose
//     command blocked is a BlockedUnit), blocked units are cancelled or
//     sent to the next leader (CancelForwarded, StopServing), a
//     session's clients are forgotten (DropSession), and a new leader
//     records the cluster-wide settings (PublishSettings);
//   - LinkAuth (Config.Link): the users and masterauth that joins and
//     links authenticate with;
//   - the functions it is given: OnSettled's (the event loops wake when
//     tickets settle), OnMessages' (other nodes' Pub/Sub messages),
//     BlockingHooks (a forwarded blocking command's timeout).
//
// And one path needs no method: New makes the node's proposer the
// door's door.Log, so every unit the server executes through the door
// records its effects into the cluster (propose.go), which replicates
// them and applies them on every node (fsm.go).

// Per command and per batch.

// Serving reports whether this node executes units (it is the leader and
// has applied everything before its term). The engine lock is held, so
// the answer holds until it is released.
func (n *Node) Serving() bool { return n.serving.Load() != 0 }

// Epoch names the leadership this node serves under: no other stint of
// leadership, on this node or another, has the same; 0 while it does
// not serve. The engine lock is held. While it stays the same, every
// write goes through this node's engine (the WATCH rule: a WATCH belongs
// to the epoch it was taken in, and EXEC under another aborts).
func (n *Node) Epoch() uint64 { return n.serving.Load() }

// LeaseHeld reports whether this leader may serve from memory: its
// process ran without a gap since its leadership was last confirmed, no
// log write stalls, and a quorum acknowledged a request sent within the
// last leaderLease. When not, the caller releases the engine lock and
// calls ConfirmLease.
func (n *Node) LeaseHeld() bool { return n.leaseHeld() }

// ConfirmLease asks Raft to confirm this node's leadership after a gap
// (the engine lock is not held). It reports whether it did; if not, it
// waits up to leader-wait-ms for the node to stop serving (the monitor
// ends the epoch under the engine lock), so that the caller then runs the
// unit as a follower's.
func (n *Node) ConfirmLease() bool { return n.confirmLease() }

// Ticket is what a client's replies wait for (engine lock held): the last
// record executed on this node so far.
func (n *Node) Ticket() uint64 { return n.prop.Ticket() }

// Wait blocks until ticket is committed; ErrUnknown when its epoch ended
// first (the replies must not be sent: the engine was rebuilt).
func (n *Node) Wait(ticket uint64) error {
	err := n.prop.Wait(ticket, 0)
	if err != nil {
		n.stats.Unknown.Add(1)
	}
	return err
}

// Settled is Wait without waiting: ticket's outcome (nil: committed;
// ErrUnknown: lost with its epoch) and whether it is known yet.
func (n *Node) Settled(ticket uint64) (error, bool) {
	err, ok := n.prop.poll(ticket)
	if err != nil {
		n.stats.Unknown.Add(1)
	}
	return err, ok
}

// Committed reports whether the records up to ticket are committed (and
// applied). Cheap: one atomic load.
func (n *Node) Committed(ticket uint64) bool { return ticket <= n.prop.done.Load() }

// TurnStart and TurnEnd bracket a turn of a server's event loop: the
// records its batches executed are proposed as one entry when the turn
// ends (on a cluster of one; with peers the submitter gathers them). A
// loop that has to wait for the engine lock mid-turn calls TurnEnd
// first. (proposer.turnEnd)
func (n *Node) TurnStart() { n.prop.turnStart() }

// TurnEnd: see TurnStart. True when it proposed an entry.
func (n *Node) TurnEnd() bool { return n.prop.turnEnd() }

// OnSettled registers f, called (in the goroutine that learnt it) each
// time outcomes of tickets become known: once per advance of the
// committed sequence, and when an epoch's records are lost or the node
// stops. f must not block; the server's event loops use it to wake up.
func (n *Node) OnSettled(f func()) { n.prop.settledHook.Store(&f) }

// A follower: units that may write run on the leader.

// ErrLocal tells the server to execute the unit itself: this node became
// the leader while it was waiting to forward.
var ErrLocal = errors.New("cluster: execute locally")

// Forward runs a unit of this follower's client on the leader and waits
// until this node has applied its effects. While there is no leader it
// retries for LeaderWait, then gives ErrClusterDown. A unit that may have
// reached the leader is never sent twice: its outcome is then ErrUnknown.
// Blocking commands go through ForwardBlocking; both are forwardUnit.
func (n *Node) Forward(u *Unit) ([]byte, error) { return n.forwardUnit(u, nil) }

// BlockingHooks are the server's part of ForwardBlocking.
type BlockingHooks struct {
	// Blocked is called when the leader says the unit blocked, with the
	// place it gave it (Unit.Rank when it is sent again).
	Blocked func(rank uint64)
	// Refresh prepares the unit to be sent again (new sequence numbers,
	// what is left of the timeout); false: the timeout has passed, and
	// the server answers as on a timeout.
	Refresh func(u *Unit) bool
	// Left rewrites the unit's timeout with what is left of the client's
	// before each send (a unit that waited for a leader blocks there
	// only for the rest); false: nothing is, and the client times out
	// unsent.
	Left func(u *Unit) bool
}

// ErrTimedOut: a blocking command to be sent again found its timeout past.
var ErrTimedOut = errors.New("cluster: the blocking command's timeout passed")

// ForwardBlocking runs a blocking command of this follower's client on
// the leader (Forward's rules, without a deadline once it blocked) and
// waits until this node has applied its effects.
func (n *Node) ForwardBlocking(u *Unit, h BlockingHooks) ([]byte, error) {
	return n.forwardUnit(u, &h)
}

// CancelForward tells the leader that this follower's client stopped
// waiting in its blocked unit seq.
func (n *Node) CancelForward(client, seq uint64, mode CancelMode) {
	if n.fwd == nil {
		return
	}
	body := binary.AppendUvarint(nil, client)
	body = binary.AppendUvarint(body, seq)
	n.fwd.send(frameCancel, append(body, byte(mode)))
}

// DropClient tells the leader that a client of this follower is gone, or
// holds no WATCH any more: its WATCHes there are released, and its row of
// the table of executed units is forgotten (a unit of a client that
// left is never sent again). A drop that finds no connection waits for
// the next one (forwarder.drop).
func (n *Node) DropClient(client uint64) {
	if n.Serving() || n.fwd == nil {
		return
	}
	n.fwd.drop(binary.AppendUvarint(nil, client))
}

// ReadBarrier makes a follower's next reads linearizable: it asks the
// leader for the index every acknowledged write is at (ReadIndex) and
// waits until this node has applied it. It returns the leader's time
// (unix ms) when it answered, which those reads judge deadlines by
// (expiry, limiters): the follower's own clock may be off the leader's by
// up to max-clock-skew-ms, and a read here must not find expired what the
// leader, asked right after, still holds (Door.ReadTime). On the leader it
// returns at once with 0 (its reads wait for their ticket instead; they
// use its own clock). Without a leader it waits up to LeaderWait, then
// ErrClusterDown.
func (n *Node) ReadBarrier() (int64, error) { return n.readBarrier() }

// The leader: followers' units, run by the server.

// Unit is a unit of a follower's client, run on the leader.
type Unit struct {
	Session uint64 // the follower process's forwarding session
	Seq     uint64 // the unit's number among the client's (at most once)
	Client  uint64 // the follower's client ID (its WATCHes on the leader)
	DB      int
	Proto   int
	User    string // the ACL user; the leader checks permissions
	// Watching: the client has WATCHed keys through this session; an
	// EXEC then aborts if the leader no longer holds them (a new leader).
	Watching bool
	// OOM: the follower was over its maxmemory when the client sent the
	// unit; a script's first deny-oom write is then refused on the leader
	// too, as on the node the client talks to.
	OOM  bool
	Cmds [][][]byte
	// Peer is the address of the follower's forwarding link (not
	// encoded): what the leader's SLOWLOG and ACL LOG name as the client
	Peer net.Addr
	// Rank: a blocking command sent again after a leader change keeps the
	// place its first leader gave it (blocking.go); 0 otherwise
	Rank uint64
}

// Executor runs units forwarded by followers as a client of this node
// would (ACL, MULTI, scripts); the server implements it.
type Executor interface {
	// LockForwarded takes the engine lock for u, as for a client of this
	// node, and returns nil; or, while a script holds the lock past
	// busy-reply-threshold, returns u's answer without running it (BUSY,
	// or its SCRIPT KILL served) and without the lock.
	LockForwarded(u *Unit) []byte
	// ExecForwarded runs u's commands with the engine lock held and
	// returns their replies (concatenated), or, when its command blocked
	// (blocking.go), the unit to wait for.
	ExecForwarded(u *Unit) ([]byte, BlockedUnit)
	// CancelForwarded answers (mode) the blocked unit seq of a
	// follower's client if it is still blocked, with the engine lock
	// held; it reports whether it was.
	CancelForwarded(session, client, seq uint64, mode CancelMode) bool
	// StopServing is called with the engine lock held when the node
	// stops executing: clients blocked here are to run their command
	// again where it now runs.
	StopServing()
	// DropSession forgets the state of a forwarding session's clients
	// (their WATCHes), or of one client when client != 0.
	DropSession(session, client uint64)
	// PublishSettings records the cluster-wide settings (ACL, encoding
	// thresholds) as effects; a new leader calls it, with the engine lock
	// held, before serving.
	PublishSettings()
}

// BlockedUnit is a forwarded unit whose command blocked on the leader.
type BlockedUnit interface {
	// Wait waits until the client is answered (no lock held) and returns
	// the reply (as ExecForwarded's), the ticket it waits for (0: none),
	// and rerun: the leader stopped serving before the client was served,
	// nothing was popped, and the command is to be sent again.
	Wait() (out []byte, ticket uint64, rerun bool)
	// Rank is the unit's place among the waiters (the interim frame
	// carries it; a unit sent again keeps it)
	Rank() uint64
}

// NoteServed records, with the engine lock held and before the serve's
// effects, that the blocked forwarded unit (session, client, seq) is
// being served: its serve ID (seq+1) goes into the table of executed
// units and rides the next entry.
func (n *Node) NoteServed(session, client, seq uint64) {
	id := unitID{session, client, seq + 1}
	n.fsm.markUnit(id)
	n.prop.addForwarded(id)
}

// ForwardedClients is the number of followers' clients in the table of
// executed units (INFO: it follows the clients alive); the engine lock is
// held.
func (n *Node) ForwardedClients() int { return len(n.fsm.units) }

// CancelMode says how a cancelled blocked unit is answered.
type CancelMode byte

const (
	CancelDrop    CancelMode = iota // the client went away: no reply
	CancelTimeout                   // CLIENT UNBLOCK [TIMEOUT]: the null array
	CancelError                     // CLIENT UNBLOCK ERROR: -UNBLOCKED …
)

// Pub/Sub across nodes.

// OnMessages sets the function that delivers other nodes' messages to
// this node's subscribers (the server's; it takes the engine lock).
func (n *Node) OnMessages(f func(batch []byte)) { n.fan.deliver.Store(&f) }

// Fanout queues a message for the other members (engine lock held). It
// reports false when there are none (a cluster of one), and then keeps
// nothing.
func (n *Node) Fanout(channel, message []byte, shard bool) bool {
	return n.queueFanout(channel, message, shard)
}

// FanoutSettle releases the messages queued since the last settle once
// ticket (0: nothing) is committed (engine lock held).
func (n *Node) FanoutSettle(ticket uint64) { n.settleFanout(ticket) }

// Queries between nodes (RL.STATS CLUSTER).

// QueryHandler answers another node's query (the server's; it takes the
// engine lock itself).
type QueryHandler func(req []byte) (status byte, body []byte)

// OnQuery sets the function that answers other nodes' queries (query.go).
func (n *Node) OnQuery(f QueryHandler) { n.query.Store(&f) }

// PeerAnswer is one member's answer to QueryPeers.
type PeerAnswer struct {
	Node   string // its node ID
	Status byte
	Body   []byte
}

// QueryPeers sends req to every other member of the configuration at
// once and returns, within timeout, the answers of those that gave one
// and the node IDs of those that did not (unreachable, too slow). The
// engine lock must not be held.
func (n *Node) QueryPeers(req []byte, timeout time.Duration) (answers []PeerAnswer, missing []string) {
	return n.queryPeers(req, timeout)
}

// QueryAddr sends req to the node whose inter-node (Raft) address is
// addr, a member of this group or of another group of the same cluster
// (cluster mode's map exchange and directory requests), and returns its
// answer within timeout. The link is authenticated as every other
// (cluster-secret). The engine lock must not be held.
func (n *Node) QueryAddr(addr string, req []byte, timeout time.Duration) (status byte, body []byte, err error) {
	if n.mux == nil {
		return 0, nil, errQueryFrame
	}
	return n.queryPeer(addr, req, time.Now().Add(timeout))
}

// Administration: RAFT, INFO, ROLE, min-replicas.

// LeaderClient is the client address of the current leader, as its last
// pong said: "" while there is none, and after a change of leader until
// the new one has answered a ping (a second at most once it leads), so
// that cluster mode's MOVED never names a former leader.
func (n *Node) LeaderClient() string {
	addr, _ := n.raft.LeaderWithID()
	if addr == "" || string(addr) != n.leaderPinged.Load().(string) {
		return ""
	}
	return n.leaderClient.Load().(string)
}

// Status gathers the node's view.
func (n *Node) Status() Status { return n.status() }

// CaughtUp reports whether the node's engine has applied every entry its
// log held when it started (the FSM's index: Raft's runs ahead of it,
// and passed while the engine had no shard yet in TestClusterShards…
// LeaderKill). Raft applies a restarted node's entries only once a
// leader (or its own election) tells it their commit; until then its
// engine is the last snapshot's. A new leader commits an entry of its
// own term, so a tail that is never committed (truncated by the leader)
// is passed too.
func (n *Node) CaughtUp() bool { return n.appliedIndex() >= n.startIndex }

// Counters are the slow path's counters, for INFO.
type Counters struct {
	Forwarded, ForwardErrors, ReadBarriers, LeaseChecks, LeaderWaits, ClusterDown, Unknown int64
}

// Counters reads them.
func (n *Node) Counters() Counters {
	s := &n.stats
	return Counters{s.Forwarded.Load(), s.ForwardErrors.Load(), s.ReadBarriers.Load(), s.LeaseChecks.Load(), s.LeaderWaits.Load(), s.ClusterDown.Load(), s.Unknown.Load()}
}

// GoodReplicas counts the other members of the configuration whose last
// report (the ping every follower sends once a second with its applied
// index, limitdb's REPLCONF ACK) is at most maxLag seconds old, in whole
// seconds as Redis's refreshGoodSlavesCount counts them. Only a serving
// leader hears the pings; anywhere else it is 0.
func (n *Node) GoodReplicas(maxLag int64) int { return n.goodReplicas(maxLag) }

// ErrJoinAuth refuses a join without the cluster's credentials.
var ErrJoinAuth = errors.New("ERR RAFT JOIN refused: wrong cluster secret (or, with none set, not from a loopback address)")

// CheckJoin authenticates a RAFT JOIN received on a client connection
// from remote.
func (n *Node) CheckJoin(id, addr, proof string, remote net.Addr) error {
	return n.checkJoin(id, addr, proof, remote)
}

// Join adds node id at raft address addr: directly on the leader, else
// through the leader's forwarding connection.
func (n *Node) Join(id, addr string) error {
	return n.onLeader(func() error { return n.addNode(id, addr) },
		frameJoin, appendBytes(appendBytes(nil, []byte(id)), []byte(addr)))
}

// Remove removes node id from the cluster (through the leader).
func (n *Node) Remove(id string) error {
	return n.onLeader(func() error { return n.removeNode(id) }, frameRemove, appendBytes(nil, []byte(id)))
}

// Transfer hands leadership to node id (a voter), or with id "" to the
// most up-to-date voter (Raft's pick: the highest next index), and
// returns once another node leads (at most pauseWait and transferWait
// later; else an error, and the leader serves again). On a follower the
// leader is asked through the forwarding link; that link is dropped when
// the leadership moves (the forwarder redials the new leader), and the
// answer may be lost with it: then the transfer succeeded if the node
// asked for (or, with no id, another one) leads within transferWait.
func (n *Node) Transfer(id string) error { return n.transferLeadership(id) }

// Persistence and life.

// Snapshot takes a Raft snapshot now (SAVE, the leader's loop): it
// returns once the capture is taken; Raft writes it in the background.
func (n *Node) Snapshot() error { return n.takeSnapshot() }

// SnapshotState takes a Raft snapshot as Snapshot does, waits until Raft
// has persisted it and opens its engine part: an RDB stream, which the
// caller closes. BGSAVE in cluster mode writes dump.rdb from it, so the
// state is captured and encoded once for both files (a separate capture
// doubled the stall and the CPU of every BGSAVE). When nothing was applied
// since the last snapshot, that one is the state and is opened.
//
// On a follower (an online backup: the leader is not paused) a read
// barrier comes first, as for a linearizable read: the follower applies
// as far as the leader's applied index, so the file holds every write
// acknowledged before the save was asked for. A follower lags by up to a
// replication round, and a backup taken without it lacked the last 2 of
// 2,703 writes acknowledged before BGSAVE (TestClusterBackupRestore).
// Without a leader the save goes on with the state this node has, and
// says so in the log. index is the Raft index of the state the stream
// holds.
func (n *Node) SnapshotState() (rc io.ReadCloser, index uint64, err error) { return n.snapshotState() }

// HoldsNoData reports whether the node's Raft store carries no state: no
// snapshot, no command entry in the log, and this node alone in the
// configuration. That is a first start (or a store that never saw a
// write). A node started with join, or a member of a larger cluster, gets
// its state from the others and never reports true.
func (n *Node) HoldsNoData() (bool, error) { return n.holdsNoData() }

// Import makes an engine snapshot (RDB, size bytes from r) the cluster's
// state by installing it as a Raft snapshot (raft.Restore): the log, later
// snapshots and restarts all start from it, and followers that join get
// it. Only on a serving leader that serves no client yet (the server calls
// it before Serve), and only with a file the caller checked loads: Raft
// panics when the state machine cannot restore a user snapshot.
func (n *Node) Import(r io.Reader, size int64) error { return n.importSnapshot(r, size) }

// LogFailure is the error of the Raft log's last write when it failed
// (a full disk), "" otherwise: the server refuses writes with MISCONF
// meanwhile, and serves reads from what the node has applied.
func (n *Node) LogFailure() string {
	if p := n.store.failing.Load(); p != nil {
		return *p
	}
	return ""
}

// LogMemory is the memory the log takes: held, the bytes it holds now, and
// freed, the bytes of its buffers that have become garbage since the node
// started (a running sum; see logMem). The server leaves both out of the
// figure eviction compares with maxmemory, held up to a fixed allowance.
func (n *Node) LogMemory() (held, freed int64) {
	return n.mem.held(), n.mem.freed.Load()
}

// Halt stops proposing: whatever executes from now on never reaches the
// log. SHUTDOWN NOSAVE while a script runs uses it before killing the
// script, so that (as in Redis, which exits at once) nothing of the
// script persists. Close must still be called.
func (n *Node) Halt() { n.prop.stop() }

// Close stops the node: a leader with other voters hands leadership over
// first (transfer.go), after its units already executed are committed;
// else those are committed for up to closeDrain (none when Halt stopped
// proposing). Then Raft shuts down, the
// log is synced (appendfsync everysec, as Redis fsyncs its AOF on
// shutdown) and the stores close. The server calls it after its clients
// are gone, so nothing executes meanwhile.
func (n *Node) Close() error { return n.closeNode() }

// LinkAuth is the server's side of authenticating joins and links: its
// users and masteruser/masterauth, read at each connection (CONFIG SET
// and ACL changes apply to the next one). Safe without the engine lock.
type LinkAuth interface {
	// LinkRequired reports whether this node's clients must authenticate
	// (its default user has a password or is off); its links then must.
	LinkRequired() bool
	// LinkCredentials returns masteruser ("" is the default user) and
	// masterauth, what this node authenticates with.
	LinkCredentials() (user, pass string)
	// LinkKeys returns the SHA-256 (hex) of each password of user when
	// user is on and may run RAFT JOIN; nil otherwise.
	LinkKeys(user string) []string
}

// ErrClusterDown answers a command that found no leader in time.
var ErrClusterDown = errors.New("CLUSTERDOWN The cluster is down: no leader was elected in time")

// DEBUG.

// PowerCut simulates a power cut of the machine (DEBUG RAFT-POWER-CUT):
// what the log's files had not synced is overwritten with zeros, as the
// disk would have it, and the process dies of SIGKILL. It does not
// return.
func (n *Node) PowerCut() { n.powerCut() }

// InjectLogFailure makes every write to the log's files fail (tests).
func (n *Node) InjectLogFailure(on bool) { n.logFS.inject.Store(on) }

// InjectLogStall makes every write to the log's files take d first (a
// stalled disk; tests; 0 ends it).
func (n *Node) InjectLogStall(d time.Duration) { n.logFS.stall.Store(int64(d)) }
