package server

import (
	"errors"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"limitdb/engine"
	"limitdb/internal/netpoll"
	"limitdb/resp"
)

// Event loops (io-model loop): plain-TCP connections are served by a
// goroutine waiting on its own epoll set (one, unless LIMITDB_LOOPS says
// more), as Redis's event loop serves its clients: every turn reads each
// ready socket once, runs the complete requests it holds and then writes
// every served connection's replies (writeAll: one io_uring_enter for
// several, sendTurn, or a write(2)).
// A batch whose commit has not arrived is parked on the loop: its
// replies wait, unsent, and the node's settled hook wakes the loop, which
// writes them in its write pass (park, unparkSettled). A connection
// leaves its loop for a goroutine of its own whenever it must wait
// otherwise (see DESIGN.md, "Event loops"): a blocking command, Pub/Sub,
// another connection's script past busy-reply-threshold (script_loop.go),
// output the kernel did not take, a close after the replies, a
// follower's forwarding. Such a connection goes back to its loop when it
// is simple again.

// errWouldBlock: a loop connection's socket has no input now.
var errWouldBlock = netpoll.ErrWouldBlock

// loopConn is the socket of a connection admitted through an event loop.
// While the loop owns it (or a goroutine finishing a parked batch) the
// socket is the raw descriptor fd; while a goroutine serves the
// connection it is a Go connection nc (net.FileConn of a duplicate).
// fd, nc and raw change only in the connection's owner, under mu; the
// owner reads them without it, others (CLIENT KILL, the Pub/Sub flusher,
// whoever answers a blocked client) under mu.
type loopConn struct {
	lp           *evLoop
	cl           *client
	laddr, raddr net.Addr

	mu     sync.Mutex
	fd     int
	nc     net.Conn
	raw    syscall.RawConn
	rdl    time.Time // read deadline set while fd was the socket
	closed bool
	killed atomic.Bool // closed (the loop's lock-free view of closed)
	lfd    int32       // fd as the loop's map knows it (loop goroutine only)
}

