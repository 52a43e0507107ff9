package tests

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBusyThresholdConfig checks that CONFIG SET busy-reply-threshold (and
// its alias lua-time-limit) takes effect at once: while a script runs
// forever, a PING sent right after it started is answered with BUSY once
// the threshold has passed, not before. The same sequence runs against
// redis-server; the replies must be the same bytes and the waits must fall
// in the same windows.
func TestBusyThresholdConfig(t *testing.T) {
	srv := mustLimitdb(t)
	rd := mustRedis(t)
	for _, addr := range []string{rd.Addr, srv.Addr().String()} {
		for _, c := range []struct {
			param   string
			ms      int
			min     time.Duration
			max     time.Duration
			comment string
		}{
			{"busy-reply-threshold", 100, 80 * time.Millisecond, 900 * time.Millisecond, "short"},
			{"lua-time-limit", 1500, 1400 * time.Millisecond, 3 * time.Second, "long, through the alias"},
		} {
			ctl := mustDial(t, addr)
			if r, _ := ctl.Do("CONFIG", "SET", c.param, strconv.Itoa(c.ms)); string(r) != "+OK\r\n" {
				t.Fatalf("%s: CONFIG SET %s: %q", addr, c.param, r)
			}
			runner, _ := Dial(addr)
			// timed from before the script is sent: the script starts
			// later, so BUSY cannot come sooner than the threshold on a
			// loaded machine either; PINGs that beat the script to the
			// server get PONG and are repeated
			start := time.Now()
			if err := runner.Send(Encode("EVAL", "while true do end", "0")); err != nil {
				t.Fatal(err)
			}
			r, err := ctl.Do("PING")
			for err == nil && string(r) == "+PONG\r\n" && time.Since(start) < c.max {
				time.Sleep(5 * time.Millisecond)
				r, err = ctl.Do("PING")
			}
			waited := time.Since(start)
			if want := "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"; string(r) != want || err != nil {
				t.Fatalf("%s %s: PING while busy: %q %v", addr, c.comment, r, err)
			}
			if waited < c.min || waited > c.max {
				t.Errorf("%s: %s=%d: BUSY after %v, want within [%v, %v]", addr, c.param, c.ms, waited, c.min, c.max)
			}
			if r, _ := ctl.Do("SCRIPT", "KILL"); string(r) != "+OK\r\n" {
				t.Fatalf("%s: SCRIPT KILL: %q", addr, r)
			}
			runner.ReadReply()
			runner.Close()
			ctl.Do("CONFIG", "SET", "busy-reply-threshold", "5000")
			ctl.Close()
		}
	}
}

// TestBusyNewConnection: a client that connects while a script runs is
// accepted and answered -BUSY once the threshold has passed, on both
// servers (accepting once waited for the engine lock the script holds).
func TestBusyNewConnection(t *testing.T) {
	srv := mustLimitdb(t)
	for _, addr := range []string{redisAddr, srv.Addr().String()} {
		ctl := mustDial(t, addr)
		expectDo(t, ctl, "+OK\r\n", "CONFIG", "SET", "busy-reply-threshold", "100")
		runner, _ := Dial(addr)
		if err := runner.Send(Encode("EVAL", "while true do end", "0")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		late := mustDial(t, addr)
		late.nc.SetDeadline(time.Now().Add(3 * time.Second))
		if r, err := late.Do("PING"); err != nil || !strings.HasPrefix(string(r), "-BUSY ") {
			t.Errorf("%s: PING on a connection made during the script: %q %v", addr, r, err)
		}
		late.Close()
		expectDo(t, ctl, "+OK\r\n", "SCRIPT", "KILL")
		runner.ReadReply()
		runner.Close()
		expectDo(t, ctl, "+OK\r\n", "CONFIG", "SET", "busy-reply-threshold", "5000")
		ctl.Close()
	}
}
