package tests

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"limitdb/server"
)

// DEBUG (Redis 7.0 debug.c) beyond tests/scenarios/server/debug.txt: the
// enable-debug-command guard on servers of the test's own, DEBUG DIGEST
// after the generated operation streams, and the effects of SLEEP and
// SET-ACTIVE-EXPIRE, each against the real redis-server.

// TestDebugCommandGuard: under enable-debug-command no every client is
// refused with Redis's text, under local a client from 127.0.0.1 runs
// DEBUG and one from 127.0.0.2 is refused; the refusal comes after the
// arity check and inside MULTI flags the transaction. Both servers run
// with protected-mode off so that 127.0.0.2 may connect at all.
func TestDebugCommandGuard(t *testing.T) {
	for _, mode := range []string{"no", "local"} {
		t.Run(mode, func(t *testing.T) {
			r := mustRedis(t, "--enable-debug-command", mode, "--protected-mode", "no")
			l := mustLimitdbConfig(t, server.Config{Addr: "127.0.0.1:0"}, "", "--enable-debug-command", mode, "--protected-mode", "no")
			for _, from := range []string{"127.0.0.1", "127.0.0.2"} {
				ref := mustDialFrom(t, r.Addr, net.ParseIP(from))
				cand := mustDialFrom(t, l.Addr().String(), net.ParseIP(from))
				for _, cmd := range [][]string{
					{"DEBUG", "DIGEST"},
					{"DEBUG", "SLEEP", "0"},
					{"DEBUG"},
					{"DEBUG", "NOSUCH"},
					{"CONFIG", "GET", "enable-debug-command"},
					{"CONFIG", "SET", "enable-debug-command", "yes"},
					{"MULTI"},
					{"DEBUG", "DIGEST-VALUE", "k"},
					{"EXEC"},
				} {
					want := mustDo(t, ref, cmd...)
					got := mustDo(t, cand, cmd...)
					if string(got) != string(want) {
						t.Fatalf("%s from %s: %q: limitdb %q, redis %q", mode, from, cmd, got, want)
					}
				}
				// the guard really decides: refused exactly when it should be
				refused := strings.Contains(string(mustDo(t, cand, "DEBUG", "DIGEST")), "not allowed")
				if wantRefused := mode == "no" || from != "127.0.0.1"; refused != wantRefused {
					t.Fatalf("%s from %s: refused %v", mode, from, refused)
				}
			}
		})
	}
}

// effectEnableDebug: the walk's server started with enable-debug-command
// yes (StartLimitdb) runs DEBUG; the parameter is immutable.
func effectEnableDebug(t *testing.T, c *Conn, addr, name string) {
	expectDo(t, c, "*1\r\n+0000000000000000000000000000000000000000\r\n", "DEBUG", "DIGEST-VALUE", "debug:nosuchkey")
	expectDo(t, c, "*2\r\n$20\r\nenable-debug-command\r\n$3\r\nyes\r\n", "CONFIG", "GET", name)
	refusedWith("no", "can't set immutable config")(t, c, addr, name)
}

// TestDebugDigestGenerated replays the generated operation streams (every
// reply compared, as TestScenarios does) and then compares DEBUG DIGEST
// and each key's DEBUG DIGEST-VALUE: the whole data set must match
// Redis's byte for byte, not only the replies seen on the way.
func TestDebugDigestGenerated(t *testing.T) {
	for _, f := range []string{"scenarios/hashes/generated.txt", "scenarios/lists/generated.txt", "scenarios/sets/generated.txt"} {
		t.Run(f, func(t *testing.T) {
			runScenario(t, f, readScenario(t, f), 2)
			p := dialPair(t, 2)
			defer p.ref.Close()
			defer p.cand.Close()
			compare := func(args ...string) []byte {
				want, got := mustDo(t, p.ref, args...), mustDo(t, p.cand, args...)
				if string(got) != string(want) {
					t.Fatalf("%q: limitdb %q, redis %q", args, got, want)
				}
				return want
			}
			if d := compare("DEBUG", "DIGEST"); string(d) == "+0000000000000000000000000000000000000000\r\n" {
				t.Fatalf("%s left no data to digest", f)
			}
			for _, k := range mustDoValue(t, p.ref, "KEYS", "*").([]any) {
				compare("DEBUG", "DIGEST-VALUE", k.(string))
			}
		})
	}
}

