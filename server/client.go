package server

import (
	"errors"
	"net"
	"runtime"
	"strings"
	"time"

	"limitdb/acl"
	"limitdb/door"
	"limitdb/engine"
	"limitdb/resp"
)

// client is one connection's state.
type client struct {
	s     *Server
	nc    net.Conn
	id    int64
	rd    *resp.Reader
	w     resp.Writer
	ctx   engine.Ctx
	db    int
	name  string
	lib   string
	libV  string
	born  time.Time
	last  time.Time
	lastC string

	tx  door.Tx     // WATCHes and the MULTI queue
	blk *blockState // blocked in a blocking command (blocked.go)
	// fwdBlk: waiting in a blocking command forwarded to the leader
	// (cluster_blocked.go); set and cleared under the engine lock
	fwdBlk *fwdWait
	// directs: answers to blocked clients this goroutine writes once it
	// has released the engine lock (blocked.go, sendDirects)
	directs  []*blockState
	closeNow bool // close after the replies written so far
	// unwatchLater: DISCARD, EXEC or UNWATCH answered while a script was
	// busy (without the engine lock) left WATCHes to drop (dispatch)
	unwatchLater bool

	// cluster (cluster_route.go)
	readonly    bool   // READONLY: a follower serves reads without a barrier
	barrier     bool   // this batch's read barrier is done
	leased      bool   // this batch found the leader's lease held (route)
	fwdWatching bool   // WATCHes were forwarded to the leader
	fwdOOM      bool   // a forwarded unit's follower was over its maxmemory
	fwdSeq      uint64 // units forwarded so far (their IDs: at most once)
	globalUnit  bool   // runs a cluster-wide change on the directory's leader (cluster_global.go)
	ticket      uint64 // the replies of this batch wait for this record
	batchStart  int    // where this batch's replies start in w.B
	batchN      int    // commands of this batch
	noEvict     bool
	noTouch     bool
	locked      bool

	user      *acl.User       // the ACL user; checked on every command (auth.go)
	authed    bool            // authenticated (or the default user needed no password)
	out       outQueue        // replies the kernel has not accepted yet (output.go)
	cur       *engine.Command // the command running (containPanic), else nil
	curBefore int             // len(w.B) when it started
	ps        *clientPS       // Pub/Sub: subscriptions, push buffer, CLIENT REPLY (pubsub.go); nil until used

	bs batchState // serveLoop's state between its calls
	// event loops (evloop.go): lc is the socket of a connection admitted
	// through a loop (nil otherwise); onLoop while its loop runs it; hand
	// and handFlush what a batch left to do when it left the loop
	lc        *loopConn
	onLoop    bool
	hand      handState
	handFlush bool
	offArgv   [][]byte    // a command to run once off the loop (runsOffLoop)
	parked    bool        // on its loop, its batch's replies wait for cl.ticket (park)
	disarmed  bool        // parked, and its socket out of the loop's read interest
	inRing    bool        // its replies are in this write pass's ring (sendTurn)
	loopBlk   *blockState // blocked while its loop keeps it (evLoop.block)
	calm      int         // batches in a row that did not need to leave the loop (calmBatches)
}

func (s *Server) newClient(nc net.Conn) *client {
	cl := &client{
		s:    s,
		nc:   nc,
		id:   s.nextID.Add(1),
		rd:   resp.NewReader(nc),
		born: time.Now(),
	}
	cl.w.Proto = 2
	cl.rd.Limits = &s.limits
	cl.ctx = engine.Ctx{E: s.eng, W: &cl.w, ACL: cl, Calls: cl, Pub: cl}
	cl.last = cl.born
	s.setDefaultAuth(cl)
	cl.initOutput()
	s.mu.Lock()
	s.clients[cl.id] = cl
	s.mu.Unlock()
	return cl
}

const flushAt = 256 * 1024

// serveClient reads requests and answers them until the connection ends.
// All requests that arrived together (a pipeline) run under one acquisition
// of the engine lock, and their replies leave in one write. h, when not
// nil, is what a batch run by an event loop left to do (continueOff).
func (s *Server) serveClient(cl *client, h *handState) {
	backToLoop := false
	defer func() {
		if backToLoop {
			return
		}
		if r := recover(); r != nil {
			s.connPanic(cl, r)
		}
		if cl.lc != nil {
			s.dropLoopClient(cl)
		} else {
			s.dropClient(cl)
		}
	}()
	if h != nil && !s.resumeOff(cl, h) {
		return
	}
	for {
		switch s.serveLoop(cl, &cl.bs) {
		case turnAgain:
			continue
		case turnYield: // idle and simple again: back to its loop
			if cl.lc.toLoop() {
				backToLoop = true
				cl.lc.lp.adopt(cl)
			}
		}
		return
	}
}

