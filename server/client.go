package server

import (
	"errors"
	"net"
	"strings"
	"time"

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

	multi     bool
	multiErr  bool // a queued command was rejected: EXEC aborts
	queue     [][][]byte
	watches   []*engine.Watch
	closeNow  bool // close after the replies written so far
	noEvict   bool
	noTouch   bool
	locked    bool
	batchCmds int
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
	cl.ctx = engine.Ctx{E: s.eng, W: &cl.w}
	cl.last = cl.born
	s.mu.Lock()
	s.clients[cl.id] = cl
	s.mu.Unlock()
	return cl
}

const flushAt = 256 * 1024

// serveClient reads requests and answers them until the connection ends.
// All requests that arrived together (a pipeline) run under one acquisition
// of the engine lock, and their replies leave in one write.
func (s *Server) serveClient(cl *client) {
	defer func() {
		if r := recover(); r != nil {
			if cl.locked {
				s.eng.Mu.Unlock()
				cl.locked = false
			}
			s.log.Error("connection panic contained", "client", cl.id, "panic", r)
		}
		s.dropClient(cl)
	}()
	for {
		inBefore := cl.rd.Buffered()
		err := cl.rd.Fill()
		s.stats.netInput.Add(int64(cl.rd.Buffered() - inBefore))
		if err != nil {
			if errors.Is(err, resp.ErrQueryBufferLimit) {
				s.log.Warn("closing client that reached max query buffer length", "client", cl.id)
			}
			return
		}
		for {
			argv, err := cl.rd.Next()
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
				s.eng.Mu.Lock()
				cl.locked = true
			}
			s.dispatch(cl, argv)
			if cl.closeNow {
				break
			}
			if len(cl.w.B) >= flushAt {
				s.eng.Mu.Unlock()
				cl.locked = false
				if !cl.flush() {
					return
				}
			}
		}
		if cl.locked {
			s.eng.Mu.Unlock()
			cl.locked = false
		}
		if !cl.flush() || cl.closeNow {
			return
		}
	}
}

func (cl *client) flush() bool {
	if len(cl.w.B) == 0 {
		return true
	}
	n, err := cl.nc.Write(cl.w.B)
	cl.s.stats.netOutput.Add(int64(n))
	if cap(cl.w.B) > 1<<20 {
		cl.w.B = nil
	} else {
		cl.w.B = cl.w.B[:0]
	}
	return err == nil
}

func (s *Server) dropClient(cl *client) {
	cl.nc.Close()
	if len(cl.watches) > 0 {
		s.eng.Mu.Lock()
		cl.unwatchAll()
		s.eng.Mu.Unlock()
	}
	s.mu.Lock()
	delete(s.clients, cl.id)
	s.mu.Unlock()
}

func (cl *client) unwatchAll() {
	for _, w := range cl.watches {
		engine.RemoveWatch(w)
	}
	cl.watches = cl.watches[:0]
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
func (s *Server) dispatch(cl *client, argv [][]byte) {
	cl.ctx.Now = s.now()
	cl.ctx.DB = s.eng.DBs[cl.db]
	cmd := cl.ctx.Resolve(argv)
	if cmd == nil {
		if cl.multi {
			cl.multiErr = true
		}
		cl.execArityAbort(argv)
		s.countRejected(argv)
		return
	}
	if cl.multi && !isTxnControl(cmd.Name) {
		q := make([][]byte, len(argv))
		for i, a := range argv {
			q[i] = append([]byte(nil), a...)
		}
		cl.queue = append(cl.queue, q)
		cl.w.Status("QUEUED")
		return
	}
	s.call(cl, cmd, argv)
}

// isTxnControl names the commands that run at once inside MULTI.
func isTxnControl(name string) bool {
	switch name {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return true
	}
	return false
}

// call executes a resolved command and keeps its statistics.
func (s *Server) call(cl *client, cmd *engine.Command, argv [][]byte) {
	start := time.Now()
	before := len(cl.w.B)
	cl.lastC = cmd.Name
	cl.last = start
	if cmd.Has(engine.FlagConn) {
		cl.ctx.Cmd = cmd
		connHandlers[cmd.Name](s, cl, argv)
	} else {
		cl.ctx.DB = s.eng.DBs[cl.db]
		cl.ctx.Call(cmd, argv)
	}
	st := s.stats.cmdStats[cmd.Name]
	if st == nil {
		st = &cmdStat{}
		s.stats.cmdStats[cmd.Name] = st
	}
	st.calls++
	s.stats.commands.Add(1)
	st.usec += time.Since(start).Microseconds()
	if len(cl.w.B) > before && cl.w.B[before] == '-' {
		st.failed++
		s.countError(cl.w.B[before+1:])
	}
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