// TestDebugSleepBlocks: DEBUG SLEEP stops the whole server, so another
// client's PING waits for it, on both servers.
func TestDebugSleepBlocks(t *testing.T) {
	for _, addr := range []string{redisAddr, limitAddr} {
		a, b := mustDial(t, addr), mustDial(t, addr)
		done := make(chan []byte, 1)
		go func() { r, _ := a.Do("DEBUG", "SLEEP", "0.3"); done <- r }()
		time.Sleep(50 * time.Millisecond)
		t0 := time.Now()
		expectDo(t, b, "+PONG\r\n", "PING")
		if d := time.Since(t0); d < 150*time.Millisecond {
			t.Fatalf("%s: PING answered after %v during DEBUG SLEEP 0.3", addr, d)
		}
		if r := <-done; string(r) != "+OK\r\n" {
			t.Fatalf("%s: DEBUG SLEEP: %q", addr, r)
		}
	}
}

// TestDebugSetActiveExpire: with the active expiry cycle off an expired key
// nobody touches stays counted by DBSIZE; switched back on, the cycle
// removes it. Same on both servers.
func TestDebugSetActiveExpire(t *testing.T) {
	for _, addr := range []string{redisAddr, limitAddr} {
		c := mustDial(t, addr)
		expectDo(t, c, "+OK\r\n", "SELECT", "9")
		expectDo(t, c, "+OK\r\n", "FLUSHDB")
		expectDo(t, c, "+OK\r\n", "DEBUG", "SET-ACTIVE-EXPIRE", "0")
		expectDo(t, c, "+OK\r\n", "SET", "k", "v", "PX", "10")
		time.Sleep(400 * time.Millisecond)
		expectDo(t, c, ":1\r\n", "DBSIZE")
		expectDo(t, c, "+OK\r\n", "DEBUG", "SET-ACTIVE-EXPIRE", "1")
		deadline := time.Now().Add(3 * time.Second)
		for string(mustDo(t, c, "DBSIZE")) != ":0\r\n" {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the expired key is still there 3 s after SET-ACTIVE-EXPIRE 1", addr)
			}
			time.Sleep(50 * time.Millisecond)
		}
		expectDo(t, c, "+OK\r\n", "SELECT", "0")
	}
}