// connPanic contains a panic outside a command (one inside is contained
// by serveLoop, panic.go): the engine lock is given back and the panic
// logged; only this connection ends.
func (s *Server) connPanic(cl *client, r any) {
	if cl.locked {
		s.door.Unwind(0)
		s.door.Unlock()
		cl.locked = false
	}
	s.log.Error("connection panic contained", "client", cl.id, "panic", r)
}

// drainClosing gives a client closed after its replies (QUIT, a
// protocol error) up to 10 s to take them and its pushes.
func (cl *client) drainClosing() {
	if cl.ps != nil {
		cl.waitPushed(10 * time.Second)
	}
	cl.drain(10 * time.Second)
}

// resumeOff does, in the connection's goroutine, what serveLoop would have
// done after its batch had it not run on a loop; false when the
// connection is to end.
func (s *Server) resumeOff(cl *client, h *handState) bool {
	if s.down.Load() || !cl.flush() {
		return false
	}
	if h.blk != nil && !s.waitBlocked(cl, h.blk) {
		return false
	}
	if cl.closeNow {
		cl.drainClosing()
		return false
	}
	cl.bs.resume = true // go on with the requests already read
	return true
}

// turn is how serveLoop's call ended.
type turn int

const (
	turnEnd     turn = iota // close the connection
	turnAgain               // a command's panic was contained: call again
	turnYield               // loop: wait for input; goroutine: go back to the loop
	turnHandoff             // loop: the connection must wait: continueOff
	turnPark                // loop: the batch's replies wait for cl.ticket (parked)
	turnBlock               // loop: blocked (cl.loopBlk), the loop keeps it
)

// finishRelease is the end of a batch after the engine lock is released:
// the replies wait for the batch's commit (nothing this batch read or
// wrote may be revealed before it is committed), then settleBatch.
func (s *Server) finishRelease(cl *client, moved bool) {
	var err error
	if cl.ticket != 0 {
		err = s.node.Wait(cl.ticket)
	}
	s.settleBatch(cl, moved, err)
}

// settleBatch ends a batch whose ticket's outcome is known (err: lost,
// and its replies become -UNCERTAIN), then the Pub/Sub and blocked
// clients' follow-ups, in that order. finishRelease waits for the
// outcome; an event loop learns it without waiting (unparkSettled).
func (s *Server) settleBatch(cl *client, moved bool, err error) {
	ticket := cl.ticket
	if err != nil && !moved {
		cl.replaceBatch(err.Error())
	}
	cl.ticket = 0
	cl.calm++
	if cl.ps != nil {
		s.batchDone(cl, ticket, err)
	}
	cl.batchStart, cl.batchN = len(cl.w.B), 0
	if len(cl.directs) != 0 {
		s.sendDirects(cl)
	}
}

// batchState is the state of serveLoop that outlives a contained panic.
// pend holds the stats of the commands run under the current lock
// acquisition; the batch's time is shared among them when the lock is
// released (two clock reads per batch instead of two per command).
type batchState struct {
	pend   []*cmdStat
	t0     int64
	resume bool // a command panicked: go on with the requests already read
}