// newLoopConn takes the socket of tc: a duplicate of its descriptor
// (same open file: non-blocking, keepalive kept), tc itself closed, which
// takes it out of Go's poller.
func newLoopConn(lp *evLoop, tc *net.TCPConn) (*loopConn, error) {
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var derr error
	if err := raw.Control(func(f uintptr) { fd, derr = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	lc := &loopConn{lp: lp, fd: fd, laddr: tc.LocalAddr(), raddr: tc.RemoteAddr()}
	tc.Close()
	return lc, nil
}

// Read is the reader's input: one non-blocking read(2) on the loop,
// the Go connection's read in a goroutine. Owner only.
func (lc *loopConn) Read(b []byte) (int, error) {
	if lc.nc != nil {
		return lc.goRead(b)
	}
	return netpoll.Read(lc.fd, b)
}

// goRead is the Go connection's read (a goroutine serves it) made as
// net.Conn's Read makes it, waiting in Go's poller for input and
// honouring the read deadline, but with a raw non-blocking read(2)
// (netpoll.Read): with one P, the runtime's system-call bookkeeping around
// each read kept sysmon polling every 20 µs (EVALSHA P=1, whose clients
// goroutines serve: 0.026 sysmon sleeps per call against 0.002, 10 % of
// the process's CPU samples on a loaded machine).
func (lc *loopConn) goRead(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var err error
	if rerr := lc.raw.Read(func(fd uintptr) bool {
		n, err = netpoll.Read(int(fd), b)
		return err != errWouldBlock
	}); rerr != nil {
		return 0, rerr
	}
	return n, err
}

// Write is the output queue's blocking write (output.go, writeLoop).
// A loop's connection has nothing queued (it leaves the loop first), but
// a Pub/Sub flusher or a blocked client's answer may queue output for it
// in the moment before it leaves: that write waits for writability here.
func (lc *loopConn) Write(b []byte) (int, error) {
	lc.mu.Lock()
	if nc := lc.nc; nc != nil || lc.closed {
		lc.mu.Unlock()
		if nc == nil {
			return 0, net.ErrClosed
		}
		return nc.Write(b)
	}
	defer lc.mu.Unlock()
	done := 0
	for done < len(b) {
		n, err := unix.Write(lc.fd, b[done:])
		if n > 0 {
			done += n
		}
		switch {
		case err == unix.EINTR:
		case err == unix.EAGAIN:
			unix.Poll([]unix.PollFd{{Fd: int32(lc.fd), Events: unix.POLLOUT}}, 1000)
		case err != nil:
			return done, err
		}
	}
	return done, nil
}

// Close closes the Go connection, or, while the loop owns the socket,
// asks the loop to drop the connection (only the owner closes fd, so a
// descriptor number is never reused under a read in progress).
func (lc *loopConn) Close() error {
	lc.mu.Lock()
	if lc.closed {
		lc.mu.Unlock()
		return nil
	}
	lc.closed = true
	lc.killed.Store(true)
	nc := lc.nc
	lc.mu.Unlock()
	if nc != nil {
		return nc.Close()
	}
	lc.lp.kill(lc.cl)
	return nil
}

// shut releases the socket for good. Owner only.
func (lc *loopConn) shut() {
	lc.mu.Lock()
	lc.closed = true
	if lc.fd >= 0 {
		unix.Close(lc.fd) // no other descriptor of it: leaves the epoll set too
		lc.fd = -1
	}
	nc := lc.nc
	lc.mu.Unlock()
	if nc != nil {
		nc.Close()
	}
}

func (lc *loopConn) LocalAddr() net.Addr  { return lc.laddr }
func (lc *loopConn) RemoteAddr() net.Addr { return lc.raddr }

func (lc *loopConn) SetDeadline(t time.Time) error {
	lc.SetWriteDeadline(t)
	return lc.SetReadDeadline(t)
}

// SetReadDeadline applies to the Go connection, or is kept for it while
// the loop owns the socket (a blocked client's answer may move it before
// the client's goroutine exists: blocked.go).
func (lc *loopConn) SetReadDeadline(t time.Time) error {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.nc != nil {
		return lc.nc.SetReadDeadline(t)
	}
	lc.rdl = t
	return nil
}

func (lc *loopConn) SetWriteDeadline(t time.Time) error {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.nc != nil {
		return lc.nc.SetWriteDeadline(t)
	}
	return nil
}

// SyscallConn: the output path's non-blocking write and CLIENT LIST's fd.
func (lc *loopConn) SyscallConn() (syscall.RawConn, error) { return loopRaw{lc}, nil }

// loopRaw is the syscall.RawConn of a loopConn, whichever its socket.
type loopRaw struct{ lc *loopConn }

func (r loopRaw) Control(f func(fd uintptr)) error {
	lc := r.lc
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.raw != nil {
		return lc.raw.Control(f)
	}
	if lc.fd < 0 {
		return net.ErrClosed
	}
	f(uintptr(lc.fd))
	return nil
}

func (r loopRaw) Read(f func(fd uintptr) bool) error { return errors.ErrUnsupported }

// Write runs f once: the callers' f (rawWrite) never waits.
func (r loopRaw) Write(f func(fd uintptr) bool) error {
	lc := r.lc
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.raw != nil {
		return lc.raw.Write(f)
	}
	if lc.fd < 0 || lc.closed {
		return net.ErrClosed
	}
	f(uintptr(lc.fd))
	return nil
}

// toGoroutine makes the socket a Go connection (a duplicate registered
// with Go's poller, the read deadline kept). Owner only, off the loop's
// epoll set.
func (lc *loopConn) toGoroutine() error {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.fd < 0 {
		return nil
	}
	f := os.NewFile(uintptr(lc.fd), "tcp")
	nc, err := net.FileConn(f)
	f.Close()
	lc.fd = -1
	if err != nil {
		lc.closed = true
		return err
	}
	raw, err := nc.(syscall.Conn).SyscallConn()
	if err != nil {
		nc.Close()
		lc.closed = true
		return err
	}
	lc.nc, lc.raw = nc, raw
	if lc.closed {
		nc.Close()
	} else if !lc.rdl.IsZero() {
		nc.SetReadDeadline(lc.rdl)
	}
	return nil
}

// toLoop takes the socket back from the Go connection. Owner only; false
// when the connection was closed.
func (lc *loopConn) toLoop() bool {
	lc.mu.Lock()
	if lc.closed || lc.nc == nil {
		lc.mu.Unlock()
		return false
	}
	fd := -1
	var derr error
	err := lc.raw.Control(func(f uintptr) { fd, derr = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0) })
	if err != nil || derr != nil {
		lc.mu.Unlock()
		return false
	}
	old := lc.nc
	lc.nc, lc.raw, lc.fd, lc.rdl = nil, nil, fd, time.Time{}
	lc.mu.Unlock()
	old.Close()
	return true
}

// evLoop is one event loop: its epoll set (with an eventfd to wake it),
// the connections it owns (by descriptor) and what other goroutines hand
// it (adopt, kill).
type evLoop struct {
	s     *Server
	ep    *netpoll.Epoll
	conns map[int32]*client // loop goroutine only
	// writes: connections whose replies wait for the turn's end (loop
	// goroutine only)
	writes []*client
	// parked: connections whose batch's replies wait for its commit
	// (loop goroutine only); parkedN their count, read by the commit
	// side (settled) to know whether to wake the loop
	parked  []*client
	settled []*client
	parkedN atomic.Int32
	// answers: blocked connections of this loop whose answer is in their
	// blockState (endBlock): local when the answerer ran on this loop,
	// else handed in under mu (mu.answers) with a wake-up
	answers []*client
	// polled: this turn's poll of the parked connections has begun;
	// repoll: one parked after it, whose commit may have landed before
	// parkedN counted it (the commit side did not wake the loop), so the
	// next wait does not sleep
	polled, repoll bool
	// awake: the loop is between two epoll_waits, so it looks at its
	// parked connections before it sleeps; missed: a commit landed
	// meanwhile (settled), and the loop's next wait does not sleep. The
	// commit side sets missed, then reads awake; the loop clears awake,
	// then reads missed: one of the two sees the other (sequentially
	// consistent atomics), so no commit is left unseen. A commit that
	// lands in the loop's own yield (run: Raft's leader loop ran on this
	// thread) or while the loop runs its turn costs no eventfd write and
	// read: serial BLPOP/LPUSH had 2 of each per exchange for it.
	awake, missed atomic.Bool
	// ring sends a turn's replies (sendTurn; nil: write(2) each); fds,
	// bufs, res, batched and sent are its per-turn scratch
	ring          *netpoll.SendRing
	fds           []int32
	bufs          [][]byte
	res           []int32
	batched, sent []bool
	// script: the watchdog of the script the loop runs (script_loop.go)
	script loopScript

	mu      sync.Mutex
	adopts  []*client
	kills   []*client
	handed  []*client // answered blocked connections (answered)
	taken   bool      // a script past the threshold holds the loop (takeOver)
	stopped bool      // the server closed
	exited  bool      // run returned: the descriptors are closed
}

// loopFor returns the loop a new connection joins (round robin), starting
// the loops on first use: one, or LIMITDB_LOOPS of them (measurements).
func (s *Server) loopFor() *evLoop {
	s.loopsOnce.Do(func() {
		n := 1
		if v, err := strconv.Atoi(os.Getenv("LIMITDB_LOOPS")); err == nil && v > 0 {
			n = v
		}
		for i := 0; i < n; i++ {
			lp, err := newEvLoop(s)
			if err != nil {
				s.log.Warn("io-model loop: " + err.Error())
				break
			}
			s.loops = append(s.loops, lp)
		}
		if s.replicated() && len(s.loops) != 0 {
			s.node.OnSettled(s.settled)
		}
	})
	if len(s.loops) == 0 {
		return nil
	}
	return s.loops[s.loopNext.Add(1)%uint64(len(s.loops))]
}

func newEvLoop(s *Server) (*evLoop, error) {
	ep, err := netpoll.NewEpoll()
	if err != nil {
		return nil, err
	}
	lp := &evLoop{s: s, ep: ep, conns: map[int32]*client{}}
	// LIMITDB_SEND_RING=0 (environment, for measurements and tests):
	// write(2) per connection, as where the kernel has no io_uring
	if os.Getenv("LIMITDB_SEND_RING") != "0" {
		if r, err := netpoll.NewSendRing(sendRingEntries); err == nil {
			lp.ring = r
		}
	}
	go lp.run()
	go func() {
		<-s.stop
		lp.mu.Lock()
		lp.stopped = true
		lp.wake()
		lp.mu.Unlock()
	}()
	return lp, nil
}

func (lp *evLoop) wake() { lp.ep.Wake() }

// sendRingEntries: a turn with more connections to write is sent in
// several calls (netpoll.SendRing).
const sendRingEntries = 256

// admitLoop serves a new plain-TCP connection from an event loop. It
// returns false when the connection cannot join one (then the caller
// serves it from a goroutine).
func (s *Server) admitLoop(nc net.Conn) (*client, bool) {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nil, false
	}
	lp := s.loopFor()
	if lp == nil {
		return nil, false
	}
	lc, err := newLoopConn(lp, tc)
	if err != nil {
		return nil, false
	}
	cl := s.newClient(lc)
	lc.cl, cl.lc = cl, lc
	s.wg.Add(1) // the client's life, until dropLoopClient
	lp.adopt(cl)
	return cl, true
}