// TestDebugObjectFields: DEBUG OBJECT's fields, in Redis's order, with the
// encoding, refcount and serializedlength Redis gives (ql_* fields are
// absent: commands.md).
func TestDebugObjectFields(t *testing.T) {
	fields := func(addr string) map[string][]string {
		c := mustDial(t, addr)
		expectDo(t, c, "+OK\r\n", "SELECT", "8")
		mustDo(t, c, "FLUSHDB")
		for _, cmd := range [][]string{{"SET", "a", "hello"}, {"SET", "n", "123"}, {"SET", "big", "123456789012"},
			{"SET", "long", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX"}, {"SET", "i32", "-100000"}, {"RPUSH", "l", "a", "b", "1"},
			{"HSET", "h", "f", "v"}, {"SADD", "s", "1", "2"}, {"SADD", "ss", "x"}, {"ZADD", "z", "1", "a"},
			{"SET", "lz", strings.Repeat("ab", 40)}, {"ZADD", "zs", "1", strings.Repeat("m", 70)}} {
			mustDo(t, c, cmd...)
		}
		out := map[string][]string{}
		for _, k := range []string{"a", "n", "big", "long", "i32", "l", "h", "s", "ss", "z", "lz", "zs"} {
			r := string(mustDo(t, c, "DEBUG", "OBJECT", k))
			if !strings.HasPrefix(r, "+Value at:0x") {
				t.Fatalf("%s: DEBUG OBJECT %s: %q", addr, k, r)
			}
			out[k] = strings.Fields(strings.TrimSpace(r[1:]))
		}
		expectDo(t, c, "-ERR no such key\r\n", "DEBUG", "OBJECT", "missing")
		mustDo(t, c, "FLUSHDB")
		expectDo(t, c, "+OK\r\n", "SELECT", "0")
		return out
	}
	ref, cand := fields(redisAddr), fields(limitAddr)
	for k, rf := range ref {
		cf := cand[k]
		if len(cf) < 7 {
			t.Fatalf("%s: %q", k, cf)
		}
		for i, f := range rf[:7] {
			name, _, _ := strings.Cut(f, ":")
			if cn, _, _ := strings.Cut(cf[i], ":"); cn != name {
				t.Fatalf("%s: field %d is %q, Redis %q", k, i, cf[i], f)
			}
			exact := name == "refcount" || name == "encoding" || name == "serializedlength" ||
				name == "lru_seconds_idle" && f == "lru_seconds_idle:0"
			if exact && cf[i] != f {
				t.Fatalf("%s: %q, Redis %q", k, cf[i], f)
			}
		}
	}
}

// TestDebugLocalUnixSocket: under enable-debug-command local a client on
// the unix socket is local and runs DEBUG, as on redis-server.
func TestDebugLocalUnixSocket(t *testing.T) {
	dir := t.TempDir()
	rSock, lSock := filepath.Join(dir, "r.sock"), filepath.Join(dir, "l.sock")
	mustRedis(t, "--enable-debug-command", "local", "--unixsocket", rSock)
	mustLimitdbConfig(t, server.Config{Addr: "127.0.0.1:0"}, "", "--enable-debug-command", "local", "--unixsocket", lSock)
	run := func(sock string) string {
		c := mustDialUnix(t, sock)
		return string(mustDo(t, c, "DEBUG", "DIGEST-VALUE", "k")) + string(mustDo(t, c, "DEBUG", "SLEEP", "0"))
	}
	want, got := run(rSock), run(lSock)
	if got != want || strings.Contains(got, "not allowed") {
		t.Fatalf("limitdb %q, redis %q", got, want)
	}
}

// DEBUG DIGEST-STRICT (limitdb): DIGEST notes only that a key has a
// deadline; the strict digest also tells which.
func TestDebugDigestStrict(t *testing.T) {
	c := mustDial(t, limitAddr)
	digests := func() (string, string) {
		d, err1 := c.Do("DEBUG", "DIGEST")
		s, err2 := c.Do("DEBUG", "DIGEST-STRICT")
		if err1 != nil || err2 != nil || len(s) != 43 || s[0] != '+' {
			t.Fatalf("%q %q %v %v", d, s, err1, err2)
		}
		return string(d), string(s)
	}
	c.Do("SELECT", "9")
	defer c.Do("FLUSHDB")
	c.Do("SET", "k", "v", "PXAT", "99999999999990")
	d1, s1 := digests()
	c.Do("SET", "k", "v", "PXAT", "99999999999999")
	d2, s2 := digests()
	if d1 != d2 || s1 == s2 {
		t.Fatalf("DIGEST %s %s, DIGEST-STRICT %s %s", d1, d2, s1, s2)
	}
}

// TestDebugProtocolPush: DEBUG PROTOCOL push under RESP3 sends a push
// message and then a reply, as Redis (the scenarios read one reply per
// command, and the AOF-writing redis of TestBlockingEffects has no DEBUG).
func TestDebugProtocolPush(t *testing.T) {
	p := dialPair(t, 3)
	defer p.ref.Close()
	defer p.cand.Close()
	for _, c := range []*Conn{p.ref, p.cand} {
		if err := c.Send(Encode("DEBUG", "PROTOCOL", "push")); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2; i++ {
		want, err := p.ref.ReadReply()
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.cand.ReadReply()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("reply %d: limitdb %q, redis %q", i+1, got, want)
		}
	}
}
