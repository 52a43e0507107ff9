package tests

import (
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
// and redis; skipped without node, except under CI).
func TestClusterShardsNode(t *testing.T) {
	node := mustNodePackage(t, shardsNodeDir, "ioredis")
	s := mustShards(t, 3, 3)
	cmd := exec.Command(node, append([]string{"check-shards.js", "3"}, s.ports()...)...)
	cmd.Dir = shardsNodeDir
	s.runClientCheck(cmd)
}

// TestClusterShardsNodeLeaderKill: each client's load for 8 s over three
// groups of three, group 1's leader killed 2.5 s in (started again after
// the load): errors allowed, no acknowledged increment lost, no limiter
// above its limit (the script's header says why a client's resend is
// reported, not failed), the group's members equal afterwards.
func TestClusterShardsNodeLeaderKill(t *testing.T) {
	node := mustNodePackage(t, shardsNodeDir, "ioredis")
	s := mustShards(t, 3, 3)
	cmd := exec.Command(node, append([]string{"check-shards.js", "--seconds", "8", "3"}, s.ports()...)...)
	cmd.Dir = shardsNodeDir
	s.runWithLeaderKill(cmd, 1, 2500*time.Millisecond)
}

// TestClusterShardsPython runs tests/python/check_shards.py against three
// groups of one; skipped (except under CI) when /usr/bin/python3 has no
// redis.cluster (Debian's python3-redis: scripts/test.sh installs it).
func TestClusterShardsPython(t *testing.T) {
	py := needPyRedis(t)
	s := mustShards(t, 3, 1)
	cmd := exec.Command(py, append([]string{"check_shards.py", "3"}, s.ports()...)...)
	cmd.Dir = "python"
	s.runClientCheck(cmd)
}

// TestClusterShardsPythonLeaderKill: the script's load for 8 s over three
// groups of three, group 1's leader killed 2.5 s in (started again after
// it): errors allowed, no acknowledged increment lost, none applied twice,
// the group's members equal afterwards.
func TestClusterShardsPythonLeaderKill(t *testing.T) {
	py := needPyRedis(t)
	s := mustShards(t, 3, 3)
	cmd := exec.Command(py, append([]string{"check_shards.py", "--seconds", "8", "3"}, s.ports()...)...)
	cmd.Dir = "python"
	s.runWithLeaderKill(cmd, 1, 2500*time.Millisecond)
}

// runWithLeaderKill runs a client check script and kills group g's
// leader after d (the script must still be running then); once it has
// passed, the node is started again and its group must converge.
func (s *testShards) runWithLeaderKill(cmd *exec.Cmd, g int, d time.Duration) {
	s.t.Helper()
	killed := make(chan struct{})
	l := s.leaderOf(g)
	timer := time.AfterFunc(d, func() { s.kill(g, l); close(killed) })
	defer timer.Stop()
	s.runClientCheck(cmd)
	select {
	case <-killed:
	default:
		s.t.Fatal("the script ended before the kill")
	}
	s.restart(g, l)
	s.waitOK(30 * time.Second)
	s.groups[g].mustConverge(30 * time.Second)
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

// runClientCheck runs a client check script (bounded) and fails the test
// unless it exits 0 saying "all passed".
func (s *testShards) runClientCheck(cmd *exec.Cmd) {
	s.t.Helper()
	out, err := runBounded(cmd, 2*time.Minute)
	if err != nil || !strings.Contains(out, "all passed") {
		s.t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	s.t.Log(strings.TrimSpace(out))
}