// serveLoop is serveClient's loop. It returns turnEnd when the connection
// is to end, and turnAgain after containing a panic in a command
// (panic.go); serveClient then calls it again, which goes on with the
// requests already buffered, under the same lock acquisition. On an event
// loop (cl.onLoop) it serves one read's requests and returns turnYield,
// or turnHandoff where it would wait (cl.hand says what is left).
func (s *Server) serveLoop(cl *client, b *batchState) (t turn) {
	defer func() {
		if cl.cur != nil { // a command was running: contain its panic
			if s.containPanic(cl, recover(), 0) {
				t, b.resume = turnAgain, true
			} else {
				t, b.resume = turnEnd, false
			}
		}
	}()
	// release ends the batch's hold of the engine lock. On a loop, a
	// batch whose commit has not arrived is parked: true, and the caller
	// returns parkTurn (the loop keeps it, or continueOff waits for the
	// commit).
	release := func() (parked bool) {
		s.chargeBatch(b.pend, b.t0)
		b.pend = b.pend[:0]
		moved := false
		if cl.ps != nil || s.ps.pending {
			moved = s.batchEnd(cl) // pushes to write, replies of a subscriber (pubsub.go)
		}
		s.door.Unlock()
		cl.locked = false
		cl.barrier, cl.leased = false, false
		if cl.onLoop && cl.ticket != 0 && !s.node.Committed(cl.ticket) {
			cl.hand.parked, cl.hand.moved = true, moved
			return true
		}
		s.finishRelease(cl, moved)
		return false
	}
	for {
		if !b.resume {
			inBefore := cl.rd.Buffered()
			err := cl.rd.Fill()
			s.noteRead(cl.rd.Buffered() - inBefore)
			if err != nil {
				if err == errWouldBlock {
					return turnYield
				}
				if errors.Is(err, resp.ErrQueryBufferLimit) {
					s.logQueryBufferClose(cl)
				}
				return turnEnd
			}
		}
		b.resume = false
		for {
			// unauthenticated connections get Redis's small request limits
			cl.rd.Unauth = !cl.authed && s.auth.needAuth.Load()
			var argv [][]byte
			var err error
			if cl.offArgv != nil { // a command left the loop before it ran
				argv, cl.offArgv = cl.offArgv, nil
			} else {
				argv, err = cl.rd.Next()
			}
			if err != nil {
				var pe *resp.ProtocolError
				if errors.As(err, &pe) {
					cl.w.Error("ERR " + pe.Error())
					cl.closeNow = true
				}
				break
			}
			if argv == nil {
				break
			}
			if !cl.locked {
				if !s.lockEngine(cl, argv) {
					if cl.closeNow {
						break // SHUTDOWN NOSAVE while busy
					}
					continue // answered BUSY (a script is running)
				}
				if s.down.Load() {
					// a SHUTDOWN has saved: nothing may run after its save
					s.door.Unlock()
					return turnEnd
				}
				cl.locked = true
				cl.batchStart, cl.batchN = len(cl.w.B), 0
				// one clock read per batch: every command that runs
				// under this acquisition of the lock shares its time
				cl.ctx.Now, b.t0 = s.door.Now()
				cl.last = time.UnixMilli(cl.ctx.Now)
			}
			cl.batchN++
			var st *cmdStat
			if cl.ps == nil || cl.ps.quiet == 0 {
				st = s.dispatch(cl, argv)
			} else {
				st = s.dispatchQuiet(cl, argv) // CLIENT REPLY OFF|SKIP (pubsub_cmds.go)
			}
			if st != nil {
				b.pend = append(b.pend, st)
			}
			if cl.offArgv != nil {
				release()
				return turnHandoff
			}
			if s.eng.BlockPending() && s.afterUnit(cl, argv) {
				// the command blocked the client (blocked.go)
				bs := cl.blk
				cl.calm = 0 // the goroutine waits for it: not back to the loop yet
				release()
				if cl.onLoop {
					if bs.onLoop {
						cl.loopBlk = bs
						return turnBlock
					}
					cl.hand.blk = bs
					return turnHandoff
				}
				if !cl.flush() || !s.waitBlocked(cl, bs) {
					return turnEnd
				}
				continue
			}
			if cl.closeNow || s.down.Load() {
				break
			}
			if len(cl.w.B) >= flushAt {
				if release() {
					return cl.parkTurn()
				}
				if t, done := cl.flushTurn(); done {
					return t
				}
			}
		}
		if cl.locked && release() {
			return cl.parkTurn()
		}
		if s.down.Load() {
			// the server is going away (SHUTDOWN): as Redis's exit, what
			// was not written yet is not (a killed script's reply)
			return turnEnd
		}
		if cl.onLoop {
			if cl.rd.Full() { // what Fill would find before its next read
				cl.flushLoop()
				s.logQueryBufferClose(cl)
				return turnEnd
			}
			if cl.closeNow || !cl.loopable() {
				return turnHandoff // resumeOff writes the replies (and drains)
			}
			// one read per turn, as Redis reads each ready client once
			// per iteration of its loop; the loop writes the replies
			// once every ready connection has had its turn (writeAll)
			return turnYield
		}
		if !cl.flush() {
			return turnEnd
		}
		if cl.closeNow {
			cl.drainClosing()
			return turnEnd
		}
		if cl.lc != nil && cl.calm >= calmBatches && cl.loopable() {
			return turnYield
		}
		// Let every other ready connection have its turn before reading
		// again, as Redis's event loop serves each readable client once per
		// iteration: without it a connection whose next request is already
		// there keeps its P while the others wait (low p50, long p99).
		runtime.Gosched()
	}
}

