package tests

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"limitdb/engine"
)

// hostileCase is one entry of the hostile-input corpus: an attack sent on
// one or more connections, after which the server must still answer PING
// on another connection within 1 s and, once the attack's connections are
// closed, give its memory back (VmRSS under the pre-test figure + 256 MB
// within 10 s). Lua bombs have a corpus of their own (hostile_lua_test.go).
// To add a case, append an entry to hostileCases: pre, then send repeated repeat times, then post, are
// written on each of conns connections that never read their replies; the
// attack lasts hold (the writers give up after 20 s of blocked writes);
// want/closed check what the first connection then reads.
type hostileCase struct {
	name   string
	config []string   // CONFIG SET name value … applied before (and reset after)
	setup  [][]string // commands run (replies read) before the attack
	pre    []byte     // raw bytes sent once before the repeated part
	send   []byte     // raw bytes sent repeat times (pipelined, never read)
	repeat int
	post   []byte // raw bytes sent once after the repeated part
	conns  int    // hostile connections doing the same (default 1)
	hold   time.Duration
	// want, when set, is the start of what the first hostile connection
	// reads after sending everything (e.g. a protocol error).
	want string
	// closed: the server must close the first hostile connection.
	closed bool
	// maxGrowth, when set, bounds the RSS growth while the attack is on
	// (for attacks whose memory limitdb bounds, not just releases).
	maxGrowth int64
}

// cmd encodes one command (helper for building cases).
func cmd(args ...string) []byte { return Encode(args...) }

var hostileCases = []hostileCase{
	{
		name:      "pipeline of big GETs, never read (paused at client-output-pause-size)",
		setup:     [][]string{{"SET", "hostile:big", strings.Repeat("x", 1<<20)}},
		send:      cmd("GET", "hostile:big"),
		repeat:    2000, // 2 GB of replies
		hold:      2 * time.Second,
		maxGrowth: 256 << 20,
	},
	{
		name:      "50 pipelines of big GETs, never read (paused by the server-wide bound)",
		setup:     [][]string{{"SET", "hostile:big", strings.Repeat("x", 1<<20)}},
		send:      cmd("GET", "hostile:big"),
		repeat:    300, // 50 × 300 MB of replies
		conns:     50,
		hold:      3 * time.Second,
		maxGrowth: 512 << 20,
	},
	{
		name:   "pipeline of big GETs, never read, hard output limit",
		config: []string{"client-output-buffer-limit", "normal 8mb 0 0"},
		setup:  [][]string{{"SET", "hostile:big", strings.Repeat("x", 1<<20)}},
		send:   cmd("GET", "hostile:big"),
		repeat: 2000,
		hold:   time.Second,
		closed: true,
	},
	{
		name:   "huge MULTI queue under the query buffer limit",
		pre:    cmd("MULTI"),
		send:   cmd("SET", "hostile:k", strings.Repeat("v", 4096)),
		repeat: 50000, // 200 MB queued
		hold:   time.Second,
	},
	{
		name:   "huge MULTI queue past client-query-buffer-limit is closed",
		config: []string{"client-query-buffer-limit", "16mb"},
		pre:    cmd("MULTI"),
		send:   cmd("SET", "hostile:k", strings.Repeat("v", 4096)),
		repeat: 50000,
		want:   "+OK\r\n+QUEUED",
		closed: true,
	},
	{
		name: "bulk length claimed at proto-max-bulk-len, body never sent in full",
		pre:  []byte("*2\r\n$3\r\nGET\r\n$536870912\r\n"),
		send: bytes.Repeat([]byte("y"), 1<<20),
		// 100 MB of a 512 MB argument, then the connection stalls
		repeat: 100,
		hold:   time.Second,
	},
	{
		name: "bulk length over proto-max-bulk-len",
		pre:  []byte("*2\r\n$3\r\nGET\r\n$536870913\r\n"),
		want: "-ERR Protocol error: invalid bulk length\r\n",
	},
	{
		name: "inline request past 64 KB without a newline",
		pre:  bytes.Repeat([]byte("a"), 70<<10),
		want: "-ERR Protocol error: too big inline request\r\n",
	},
	{
		name:   "inline request of 60 KB of tiny arguments, repeated",
		send:   append(bytes.Repeat([]byte("a "), 30<<10), "\r\n"...),
		repeat: 1000,
		hold:   time.Second,
	},
	{
		name: "multibulk count over INT_MAX",
		pre:  []byte("*2147483648\r\n"),
		want: "-ERR Protocol error: invalid multibulk length\r\n",
	},
	{
		name:   "multibulk count of INT_MAX with a stream of one-byte arguments",
		pre:    []byte("*2147483647\r\n"),
		send:   []byte("$1\r\na\r\n"),
		repeat: 2_000_000,
		hold:   time.Second,
	},
	{
		name:   "one command with a million arguments",
		pre:    []byte("*1000001\r\n$5\r\nRPUSH\r\n"),
		send:   []byte("$8\r\nhostile:\r\n"),
		repeat: 1_000_000,
		post:   cmd("DEL", "hostile:"),
		hold:   time.Second,
	},
	{
		name: "SRANDMEMBER with a count of -10^12",
		pre:  append(cmd("SADD", "hostile:s", "a"), cmd("SRANDMEMBER", "hostile:s", "-1000000000000")...),
		want: ":1\r\n-" + engine.ErrRandReplyTooLarge + "\r\n",
	},
	{
		name: "HRANDFIELD with a count of -10^12",
		pre:  append(cmd("HSET", "hostile:h", "a", "b"), cmd("HRANDFIELD", "hostile:h", "-1000000000000", "WITHVALUES")...),
		want: ":1\r\n-" + engine.ErrRandReplyTooLarge + "\r\n",
	},
	{
		name: "ZRANDMEMBER with a count of -10^12",
		pre:  append(cmd("ZADD", "hostile:z", "1", "a"), cmd("ZRANDMEMBER", "hostile:z", "-1000000000000")...),
		want: ":1\r\n-" + engine.ErrRandReplyTooLarge + "\r\n",
	},
	{
		name:  "many connections each with half a request",
		pre:   []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\nabc"),
		conns: 2000,
		hold:  time.Second,
	},
}

