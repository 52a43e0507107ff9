package tests

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLoopCommitOrder: on a durable node (a Raft cluster of one) with
// io-model loop, replies that wait for their commit stay parked on the
// loop and leave in request order; nothing after QUIT runs; a client
// blocked on the loop gets its answer after the push's commit and then
// the requests it pipelined behind the blocking command, its timeout,
// CLIENT UNBLOCK, and a blocked client that hangs up is not served.
func TestLoopCommitOrder(t *testing.T) {
	addr, _ := mustLimitdbProcess(t, "--io-model", "loop")
	x, y, z := mustDial(t, addr), mustDial(t, addr), mustDial(t, addr)
	// two batches in flight, the second sent before the first's replies
	// were read: the second waits behind the first's commit
	for i := 0; i < 50; i++ {
		if err := x.Send([]byte("*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n")); err != nil {
			t.Fatal(err)
		}
		if err := x.Send(Encode("INCR", "n")); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 150; i++ {
		want := ":" + strconv.Itoa(i) + "\r\n"
		if got, err := x.ReadReply(); err != nil || string(got) != want {
			t.Fatalf("INCR %d: %q, %v", i, got, err)
		}
	}
	// QUIT after a write: its reply waits for the commit, then +OK and
	// the close; the PING behind it does not run
	q := mustDial(t, addr)
	if err := q.Send([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*1\r\n$4\r\nQUIT\r\n*2\r\n$4\r\nINCR\r\n$1\r\nk2\r\n")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"+OK\r\n", "+OK\r\n"} {
		if got, err := q.ReadReply(); err != nil || string(got) != want {
			t.Fatalf("QUIT pipeline: %q, %v; want %q", got, err, want)
		}
	}
	q.nc.SetReadDeadline(time.Now().Add(4 * time.Second))
	if _, err := readUntilEOF(q.nc, 0, -1); err != nil {
		t.Fatalf("after QUIT: %v", err)
	}
	expectDo(t, x, "$-1\r\n", "GET", "k2")
	// a ping-pong: each pop is answered after the push's commit, then
	// the PING pipelined behind the BLPOP runs
	for i := 0; i < 30; i++ {
		if err := y.Send([]byte("*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n5\r\n*1\r\n$4\r\nPING\r\n")); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			time.Sleep(5 * time.Millisecond) // blocked before the push, or not
		}
		expectDo(t, x, ":1\r\n", "LPUSH", "q", "a")
		for _, want := range []string{"*2\r\n$1\r\nq\r\n$1\r\na\r\n", "+PONG\r\n"} {
			if got, err := y.ReadReply(); err != nil || string(got) != want {
				t.Fatalf("round %d: %q, %v; want %q", i, got, err, want)
			}
		}
	}
	// the timeout, answered by the loop
	expectDo(t, y, "*-1\r\n", "BLPOP", "none", "0.1")
	// CLIENT UNBLOCK from another connection
	id := strings.TrimSpace(strings.TrimPrefix(string(mustDo(t, y, "CLIENT", "ID")), ":"))
	if err := y.Send(Encode("BLPOP", "none", "0")); err != nil {
		t.Fatal(err)
	}
	mustBlocked(t, addr, 1)
	expectDo(t, z, ":1\r\n", "CLIENT", "UNBLOCK", id)
	if got, err := y.ReadReply(); err != nil || string(got) != "*-1\r\n" {
		t.Fatalf("unblocked: %q, %v", got, err)
	}
	// a blocked client that hangs up is dropped: the push stays
	gone := mustDial(t, addr)
	if err := gone.Send(Encode("BLPOP", "q2", "0")); err != nil {
		t.Fatal(err)
	}
	mustBlocked(t, addr, 1)
	gone.Close()
	mustBlocked(t, addr, 0)
	expectDo(t, z, ":1\r\n", "LPUSH", "q2", "b")
	expectDo(t, z, ":1\r\n", "LLEN", "q2")
}

func mustBlocked(t *testing.T, addr string, n int) {
	t.Helper()
	if err := waitBlockedClients(addr, n); err != nil {
		t.Fatal(err)
	}
}
