package server

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"time"

	"limitdb/cluster"
	"limitdb/engine"
)

// How commands meet the cluster (cluster/DESIGN.md). A node that serves
// (the leader, or a cluster of one) executes every unit itself; its
// replies wait for their commit at the end of the batch (release in
// serveLoop). A follower forwards every unit that may write (commands
// flagged write, scripts, EXEC's block, WATCH) to the leader and answers
// once it has applied the result; its reads are linearizable (a read
// barrier per batch) unless the connection said READONLY. Without a
// node (tests, embedding) none of this runs.

// Where a command runs: place is the one decision, for every command
// that may need the cluster. route asks it for engine commands and for
// the connection commands that change cluster-wide settings (exec in
// client.go) and acts on it; EXEC and WATCH ask it themselves after
// their own checks (multi.go), as they forward their own way.
type placement uint8

const (
	runHere     placement = iota // execute on this node
	runOnLeader                  // this node follows: the leader runs it
	refused                      // answered here: cl has the error (CLUSTERDOWN, a failed read barrier)
)

// place decides where cmd runs (the lock is held; it may be released
// and taken again to confirm the lease or pass a read barrier, which are
// part of the decision).
//   - Without a node, and on a serving leader whose lease holds: here. The
//     lease is checked once per batch (cl.leased) and for EXEC's block,
//     whose commands run under it; without it in time, CLUSTERDOWN; a
//     leader that stopped leading meanwhile decides as a follower.
//   - On a follower, what may write runs on the leader: engine commands
//     flagged write, SCRIPT and FUNCTION KILL, EXEC's block, WATCH, the
//     connection commands that change cluster-wide settings
//     (changesShared). PUBLISH and the other connection commands run
//     here; reads run here after one read barrier per batch, unless
//     READONLY or the log cannot be written.
func (s *Server) place(cl *client, cmd *engine.Command, argv [][]byte) placement {
	if s.node == nil {
		return runHere
	}
	return s.placeInCluster(cl, cmd, argv)
}

func (s *Server) placeInCluster(cl *client, cmd *engine.Command, argv [][]byte) placement {
	if s.node.Serving() {
		// LeaseHeld reads the clock (85 ns on the loaded machine): once
		// per batch, and once for EXEC's block
		if cmd.Has(engine.FlagConn) {
			if cmd.Name != "exec" || s.node.LeaseHeld() || s.leaseConfirmed(cl) {
				return runHere
			}
		} else if cl.leased || cl.ctx.InMulti {
			return runHere
		} else if s.node.LeaseHeld() || s.leaseConfirmed(cl) {
			cl.leased = true
			return runHere
		}
		if s.node.Serving() {
			return refused // CLUSTERDOWN (leaseConfirmed)
		}
		// it no longer leads: on as a follower
	}
	switch {
	case cmd.Has(engine.FlagConn):
		if cmd.Name == "exec" || cmd.Name == "watch" || changesShared(cmd, argv) {
			return runOnLeader
		}
		return runHere
	case cmd.Has(engine.FlagPubSub):
		// PUBLISH: a message is not state; it is published where it is
		// sent and fanned out from there (pubsub.go)
		return runHere
	case cmd.IsWrite() || killsScript(cmd):
		return runOnLeader
	case cl.readonly || cl.barrier || s.rdb.logFailure != "":
		// (a node whose log cannot be written serves reads from what it
		// applied: its own writes are refused, the others' reach it
		// only if its log takes them)
		return runHere
	}
	s.door.Unlock()
	leaderMs, err := s.node.ReadBarrier()
	s.door.Lock()
	cl.ctx.Now, _ = s.door.Now()
	if err != nil {
		cl.w.Error(err.Error())
		return refused
	}
	if leaderMs != 0 {
		// the batch's reads judge deadlines (expiry, RL.PEEK, RL.INFO) by
		// the leader's time, not this node's clock: a read here and one
		// on the leader right after never disagree (READONLY reads keep
		// this node's clock)
		cl.ctx.Now = leaderMs
	}
	cl.barrier = true
	return runHere
}

// route acts on place's decision for a command forwarded as itself (not
// EXEC's block or WATCH): it returns true when the command is to be
// executed here; else cl has its reply (the leader's, or the refusal).
func (s *Server) route(cl *client, cmd *engine.Command, argv [][]byte) bool {
	// (inlined: a server without a node takes no call)
	return s.node == nil || s.routeInCluster(cl, cmd, argv)
}

func (s *Server) routeInCluster(cl *client, cmd *engine.Command, argv [][]byte) bool {
	switch s.placeInCluster(cl, cmd, argv) {
	case runHere:
		return true
	case refused:
		return false
	}
	if cmd.Has(engine.FlagBlocking) {
		return s.forwardBlocking(cl, cmd, argv) // cluster_blocked.go
	}
	return s.forward(cl, [][][]byte{argv})
}

