package tests

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestClusterBusyLeader: a script or command that holds the leader's
// engine lock for 1-2 s must not cost the leader its leadership
// (hashicorp/raft steps a leader down after LeaderLeaseTimeout, 250 ms,
// without a quorum's contact). Nothing of Raft's waits for that lock on
// the leader: heartbeats, replication and the state machine, which only
// counts the leader's own entries, go on (see cluster/DESIGN.md, "Long
// holds of the engine lock"). As on Redis, other clients get BUSY past
// busy-reply-threshold and then the script's result, SCRIPT KILL stops a
// script that has not written, DEBUG SLEEP makes them wait, and the node
// keeps its role: the same leader and term on every node throughout
// (polled on the followers), and the script's write replicated. It runs
// with writers on every node and, in "loaded", two goroutines spinning in
// this process (a 2-core machine shared with the cluster). It logs the
// followers' longest silence from the leader for each hold: 70-110 ms in
// both modes on a lightly loaded machine (heartbeats every 50-100 ms),
// against the 250 ms lease.
//
// "loaded" runs only with LIMITDB_STRESS=1: it still loses the lease
// there. Beside the whole suite (go test ./... on 2 cores) its leader
// stepped down during the 2 s script with 527-554 ms without contact from
// either follower, and with two CPU burners outside the test in 2 of 4
// runs (269 ms): the processes get no CPU for that long (every node's
// process silent for the same 237-258 ms in runtime traces), not a wait
// on a lock. Surviving that needs a longer lease, which needs longer
// heartbeat and election timeouts (the lease must stay below them), and
// with those failover slows toward leader-wait-ms (2 s; at 1 s / 750 ms,
// TestClusterBlocking's clients were not blocked again on the new leader
// after a kill, 0 of 2, in a loaded run): a decision left open
// (cluster/DESIGN.md, "Long holds of the engine lock").
func TestClusterBusyLeader(t *testing.T) {
	t.Run("quiet", func(t *testing.T) { testClusterBusyLeader(t, 0) })
	t.Run("loaded", func(t *testing.T) {
		if os.Getenv("LIMITDB_STRESS") != "1" {
			t.Skip("LIMITDB_STRESS=1 runs it (the lease is lost under CPU starvation; see the comment)")
		}
		testClusterBusyLeader(t, 2)
	})
}