// logQueryBufferClose is Redis's line for a client closed at
// client-query-buffer-limit.
func (s *Server) logQueryBufferClose(cl *client) {
	s.log.Warn("closing client that reached max query buffer length", "client", cl.id)
}

// flushTurn writes the batch's replies: flush in a goroutine, flushLoop
// on a loop. done says serveLoop must return t (the connection ends, or
// leaves its loop because the kernel did not take everything).
func (cl *client) flushTurn() (t turn, done bool) {
	if !cl.onLoop {
		return turnEnd, !cl.flush()
	}
	if !cl.flushLoop() {
		return turnEnd, true
	}
	if cl.handFlush {
		cl.handFlush = false
		return turnHandoff, true
	}
	return 0, false
}

func (s *Server) dropClient(cl *client) {
	cl.nc.Close()
	if cl.fwdWatching || cl.fwdSeq != 0 {
		// the leader keeps the client's WATCHes and its row of the table
		// of executed units (at most once) until it is gone
		s.node.DropClient(uint64(cl.id))
	}
	if cl.ps != nil {
		s.dropSubscriber(cl) // before its writer stops: nobody writes to it any more
	}
	cl.stopOutput()
	if cl.blk != nil || len(cl.directs) != 0 {
		s.dropBlocked(cl)
	}
	if cl.tx.Watching() {
		s.door.Lock()
		cl.tx.Unwatch()
		s.door.Unlock()
	}
	s.mu.Lock()
	delete(s.clients, cl.id)
	s.mu.Unlock()
}

// connHandler runs a FlagConn command with the engine lock held.
type connHandler func(s *Server, cl *client, argv [][]byte)

var connHandlers = map[string]connHandler{}

// registerConn adds connection-level commands to the engine's command table
// (so COMMAND, arity checks and MULTI treat them like any other) and binds
// their handlers here.
func registerConn(cmd *engine.Command, h connHandler, subs ...connSub) {
	if !strings.Contains(cmd.Flags, "conn") {
		cmd.Flags += " conn"
	}
	for _, sub := range subs {
		if !strings.Contains(sub.cmd.Flags, "conn") {
			sub.cmd.Flags += " conn"
		}
		cmd.Subs = append(cmd.Subs, sub.cmd)
	}
	engine.Register(cmd)
	if h != nil {
		connHandlers[cmd.Name] = h
	}
	for _, sub := range subs {
		connHandlers[sub.cmd.Name] = sub.h
	}
}

type connSub struct {
	cmd *engine.Command
	h   connHandler
}

