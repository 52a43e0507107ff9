package tests

import (
	"strings"
	"testing"
	"time"
)

// TestScriptKillLongMatch: a pattern match that would run for hours inside
// one string.find call ('.-' repeated: polynomial in the subject) gets BUSY
// for other clients after busy-reply-threshold and is stopped by SCRIPT
// KILL, like a Lua loop (the interpreter's own context check runs only
// between instructions; the patched matcher asks every 2^14 steps).
func TestScriptKillLongMatch(t *testing.T) {
	addr := mustLimitdb(t).Addr().String()
	ctl := mustDial(t, addr)
	ctl.Do("CONFIG", "SET", "busy-reply-threshold", "100")
	runner := mustDial(t, addr)
	if err := runner.Send(Encode("EVAL", "return string.rep('a', 100000):find('.-.-.-b')", "0")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if r, _ := ctl.Do("PING"); !strings.HasPrefix(string(r), "-BUSY ") {
		t.Fatalf("PING during the match: %q", r)
	}
	if r, _ := ctl.Do("SCRIPT", "KILL"); string(r) != "+OK\r\n" {
		t.Fatalf("SCRIPT KILL: %q", r)
	}
	r, err := runner.ReadReply()
	if err != nil || !strings.HasPrefix(string(r), "-ERR Script killed by user with SCRIPT KILL...") {
		t.Fatalf("killed script: %q %v", r, err)
	}
	if r, _ := ctl.Do("PING"); string(r) != "+PONG\r\n" {
		t.Fatalf("PING after: %q", r)
	}
}
