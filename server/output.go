package server

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"limitdb/internal/netpoll"
)

// outQueue is a connection's output beyond what the kernel accepted at
// once. The connection's goroutine writes each batch's replies with one
// write attempt that never blocks (tryWrite); whatever the kernel did not
// take is handed here, and a writer goroutine (started on first need)
// pushes it with blocking writes while the connection goroutine goes on
// reading and running commands, as Redis keeps serving a client whose
// output is pending. pending is what Redis calls the output buffer: bytes
// of replies produced and not yet accepted by the kernel. It drives both
// client-output-buffer-limit (disconnect) and client-output-pause-size
// (stop reading until the client drains: memory stays bounded even with
// the limits off, which Redis does not do).
type outQueue struct {
	raw     syscall.RawConn // nil when the conn is not a socket (TLS, pipes): all output is queued
	wbuf    []byte          // argument of rawWrite
	wn      int
	werr    error
	writeFn func(fd uintptr) bool // cl.rawWrite, bound once (no allocation per write)

	mu     sync.Mutex
	chunks [][]byte // guarded by mu
	closed bool     // guarded by mu: the writer has exited, chunks are dropped
	// writing counts the chunks the writer took and has not finished:
	// with chunks, CLIENT LIST's oll (it showed 0 beside 16 MB of omem
	// while the writer sat in a blocked write holding every chunk)
	writing atomic.Int64
	pending atomic.Int64
	wake    chan struct{} // cap 1: chunks were queued
	drained chan struct{} // cap 1: the writer wrote something (or died)
	done    chan struct{} // closed when the connection ends
	started bool          // connection goroutine only
	dead    atomic.Bool   // a write failed: the connection is gone
	wrote   atomic.Int64  // unix ns of the writer's last successful write

	softSince int64 // unix s when the soft limit was first reached (0 = under it)
}

// obufLimit is one client class's client-output-buffer-limit.
type obufLimit struct{ hard, soft, seconds int64 }

// obuf classes in Redis's order (normal, slave, pubsub)
var obufClasses = []string{"normal", "slave", "pubsub"}

const obufDefault = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"

// parseObuf checks a CONFIG SET client-output-buffer-limit value against
// cur (the current value) and returns the new full value: classes not
// named keep their limits. Texts are Redis 7.0's.
func parseObuf(cur, v string) (string, string) {
	lim := map[string][3]string{}
	cf := strings.Split(cur, " ")
	for i := 0; i+3 < len(cf); i += 4 {
		lim[cf[i]] = [3]string{cf[i+1], cf[i+2], cf[i+3]}
	}
	var f []string
	if v != "" { // Redis splits on single spaces: "a  b" has an empty word
		f = strings.Split(v, " ")
	}
	if len(f)%4 != 0 {
		return "", "Wrong number of arguments in buffer limit configuration."
	}
	for i := 0; i < len(f); i += 4 {
		class := strings.ToLower(f[i])
		if class == "replica" {
			class = "slave"
		}
		if _, ok := lim[class]; !ok {
			return "", "Invalid client class specified in buffer limit configuration."
		}
		hard, ok1 := parseMemory(f[i+1])
		soft, ok2 := parseMemory(f[i+2])
		secs, ok3 := softSeconds(f[i+3])
		if !ok1 || !ok2 || !ok3 {
			return "", "Error in hard, soft or soft_seconds setting in buffer limit configuration."
		}
		lim[class] = [3]string{strconv.FormatUint(hard, 10), strconv.FormatUint(soft, 10), strconv.FormatInt(secs, 10)}
	}
	var b []string
	for _, c := range obufClasses {
		l := lim[c]
		b = append(b, c, l[0], l[1], l[2])
	}
	return strings.Join(b, " "), ""
}