// adopt hands cl to the loop (a new connection, or one given back).
func (lp *evLoop) adopt(cl *client) {
	lp.mu.Lock()
	if lp.stopped {
		lp.mu.Unlock()
		lp.s.dropLoopClient(cl)
		return
	}
	if lp.taken { // the loop is stuck in a script: a goroutine serves it
		lp.mu.Unlock()
		lp.s.offLoopBusy(cl)
		return
	}
	lp.adopts = append(lp.adopts, cl)
	lp.wake()
	lp.mu.Unlock()
}

// kill asks the loop to drop cl (its connection was closed by another
// goroutine).
func (lp *evLoop) kill(cl *client) {
	lp.mu.Lock()
	if !lp.exited { // else it was dropped before the loop ended
		lp.kills = append(lp.kills, cl)
		lp.wake()
	}
	lp.mu.Unlock()
}

// dropLoopClient ends a connection admitted through a loop.
func (s *Server) dropLoopClient(cl *client) {
	cl.lc.shut()
	s.dropClient(cl)
	s.wg.Done()
}

// loopPasses bounds the passes of a turn's end (run): the turn's records
// are proposed (Node.TurnEnd), the loop yields so that Raft's leader loop
// writes them on this thread, and the batches committed meanwhile are
// settled and go on in the same turn.
const loopPasses = 2

