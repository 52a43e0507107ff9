package tests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// outsideExchange connects to addr from 127.0.0.2 (not local for Redis
// 7.0, which counts only 127.0.0.1 and ::1), sends PING and returns all it
// reads until the server closes the connection (closed) or 1 s passes.
func outsideExchange(t *testing.T, addr string) (reply []byte, closed bool) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 2 * time.Second}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write([]byte("PING\r\n"))
	nc.SetReadDeadline(time.Now().Add(time.Second))
	var buf bytes.Buffer
	_, err = io.Copy(&buf, nc)
	// a reset is a close too: Redis closes with the client's PING unread
	return buf.Bytes(), err == nil || errors.Is(err, syscall.ECONNRESET)
}

var statLine = regexp.MustCompile(`(rejected_connections|total_connections_received):(\d+)`)

func connStats(t *testing.T, c *Conn) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, m := range statLine.FindAllSubmatch(mustDo(t, c, "INFO", "stats"), -1) {
		n, _ := strconv.Atoi(string(m[2]))
		out[string(m[1])] = n
	}
	return out
}

// TestProtectedModeMatchesRedis: with protected-mode on and no password,
// both servers answer a client from 127.0.0.2 with the same -DENIED text,
// close it, and count it in rejected_connections only; with
// protected-mode no the client is served.
func TestProtectedModeMatchesRedis(t *testing.T) {
	r, l := mustBoth(t)
	type result struct {
		reply        []byte
		closed       bool
		rejected     int
		totalConns   int
		afterDisable []byte
	}
	run := func(addr string) result {
		c := mustDial(t, addr)
		defer c.Close()
		before := connStats(t, c)
		var res result
		res.reply, res.closed = outsideExchange(t, addr)
		after := connStats(t, c)
		res.rejected = after["rejected_connections"] - before["rejected_connections"]
		res.totalConns = after["total_connections_received"] - before["total_connections_received"]
		mustDo(t, c, "CONFIG", "SET", "protected-mode", "no")
		res.afterDisable, _ = outsideExchange(t, addr)
		mustDo(t, c, "CONFIG", "SET", "protected-mode", "yes")
		return res
	}
	want, got := run(r.Addr), run(l.Addr().String())
	if !bytes.HasPrefix(want.reply, []byte("-DENIED ")) {
		t.Fatalf("redis did not deny: %q", want.reply)
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Fatalf("limitdb %+v\nredis   %+v", got, want)
	}
}

// TestListenConfigMatchesRedis: CONFIG SET port to a port in use and bind
// to an address the machine lacks fail with Redis's errors and leave the
// old listener serving; a free port moves it (new accepts, old refuses).
func TestListenConfigMatchesRedis(t *testing.T) {
	r, l := mustBoth(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	run := func(addr string) []string {
		c := mustDial(t, addr)
		defer c.Close()
		var out []string
		note := func(b []byte) { out = append(out, string(b)) }
		note(mustDo(t, c, "CONFIG", "SET", "port", busyPort))
		note(mustDo(t, c, "CONFIG", "SET", "bind", "192.0.2.1"))
		note(mustDo(t, c, "CONFIG", "SET", "bind", "192.0.2.1", "port", busyPort))
		if d, err := Dial(addr); err == nil {
			note(mustDo(t, d, "PING"))
			d.Close()
		} else {
			note([]byte("old listener gone: " + err.Error()))
		}
		np, _ := freePort()
		note(mustDo(t, c, "CONFIG", "SET", "port", strconv.Itoa(np)))
		if d, err := Dial(fmt.Sprintf("127.0.0.1:%d", np)); err == nil {
			note(mustDo(t, d, "PING"))
			d.Close()
		} else {
			note([]byte("new port: " + err.Error()))
		}
		if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			note([]byte("old port still accepts"))
		}
		note(mustDo(t, c, "PING"))
		return out
	}
	want, got := run(r.Addr), run(l.Addr().String())
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("limitdb %q\nredis   %q", got, want)
	}
}

// TestMaxclientsMatchesRedis: over maxclients a new connection gets the
// same error and is closed, counted in rejected_connections only, on both
// servers.
func TestMaxclientsMatchesRedis(t *testing.T) {
	r, l := mustBoth(t)
	run := func(addr string) string {
		c := mustDial(t, addr)
		defer c.Close()
		before := connStats(t, c)
		mustDo(t, c, "CONFIG", "SET", "maxclients", "1")
		reply, closed := rawExchange(t, addr, []byte("PING\r\n"), time.Second)
		mustDo(t, c, "CONFIG", "SET", "maxclients", "10000")
		after := connStats(t, c)
		return fmt.Sprintf("%q closed=%v rejected+%d conns+%d", reply, closed,
			after["rejected_connections"]-before["rejected_connections"],
			after["total_connections_received"]-before["total_connections_received"])
	}
	want, got := run(r.Addr), run(l.Addr().String())
	if got != want {
		t.Fatalf("limitdb %s\nredis   %s", got, want)
	}
}
