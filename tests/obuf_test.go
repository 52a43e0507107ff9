package tests

import (
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestOutputBufferLimitDiff: a client that pipelines GETs of a 100 KB value
// (200 MB of replies) and never reads is disconnected by both servers under
// client-output-buffer-limit normal 1mb 0 0, and by neither with the
// default (normal 0 0 0); meanwhile other clients are served. CONFIG GET
// shows the limits in Redis's form.
func TestOutputBufferLimitDiff(t *testing.T) {
	for _, srv := range []struct{ name, addr string }{{"redis", redisAddr}, {"limitdb", limitAddr}} {
		t.Run(srv.name, func(t *testing.T) {
			c := mustDial(t, srv.addr)
			defer c.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
			expectDo(t, c, "+OK\r\n", "SET", "obuf:big", strings.Repeat("x", 100<<10))
			expectDo(t, c, "+OK\r\n", "CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0")
			expectDo(t, c, "*2\r\n$26\r\nclient-output-buffer-limit\r\n$73\r\nnormal 1048576 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60\r\n",
				"CONFIG", "GET", "client-output-buffer-limit")
			if !nonReaderClosed(t, srv.addr, c, time.Second) {
				t.Fatal("client past the 1mb hard limit was not disconnected")
			}
			expectDo(t, c, "+OK\r\n", "CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
			if nonReaderClosed(t, srv.addr, c, time.Second) {
				t.Fatal("client disconnected with the limits off")
			}
			checkNonReaderLine(t, srv.addr, c)
			// INFO keeps the largest output buffer of the last seconds
			info := parseInfo(t, mustDo(t, c, "INFO", "clients"))
			if n, _ := strconv.ParseInt(info["clients"]["client_recent_max_output_buffer"], 10, 64); n < 1<<20 {
				t.Fatalf("client_recent_max_output_buffer %d after a non-reading client", n)
			}
		})
	}
}

func expectDo(t *testing.T, c *Conn, want string, args ...string) {
	t.Helper()
	r, err := c.Do(args...)
	if err != nil || string(r) != want {
		t.Fatalf("%q: %q %v, want %q", args, r, err, want)
	}
}

// nonReaderClosed sends 2000 GET obuf:big on a new connection without
// reading for wait, checks that other clients are served meanwhile,
// then reads: true when the server closed the connection before sending
// every reply.
func nonReaderClosed(t *testing.T, addr string, other *Conn, wait time.Duration) bool {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	go func() {
		req := []byte(strings.Repeat(string(Encode("GET", "obuf:big")), 2000))
		nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		nc.Write(req)
	}()
	time.Sleep(wait)
	expectDo(t, other, "+PONG\r\n", "PING")
	nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	want := 2000 * int64(len("$102400\r\n")+100<<10+2)
	var got int64
	buf := make([]byte, 1<<20)
	for got < want {
		n, err := nc.Read(buf)
		got += int64(n)
		if err != nil {
			return true
		}
	}
	return false
}

// TestOutputPauseSoftLimit (limitdb only: Redis has no pause): a client
// that stops reading is paused at client-output-pause-size, and a paused
// client that stays over the soft output limit longer than its seconds is
// still disconnected, as Redis disconnects one that keeps sending.
func TestOutputPauseSoftLimit(t *testing.T) {
	addr, c := mustLimitdbConn(t)
	expectDo(t, c, "+OK\r\n", "SET", "obuf:big", strings.Repeat("x", 100<<10))
	expectDo(t, c, "+OK\r\n", "CONFIG", "SET", "client-output-pause-size", "1mb", "client-output-buffer-limit", "normal 0 512kb 1")
	if !nonReaderClosed(t, addr, c, 3*time.Second) {
		t.Fatal("paused client over the soft limit was not disconnected")
	}
	// with no limit a paused client stays connected, and gets every reply
	// once it reads
	expectDo(t, c, "+OK\r\n", "CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
	if nonReaderClosed(t, addr, c, 3*time.Second) {
		t.Fatal("paused client disconnected with the limits off")
	}
}

// TestQuitAfterPendingReplies: QUIT after a pipeline whose replies the
// client has not read yet still delivers every reply, then +OK, then the
// connection closes (Redis's close-after-reply), on both servers.
func TestQuitAfterPendingReplies(t *testing.T) {
	for _, addr := range []string{redisAddr, limitAddr} {
		c := mustDial(t, addr)
		expectDo(t, c, "+OK\r\n", "SET", "obuf:big", strings.Repeat("x", 100<<10))
		c.Close()
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		nc.SetDeadline(time.Now().Add(20 * time.Second))
		go nc.Write([]byte(strings.Repeat(string(Encode("GET", "obuf:big")), 300) + string(Encode("QUIT"))))
		time.Sleep(500 * time.Millisecond)
		all, err := readAll(nc)
		nc.Close()
		want := strings.Repeat("$102400\r\n"+strings.Repeat("x", 100<<10)+"\r\n", 300) + "+OK\r\n"
		if err != nil || string(all) != want {
			t.Fatalf("%s: read %d bytes (%v), want %d then EOF", addr, len(all), err, len(want))
		}
	}
}

// readAll reads until EOF.
func readAll(nc net.Conn) ([]byte, error) {
	var out []byte
	buf := make([]byte, 1<<20)
	for {
		n, err := nc.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// checkNonReaderLine: while a client has unread replies, its CLIENT LIST
// line shows them as Redis does: omem (bytes) and oll (chunks) above 0,
// events=rw, cmd=get.
func checkNonReaderLine(t *testing.T, addr string, other *Conn) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	go nc.Write([]byte(string(Encode("CLIENT", "SETNAME", "nonreader")) + strings.Repeat(string(Encode("GET", "obuf:big")), 200)))
	time.Sleep(500 * time.Millisecond)
	for _, l := range strings.Split(string(mustDo(t, other, "CLIENT", "LIST")), "\n") {
		if !strings.Contains(l, " name=nonreader ") {
			continue
		}
		f := map[string]string{}
		for _, kv := range strings.Fields(l) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		omem, _ := strconv.ParseInt(f["omem"], 10, 64)
		oll, _ := strconv.ParseInt(f["oll"], 10, 64)
		if omem < 1<<20 || oll < 1 || f["events"] != "rw" || f["cmd"] != "get" {
			t.Fatalf("non-reading client: %s", l)
		}
		return
	}
	t.Fatal("non-reading client not in CLIENT LIST")
}

// TestSlowReaderNotIdle: with timeout 1, a client that sent its pipeline
// once and then reads the 10 MB of replies slowly (4 s) is not closed as
// idle: taking replies counts as interaction, on both servers.
func TestSlowReaderNotIdle(t *testing.T) {
	for _, addr := range []string{redisAddr, limitAddr} {
		c := mustDial(t, addr)
		expectDo(t, c, "+OK\r\n", "SET", "obuf:big", strings.Repeat("x", 100<<10))
		expectDo(t, c, "+OK\r\n", "CONFIG", "SET", "timeout", "1")
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		nc.SetDeadline(time.Now().Add(20 * time.Second))
		nc.Write([]byte(strings.Repeat(string(Encode("GET", "obuf:big")), 100)))
		want := 100 * (len("$102400\r\n") + 100<<10 + 2)
		got := 0
		buf := make([]byte, 256<<10)
		for got < want {
			time.Sleep(100 * time.Millisecond)
			n, err := io.ReadAtLeast(nc, buf, min(len(buf), want-got))
			got += n
			if err != nil {
				break
			}
		}
		nc.Close()
		c2, err := Dial(addr) // c itself was idle past the timeout
		if err != nil {
			t.Fatal(err)
		}
		expectDo(t, c2, "+OK\r\n", "CONFIG", "SET", "timeout", "0")
		c2.Close()
		if got != want {
			t.Fatalf("%s: slow reader closed after %d of %d bytes", addr, got, want)
		}
	}
}
