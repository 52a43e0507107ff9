package server

import (
	"bytes"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// loopOwned reports whether the loop owns the socket of the connection
// whose CLIENT ID is id (a goroutine that serves it holds a Go
// connection instead).
func loopOwned(t *testing.T, s *Server, id string) bool {
	t.Helper()
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		t.Fatalf("CLIENT ID: %q", id)
	}
	// after admitLoop's adopt (lp.mu), which follows its setting cl.lc
	for _, lp := range loopsOf(s) {
		lp.mu.Lock()
		lp.mu.Unlock()
	}
	s.mu.Lock()
	cl := s.clients[n]
	s.mu.Unlock()
	if cl == nil || cl.lc == nil {
		t.Fatalf("client %d: not a loop connection", n)
	}
	cl.lc.mu.Lock()
	defer cl.lc.mu.Unlock()
	return cl.lc.nc == nil && !cl.lc.closed
}

// skipUnlessLoop skips a test of the event loops under io-model goroutine
// (asked over c: the server's parameters are the loop's to write).
func skipUnlessLoop(t *testing.T, c *rconn) {
	t.Helper()
	if r := c.do(t, "CONFIG", "GET", "io-model"); !strings.HasSuffix(r, "$4\r\nloop\r\n") {
		t.Skip("io-model goroutine")
	}
}

// clientID is the connection's CLIENT ID.
func (c *rconn) clientID(t *testing.T) string {
	t.Helper()
	r := c.do(t, "CLIENT", "ID")
	if !strings.HasPrefix(r, ":") {
		t.Fatalf("CLIENT ID: %q", r)
	}
	return strings.TrimSpace(r[1:])
}

// send writes one command without reading its reply.
func (c *rconn) send(t *testing.T, args ...string) {
	t.Helper()
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write(pipeline(1, func(int) []string { return args })); err != nil {
		t.Fatal(err)
	}
}

// reply reads one reply.
func (c *rconn) reply(t *testing.T) string {
	t.Helper()
	r, err := c.replyErr()
	if err != nil {
		t.Fatalf("reply: %v (read %q)", err, r)
	}
	return r
}

func (c *rconn) replyErr() (string, error) {
	var out bytes.Buffer
	err := readReply(c.br, &out)
	return out.String(), err
}

// TestScriptOnLoop: EVAL, EVALSHA and FCALL run on the connection's event
// loop, which keeps its socket (they were handed to a goroutine, which
// kept the connection for calmBatches more batches).
func TestScriptOnLoop(t *testing.T) {
	s := startTest(t, Config{})
	c := dialT(t, s.Addr().String())
	skipUnlessLoop(t, c)
	id := c.clientID(t)
	if !loopOwned(t, s, id) {
		t.Fatal("a new connection is not on its loop")
	}
	sha := strings.Split(c.do(t, "SCRIPT", "LOAD", "return redis.call('incr', KEYS[1])"), "\r\n")[1]
	if r := c.do(t, "FUNCTION", "LOAD", "#!lua name=l\nredis.register_function('f', function(k) return redis.call('incr', k[1]) end)"); r != "$1\r\nl\r\n" {
		t.Fatalf("FUNCTION LOAD: %q", r)
	}
	for i := 1; i <= 3*calmBatches; i++ {
		var r string
		switch i % 3 {
		case 0:
			r = c.do(t, "EVAL", "return redis.call('incr', KEYS[1])", "1", "n")
		case 1:
			r = c.do(t, "EVALSHA", sha, "1", "n")
		default:
			r = c.do(t, "FCALL", "f", "1", "n")
		}
		if want := ":" + strconv.Itoa(i) + "\r\n"; r != want {
			t.Fatalf("call %d: %q, want %q", i, r, want)
		}
		if !loopOwned(t, s, id) {
			t.Fatalf("call %d: the script's connection left its loop", i)
		}
	}
	// a script inside MULTI … EXEC too
	c.do(t, "MULTI")
	c.do(t, "EVALSHA", sha, "1", "n")
	if r := c.do(t, "EXEC"); r != "*1\r\n:49\r\n" {
		t.Fatalf("EXEC: %q", r)
	}
	if !loopOwned(t, s, id) {
		t.Fatal("EXEC of a script: the connection left its loop")
	}
}

