package server

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// streamConn feeds a fixed input to serveLoop, then EOF, and keeps what
// the server writes (the writer goroutine writes here: no socket, so all
// output takes the queued path).
type streamConn struct {
	fuzzConn
	in  io.Reader
	mu  sync.Mutex
	out bytes.Buffer
}

func (c *streamConn) Read(b []byte) (int, error) { return c.in.Read(b) }
func (c *streamConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(b)
}

// fuzzConnSkip are words whose commands FuzzConnection leaves out, as
// FuzzCommandArgs does (scripts, CONFIG, the test-only panics).
var fuzzConnSkip = []string{"eval", "script", "config", "__test"}

// FuzzConnection sends a random byte stream through the whole connection
// path (reader, pipelining, MULTI, dispatch, output queue): no panic may
// escape or be contained, and the output must be a sequence of complete,
// well-formed RESP values.
func FuzzConnection(f *testing.F) {
	for _, seed := range []string{
		"PING\r\n",
		"*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
		"SET k v\r\nGET k\r\nINCR k\r\n",
		"MULTI\r\nSET a 1\r\nINCR a\r\nEXEC\r\n",
		"MULTI\r\nFOO\r\nEXEC\r\n",
		"*2\r\n$3\r\nGET\r\n$-5\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nabc",
		"HELLO 3\r\nHSET h a 1\r\nHGETALL h\r\nZADD z 1 a\r\nZRANGE z 0 -1 WITHSCORES\r\n",
		"SLOWLOG GET\r\nCLIENT LIST\r\nINFO clients\r\n",
		"\"unbalanced\r\n",
		"SADD s 1 2 3\r\nSRANDMEMBER s -5\r\nQUIT\r\nPING\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		low := strings.ToLower(string(in))
		for _, w := range fuzzConnSkip {
			if strings.Contains(low, w) {
				return
			}
		}
		s := newFuzzServer() // a fresh data set for each input
		nc := &streamConn{in: bytes.NewReader(in)}
		cl := s.newClient(nc)
		var b batchState
		for s.serveLoop(cl, &b) == turnAgain {
			t.Fatalf("a panic was contained for %q", in)
		}
		deadline := time.Now().Add(5 * time.Second)
		for cl.out.pending.Load() > 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		s.dropClient(cl)
		nc.mu.Lock()
		out := append([]byte(nil), nc.out.Bytes()...)
		nc.mu.Unlock()
		for i := 0; i < len(out); {
			n, err := parseRESPValue(out, i)
			if err != nil {
				t.Fatalf("input %q: output %q is not a RESP stream at byte %d: %v", in, out, i, err)
			}
			i = n
		}
		if bytes.Contains(out, []byte("-ERR internal error while running")) {
			t.Fatalf("input %q: a command panicked: %q", in, out)
		}
	})
}