func (lp *evLoop) run() {
	events := make([]netpoll.Event, 256)
	for {
		wait := -1
		lp.awake.Store(false)
		if lp.repoll || lp.missed.Load() && len(lp.parked) != 0 {
			// a connection parked after the turn's poll, or a commit
			// that landed after it (settled did not wake the loop)
			wait = 0
		}
		lp.repoll, lp.polled = false, false
		n, err := lp.ep.Wait(events, wait)
		lp.awake.Store(true)
		if err != nil && err != unix.EINTR {
			lp.s.log.Warn("io-model loop: epoll_wait: " + err.Error())
			time.Sleep(time.Millisecond)
		}
		replicated, node := lp.s.replicated(), lp.s.node
		if replicated {
			node.TurnStart()
		}
		woken := false
		for i := 0; i < n; i++ {
			if lp.ep.IsWake(&events[i]) {
				woken = true
				continue
			}
			if cl := lp.conns[events[i].Fd]; cl != nil {
				lp.serve(cl)
			}
		}
		if woken && lp.service() {
			lp.ep.Close()
			if lp.ring != nil {
				lp.ring.Close()
			}
			return
		}
		if len(lp.answers) != 0 {
			lp.takeAnswers()
		}
		if len(lp.parked) != 0 {
			lp.settleParked()
		}
		// The turn's records go to the log as one entry (TurnEnd: on a
		// cluster of one, through Raft's apply queue, no submitter
		// goroutine), and the loop yields at once: the Apply made Raft's
		// leader loop ready on this P, so it runs here — writes the
		// entry, and a sole voter's log store acknowledges it
		// (cluster/propose.go, stored) — before the loop sleeps; without
		// the yield it waited for another thread to steal it or for
		// sysmon (futex, nanosleep), and the commit for the eventfd
		// round trip. The batches it committed are settled and go on in
		// this turn (their replies join its writes), and what they
		// executed is proposed the same way, at most loopPasses times.
		// SET P=1 (redis-benchmark, 50 clients, A/B in alternation) went
		// from 0.55 to 0.27 ms mean, BLPOP/LPUSH ping-pong (loadgen, A/B
		// against main) 1.16-1.18 x the exchanges at 0.79-0.83 x the CPU.
		for pass := 0; replicated && node.TurnEnd() && pass < loopPasses; pass++ {
			runtime.Gosched()
			if len(lp.parked) == 0 {
				break
			}
			node.TurnStart()
			lp.settleParked()
		}
		lp.writeAll()
	}
}

// service takes what other goroutines handed the loop; true when the
// loop is to end (the server closed and no connection is left).
func (lp *evLoop) service() bool {
	lp.ep.Drain()
	lp.mu.Lock()
	adopts, kills := lp.adopts, lp.kills
	lp.adopts, lp.kills = nil, nil
	lp.answers = append(lp.answers, lp.handed...)
	clear(lp.handed)
	lp.handed = lp.handed[:0]
	lp.mu.Unlock()
	for _, cl := range adopts {
		lc := cl.lc
		lc.mu.Lock()
		closed := lc.closed
		lc.mu.Unlock()
		if closed || lp.ep.Add(int32(lc.fd)) != nil {
			lp.s.dropLoopClient(cl)
			continue
		}
		lc.lfd = int32(lc.fd)
		lp.conns[lc.lfd] = cl
		if cl.rd.Buffered() != 0 {
			// requests already read (a parked batch's pipeline): the
			// socket may never be readable again for them
			cl.bs.resume = true
			lp.serve(cl)
		}
	}
	lp.writeAll()
	for _, cl := range kills {
		if fd := cl.lc.lfd; lp.conns[fd] == cl {
			delete(lp.conns, fd)
			lp.s.dropLoopClient(cl)
		}
	}
	// the server closed: once no connection is left (a connection off the
	// loop that comes back finds it stopped: adopt drops it)
	lp.mu.Lock()
	defer lp.mu.Unlock()
	lp.exited = lp.stopped && len(lp.conns) == 0 && len(lp.adopts) == 0
	return lp.exited
}

