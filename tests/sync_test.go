package tests

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSyncStreamMatchesRedis: SYNC gives the data set as an RDB bulk and
// then the replication stream (what Redis's test suite reads with
// attach_to_replication_stream); the commands that follow are compared
// with redis-server's stream, times in PXAT/PEXPIREAT aside.
func TestSyncStreamMatchesRedis(t *testing.T) {
	redis := mustRedisBare(t, "--save", "", "--dir", t.TempDir(), "--repl-ping-replica-period", "3600")
	limitdb, _ := mustLimitdbConn(t)
	writes := [][]string{
		{"SET", "foo", "bar"},
		{"SET", "k", "v", "EX", "100"},
		{"INCR", "n"},
		{"DEL", "nosuch"},
		{"MULTI"}, {"INCR", "n"}, {"INCR", "n"}, {"EXEC"},
		{"EVAL", "redis.call('set','s','1') redis.call('incr','s')", "0"},
		{"SELECT", "1"},
		{"RPUSH", "l", "a", "b"},
		{"SELECT", "0"},
		{"SET", "done", "1"},
	}
	var streams [2][]string
	for i, addr := range []string{redis, limitdb} {
		streams[i] = syncStream(t, addr, writes)
	}
	t.Logf("redis: %q", streams[0])
	if strings.Join(streams[0], "\n") != strings.Join(streams[1], "\n") {
		t.Fatalf("replication streams differ:\nredis:   %q\nlimitdb: %q", streams[0], streams[1])
	}
}

// syncStream attaches to addr's replication stream, runs writes on
// another connection and returns the commands read up to SET done 1.
func syncStream(t *testing.T, addr string, writes [][]string) []string {
	t.Helper()
	s := mustDial(t, addr)
	defer s.Close()
	if err := s.Send(Encode("SYNC")); err != nil {
		t.Fatal(err)
	}
	s.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var line string
	var err error
	for line == "" { // Redis sends newlines while it prepares the payload
		if line, err = s.br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		line = strings.TrimRight(line, "\r\n")
	}
	n, err := strconv.Atoi(strings.TrimPrefix(line, "$"))
	if err != nil || line[0] != '$' {
		t.Fatalf("%s: SYNC answered %q", addr, line)
	}
	if _, err := io.CopyN(io.Discard, s.br, int64(n)); err != nil {
		t.Fatal(err)
	}
	w := mustDial(t, addr)
	defer w.Close()
	for _, c := range writes {
		if _, err := w.Do(c...); err != nil {
			t.Fatal(err)
		}
	}
	var out []string
	for {
		argv := readCommand(t, s.br)
		argv[0] = strings.ToLower(argv[0])
		for i := 1; i < len(argv); i++ {
			if strings.EqualFold(argv[i-1], "pxat") || argv[0] == "pexpireat" && i == 2 {
				argv[i] = "<ms>"
			}
		}
		out = append(out, strings.Join(argv, " "))
		if argv[0] == "set" && len(argv) == 3 && argv[1] == "done" {
			return out
		}
	}
}

// readCommand reads one RESP array of bulk strings.
func readCommand(t *testing.T, br *bufio.Reader) []string {
	t.Helper()
	head, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(head[1:]))
	if err != nil || head[0] != '*' {
		t.Fatalf("stream: %q", head)
	}
	argv := make([]string, n)
	for i := range argv {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		size, _ := strconv.Atoi(strings.TrimSpace(l[1:]))
		b := make([]byte, size+2)
		if _, err := io.ReadFull(br, b); err != nil {
			t.Fatal(err)
		}
		argv[i] = string(b[:size])
	}
	return argv
}