// TestHostileInputs runs the corpus against an in-process limitdb.
func TestHostileInputs(t *testing.T) {
	addr := mustLimitdb(t).Addr().String()
	for _, c := range hostileCases {
		t.Run(c.name, func(t *testing.T) { runHostile(t, addr, c) })
	}
}

// vmRSS is this process's resident memory (VmRSS of /proc/self/status) in
// bytes, after debug.FreeOSMemory has collected garbage and returned free
// pages to the OS: the in-process server's memory otherwise stays mapped
// until the Go scavenger gets to it, minutes later.
func vmRSS(t *testing.T) int64 {
	debug.FreeOSMemory()
	return rawRSS(t)
}

// rawRSS is VmRSS as it is (no collection first).
func rawRSS(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// checkPing fails unless a new connection gets +PONG within 1 s (10 s
// under the race detector, which slows everything about tenfold).
func checkPing(t *testing.T, addr string) {
	t.Helper()
	budget := time.Second
	if raceEnabled {
		budget = 10 * time.Second
	}
	nc, err := net.DialTimeout("tcp", addr, budget)
	if err != nil {
		t.Fatalf("dial during attack: %v", err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(budget))
	if _, err := nc.Write([]byte("PING\r\n")); err != nil {
		t.Fatalf("PING during attack: %v", err)
	}
	line, err := bufio.NewReader(nc).ReadString('\n')
	if err != nil || line != "+PONG\r\n" {
		t.Fatalf("PING during attack: %q %v", line, err)
	}
}

func doConfig(t *testing.T, addr string, args []string) {
	t.Helper()
	if len(args) == 0 {
		return
	}
	c := mustDial(t, addr)
	defer c.Close()
	r, err := c.Do(append([]string{"CONFIG", "SET"}, args...)...)
	if err != nil || string(r) != "+OK\r\n" {
		t.Fatalf("CONFIG SET %q: %q %v", args, r, err)
	}
}

// runHostile runs one case: baseline RSS, setup, attack (the hostile
// connections write for at most 20 s), PING check while they are open,
// the expected reply if any, then close and watch the memory come back.
func runHostile(t *testing.T, addr string, c hostileCase) {
	base := vmRSS(t)
	if c.config != nil {
		doConfig(t, addr, c.config)
		defer func() {
			defaults := map[string]string{"client-output-buffer-limit": "normal 0 0 0", "client-query-buffer-limit": "1gb"}
			var reset []string
			for i := 0; i+1 < len(c.config); i += 2 {
				reset = append(reset, c.config[i], defaults[c.config[i]])
			}
			doConfig(t, addr, reset)
		}()
	}
	if len(c.setup) > 0 {
		sc := mustDial(t, addr)
		for _, a := range c.setup {
			if _, err := sc.Do(a...); err != nil {
				t.Fatal(err)
			}
		}
		sc.Close()
	}
	n := max(c.conns, 1)
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, nc := range conns {
			nc.Close()
		}
	}()
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, nc)
		wg.Add(1)
		go func() {
			defer wg.Done()
			nc.SetWriteDeadline(time.Now().Add(20 * time.Second))
			bw := bufio.NewWriterSize(nc, 64<<10)
			bw.Write(c.pre)
			for j := 0; j < c.repeat; j++ {
				if _, err := bw.Write(c.send); err != nil {
					return // the server stopped reading or closed: expected
				}
			}
			bw.Write(c.post)
			bw.Flush()
		}()
	}
	if c.hold > 0 {
		time.Sleep(c.hold)
	}
	checkPing(t, addr)
	during := rawRSS(t)
	if c.maxGrowth > 0 && !raceEnabled && during > base+c.maxGrowth {
		t.Fatalf("RSS %d MB during the attack, %d MB before: more than %d MB growth", during>>20, base>>20, c.maxGrowth>>20)
	}
	if c.want != "" || c.closed {
		nc := conns[0]
		nc.SetReadDeadline(time.Now().Add(20 * time.Second))
		stopAt := len(c.want)
		if c.closed {
			stopAt = -1
		}
		got, err := readUntilEOF(nc, 1<<16, stopAt)
		if c.closed && err != nil {
			t.Fatalf("hostile connection was not closed: %v", err)
		}
		if !strings.HasPrefix(string(got), c.want) {
			t.Fatalf("hostile connection read %.80q, want %q", got, c.want)
		}
	}
	for _, nc := range conns {
		nc.Close()
	}
	wg.Wait()
	checkPing(t, addr)
	rss := memoryBack(t, base)
	t.Logf("RSS %d MB before, %d MB during, %d MB after", base>>20, during>>20, rss>>20)
}

