package tests

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Other clients against several groups as one Redis Cluster: Node's
// ioredis Cluster and node-redis createCluster (tests/node/cluster), and
// redis-py's RedisCluster (tests/python), each through a bounded workload
// whose every reply the script checks; the test passes when the script
// says so.

const shardsNodeDir = "node/cluster"

// TestClusterShardsNode runs tests/node/cluster/check-shards.js against
// three groups of three (mustNodePackage: package-lock.json pins ioredis
// and redis; skipped without node, except under CI), its load running
// 3 s with every check exact across a move of 128 slots of group 0
// holding its keys to group 1.
func TestClusterShardsNode(t *testing.T) {
	node := mustNodePackage(t, shardsNodeDir, "ioredis")
	s := mustShards(t, 3, 3)
	mv := s.workloadMove(checkScriptKeys("io", "nr"), 0, 1)
	cmd := exec.Command(node, append([]string{"check-shards.js", "--for", "3", "--moved", mv.arg(), "3"}, s.ports()...)...)
	cmd.Dir = shardsNodeDir
	s.runAcross(cmd, mv, -1, 0)
}

// TestClusterShardsNodeLeaderKill: each client's load for 8 s over three
// groups of three, 128 slots of group 0 holding its keys moved to group 2
// once it runs, group 1's leader killed 2.5 s in (started again after
// the load): errors allowed, no acknowledged increment lost, no limiter
// above its limit (the script's header says why a client's resend is
// reported, not failed), the group's members equal afterwards.
func TestClusterShardsNodeLeaderKill(t *testing.T) {
	node := mustNodePackage(t, shardsNodeDir, "ioredis")
	s := mustShards(t, 3, 3)
	mv := s.workloadMove(checkScriptKeys("io", "nr"), 0, 2)
	cmd := exec.Command(node, append([]string{"check-shards.js", "--moved", mv.arg(), "--seconds", "8", "3"}, s.ports()...)...)
	cmd.Dir = shardsNodeDir
	s.runAcross(cmd, mv, 1, 200*time.Millisecond)
}

// TestClusterShardsPython runs tests/python/check_shards.py against three
// groups of one; skipped (except under CI) when /usr/bin/python3 has no
// redis.cluster (Debian's python3-redis: scripts/test.sh installs it).
// Its load runs 3 s with every check exact across a move of 128 slots of
// group 0 holding its keys to group 1.
func TestClusterShardsPython(t *testing.T) {
	py := needPyRedis(t)
	s := mustShards(t, 3, 1)
	mv := s.workloadMove(checkScriptKeys("py"), 0, 1)
	cmd := exec.Command(py, append([]string{"check_shards.py", "--for", "3", "--moved", mv.arg(), "3"}, s.ports()...)...)
	cmd.Dir = "python"
	s.runAcross(cmd, mv, -1, 0)
}

// TestClusterShardsPythonLeaderKill: the script's load for 8 s over three
// groups of three, 128 slots of group 0 holding its keys moved to group 2
// once it runs, group 1's leader killed 2.5 s in (started again after
// it): errors allowed, no acknowledged increment lost, none applied twice,
// the group's members equal afterwards.
func TestClusterShardsPythonLeaderKill(t *testing.T) {
	py := needPyRedis(t)
	s := mustShards(t, 3, 3)
	mv := s.workloadMove(checkScriptKeys("py"), 0, 2)
	cmd := exec.Command(py, append([]string{"check_shards.py", "--moved", mv.arg(), "--seconds", "8", "3"}, s.ports()...)...)
	cmd.Dir = "python"
	s.runAcross(cmd, mv, 1, 200*time.Millisecond)
}

// checkScriptKeys is the keys the check scripts' workers use, for each
// client name: name:kind:worker:j, kinds s, c and r, 4 workers of 40.
func checkScriptKeys(names ...string) []string {
	var out []string
	for _, n := range names {
		for _, kind := range []string{"s", "c", "r"} {
			for w := 0; w < 4; w++ {
				for j := 0; j < 40; j++ {
					out = append(out, n+":"+kind+":"+strconv.Itoa(w)+":"+strconv.Itoa(j))
				}
			}
		}
	}
	return out
}