// serve gives cl its turn: one read, the complete requests run, their
// replies written (serveLoop in loop mode).
func (lp *evLoop) serve(cl *client) {
	s := lp.s
	fd := cl.lc.lfd
	if cl.lc.killed.Load() {
		// closed by another goroutine (CLIENT KILL, timeout): its kill
		// may wait behind this turn's events; nothing more runs
		delete(lp.conns, fd)
		s.dropLoopClient(cl)
		return
	}
	defer func() {
		if r := recover(); r != nil {
			s.connPanic(cl, r)
			delete(lp.conns, fd)
			s.dropLoopClient(cl)
		}
	}()
	if cl.parked {
		// input while its replies wait for their commit: not read until
		// they are sent (Redis's order: replies in request order, and a
		// client that pipelines past them is not served ahead of them);
		// the socket leaves the epoll set's interest until then
		if !cl.disarmed {
			cl.disarmed = true
			lp.ep.Disarm(fd)
		}
		return
	}
	if cl.loopBlk != nil {
		lp.readBlocked(cl)
		return
	}
	cl.onLoop = true
	t := turnAgain
	if s.follower() {
		t = turnHandoff // a follower forwards: that waits
	}
	for t == turnAgain {
		t = s.serveLoop(cl, &cl.bs)
	}
	switch t {
	case turnYield:
		if len(cl.w.B) != 0 {
			lp.writes = append(lp.writes, cl)
		}
	case turnEnd:
		cl.onLoop = false
		delete(lp.conns, fd)
		s.dropLoopClient(cl)
	case turnHandoff:
		lp.handoff(cl)
	case turnPark:
		lp.park(cl)
	case turnBlock:
		cl.onLoop = false
		if cl.hand.parked {
			lp.park(cl) // the replies before the blocking command
		} else if len(cl.w.B) != 0 {
			lp.writes = append(lp.writes, cl)
		}
	}
}

// readBlocked reads the input of a client blocked on the loop: kept in
// its query buffer and run after the answer, as Redis does; a read error
// means the client went away (its waiter is dropped: dropClient).
func (lp *evLoop) readBlocked(cl *client) {
	s := lp.s
	inBefore := cl.rd.Buffered()
	err := cl.rd.Fill()
	s.noteRead(cl.rd.Buffered() - inBefore)
	if err == nil || err == errWouldBlock {
		return
	}
	if errors.Is(err, resp.ErrQueryBufferLimit) {
		s.logQueryBufferClose(cl)
	}
	delete(lp.conns, cl.lc.lfd)
	s.dropLoopClient(cl)
}

// unloopBlocked makes a client blocked on its loop one that its
// goroutine waits for (waitBlocked), before it leaves the loop: an answer
// given meanwhile stays in the blockState (done), where waitBlocked finds
// it, and takeAnswers skips the client.
func (s *Server) unloopBlocked(cl *client) {
	s.lockDoor()
	bs := cl.loopBlk
	bs.onLoop = false
	s.door.Unlock()
	cl.loopBlk, cl.hand.blk = nil, bs
}

// answered hands the loop a client blocked on it whose answer is ready
// (endBlock, the engine lock held). a is the client whose command
// answered it: when it runs on this loop, so does this call, and the
// loop takes the answer at its turn's end without a wake-up.
func (lp *evLoop) answered(rc, a *client) {
	if a != nil && a.onLoop && a.lc.lp == lp {
		lp.answers = append(lp.answers, rc)
		return
	}
	lp.mu.Lock()
	if !lp.exited {
		lp.handed = append(lp.handed, rc)
		lp.wake()
	}
	lp.mu.Unlock()
}

