package tests

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A follower in cluster mode whose group has no leader it can name holds
// a keyed command up to leader-wait-ms, then answers MOVED to the new
// leader or CLUSTERDOWN (cluster_slots_route.go): never runs it by
// forwarding it, as the unsharded mode does.
func TestClusterModeLeaderWait(t *testing.T) {
	const waitMs = 3000
	c := mustCluster(t, 3, "--cluster-enabled", "yes", "--leader-wait-ms", strconv.Itoa(waitMs))
	l := c.waitLeader(10 * time.Second)
	if err := c.cli(l).Do(context.Background(), "CLUSTER", "ADDSLOTSRANGE", "0", "16383").Err(); err != nil {
		t.Fatal(err)
	}
	slot := strconv.Itoa(testKeySlot("a"))
	moved := func(i int) string { return "-MOVED " + slot + " " + c.addr(i) + "\r\n" }
	f := (l + 1) % 3
	fc := mustDial(t, c.addr(f))
	// get asks over fc (one client) until its reply is no longer MOVED
	// to gone, checking that each came within leader-wait-ms and slack
	get := func(fc *Conn, gone int, what string) (string, time.Duration) {
		deadline := time.Now().Add(20 * time.Second)
		longest := time.Duration(0)
		for {
			t0 := time.Now()
			r := string(mustDo(t, fc, "GET", "a"))
			el := time.Since(t0)
			if el > time.Duration(waitMs+1000)*time.Millisecond {
				t.Fatalf("%s: %q after %v, more than leader-wait-ms %d ms", what, r, el, waitMs)
			}
			longest = max(longest, el)
			if r != moved(gone) {
				t.Logf("%s: %q after %v (longest reply %v)", what, r, el, longest)
				return r, el
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: still MOVED to the node gone", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	for r := ""; r != moved(l); {
		r = string(mustDo(t, fc, "GET", "a"))
		time.Sleep(10 * time.Millisecond) // cluster_state reaches f by its cron
	}

	c.kill(l)
	r, _ := get(fc, l, "leader killed")
	nl := c.waitLeader(10 * time.Second)
	switch {
	case nl == f && r == "$-1\r\n": // f leads now: it runs the GET
	case nl != f && r == moved(nl):
	default:
		t.Fatalf("after the leader's kill: %q (new leader %d, asked %d)", r, nl, f)
	}

	// the last one (f, or the other follower when f leads now): no leader
	// can be elected
	rest := 3 - l - nl
	rc := mustDial(t, c.addr(rest))
	// another client of the node is served while the GET waits (the
	// wait releases the engine lock and holds no event loop)
	pc := mustDial(t, c.addr(rest))
	done, pings := make(chan struct{}), make(chan time.Duration, 1)
	go func() {
		longest := time.Duration(0)
		for {
			select {
			case <-done:
				pings <- longest
				return
			case <-time.After(50 * time.Millisecond):
			}
			t0 := time.Now()
			if _, err := pc.Do("PING"); err != nil {
				longest = time.Hour
			}
			longest = max(longest, time.Since(t0))
		}
	}()
	c.kill(nl)
	r, el := get(rc, nl, "both others killed")
	close(done)
	if p := <-pings; p > 500*time.Millisecond {
		t.Fatalf("another client's PING waited %v while a GET waited for a leader", p)
	} else {
		t.Logf("another client's longest PING meanwhile: %v", p)
	}
	if r != "-CLUSTERDOWN The cluster is down\r\n" {
		t.Fatalf("alone: %q, want CLUSTERDOWN", r)
	}
	if el < time.Duration(waitMs-500)*time.Millisecond {
		t.Fatalf("CLUSTERDOWN after %v: it did not wait leader-wait-ms (%d ms)", el, waitMs)
	}
	if !strings.Contains(string(mustDo(t, rc, "PING")), "PONG") {
		t.Fatal("PING after CLUSTERDOWN")
	}
}
