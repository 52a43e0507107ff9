package server

import (
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"limitdb/resp"
)

// loopReader returns the same pipelined payload on every Read.
type loopReader struct{ p []byte }

func (l *loopReader) Read(b []byte) (int, error) { return copy(b, l.p), nil }

type nopConn struct{ net.Conn }

func (nopConn) Write(b []byte) (int, error) { return len(b), nil }
func (nopConn) Close() error                { return nil }

func pipeline(n int, cmd func(i int) []string) []byte {
	var b []byte
	for i := 0; i < n; i++ {
		args := cmd(i)
		b = append(b, '*')
		b = strconv.AppendInt(b, int64(len(args)), 10)
		b = append(b, "\r\n"...)
		for _, a := range args {
			b = append(b, '$')
			b = strconv.AppendInt(b, int64(len(a)), 10)
			b = append(b, "\r\n"...)
			b = append(b, a...)
			b = append(b, "\r\n"...)
		}
	}
	return b
}

// benchBatch runs the per-batch work of serveClient (parse, lock, dispatch,
// unlock, reset the reply buffer) without the network, 16 commands a batch.
func benchBatch(b *testing.B, cmd func(i int) []string) { benchBatchWith(b, nil, cmd) }

// benchBatchWith is benchBatch with setup run on the server and its client
// first (maxmemory set, the client logged in as an ACL user…).
func benchBatchWith(b *testing.B, setup func(s *Server, cl *client), cmd func(i int) []string) {
	s := New(Config{Dir: scratchDir}, nil)
	cl := s.newClient(nopConn{})
	if setup != nil {
		setup(s, cl)
	}
	cl.rd = resp.NewReader(&loopReader{pipeline(16, cmd)})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += 16 {
		if err := cl.rd.Fill(); err != nil && err != io.EOF {
			b.Fatal(err)
		}
		s.door.Lock()
		cl.ctx.Now, _ = s.door.Now()
		for {
			argv, err := cl.rd.Next()
			if err != nil || argv == nil {
				break
			}
			s.dispatch(cl, argv)
		}
		s.door.Unlock()
		cl.w.B = cl.w.B[:0]
	}
}

func BenchmarkBatchPing(b *testing.B) {
	benchBatch(b, func(int) []string { return []string{"PING"} })
}

func BenchmarkBatchIncr(b *testing.B) {
	benchBatch(b, func(i int) []string { return []string{"INCR", "key:" + strconv.Itoa(i*7919%10000)} })
}

func BenchmarkBatchGet(b *testing.B) {
	benchBatch(b, func(i int) []string { return []string{"GET", "key:" + strconv.Itoa(i*7919%10000)} })
}

var _ = time.Now

// inClusterMode is a setup for benchBatchWith: cluster mode, every slot
// owned (the keyed commands pay the slot routing's own-slot check).
func inClusterMode(s *Server, cl *client) {
	s.door.Lock()
	s.clusterMode = true
	s.eng.EnableSlots()
	s.changeSlots(cl, false, [][2]int{{0, 16383}})
	s.door.Unlock()
	cl.w.B = cl.w.B[:0]
}

func BenchmarkBatchGetClusterMode(b *testing.B) {
	benchBatchWith(b, inClusterMode, func(i int) []string { return []string{"GET", "key:" + strconv.Itoa(i*7919%10000)} })
}