// takeAnswers gives the answered blocked clients their answer: it joins
// their replies and waits for its commit (parked) like a batch's, then
// the requests read while they were blocked run. A client whose earlier
// replies are still parked keeps its answer until they are sent; one to
// run its command again elsewhere (reroute: this node stopped leading)
// goes to a goroutine. Loop goroutine only.
func (lp *evLoop) takeAnswers() {
	s := lp.s
	keep := 0
	for i := 0; i < len(lp.answers); i++ { // serve may answer more
		rc := lp.answers[i]
		lp.answers[i] = nil
		if lp.conns[rc.lc.lfd] != rc || rc.loopBlk == nil {
			continue // dropped meanwhile
		}
		if rc.parked {
			lp.answers[keep] = rc
			keep++
			continue
		}
		bs := rc.loopBlk
		rc.loopBlk = nil
		if bs.reroute || s.follower() {
			rc.hand.blk = bs
			lp.handoff(rc) // waitBlocked finds it answered
			continue
		}
		start := len(rc.w.B)
		rc.w.B = append(rc.w.B, bs.out.B...)
		rc.ticket = bs.ticket
		rc.batchStart, rc.batchN = start, 1
		freeBlockState(bs)
		if rc.ticket != 0 {
			rc.hand.parked = true
			lp.park(rc) // unparkSettled polls it in this turn
			continue
		}
		s.settleBatch(rc, false, nil)
		rc.bs.resume = true
		lp.serve(rc)
	}
	lp.answers = lp.answers[:keep]
}

// parkTurn is serveLoop's turn for a loop batch whose commit has not
// arrived (release parked it): the loop keeps the connection, its
// replies unsent (turnPark), unless its Pub/Sub follow-ups (batchDone
// writes its and its receivers' pushes) need a goroutine.
// A deep batch (a pipeline) is parked too: it was handed to a goroutine
// while a submitter goroutine cut the entries, but since the loop's turn
// commits (run), parking it measured 0.93–1.76 × the throughput at P=16
// and 0.79–0.98 × the CPU (bench/RESULTS.md, "Server measurements",
// "Parked batches").
func (cl *client) parkTurn() turn {
	if cl.ps != nil {
		return turnHandoff
	}
	return turnPark
}

// park keeps cl on the loop while its batch's replies wait for
// cl.ticket: the commit side wakes the loop (settled), which sends them
// in its write pass (unparkSettled). Against handing the connection to
// a goroutine that waited for the commit (and the hysteresis that kept
// write-heavy connections there), see bench/RESULTS.md, "Server
// measurements", "Parked batches".
func (lp *evLoop) park(cl *client) {
	cl.onLoop = false
	cl.parked = true
	lp.parked = append(lp.parked, cl)
	// before polling the ticket again: a commit that lands after the
	// poll below sees parkedN and wakes the loop
	lp.parkedN.Add(1)
	lp.repoll = lp.repoll || lp.polled
}

// settled is the node's settled hook: it wakes the loops that have
// parked connections (once per advance of the committed sequence) and
// sleep; a loop that is awake polls them before it sleeps (missed).
func (s *Server) settled() {
	for _, lp := range s.loops {
		if lp.parkedN.Load() != 0 {
			lp.missed.Store(true)
			if !lp.awake.Load() {
				lp.wake()
			}
		}
	}
}

// settleParked goes on with the parked connections whose commits have
// arrived (unparkSettled), then takes the blocked clients' answers that
// their batches gave.
func (lp *evLoop) settleParked() {
	lp.unparkSettled()
	if len(lp.answers) != 0 {
		lp.takeAnswers()
	}
}

// unparkSettled ends the parked batches whose ticket's outcome is known:
// their replies (or -UNCERTAIN for a lost ticket, settleBatch) join the
// turn's writes, and what was read after them runs. Loop goroutine only.
func (lp *evLoop) unparkSettled() {
	s := lp.s
	lp.polled = true
	// every commit noted before this is seen by the poll below
	lp.missed.Store(false)
	keep := lp.parked[:0]
	for _, cl := range lp.parked {
		if lp.conns[cl.lc.lfd] != cl { // dropped meanwhile
			lp.parkedN.Add(-1)
			continue
		}
		err, ok := s.node.Settled(cl.ticket)
		if !ok {
			keep = append(keep, cl)
			continue
		}
		lp.parkedN.Add(-1)
		cl.parked = false
		if err != nil {
			cl.hand.err = err
		}
		lp.settled = append(lp.settled, cl)
	}
	clear(lp.parked[len(keep):])
	lp.parked = keep
	for i, cl := range lp.settled {
		lp.settled[i] = nil
		h := cl.hand
		cl.hand = handState{}
		s.settleBatch(cl, h.moved, h.err)
		if cl.disarmed {
			cl.disarmed = false
			lp.ep.Arm(cl.lc.lfd)
		}
		if cl.closeNow {
			lp.handoff(cl) // QUIT, a protocol error: nothing after it runs (resumeOff drains)
			continue
		}
		if cl.loopBlk != nil {
			// blocked after the batch: nothing more runs until its answer
			if len(cl.w.B) != 0 {
				lp.writes = append(lp.writes, cl)
			}
			continue
		}
		// what serveLoop does after a batch: the requests already read
		// run (a batch cut at flushAt), the replies join the turn's
		// writes, or the connection leaves (closing, no longer loopable)
		cl.bs.resume = true
		lp.serve(cl)
	}
	lp.settled = lp.settled[:0]
}