// memoryBack waits up to 10 s for this process's resident memory to be
// back under base + 256 MB (the corpus's bound) and returns it; it fails
// the test otherwise.
func memoryBack(t *testing.T, base int64) int64 {
	t.Helper()
	if raceEnabled {
		return 0 // the race detector's shadow memory is not given back
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		rss := vmRSS(t)
		if rss <= base+256<<20 {
			return rss
		}
		if time.Now().After(deadline) {
			t.Fatalf("RSS %d MB, was %d MB before the attack", rss>>20, base>>20)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// readUntilEOF reads until the peer closes (nil error), or until stopAt
// bytes were read when stopAt >= 0, and keeps the first keep bytes; a read
// error other than EOF/reset (a timeout) is returned.
func readUntilEOF(nc net.Conn, keep, stopAt int) ([]byte, error) {
	var head []byte
	buf := make([]byte, 1<<20)
	for {
		n, err := nc.Read(buf)
		if len(head) < keep {
			head = append(head, buf[:min(n, keep-len(head))]...)
		}
		if stopAt >= 0 && len(head) >= stopAt {
			return head, nil
		}
		if err == io.EOF || (err != nil && strings.Contains(err.Error(), "reset")) {
			return head, nil
		}
		if err != nil {
			return head, err
		}
	}
}
