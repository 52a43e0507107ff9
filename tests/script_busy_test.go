package tests

import (
	"strings"
	"testing"
	"time"
)

// TestScriptBusyKill checks runaway scripts on limitdb: after lua-time-limit
// other clients get BUSY, SCRIPT KILL stops a script that has not written
// (the script's caller gets Redis's "Script killed" error), a script that
// wrote is UNKILLABLE, and the server recovers. The texts are the real
// server's (checked against redis-server 7.0.15 with lua-time-limit 200).
func TestScriptBusyKill(t *testing.T) {
	srv := mustLimitdb(t)
	srv.Engine().Guard.LimitMs.Store(200)
	addr := srv.Addr().String()
	runner, other := mustDial(t, addr), mustDial(t, addr)

	waiter := mustDial(t, addr)
	if err := runner.Send(Encode("EVAL", "while true do end", "0")); err != nil {
		t.Fatal(err)
	}
	// a client that asks while the script runs, before lua-time-limit,
	// gets BUSY once the limit passes (it does not wait for the script)
	time.Sleep(50 * time.Millisecond)
	if r, _ := waiter.Do("GET", "k"); !strings.HasPrefix(string(r), "-BUSY ") {
		t.Fatalf("waiting client: %q", r)
	}
	time.Sleep(400 * time.Millisecond)
	r, _ := other.Do("PING")
	if want := "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"; string(r) != want {
		t.Fatalf("PING while busy: %q", r)
	}
	r, _ = other.Do("SCRIPT", "KILL")
	if string(r) != "+OK\r\n" {
		t.Fatalf("SCRIPT KILL: %q", r)
	}
	r, _ = runner.ReadReply()
	if want := "-ERR Script killed by user with SCRIPT KILL... script: 694a5fe1ddb97a4c6a1bf299d9537c7d3d0f84e7, on @user_script:1.\r\n"; string(r) != want {
		t.Fatalf("killed script reply: %q", r)
	}
	r, _ = other.Do("SCRIPT", "KILL")
	if string(r) != "-NOTBUSY No scripts in execution right now.\r\n" {
		t.Fatalf("SCRIPT KILL when idle: %q", r)
	}

	// a script that wrote cannot be killed; it ends on its own
	if err := runner.Send(Encode("EVAL", "redis.call('incr','busy:w') local i = 0 while i < 5e7 do i = i + 1 end return i", "0")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	deadline := time.Now().Add(3 * time.Second)
	for {
		r, _ = other.Do("SCRIPT", "KILL")
		if strings.HasPrefix(string(r), "-UNKILLABLE ") || time.Now().After(deadline) {
			break
		}
		if string(r) == "-NOTBUSY No scripts in execution right now.\r\n" {
			t.Skip("script finished before lua-time-limit on this machine")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.HasPrefix(string(r), "-UNKILLABLE Sorry the script already executed write commands") {
		t.Fatalf("SCRIPT KILL after a write: %q", r)
	}
	r, _ = runner.ReadReply()
	if string(r) != ":50000000\r\n" {
		t.Fatalf("script result: %q", r)
	}
	r, _ = other.Do("GET", "busy:w")
	if string(r) != "$1\r\n1\r\n" {
		t.Fatalf("after the script: %q", r)
	}
}
