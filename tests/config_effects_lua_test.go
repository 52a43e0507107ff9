package tests

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// effectBusyThreshold: while a script loops, a PING sent on another
// connection is answered -BUSY once the threshold has passed, not before,
// at 100 ms and at 1200 ms (TestBusyThresholdConfig compares the same
// windows with redis-server).
func effectBusyThreshold(t *testing.T, c *Conn, addr, name string) {
	defer configSet(t, c, name, "5000")
	for _, ms := range []int{100, 1200} {
		configSet(t, c, name, strconv.Itoa(ms))
		runner := mustDial(t, addr)
		if err := runner.Send(Encode("EVAL", "while true do end", "0")); err != nil {
			t.Fatal(err)
		}
		// PINGs answered PONG at once until the script starts (a fixed
		// 20 ms sleep here was not always enough on a loaded machine); the
		// first one it holds waits for the threshold
		var r []byte
		var err error
		var waited time.Duration
		for deadline := time.Now().Add(10 * time.Second); ; {
			start := time.Now()
			r, err = c.Do("PING")
			waited = time.Since(start)
			if err != nil || string(r) != "+PONG\r\n" || time.Now().After(deadline) {
				break
			}
		}
		if err != nil || !strings.HasPrefix(string(r), "-BUSY ") {
			killScript(addr)
			t.Fatalf("%s %d: PING while a script runs: %q %v", name, ms, r, err)
		}
		if lo, hi := time.Duration(ms)*time.Millisecond*8/10, time.Duration(ms)*time.Millisecond+900*time.Millisecond; waited < lo || waited > hi {
			t.Errorf("%s %d: BUSY after %v, want within [%v, %v]", name, ms, waited, lo, hi)
		}
		expectDo(t, c, "+OK\r\n", "SCRIPT", "KILL")
		runner.ReadReply()
		runner.Close()
	}
}

// effectLuaMemoryLimit: a script that builds a 2 MB string runs out of
// its budget at 1mb and succeeds at the default.
func effectLuaMemoryLimit(t *testing.T, c *Conn, addr, name string) {
	defer configSet(t, c, name, "256mb")
	script := "return #string.rep('x', 2*1024*1024)"
	configSet(t, c, name, "1mb")
	r := mustDo(t, c, "EVAL", script, "0")
	if !strings.HasPrefix(string(r), "-ERR Error running script") || !strings.Contains(string(r), "not enough memory") {
		t.Fatalf("at 1mb: %q, want a not-enough-memory script error", r)
	}
	configSet(t, c, name, "256mb")
	expectDo(t, c, ":2097152\r\n", "EVAL", script, "0")
}