// slotMove is a move a test makes under a client's workload: slots
// lo..hi, holding keys of the workload's keys, from group src to dst.
type slotMove struct{ lo, hi, keys, src, dst int }

func (m slotMove) arg() string { return strconv.Itoa(m.lo) + "-" + strconv.Itoa(m.hi) }

// workloadMove picks the 128 slots (two batches) of group src that hold
// the most of keys, to be moved to dst.
func (s *testShards) workloadMove(keys []string, src, dst int) slotMove {
	glo, ghi := s.slotRange(src)
	lo, hi := densestSlots(keys, glo, ghi, 128)
	return slotMove{lo: lo, hi: hi, keys: keysInSlots(keys, lo, hi), src: src, dst: dst}
}

// runAcross runs a client check script (it must pass) and makes mv once
// its load runs (the source group's leader holds keys), from the test's
// goroutine: the script must still be running when the move completed.
// killGroup >= 0: that group's leader is also killed killAfter after the
// move completed (the script still running then: it runs a count of
// operations, and redis-py's took 2.3 s, its start included, once writes
// got cheaper, so a kill 2.5 s after the start came after its end),
// started again after the script passed, and its group must converge.
func (s *testShards) runAcross(cmd *exec.Cmd, mv slotMove, killGroup int, killAfter time.Duration) {
	s.t.Helper()
	killed := make(chan struct{})
	var startKill func()
	if killGroup >= 0 {
		l := s.leaderOf(killGroup)
		var timer *time.Timer
		startKill = func() { timer = time.AfterFunc(killAfter, func() { s.kill(killGroup, l); close(killed) }) }
		defer func() {
			if timer != nil {
				timer.Stop()
			}
		}()
		defer func() {
			select {
			case <-killed:
			default:
				s.t.Fatal("the script ended before the kill")
			}
			s.restart(killGroup, l)
			// it holds its clients until it applied its log and learnt
			// the other groups' slots (awaitCluster): its first answer
			// after the PING the restart waited for is ok
			if m := s.clusterInfo(killGroup, l); m["cluster_state"] != "ok" {
				s.t.Fatalf("node %s restarted: its first CLUSTER INFO is %v\n%s", s.groups[killGroup].nodes[l].id, m, s.groups[killGroup].log(l))
			}
			s.waitOK(30 * time.Second)
			s.groups[killGroup].mustConverge(30 * time.Second)
		}()
	}
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := runBounded(cmd, 2*time.Minute)
		done <- result{out, err}
	}()
	src := s.groups[mv.src].cli(s.leaderOf(mv.src))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if n, err := src.DBSize(context.Background()).Result(); err == nil && n > 0 {
			break
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: no key written in group %d within 30 s", strings.Join(cmd.Args, " "), mv.src)
		}
	}
	took := s.moveSlots(mv.lo, mv.hi, mv.src, mv.dst, 20*time.Second)
	var r result
	select {
	case r = <-done:
		s.t.Fatalf("%s ended before the move of slots %s completed: %v\n%s", strings.Join(cmd.Args, " "), mv.arg(), r.err, r.out)
	default:
	}
	if startKill != nil {
		startKill()
	}
	r = <-done
	if r.err != nil || !strings.Contains(r.out, "all passed") {
		s.t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), r.err, r.out)
	}
	s.t.Logf("%s\nslots %s (%d of the workload's keys) moved from group %d to %d in %v while it ran",
		strings.TrimSpace(r.out), mv.arg(), mv.keys, mv.src, mv.dst, took.Round(time.Millisecond))
}

// needPyRedis returns /usr/bin/python3 when it has redis.cluster, and
// skips the test otherwise (fails it under CI).
func needPyRedis(t *testing.T) string {
	const py = "/usr/bin/python3"
	if out, err := exec.Command(py, "-c", "import redis.cluster").CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s has no redis.cluster (apt-get install python3-redis): %v\n%s", py, err, out)
		}
		t.Skipf("%s has no redis.cluster (apt-get install python3-redis): %v", py, err)
	}
	return py
}

// ports is every node's client port.
func (s *testShards) ports() []string {
	var out []string
	for _, c := range s.groups {
		for _, nd := range c.nodes {
			out = append(out, strconv.Itoa(nd.port))
		}
	}
	return out
}