// TestScriptBusyOnLoop: a runaway script on the loop. Past the threshold
// the loop's other connections, one that waited from before it and one
// that connects meanwhile, get BUSY; SCRIPT KILL stops the script, whose
// client gets Redis's text, and the server goes on serving everyone, the
// script's connection still on its loop.
func TestScriptBusyOnLoop(t *testing.T) {
	s := startTest(t, Config{})
	addr := s.Addr().String()
	runner, waiter := dialT(t, addr), dialT(t, addr)
	skipUnlessLoop(t, runner)
	id := runner.clientID(t)
	waiter.do(t, "CONFIG", "SET", "busy-reply-threshold", "200")
	start := time.Now()
	runner.send(t, "EVAL", "while true do end", "0")
	time.Sleep(50 * time.Millisecond)
	if r := waiter.do(t, "GET", "k"); !strings.HasPrefix(r, "-BUSY ") {
		t.Fatalf("a client that waited: %q", r)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("BUSY after %v, before the threshold", d)
	}
	late := dialT(t, addr)
	const busy = "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
	if r := late.do(t, "PING"); r != busy {
		t.Fatalf("a new connection: %q", r)
	}
	if r := waiter.do(t, "FUNCTION", "KILL"); r != busy {
		t.Fatalf("FUNCTION KILL of an EVAL script: %q", r)
	}
	if r := waiter.do(t, "SCRIPT", "KILL"); r != "+OK\r\n" {
		t.Fatalf("SCRIPT KILL: %q", r)
	}
	if r := runner.reply(t); r != "-ERR Script killed by user with SCRIPT KILL... script: 694a5fe1ddb97a4c6a1bf299d9537c7d3d0f84e7, on @user_script:1.\r\n" {
		t.Fatalf("the killed script's reply: %q", r)
	}
	for _, c := range []*rconn{runner, waiter, late} {
		if r := c.do(t, "PING"); r != "+PONG\r\n" {
			t.Fatalf("after the kill: %q", r)
		}
	}
	if !loopOwned(t, s, id) {
		t.Fatal("the killed script's connection left its loop")
	}
	if r := waiter.do(t, "SCRIPT", "KILL"); r != "-NOTBUSY No scripts in execution right now.\r\n" {
		t.Fatalf("SCRIPT KILL when idle: %q", r)
	}
}

// TestScriptBusyWritesTurn: a script on the loop that wrote and runs past
// the threshold cannot be killed (UNKILLABLE), and SHUTDOWN NOSAVE from
// another connection stops it and the server: the script's client gets
// no reply, the listener closes.
func TestScriptBusyWritesTurn(t *testing.T) {
	s := startTest(t, Config{})
	addr := s.Addr().String()
	runner, other := dialT(t, addr), dialT(t, addr)
	skipUnlessLoop(t, other)
	other.do(t, "CONFIG", "SET", "busy-reply-threshold", "100")
	runner.send(t, "EVAL", "redis.call('set', 'w', '1') while true do end", "0")
	deadline := time.Now().Add(5 * time.Second)
	var r string
	for {
		if r = other.do(t, "SCRIPT", "KILL"); !strings.HasPrefix(r, "-NOTBUSY ") || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.HasPrefix(r, "-UNKILLABLE Sorry the script already executed write commands") {
		t.Fatalf("SCRIPT KILL of a script that wrote: %q", r)
	}
	if r := other.do(t, "SHUTDOWN"); !strings.HasPrefix(r, "-BUSY ") {
		t.Fatalf("SHUTDOWN (saving) while busy: %q", r)
	}
	other.send(t, "SHUTDOWN", "NOSAVE")
	if r, err := other.replyErr(); err == nil {
		t.Fatalf("SHUTDOWN NOSAVE: %q, want the connection closed", r)
	}
	if r, err := runner.replyErr(); err == nil {
		t.Fatalf("the script's client after SHUTDOWN NOSAVE: %q", r)
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		nc, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		nc.Close()
		if time.Now().After(deadline) {
			t.Fatal("the server still accepts after SHUTDOWN NOSAVE")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestScriptTurnRepliesFirst: a reply that a connection got earlier in
// the turn of a runaway script is written before the script runs
// (flushWrites), not held until the threshold hands the connection off.
// The loop waits for the engine lock (held here) while the PING and then
// the EVAL arrive, so that its next turn reads both, the PING first.
func TestScriptTurnRepliesFirst(t *testing.T) {
	s := startTest(t, Config{})
	addr := s.Addr().String()
	pinger, runner, ctl := dialT(t, addr), dialT(t, addr), dialT(t, addr)
	skipUnlessLoop(t, ctl)
	ctl.do(t, "CONFIG", "SET", "busy-reply-threshold", "2000")
	s.door.Lock()
	ctl.send(t, "GET", "k")
	time.Sleep(50 * time.Millisecond) // the loop waits for the lock in it
	pinger.send(t, "PING")
	time.Sleep(20 * time.Millisecond)
	runner.send(t, "EVAL", "while true do end", "0")
	time.Sleep(50 * time.Millisecond)
	s.door.Unlock()
	start := time.Now()
	if r := pinger.reply(t); r != "+PONG\r\n" {
		t.Fatalf("PING: %q", r)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the PONG of the script's turn came after %v", d)
	}
	ctl.reply(t)
	for deadline := time.Now().Add(10 * time.Second); ; {
		r := ctl.do(t, "SCRIPT", "KILL")
		if r == "+OK\r\n" {
			break
		}
		if !strings.HasPrefix(r, "-BUSY ") && !strings.HasPrefix(r, "-NOTBUSY ") || time.Now().After(deadline) {
			t.Fatalf("SCRIPT KILL: %q", r)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := runner.reply(t); !strings.HasPrefix(r, "-ERR Script killed by user") {
		t.Fatalf("the killed script's reply: %q", r)
	}
}