// writeAll writes the replies of the turn's connections after every
// ready connection has run its requests, as Redis's beforeSleep writes
// its clients' replies (handleClientsWithPendingWrites): against writing
// each connection's replies right after its batch (A/B in one
// interleaved loadgen run, 50 connections), PING P=1 1.05 × the
// throughput, 0.89 × the p99 and 0.94 × the CPU per command; GET P=1
// 1.04, 0.94, 0.96; P=16 even. Two or more connections are sent with
// one io_uring_enter(2) (sendTurn; netpoll.SendRing says why), one with a
// write(2). A connection whose replies the kernel did not take whole
// leaves the loop (its goroutine queues the rest).
func (lp *evLoop) writeAll() {
	ring := lp.ring != nil && len(lp.writes) > 1
	if ring {
		lp.sendTurn()
	}
	for i, cl := range lp.writes {
		lp.writes[i] = nil
		var ok bool
		if ring && lp.batched[i] {
			ok = lp.sent[i]
		} else {
			ok = cl.flushLoop()
		}
		switch {
		case !ok:
			delete(lp.conns, cl.lc.lfd)
			cl.onLoop = false
			lp.s.dropLoopClient(cl)
		case cl.handFlush:
			cl.handFlush = false
			if cl.loopBlk != nil {
				lp.s.unloopBlocked(cl)
			}
			lp.handoff(cl)
		}
	}
	lp.writes = lp.writes[:0]
}

// handoff sends cl off the loop: continueOff goes on in a goroutine.
func (lp *evLoop) handoff(cl *client) {
	cl.onLoop = false
	fd := cl.lc.lfd
	delete(lp.conns, fd)
	lp.ep.Del(fd)
	go lp.s.continueOff(cl)
}

// handState is what a loop connection's batch left to do when it left
// the loop (serveLoop, loop mode).
type handState struct {
	parked bool        // its replies wait for cl.ticket (release)
	moved  bool        // batchEnd moved them to the push buffer
	err    error       // the parked ticket was lost (unparkSettled)
	blk    *blockState // it blocked: waitBlocked follows the flush
}

// continueOff finishes, in a goroutine, what a loop connection could not
// do on the loop (the commit wait of a Pub/Sub client's batch, a blocked
// command, …) and goes on serving the connection (serveClient) until it
// is simple again: loopable, and calmBatches batches in a row that did
// not need to leave the loop.
func (s *Server) continueOff(cl *client) {
	h := cl.hand
	cl.hand = handState{}
	if h.parked {
		s.finishRelease(cl, h.moved)
	}
	if err := cl.lc.toGoroutine(); err != nil {
		s.dropLoopClient(cl)
		return
	}
	s.serveClient(cl, &h)
}

// runsOffLoop says whether cmd, about to run on a loop, waits for the
// cluster with the engine lock released (waitsForCluster): it runs in
// the connection's own goroutine, so that the loop keeps serving its
// other clients. A script runs on the loop (script_loop.go).
func runsOffLoop(cl *client, cmd *engine.Command) bool {
	// (queued: not run yet) a cluster-wide change of several groups waits
	// for the directory and its pushes (cluster_global.go)
	return !cl.tx.Active && (waitsForCluster[cmd.Name] || cl.s.eng.SeveralGroups() && mayBeClusterWide(cmd))
}

// waitsForCluster are the commands that wait for the cluster with the
// engine lock released: a membership change until the leader committed
// it (Raft may take up to its 10 s enqueue timeout per change where the
// leader cannot change its configuration yet, and a joining node asks
// again until it is added), a transfer until another node leads. On a
// loop every other connection of the loop would wait with them
// (TestClusterMembershipOffLoop: a PING waited out a RAFT TRANSFER to a
// stopped voter, ~2 s).
// RL.STATS and RL.TOP (their CLUSTER forms) wait up to a second for the other nodes;
// CLUSTER MEET and the slot assignments for other groups (the directory,
// cluster_meet.go: a few seconds at most).
var waitsForCluster = map[string]bool{"raft|join": true, "raft|remove": true, "raft|transfer": true, "rl.stats": true, "rl.top": true,
	"cluster|meet": true, "cluster|addslots": true, "cluster|addslotsrange": true, "cluster|delslots": true, "cluster|delslotsrange": true,
	"cluster|migration": true}

