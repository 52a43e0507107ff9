package server

import (
	"bufio"
	"bytes"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestScriptLog: redis.log writes its arguments, glued with spaces (values
// without a string form skipped), to the server's log at Redis's level,
// and the loglevel parameter filters them like any other record.
func TestScriptLog(t *testing.T) {
	var out syncBuffer
	log := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := startTest(t, Config{Log: log})
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	nc.Write([]byte("EVAL \"redis.log(redis.LOG_WARNING, 'w1', 2, {}, nil, 'w3')\" 0\r\n" +
		"EVAL \"redis.log(redis.LOG_DEBUG, 'hidden at notice')\" 0\r\n" +
		"CONFIG SET loglevel debug\r\n" +
		"EVAL \"redis.log(redis.LOG_DEBUG, 'shown at debug')\" 0\r\n"))
	if got := readN(t, bufio.NewReader(nc), 4); got != "$-1\r\n$-1\r\n+OK\r\n$-1\r\n" {
		t.Fatalf("replies %q", got)
	}
	logged := out.String()
	for _, want := range []string{`level=WARN msg="w1 2 w3"`, `level=DEBUG msg="shown at debug"`} {
		if !strings.Contains(logged, want) {
			t.Errorf("log lacks %s:\n%s", want, logged)
		}
	}
	if strings.Contains(logged, "hidden at notice") {
		t.Errorf("a debug record passed loglevel notice:\n%s", logged)
	}
}