// resumeNow gives cl's batch its time again after the engine lock was
// released to wait for the leader: this node's clock, unless the batch
// passed a read barrier, whose reads keep the leader's time it carried.
func (s *Server) resumeNow(cl *client) {
	if cl.barrier && s.follower() {
		return
	}
	cl.ctx.Now, _ = s.door.Now()
}

// killsScript: SCRIPT KILL and FUNCTION KILL go where scripts run, the
// leader (a follower forwards every script), and stop the script its
// clients get BUSY from (LockForwarded).
func killsScript(cmd *engine.Command) bool {
	return cmd.Name == "script|kill" || cmd.Name == "function|kill"
}

// leaseConfirmed: this leader's process did not run for a while (SIGSTOP,
// starvation) and its lease may have run out unseen, so before it serves
// from memory Raft confirms its leadership (cluster/lease.go), with the
// lock released (on the event loop too: it happens after a pause only,
// and takes a heartbeat's round trip). It reports whether the node still
// leads; when it does not, the node has stopped serving, or, still
// serving after leader-wait-ms, cl got CLUSTERDOWN.
func (s *Server) leaseConfirmed(cl *client) bool {
	s.door.Unlock()
	ok := s.node.ConfirmLease()
	s.door.Lock()
	cl.ctx.Now, _ = s.door.Now()
	if !ok && s.node.Serving() {
		cl.w.Error(cluster.ErrClusterDown.Error())
	}
	return ok && s.node.Serving()
}

// forward sends cmds (one command, or MULTI … EXEC) to the leader and
// appends the reply (of the last command) to cl's replies. It returns true
// when the node became the leader meanwhile: the caller executes instead.
func (s *Server) forward(cl *client, cmds [][][]byte) bool {
	cl.fwdSeq++
	u := &cluster.Unit{Client: uint64(cl.id), Seq: cl.fwdSeq, DB: cl.db, Proto: cl.w.Proto, User: cl.user.Name, Watching: cl.fwdWatching, OOM: cl.ctx.OOM, Cmds: cmds}
	s.door.Unlock()
	data, err := s.node.Forward(u)
	s.door.Lock()
	s.resumeNow(cl)
	if errors.Is(err, cluster.ErrLocal) {
		return true
	}
	if err != nil {
		cl.w.Error(err.Error())
		return false
	}
	db, n := binary.Uvarint(data)
	if n <= 0 {
		cl.w.Error("ERR malformed reply from the leader")
		return false
	}
	cl.db = int(db)
	cl.w.B = append(cl.w.B, data[n:]...)
	return false
}

// fwdKey names a forwarded client on the leader.
type fwdKey struct{ session, client uint64 }

// ExecForwarded implements cluster.Executor: it runs a follower client's
// unit as that client (its database, protocol and ACL user; its WATCHes
// kept between units of the same session) with the engine lock held, and
// returns the database the client ends in (uvarint) followed by the reply
// of the unit's last command (a MULTI block's EXEC).
func (s *Server) ExecForwarded(u *cluster.Unit) (out []byte, blocked cluster.BlockedUnit) {
	key := fwdKey{u.Session, u.Client}
	if s.staleUnit(key, u.Seq) { // (cluster_blocked.go)
		out = binary.AppendUvarint(nil, uint64(u.DB))
		return append(out, "-"+errLateUnit+"\r\n"...), nil
	}
	cl := s.fwdClients[key]
	if cl == nil {
		cl = s.newFwdClient()
		if u.Watching {
			// the WATCHes were taken on a former leader (or dropped with
			// the session): they cannot be checked, so the client's
			// EXEC aborts as if a key had changed; its other commands
			// run as they would
			cl.tx.Lose()
		}
	} else if !u.Watching && cl.tx.Watching() {
		// the follower's client holds no WATCH through this session, so
		// the ones kept here are stale: an EXEC refused BUSY
		// (LockForwarded) did not reach EXEC, which drops them
		cl.tx.Unwatch()
	}
	cl.nc = forwardedConn{u.Peer}
	cl.db = u.DB
	cl.w.Proto = u.Proto
	cl.fwdOOM = u.OOM
	cl.w.B = cl.w.B[:0]
	if user := s.auth.acl.User(u.User); user != nil {
		cl.user, cl.authed = user, true
	} else {
		cl.user, cl.authed = s.auth.defaultUser.Load(), false
	}
	cl.ctx.Now, _ = s.door.Now()
	mark := 0
	defer func() {
		// contain a panic as a connection would: this runs in the
		// forwarding server's goroutine, where it would end the process
		r := recover()
		if r == nil {
			return
		}
		if cl.cur == nil {
			cl.cur = &engine.Command{Name: "forwarded"}
		}
		s.containPanic(cl, r, 0)
		cl.tx.Reset()
		delete(s.fwdClients, key)
		out = binary.AppendUvarint(nil, uint64(cl.db))
		out = append(out, cl.w.B[min(mark, len(cl.w.B)):]...)
	}()
	for _, argv := range u.Cmds {
		mark = len(cl.w.B)
		s.dispatch(cl, argv)
		if w := cl.ctx.Block; w != nil && u.Rank != 0 {
			w.Rank = u.Rank // sent again after a leader change
		}
		if s.eng.BlockPending() && s.afterUnit(cl, argv) {
			// a blocking command blocked (cluster_blocked.go)
			cl.blk.fwdKey, cl.blk.fwdSeq = key, u.Seq
			s.fwdClients[key] = cl
			b := &fwdBlocked{s: s, cl: cl, key: key, seq: u.Seq, bs: cl.blk}
			s.holdFwdUnit(b)
			return nil, b
		}
	}
	s.settleAsync() // its keyspace events, once committed (pubsub.go)
	out = binary.AppendUvarint(nil, uint64(cl.db))
	out = append(out, cl.w.B[mark:]...)
	if cl.tx.Watching() || cl.tx.Active {
		s.fwdClients[key] = cl
	} else if s.fwdClients[key] != nil {
		delete(s.fwdClients, key)
	}
	return out, nil
}