// calmBatches: batches in a row that did not need to leave the loop (no
// blocking command, no BUSY) before a connection served by a goroutine
// goes back to its loop: sending a client back after each batch costs a
// dup, two epoll_ctl and a wake-up of the loop each way.
const calmBatches = 16

// loopable: nothing of the connection waits or is written by anyone
// else, so its loop may serve it.
func (cl *client) loopable() bool {
	s := cl.s
	return cl.ps == nil && cl.blk == nil && cl.fwdBlk == nil && len(cl.directs) == 0 &&
		cl.out.pending.Load() == 0 && !cl.closeNow && s.executes()
}

// flushLoop is flush for a connection its loop owns: one write attempt;
// what the kernel did not take stays in cl.w.B and cl.handFlush asks the
// caller to leave the loop (flush, in the goroutine, queues it and
// applies the output limits). False when the connection is to close.
func (cl *client) flushLoop() bool {
	b := cl.w.B
	if len(b) == 0 {
		return true
	}
	n, ok := cl.writeNow()
	return cl.keepRest(b, n, ok)
}

// keepRest keeps in cl.w.B what a loop write of b did not send (n bytes
// were), and asks the caller to hand the connection off (handFlush).
func (cl *client) keepRest(b []byte, n int, ok bool) bool {
	if ok && n < len(b) {
		cl.w.B = b[:copy(b, b[n:])]
		cl.handFlush = true
	}
	return ok
}

// sendTurn sends the replies of lp.writes with one io_uring_enter
// (netpoll.SendRing) and records each connection's outcome in lp.sent, as
// flushLoop would have returned it; lp.batched says which connections
// it took (a connection whose socket a goroutine holds, or that the ring
// did not send, is left to flushLoop). Each taken connection's lc.mu
// is held across the call, as loopRaw.Write holds it across its
// write(2): a connection handed to a goroutine in this turn gives up the
// loop's descriptor there (toGoroutine closes it), and with a second P
// (a background save) that could happen under the send, the number
// reused by another socket. No one else holds two of these locks, and
// a connection listed twice is locked once (inRing).
func (lp *evLoop) sendTurn() {
	lp.fds, lp.bufs, lp.res = lp.fds[:0], lp.bufs[:0], lp.res[:0]
	lp.batched, lp.sent = lp.batched[:0], lp.sent[:0]
	for _, cl := range lp.writes {
		// a connection listed twice (it blocked with replies to send,
		// and its answer came in the same turn) is sent once: its
		// second entry finds nothing left, as flushLoop would
		take := cl.inRing
		if lc := cl.lc; !take && len(cl.w.B) != 0 {
			lc.mu.Lock()
			if take = lc.raw == nil && lc.fd >= 0 && !lc.closed; take {
				cl.inRing = true
				lp.fds = append(lp.fds, int32(lc.fd))
				lp.bufs = append(lp.bufs, cl.w.B)
			} else {
				lc.mu.Unlock()
			}
		}
		lp.batched = append(lp.batched, take)
		lp.sent = append(lp.sent, true)
	}
	lp.res = slices.Grow(lp.res[:0], len(lp.fds))[:len(lp.fds)]
	err := lp.ring.Send(lp.fds, lp.bufs, lp.res)
	clear(lp.bufs)
	j := 0
	for i, cl := range lp.writes {
		if !lp.batched[i] || !cl.inRing {
			continue
		}
		cl.inRing = false
		cl.lc.mu.Unlock()
		res := lp.res[j]
		j++
		if res == netpoll.NotSent {
			lp.batched[i] = false
			continue
		}
		n := 0
		var werr error
		switch {
		case res >= 0:
			n = int(res)
		case res != -int32(unix.EAGAIN):
			werr = syscall.Errno(-res)
		}
		b := cl.w.B
		lp.sent[i] = cl.keepRest(b, n, cl.wrote(n, werr))
	}
	if err != nil {
		lp.s.log.Warn("io-model loop: io_uring: " + err.Error() + "; replies are written with write(2) from now on")
		lp.ring.Close()
		lp.ring = nil
	}
}