// softSeconds parses soft_seconds as Redis 7.0 does: strtoll (empty is 0,
// overflow saturates) stored in a C int, so 4294967297 is 1 and an
// overflow becomes -1, which is refused with the negatives.
func softSeconds(v string) (int64, bool) {
	n := int64(0)
	if v != "" {
		var err error
		n, err = strconv.ParseInt(v, 10, 64)
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			err = nil // n is already saturated
		}
		if err != nil {
			return 0, false
		}
	}
	n = int64(int32(n))
	return n, n >= 0
}

// applyObuf stores the normal and pubsub classes' limits where the
// writers read them: a subscribed client is of the pubsub class (Redis's
// getClientType), every other one of the normal class (limitdb has no
// replica connections).
func (s *Server) applyObuf(v string) {
	f := strings.Split(v, " ")
	for i := 0; i+3 < len(f); i += 4 {
		var l obufLimit
		hard, _ := strconv.ParseUint(f[i+1], 10, 64)
		soft, _ := strconv.ParseUint(f[i+2], 10, 64)
		l.hard, l.soft = clampInt64(hard), clampInt64(soft)
		l.seconds, _ = strconv.ParseInt(f[i+3], 10, 64)
		switch f[i] {
		case "normal":
			s.obufNormal.Store(&l)
		case "pubsub":
			s.ps.obuf.Store(&l)
		}
	}
}

func clampInt64(u uint64) int64 {
	if u > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(u)
}

// initOutput prepares the non-blocking write path when nc is a socket.
// Other connections (TLS, pipes) have no non-blocking write: all their
// output goes through the writer goroutine, so that the limits and the
// pause apply to them too.
func (cl *client) initOutput() {
	if sc, ok := cl.nc.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			cl.out.raw = raw
			cl.out.writeFn = cl.rawWrite
		}
	}
}

// rawWrite is one write(2) of out.wbuf on the non-blocking socket. It
// returns true so that RawConn.Write never waits for writability.
func (cl *client) rawWrite(fd uintptr) bool {
	for {
		n, err := netpoll.RawWrite(int(fd), cl.out.wbuf)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			n, err = 0, nil
		}
		if n < 0 {
			n = 0
		}
		cl.out.wn, cl.out.werr = n, err
		return true
	}
}

// tryWrite writes what the kernel accepts of b now, without blocking.
func (cl *client) tryWrite(b []byte) (int, error) {
	cl.out.wbuf = b
	err := cl.out.raw.Write(cl.out.writeFn)
	cl.out.wbuf = nil
	if err != nil {
		return 0, err
	}
	return cl.out.wn, cl.out.werr
}

// flush sends the replies accumulated in cl.w. Fast path (nothing
// pending): one write attempt that the kernel takes whole; the buffer is
// reused. Otherwise the rest joins the output queue, the output limits are
// checked, and the goroutine pauses while pending exceeds
// client-output-pause-size. It returns false when the connection is to
// be closed. The engine lock is not held.
func (cl *client) flush() bool {
	if len(cl.w.B) == 0 {
		return !cl.out.dead.Load()
	}
	b := cl.w.B
	if cl.out.raw != nil && cl.out.pending.Load() == 0 {
		n, ok := cl.writeNow()
		if !ok || n == len(b) {
			return ok
		}
		b = b[n:]
	}
	// the queue owns b from here; the next replies go to a new buffer
	cl.w.B = nil
	cl.enqueue(b)
	return cl.checkOutput()
}

// writeNow is one non-blocking write of the replies in cl.w.B. It returns
// what the kernel took, and false when the connection is gone; when it
// took everything the buffer is kept for the next replies.
func (cl *client) writeNow() (int, bool) {
	n, err := cl.tryWrite(cl.w.B)
	return n, cl.wrote(n, err)
}

// wrote accounts for a write of cl.w.B that took n bytes (err: the
// connection is gone, false); when it took everything the buffer is kept
// for the next replies.
func (cl *client) wrote(n int, err error) bool {
	b := cl.w.B
	cl.s.noteWrite(n)
	if err != nil {
		return false
	}
	if n == len(b) {
		if cap(b) > 1<<20 {
			cl.w.B = nil
		} else {
			cl.w.B = b[:0]
		}
		cl.out.softSince = 0
	}
	return true
}