func testClusterBusyLeader(t *testing.T, burners int) {
	c := mustCluster(t, 3, "--busy-reply-threshold", "100")
	ctx := context.Background()
	l := c.waitLeader(10 * time.Second)
	before := c.info(l)
	term, leaderID := before["raft_term"], before["raft_node_id"]

	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(stop); wg.Wait() }()
	// loop runs step until the test ends, for 40 s at most
	loop := func(step func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for deadline := time.Now().Add(40 * time.Second); time.Now().Before(deadline); {
				select {
				case <-stop:
					return
				default:
				}
				step()
			}
		}()
	}
	for i := 0; i < burners; i++ {
		loop(func() {
			for j := 0; j < 1e6; j++ {
				_ = j * j
			}
			runtime.Gosched()
		})
	}
	// writers on every node (a follower's are forwarded to the leader)
	var writes, unknown atomic.Int64
	var firstUnknown atomic.Value
	for w := 0; w < 4*len(c.nodes); w++ {
		i := w % len(c.nodes)
		loop(func() {
			err := c.cli(i).Incr(ctx, "load:"+strconv.Itoa(i)).Err()
			switch {
			case err == nil:
				writes.Add(1)
			case strings.HasPrefix(err.Error(), "BUSY"):
				time.Sleep(10 * time.Millisecond)
			default:
				unknown.Add(1)
				firstUnknown.CompareAndSwap(nil, fmt.Sprintf("%s: %v", c.nodes[i].id, err))
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
	// followers' view of the term and the leader while the leader is busy
	// (the leader's own RAFT INFO waits for the script, or gets BUSY)
	var changed atomic.Value
	var maxContact atomic.Int64 // the followers' longest silence from the leader, ms
	watch := func() (end func()) {
		done := make(chan struct{})
		var ww sync.WaitGroup
		ww.Add(1)
		go func() {
			defer ww.Done()
			for {
				select {
				case <-done:
					return
				case <-time.After(20 * time.Millisecond):
				}
				for i := range c.nodes {
					if i == l {
						continue
					}
					m := c.info(i)
					if ms, err := strconv.ParseInt(m["raft_last_contact_ms"], 10, 64); err == nil && ms > maxContact.Load() {
						maxContact.Store(ms)
					}
					if m != nil && (m["raft_term"] != term || m["raft_leader_id"] != leaderID) {
						changed.CompareAndSwap(nil, fmt.Sprintf("%s saw term %s leader %q", c.nodes[i].id, m["raft_term"], m["raft_leader_id"]))
					}
				}
			}
		}()
		return func() { close(done); ww.Wait() }
	}

	runner := mustDial(t, c.addr(l))
	defer runner.Close()
	n := strconv.FormatInt(luaIterations(t.Fatalf, runner, 2*time.Second), 10)
	for _, h := range []struct {
		name string
		argv []string
		busy bool   // other clients get BUSY (a script), or wait (a command)
		kill bool   // SCRIPT KILL once BUSY is seen
		want string // the holder's reply, a prefix
	}{
		// a script that wrote: unkillable, it runs to its end
		{"write", []string{"EVAL", "redis.call('set', KEYS[1], ARGV[1]) local n, m = 0, tonumber(ARGV[1]) while n < m do n=n+1 end return n", "1", "busy:write", n}, true, false, ":" + n + "\r\n"},
		// a read-only one: SCRIPT KILL stops it
		{"kill", []string{"EVAL", "while true do end", "0"}, true, true, "-ERR Script killed by user with SCRIPT KILL"},
		// garbage for the collector, about a second of it
		{"garbage", []string{"EVAL", "local n, m = 0, tonumber(ARGV[1]) / 20 while n < m do n = n + 1 local s = {n, tostring(n)} end return n", "0", n}, true, false, ":"},
		// a command holding the engine lock: others wait, as on Redis
		{"sleep", []string{"DEBUG", "SLEEP", "2"}, false, false, "+OK\r\n"},
	} {
		end := watch()
		poller := mustDial(t, c.addr(l))
		sent := time.Now()
		if err := runner.Send(Encode(h.argv...)); err != nil {
			t.Fatal(err)
		}
		// a client polling the leader sees BUSY, then PONG once the script
		// has ended (or, behind a command, waits for its PONG)
		var firstBusy time.Time
		sawBusy, killed := false, false
		for deadline := time.Now().Add(30 * time.Second); ; {
			if !h.busy {
				time.Sleep(100 * time.Millisecond)
			}
			r, err := poller.Do("PING")
			if err != nil {
				t.Fatalf("%s: PING during the hold: %v", h.name, err)
			}
			if strings.HasPrefix(string(r), "-BUSY ") && h.busy {
				if !sawBusy {
					firstBusy = time.Now()
				}
				sawBusy = true
				// killed after a second of BUSY, so that it too holds the
				// engine a while
				if h.kill && !killed && time.Since(firstBusy) > time.Second {
					if k, _ := poller.Do("SCRIPT", "KILL"); string(k) != "+OK\r\n" {
						t.Fatalf("%s: SCRIPT KILL: %q", h.name, k)
					}
					killed = true
				}
			} else if string(r) != "+PONG\r\n" {
				t.Fatalf("%s: PING during the hold: %q", h.name, r)
			} else if sawBusy || !h.busy {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no BUSY then PONG within 30 s", h.name)
			}
			time.Sleep(20 * time.Millisecond)
		}
		poller.Close()
		r, err := runner.ReadReply()
		if err != nil || !strings.HasPrefix(string(r), h.want) {
			t.Fatalf("%s: reply %q %v, want %q\n%s", h.name, r, err, h.want, c.log(l))
		}
		held := time.Since(sent)
		end()
		t.Logf("%s: held the leader %v; the followers' longest silence from it %d ms", h.name, held.Round(time.Millisecond), maxContact.Swap(0))
	}
	if v := changed.Load(); v != nil {
		t.Fatalf("leadership changed while the leader was busy: %v\n%s", v, c.log(l))
	}
	after := c.info(l)
	if after["raft_state"] != "leader" || after["raft_term"] != term {
		t.Fatalf("leader %s after: state %s term %s, want leader in term %s\n%s", leaderID, after["raft_state"], after["raft_term"], term, c.log(l))
	}
	if strings.Contains(c.log(l), "leadership lost") {
		t.Fatalf("the leader logged a lost leadership:\n%s", c.log(l))
	}
	if v := firstUnknown.Load(); v != nil {
		t.Fatalf("%d writes failed other than BUSY, first: %v", unknown.Load(), v)
	}
	for i := range c.nodes {
		if v, err := c.cli(i).Get(ctx, "busy:write").Result(); err != nil || v != n {
			t.Fatalf("GET busy:write on %s: %q %v, want %q (the script's write replicated)", c.nodes[i].id, v, err, n)
		}
	}
	t.Logf("%d writes meanwhile", writes.Load())
}

// luaIterations is how many turns of a counting Lua loop take at least d
// on this machine (short runs through c measure it): scripts that must
// hold a server for a while without SCRIPT KILL ending them. The fastest
// of three runs counts: on a loaded machine one slow run made a script
// meant to last 1 s end before TestClusterBusyFollowers's checks.
func luaIterations(fatalf func(string, ...any), c *Conn, d time.Duration) int64 {
	fastest := time.Duration(1 << 62)
	for i := 0; i < 3; i++ {
		start := time.Now()
		if r, _ := c.Do("EVAL", "local n=0 while n < 2e6 do n=n+1 end return n", "0"); string(r) != ":2000000\r\n" {
			fatalf("calibration: %q", r)
		}
		fastest = min(fastest, time.Since(start))
	}
	iters := int64(2e6 * d.Seconds() / fastest.Seconds())
	return min(max(iters, 2e6), 4e8)
}
