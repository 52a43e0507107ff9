package server

import (
	"strings"
	"testing"
	"time"

	"limitdb/cluster"
)

// The leader's side of forwarded blocking units (cluster_blocked.go),
// driven through the cluster.Executor methods the forwarding server
// calls, under the engine lock as it does. The follower's client is
// (session 7, client 1); its units are BLPOP q 0.

func blpopUnit(seq uint64) *cluster.Unit {
	return &cluster.Unit{Session: 7, Client: 1, Seq: seq, Proto: 2, Cmds: [][][]byte{{[]byte("BLPOP"), []byte("q"), []byte("0")}}}
}

func execFwd(s *Server, u *cluster.Unit) cluster.BlockedUnit {
	s.door.Lock()
	defer s.door.Unlock()
	_, b := s.ExecForwarded(u)
	return b
}

func cancelFwd(s *Server, seq uint64) bool {
	s.door.Lock()
	defer s.door.Unlock()
	return s.CancelForwarded(7, 1, seq, cluster.CancelDrop)
}

// waitUnit runs b.Wait with a bound: a unit nobody answers never returns.
func waitUnit(t *testing.T, b cluster.BlockedUnit) []byte {
	t.Helper()
	ch := make(chan []byte, 1)
	go func() { out, _, _ := b.Wait(); ch <- out }()
	select {
	case out := <-ch:
		return out
	case <-time.After(5 * time.Second):
		t.Fatal("the unit's Wait did not return")
		return nil
	}
}

// TestForwardedCancelAfterSlowWait: a unit dropped with its link (seq 1)
// whose Wait runs late, after the follower sent the command again (seq
// 3, blocked here too), must not take the new unit's waiter out of the
// leader's reach: the cancel of seq 3 (its link broke too) must remove
// it, else the follower answers its client nil while the waiter stays
// queued and pops the next element for nobody. The old Wait deleted the
// per-client mapping the cancel went through: the cancel answered "not
// here" and the element pushed next was popped and lost.
func TestForwardedCancelAfterSlowWait(t *testing.T) {
	s := startTest(t, Config{})
	ctl := dialT(t, s.Addr().String())
	b1 := execFwd(s, blpopUnit(1))
	if b1 == nil {
		t.Fatal("BLPOP on an empty list did not block")
	}
	if !cancelFwd(s, 1) { // the link closed (dropLink)
		t.Fatal("the cancel of the blocked unit 1 found nothing")
	}
	b3 := execFwd(s, blpopUnit(3)) // sent again before b1's Wait ran
	if b3 == nil {
		t.Fatal("the unit sent again did not block")
	}
	waitUnit(t, b1) // the late Wait of the dropped unit
	cancelled := cancelFwd(s, 3)
	if got := ctl.do(t, "LPUSH", "q", "e1"); got != ":1\r\n" {
		t.Fatalf("LPUSH: %q", got)
	}
	if got := ctl.do(t, "LLEN", "q"); got != ":1\r\n" {
		t.Fatalf("the element pushed after the cancel of unit 3 (cancel found it: %v) was popped for nobody: LLEN %q", cancelled, got)
	}
	if !cancelled {
		t.Fatal("the cancel of unit 3 found nothing, yet no waiter popped")
	}
	if out := waitUnit(t, b3); len(out) > 1 {
		t.Fatalf("the cancelled unit 3 was answered %q", out)
	}
}

// TestForwardedStaleUnitReplaced: a follower sends a client's next unit
// only once it holds the previous one ended, so a unit that is still
// queued here when a later unit of the same client arrives is stale (its
// cancel was lost): it is dropped, unanswered, before the new one runs.
// Both waiters stayed queued under one client, the later one's state in
// the client, and a push served the stale waiter through it.
func TestForwardedStaleUnitReplaced(t *testing.T) {
	s := startTest(t, Config{})
	ctl := dialT(t, s.Addr().String())
	b1 := execFwd(s, blpopUnit(1))
	b3 := execFwd(s, blpopUnit(3))
	if b1 == nil || b3 == nil {
		t.Fatal("BLPOP on an empty list did not block")
	}
	if out := waitUnit(t, b1); len(out) > 1 {
		t.Fatalf("the stale unit 1 was answered %q", out)
	}
	if got := ctl.do(t, "LPUSH", "q", "e1"); got != ":1\r\n" {
		t.Fatalf("LPUSH: %q", got)
	}
	if out := waitUnit(t, b3); string(out[1:]) != "*2\r\n$1\r\nq\r\n$2\r\ne1\r\n" {
		t.Fatalf("unit 3 was answered %q", out)
	}
	if got := ctl.do(t, "LLEN", "q"); got != ":0\r\n" {
		t.Fatalf("LLEN %q", got)
	}
	if got := ctl.do(t, "LPUSH", "q", "e2"); got != ":1\r\n" {
		t.Fatalf("LPUSH: %q (no waiter may be left)", got)
	}
}

// TestForwardedLateUnitRefused: a unit that arrives after a later unit of
// its client blocked here (its goroutine waited for the lock while its
// follower gave up on it and went on) is not run: run, it would have
// ended the later unit's waiter, whose follower still waits.
func TestForwardedLateUnitRefused(t *testing.T) {
	s := startTest(t, Config{})
	ctl := dialT(t, s.Addr().String())
	b3 := execFwd(s, blpopUnit(3))
	if b3 == nil {
		t.Fatal("BLPOP on an empty list did not block")
	}
	s.door.Lock()
	out, b1 := s.ExecForwarded(blpopUnit(1))
	s.door.Unlock()
	if b1 != nil || !strings.HasPrefix(string(out[1:]), "-UNCERTAIN") {
		t.Fatalf("the late unit 1 ran: blocked %v, answered %q", b1 != nil, out)
	}
	if got := ctl.do(t, "LPUSH", "q", "e1"); got != ":1\r\n" {
		t.Fatalf("LPUSH: %q", got)
	}
	if out := waitUnit(t, b3); string(out[1:]) != "*2\r\n$1\r\nq\r\n$2\r\ne1\r\n" {
		t.Fatalf("unit 3 was answered %q", out)
	}
}