// dispatch runs or queues one request. The engine lock is held.
// cl.ctx.Now was set when the lock was taken (serveClient). It returns
// the stats entry of the command that ran (nil when none ran).
func (s *Server) dispatch(cl *client, argv [][]byte) *cmdStat {
	if cl.unwatchLater {
		cl.unwatchLater = false
		s.dropWatches(cl, true)
	}
	cl.ctx.DB = s.eng.DBs[cl.db]
	cmd := cl.ctx.Resolve(argv)
	if cmd == nil {
		if cl.tx.Active {
			cl.tx.Failed = true
		}
		cl.execArityAbort(argv)
		s.countRejected(argv)
		return nil
	}
	if cl.lc != nil && runsOffLoop(cl, cmd) {
		if cl.onLoop {
			cl.offArgv = argv
			return nil
		}
		cl.calm = 0 // it stays in its goroutine (calmBatches)
	}
	// Redis's processCommand order: the protected check, authentication,
	// ACL, then memory
	if cmd == debugCmd && !s.debugAllowed(cl) {
		s.reject(cl, cmd, errDebugNotAllowed)
		return nil
	}
	if msg := s.earlyRefusal(cl, cmd); msg != "" {
		s.reject(cl, cmd, msg)
		return nil
	}
	// the default user (all commands, keys, channels) costs this one field
	// read; a user with key patterns ~30 ns and no allocation (auth.go)
	if !cl.user.Free() {
		if msg, ok := s.permitted(cl, cmd, argv); !ok {
			if msg != "" {
				s.reject(cl, cmd, msg)
			}
			return nil
		}
	}
	// cluster mode's redirections (cluster_slots_route.go) come after
	// ACL and before the memory check, as in Redis's processCommand
	if s.clusterMode && s.slotRedirected(cl, cmd, argv) {
		return nil
	}
	if s.mem.limit != 0 {
		if s.rejectOOM(cl, cmd, argv) {
			return nil
		}
	} else {
		cl.ctx.OOM = false
	}
	cl.ctx.OOM = cl.ctx.OOM || cl.fwdOOM
	if s.rdb.denyWrites && s.rejectWrites(cl, cmd, argv, s.rdb.denyMsg, true) {
		return nil
	}
	if s.minReplicas && s.noGoodReplicas() && s.rejectWrites(cl, cmd, argv, errNoReplicas, false) {
		return nil
	}
	if cl.ps != nil && cl.w.Proto == 2 && cl.subscribed() && !allowedSubscribed(cmd) {
		s.reject(cl, cmd, errSubscribedOnly(cmd))
		return nil
	}
	if cl.tx.Active && !isTxnControl(cmd.Name) {
		cl.tx.Enqueue(argv)
		if !cl.queued() {
			return nil
		}
		cl.w.Status("QUEUED")
		return nil
	}
	return s.call(cl, cmd, argv)
}

// earlyRefusal is processCommand's NOAUTH and no_multi checks, which
// dispatch and scriptBusy both make before ACL's: the refusal, or "".
func (s *Server) earlyRefusal(cl *client, cmd *engine.Command) string {
	switch {
	case !cl.authed && s.auth.needAuth.Load() && !cmd.Has(engine.FlagNoAuth):
		return errNoAuth
	case cl.tx.Active && cmd.Has(engine.FlagNoMulti):
		return errNoMulti
	}
	return ""
}

// revealsState names the connection-level commands whose replies show
// replicated state: keys and values (INFO's keyspace and counters, DEBUG
// DIGEST, DIGEST-VALUE, OBJECT…), whether a WATCHed key changed (EXEC's
// abort), settings and users (CONFIG GET, ACL's listings). On a leader an
// effect they see may not be committed yet, so their replies wait for
// the client's ticket (cluster/DESIGN.md), as a GET's does; the others
// (PING, CLIENT, ROLE, SLOWLOG…) show the connection or the node.
var revealsState = map[string]bool{
	"info": true, "debug": true, "exec": true, "config|get": true,
	"acl|getuser": true, "acl|list": true, "acl|users": true, "acl|dryrun": true,
}

// isTxnControl names the commands that run at once inside MULTI.
func isTxnControl(name string) bool {
	switch name {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return true
	}
	return false
}

// call executes a resolved command and counts it. It returns the command's
// stats entry; serveClient charges it its share of the batch's time (a
// caller that ignores it, like EXEC, leaves the time to the outer command).
func (s *Server) call(cl *client, cmd *engine.Command, argv [][]byte) *cmdStat {
	before := len(cl.w.B)
	cl.lastC = cmd.Name
	cl.cur, cl.curBefore = cmd, before // for containPanic
	var t0 int64
	if s.slowTimed(cmd) {
		t0 = s.slowStart()
	}
	if cl.onLoop && cmd.Has(engine.FlagScript) {
		s.scriptOnLoop(cl, cmd, argv)
	} else {
		s.exec(cl, cmd, argv)
	}
	if t0 != 0 {
		s.slowEnd(cl, argv, t0)
	}
	cl.cur = nil
	st := s.statOf(cmd)
	st.calls++
	s.stats.commands.Add(1)
	if len(cl.w.B) > before && cl.w.B[before] == '-' {
		st.failed++
		if !cl.ctx.NoErrorStats {
			s.countError(cl.w.B[before+1:])
		}
	}
	cl.ctx.NoErrorStats = false
	return st
}

