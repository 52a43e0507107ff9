package tests

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestClusterLeaderStopped: the leader's process gets no CPU for 2 s
// (SIGSTOP, then SIGCONT: a starved or paused host), twice.
//
// First while six writers append unique values through every node: the
// others elect a leader and serve meanwhile, and the stopped one,
// continued, learns it lost and follows. No acknowledged append is lost
// and none is applied twice (every acknowledged value is in the list
// exactly once, a failed one at most once).
//
// Then with no load: a read sent to the stopped leader waits in its
// socket, a new leader acknowledges a write, and on SIGCONT the read must
// see it (or fail), not be served from the old leader's memory before
// Raft's next lease check: it was, in 2 of 4 runs, before the leader
// confirmed its leadership after a pause (cluster/lease.go).
//
// After each, every node takes writes again, and the nodes converge to
// one digest.
func TestClusterLeaderStopped(t *testing.T) {
	c := mustCluster(t, 3)
	ctx := context.Background()
	// stopLeader stops the leader for 2 s, calling during() once another
	// node serves, then continues it; it returns the two leaders
	stopLeader := func(during func(nl int)) (l, nl int) {
		l = c.waitLeader(10 * time.Second)
		pid := c.nodes[l].cmd.Process.Pid
		cont := sync.OnceFunc(func() { syscall.Kill(pid, syscall.SIGCONT) })
		defer cont()
		stopped := time.Now()
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		for nl = -1; nl < 0; time.Sleep(20 * time.Millisecond) {
			if time.Since(stopped) > 5*time.Second {
				cont()
				t.Fatalf("no new leader within 5 s of stopping %s\n%s", c.nodes[l].id, c.log((l+1)%3))
			}
			for i := range c.nodes {
				if i == l {
					continue // its RAFT INFO waits for SIGCONT
				}
				if m := c.info(i); m["raft_state"] == "leader" && m["raft_serving"] == "1" {
					nl = i
				}
			}
		}
		t.Logf("%s serving %v after %s stopped", c.nodes[nl].id, time.Since(stopped).Round(time.Millisecond), c.nodes[l].id)
		time.Sleep(time.Until(stopped.Add(2 * time.Second)))
		during(nl)
		return l, nl
	}
	// carryOn: a write through every node within 5 s, then one digest
	carryOn := func(what string) {
		for i := range c.nodes {
			start := time.Now()
			var err error
			for time.Since(start) < 5*time.Second {
				if err = c.cli(i).Set(ctx, "carry", i, 0).Err(); err == nil {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err != nil {
				t.Fatalf("%s: SET through %s: %v", what, c.nodes[i].id, err)
			}
		}
		ds := c.waitConverged(30 * time.Second)
		for _, d := range ds {
			if d != ds[0] {
				t.Fatalf("%s: digests differ: %v", what, ds)
			}
		}
	}

	// 1. under load
	var mu sync.Mutex
	acked, failed := map[string]bool{}, map[string]bool{}
	errs := map[string]int{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			cli := c.cli(w % len(c.nodes))
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				v := strconv.Itoa(w) + ":" + strconv.Itoa(seq)
				err := cli.RPush(ctx, "log", v).Err()
				mu.Lock()
				if err == nil {
					acked[v] = true
				} else {
					failed[v] = true
					kind, _, _ := strings.Cut(err.Error(), " ")
					errs[kind]++
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(10 * time.Millisecond)
				}
			}
		}(w)
	}
	time.Sleep(time.Second)
	_, nl := stopLeader(func(int) {})
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	carryOn("after a stop under load")
	list, err := c.cli(nl).LRange(ctx, "log", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, v := range list {
		if seen[v]++; seen[v] > 1 {
			t.Fatalf("%s appended twice", v)
		}
		if !acked[v] && !failed[v] {
			t.Fatalf("%s in the list was never sent", v)
		}
	}
	lost := 0
	for v := range acked {
		if seen[v] == 0 {
			lost++
			t.Errorf("acknowledged %s is not in the list", v)
		}
	}
	in := 0
	for v := range failed {
		in += seen[v]
	}
	t.Logf("%d appends acknowledged (%d lost), %d failed %v (%d of those applied)", len(acked), lost, len(failed), errs, in)

	// 2. a read waiting on the stopped leader
	l := c.waitLeader(10 * time.Second)
	// a connection of its own, made before the stop
	old := redis.NewClient(&redis.Options{Addr: c.addr(l), MaxRetries: -1, Protocol: 2, PoolSize: 1, ReadTimeout: 15 * time.Second})
	defer old.Close()
	if err := old.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	getc := make(chan error, 1)
	if l2, _ := stopLeader(func(nl int) {
		if err := c.cli(nl).Set(ctx, "after", "new", 0).Err(); err != nil {
			t.Fatalf("SET on the new leader: %v", err)
		}
		go func() {
			v, err := old.Get(ctx, "after").Result()
			if err == nil && v != "new" || errors.Is(err, redis.Nil) {
				err = fmt.Errorf("stale read %q", v)
			} else if err != nil {
				t.Logf("GET on the old leader right after SIGCONT: %v", err)
				err = nil
			}
			getc <- err
		}()
		time.Sleep(50 * time.Millisecond) // the GET waits in the socket
	}); l2 != l {
		t.Fatalf("stopped %s, not %s", c.nodes[l2].id, c.nodes[l].id)
	}
	if err := <-getc; err != nil {
		t.Fatalf("GET after on the old leader right after SIGCONT: %v (the new leader had acknowledged SET after new)\n%s", err, c.log(l))
	}
	carryOn("after a stop without load")
}