// DropSession implements cluster.Executor: forwarded clients of a session
// (one client when client != 0; every session when session == 0, after
// the engine was rebuilt) are forgotten and their WATCHes released.
func (s *Server) DropSession(session, client uint64) {
	s.door.Lock()
	defer s.door.Unlock()
	match := func(k fwdKey) bool {
		return session == 0 || (k.session == session && (client == 0 || k.client == client))
	}
	for k, b := range s.blocking.fwdUnits {
		if match(k) {
			delete(s.blocking.fwdUnits, k)
			if bs := b.bs; !bs.done.Load() && b.cl.blk == bs {
				s.endBlock(b.cl, bs) // blocked: dropped, unanswered
			}
		}
	}
	for k, cl := range s.fwdClients {
		if match(k) {
			cl.tx.Reset()
			delete(s.fwdClients, k)
		}
	}
}

// newFwdClient is a client for forwarded units: its connection is a
// forwardedConn, which only names the follower's link (SLOWLOG, ACL LOG
// and the rest of what reads a client's address work as for any client).
func (s *Server) newFwdClient() *client {
	cl := &client{s: s, id: s.nextID.Add(1), nc: forwardedConn{}}
	cl.ctx = engine.Ctx{E: s.eng, W: &cl.w, ACL: cl, Calls: cl, Pub: cl}
	return cl
}

// forwardExec sends a follower's MULTI block (with its WATCH state) to
// the leader. It returns true when the node became the leader meanwhile.
func (s *Server) forwardExec(cl *client) bool {
	cmds := make([][][]byte, 0, len(cl.tx.Queue)+2)
	cmds = append(cmds, [][]byte{[]byte("MULTI")})
	cmds = append(cmds, cl.tx.Queue...)
	cmds = append(cmds, [][]byte{[]byte("EXEC")})
	local := s.forward(cl, cmds)
	if !local {
		cl.tx.Reset()
		cl.fwdWatching = false
	}
	return local
}

// replaceBatch replaces the replies of the batch just run by msg, one per
// command: its units were executed under a leadership that ended before
// they were committed, and the engine was rebuilt from the log, so no
// reply of the batch (a read may have seen those units) can be trusted.
func (cl *client) replaceBatch(msg string) {
	if cl.batchStart > len(cl.w.B) {
		cl.batchStart = len(cl.w.B)
	}
	cl.w.B = cl.w.B[:cl.batchStart]
	for i := 0; i < cl.batchN; i++ {
		cl.w.Error(msg)
	}
}

// unwatchForwarded releases the WATCHes a follower's client holds on the
// leader (UNWATCH, DISCARD, RESET, an aborted EXEC).
func (s *Server) unwatchForwarded(cl *client) {
	if cl.fwdWatching {
		cl.fwdWatching = false
		s.node.DropClient(uint64(cl.id))
	}
}

// connless reports a client without a connection of its own: a
// forwarded unit's, which answers through its unit.
func (cl *client) connless() bool {
	if cl.nc == nil {
		return true
	}
	_, fwd := cl.nc.(forwardedConn)
	return fwd
}

// forwardedConn stands for the connection of a forwarded unit's client,
// which is on a follower: it carries no bytes (the replies go back in the
// unit's answer), only the forwarding link's address.
type forwardedConn struct{ peer net.Addr }

func (forwardedConn) Read([]byte) (int, error)         { return 0, io.EOF }
func (forwardedConn) Write(b []byte) (int, error)      { return len(b), nil }
func (forwardedConn) Close() error                     { return nil }
func (forwardedConn) LocalAddr() net.Addr              { return fwdAddr{} }
func (forwardedConn) SetDeadline(time.Time) error      { return nil }
func (forwardedConn) SetReadDeadline(time.Time) error  { return nil }
func (forwardedConn) SetWriteDeadline(time.Time) error { return nil }
func (c forwardedConn) RemoteAddr() net.Addr {
	if c.peer == nil {
		return fwdAddr{}
	}
	return c.peer
}

type fwdAddr struct{}

func (fwdAddr) Network() string { return "forwarded" }
func (fwdAddr) String() string  { return "forwarded:0" }