// scriptOnLoop runs a script command on its connection's event loop,
// under the loop's watchdog (script_loop.go); the deferred end also runs
// when the script panics.
func (s *Server) scriptOnLoop(cl *client, cmd *engine.Command, argv [][]byte) {
	lp := cl.lc.lp
	lp.scriptStart(cl)
	defer lp.scriptEnd()
	s.exec(cl, cmd, argv)
}

// exec is call's execution of cmd: a connection command's handler, or
// the door, where route (cluster_route.go) says it runs.
func (s *Server) exec(cl *client, cmd *engine.Command, argv [][]byte) {
	if s.node != nil && s.eng.SeveralGroups() && clusterWide(cmd, argv) && s.routeGlobal(cl, cmd, argv) {
		return // it ran on the directory's leader (cluster_global.go)
	}
	if cmd.Has(engine.FlagConn) {
		cl.ctx.Cmd = cmd
		// (a connection command runs here unless it changes cluster-wide
		// settings; EXEC and WATCH place themselves, multi.go)
		if !changesShared(cmd, argv) || s.route(cl, cmd, argv) {
			recs := s.door.Records
			connHandlers[cmd.Name](s, cl, argv)
			if s.gated() && (s.door.Records != recs || revealsState[cmd.Name]) {
				// it changed replicated state (ACL, CONFIG, DEBUG RELOAD…),
				// or its reply shows the engine's: the reply waits for the
				// commit of what it changed or read, like a write's or a read's
				cl.ticket = s.node.Ticket()
			}
		}
	} else if s.node != nil && nodeLocalRead(cmd) {
		s.execNodeLocal(cl, cmd, argv) // RL.STATS, RL.TOP (rl_stats_cluster.go)
	} else if s.route(cl, cmd, argv) {
		cl.ctx.DB = s.eng.DBs[cl.db]
		s.door.Exec(&cl.ctx, cmd, argv)
		if s.gated() {
			cl.ticket = s.node.Ticket()
		}
	}
}

// ScriptCalled implements engine.ScriptCalls: a command a script ran,
// counted as Redis's call() counts it (no time: the script's includes it).
func (cl *client) ScriptCalled(cmd *engine.Command, errReply string) {
	s := cl.s
	st := s.statOf(cmd)
	st.calls++
	if errReply != "" {
		st.failed++
		s.countError([]byte(errReply))
	}
}

// ScriptRejected implements engine.ScriptCalls: a command a script could
// not run (scriptCall's refusals).
func (cl *client) ScriptRejected(cmd *engine.Command, errReply string) {
	if cmd != nil {
		cl.s.statOf(cmd).rejected++
	}
	cl.s.countError([]byte(errReply))
}

// reject answers err to a command refused before it runs (NOAUTH,
// NOPERM): it aborts a MULTI in progress and counts as a rejected call.
// errNoMulti answers a command flagged no_multi (SAVE, SHUTDOWN) inside
// MULTI, as Redis's processCommand does.
const errNoMulti = "ERR Command not allowed inside a transaction"

func (s *Server) reject(cl *client, cmd *engine.Command, err string) {
	if cmd.Name == "exec" && cl.tx.Active {
		// Redis's rejectCommand: a refused EXEC discards the transaction
		// (execCommandAbort), whatever refused it
		err = errExecAbort + err
		s.endTx(cl, true)
	} else if cl.tx.Active {
		cl.tx.Failed = true
	}
	cl.w.Error(err)
	s.statOf(cmd).rejected++
	s.countError([]byte(err))
}

func (s *Server) countRejected(argv [][]byte) {
	s.stats.totalErrorReply++
	cmd := engine.Lookup(argv[0])
	if cmd != nil && len(cmd.Subs) > 0 && len(argv) >= 2 {
		// a known subcommand's arity error counts for the subcommand; an
		// unknown subcommand counts for no command (as in Redis)
		cmd = cmd.Sub(argv[1])
	}
	if cmd != nil {
		st := s.stats.cmdStats[cmd.Name]
		if st == nil {
			st = &cmdStat{}
			s.stats.cmdStats[cmd.Name] = st
		}
		st.rejected++
		s.stats.errorStats["ERR"]++
	} else {
		s.stats.errorStats["ERR"]++
	}
}

func (s *Server) countError(b []byte) {
	s.stats.totalErrorReply++
	end := 0
	for end < len(b) && b[end] != ' ' && b[end] != '\r' {
		end++
	}
	s.stats.errorStats[string(b[:end])]++
}