func (cl *client) enqueue(b []byte) {
	q := &cl.out
	if !q.started {
		q.started = true
		q.wake = make(chan struct{}, 1)
		q.drained = make(chan struct{}, 1)
		q.done = make(chan struct{})
		go cl.writeLoop()
	}
	q.mu.Lock()
	if !q.closed {
		q.chunks = append(q.chunks, b)
		q.pending.Add(int64(len(b)))
		cl.s.outTotal.Add(int64(len(b)))
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// writeLoop writes the queued chunks in order with blocking writes until
// the connection ends.
func (cl *client) writeLoop() {
	q := &cl.out
	defer func() {
		// what was never written leaves the server-wide total
		q.mu.Lock()
		q.closed = true
		q.chunks = nil
		q.writing.Store(0)
		cl.s.outTotal.Add(-q.pending.Swap(0))
		q.mu.Unlock()
		select {
		case q.drained <- struct{}{}:
		default:
		}
	}()
	for {
		q.mu.Lock()
		chunks := q.chunks
		q.chunks = nil
		q.writing.Store(int64(len(chunks)))
		q.mu.Unlock()
		if len(chunks) == 0 {
			select {
			case <-q.wake:
				continue
			case <-q.done:
				return
			}
		}
		for _, c := range chunks {
			n, err := cl.nc.Write(c)
			cl.s.noteWrite(n)
			q.pending.Add(-int64(len(c)))
			q.writing.Add(-1)
			cl.s.outTotal.Add(-int64(len(c)))
			if n > 0 {
				q.wrote.Store(time.Now().UnixNano())
			}
			if err != nil {
				q.dead.Store(true)
				cl.nc.Close()
				break
			}
		}
		select {
		case q.drained <- struct{}{}:
		default:
		}
		if q.dead.Load() {
			return
		}
	}
}

// drain waits, at most limit, until the writer has sent everything queued:
// a client closed after its replies (QUIT, a protocol error) gets them,
// as Redis's CLIENT_CLOSE_AFTER_REPLY does. A client over an output limit
// is closed without this, its replies discarded, as in Redis.
func (cl *client) drain(limit time.Duration) {
	q := &cl.out
	if !q.started {
		return
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	for q.pending.Load() > 0 && !q.dead.Load() {
		select {
		case <-q.drained:
		case <-t.C:
			return
		}
	}
}

// lastInteraction is when the client last sent a command or took some of
// its replies (Redis's lastinteraction, which writes update too): a client
// slowly reading a long reply is not idle for the timeout parameter.
func (c *client) lastInteraction() time.Time {
	if w := c.out.wrote.Load(); w > c.last.UnixNano() {
		return time.Unix(0, w)
	}
	return c.last
}

// stopOutput ends the writer goroutine (the connection is closing).
func (cl *client) stopOutput() {
	if cl.out.started {
		close(cl.out.done)
	}
}

// checkOutput applies client-output-buffer-limit to the pending output
// (Redis's checkClientOutputBufferLimits: hard limit at once, soft limit
// when continuously over it for more than its seconds), then pauses
// reading while pending exceeds client-output-pause-size, re-checking the
// limits every second (a paused client that stays over a soft limit is
// closed as Redis closes one that keeps sending). Limits are checked at
// flush points (end of a batch, or every flushAt bytes of replies), so a
// client can pass a limit by up to flushAt plus one reply before it is
// closed, where Redis checks after each reply.
func (cl *client) checkOutput() bool {
	q := &cl.out
	var tick *time.Timer
	for {
		if q.dead.Load() {
			return false
		}
		used := q.pending.Load()
		if used > 0 && cl.overObufLimit(used) {
			cl.s.log.Warn("Client " + strings.TrimSuffix(string(cl.appendInfo(nil, time.Now(), false)), "\n") +
				" scheduled to be closed ASAP for overcoming of output buffer limits.")
			return false
		}
		if !cl.s.shouldPause(used) {
			if tick != nil {
				tick.Stop()
			}
			return true
		}
		if tick == nil {
			tick = time.NewTimer(time.Second)
		} else {
			tick.Reset(time.Second)
		}
		select {
		case <-q.drained:
		case <-tick.C:
		}
	}
}

// pauseMin and pauseTotalFactor: besides its own bound, a connection with
// at least pauseMin unsent bytes is paused while all connections together
// hold more than pauseTotalFactor × client-output-pause-size (256 MB by
// default), so that many non-reading clients cannot multiply the bound.
// A client that reads drains under pauseMin and is not held back by the
// others; 1 MB is several times what one batch leaves in a kernel socket
// buffer of a reading client (TestHostileInputs, many pipelines case).
const (
	pauseMin         = 1 << 20
	pauseTotalFactor = 4
)

// shouldPause says whether a client with used unsent bytes stops reading.
func (s *Server) shouldPause(used int64) bool {
	bound := s.outPause.Load()
	return used > bound || (used >= pauseMin && s.outTotal.Load() > pauseTotalFactor*bound)
}

// overObufLimit is checkClientOutputBufferLimits for the normal class.
func (cl *client) overObufLimit(used int64) bool {
	return cl.overLimit(cl.s.obufNormal.Load(), used)
}

// overLimit is checkClientOutputBufferLimits for the class whose limits
// are l. Its caller owns the client's write path (softSince).
func (cl *client) overLimit(l *obufLimit, used int64) bool {
	if l == nil {
		return false
	}
	if l.hard > 0 && used >= l.hard {
		return true
	}
	if l.soft > 0 && used >= l.soft {
		now := time.Now().Unix()
		if cl.out.softSince == 0 {
			cl.out.softSince = now
			return false
		}
		return now-cl.out.softSince > l.seconds
	}
	cl.out.softSince = 0
	return false
}

// outputStats returns the CLIENT LIST oll and omem of c: queued reply
// chunks and their unsent bytes. Safe from any goroutine.
func (c *client) outputStats() (oll, omem int64) {
	c.out.mu.Lock()
	oll = int64(len(c.out.chunks)) + c.out.writing.Load()
	c.out.mu.Unlock()
	return oll, c.out.pending.Load()
}

// outPeaks keeps INFO's client_recent_max_output_buffer as Redis does:
// the largest client output buffer (pending bytes) seen in each of the
// last 8 seconds, sampled by cron. Touched by cron and INFO (mu).
type outPeaks struct {
	mu   sync.Mutex
	peak [8]int64
	sec  [8]int64 // the unix second each slot belongs to
}

// trackOutputPeaks records the largest pending output among the clients.
func (s *Server) trackOutputPeaks() {
	var m int64
	s.mu.Lock()
	for _, c := range s.clients { // a maximum: the order does not matter
		m = max(m, c.out.pending.Load())
	}
	s.mu.Unlock()
	now := time.Now().Unix()
	p := &s.peaks
	p.mu.Lock()
	i := now % int64(len(p.peak))
	if p.sec[i] != now {
		p.sec[i], p.peak[i] = now, 0
	}
	p.peak[i] = max(p.peak[i], m)
	p.mu.Unlock()
}

// recentMaxOutput is client_recent_max_output_buffer.
func (s *Server) recentMaxOutput() int64 {
	now := time.Now().Unix()
	p := &s.peaks
	p.mu.Lock()
	defer p.mu.Unlock()
	var m int64
	for i := range p.peak {
		if now-p.sec[i] < int64(len(p.peak)) {
			m = max(m, p.peak[i])
		}
	}
	return m
}
