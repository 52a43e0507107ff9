package tests

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"limitdb/server"
)

// Cluster mode on one group (issue 22's first slice): replies compared
// with a real redis-server --cluster-enabled yes, and go-redis's
// ClusterClient against a limitdb of one node and a Raft group of three.

// crc16 is Redis's CRC16/XMODEM, written here so that the expected slots
// do not come from the code under test.
func crc16(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc ^= uint16(c) << 8
		for i := 0; i < 8; i++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// testKeySlot is keyHashSlot: the hash tag between the first '{' and the
// next '}' when not empty.
func testKeySlot(key string) int {
	if s := strings.IndexByte(key, '{'); s >= 0 {
		if e := strings.IndexByte(key[s+1:], '}'); e > 0 {
			key = key[s+1 : s+1+e]
		}
	}
	return int(crc16([]byte(key)) & 16383)
}

func TestTestKeySlotVectors(t *testing.T) {
	// the spec's check value, and slots redis-server's CLUSTER KEYSLOT gives
	if got := crc16([]byte("123456789")); got != 0x31C3 {
		t.Fatalf("crc16 = %#x", got)
	}
	for k, want := range map[string]int{"a": 15495, "{a}x": 15495, "foo": 12182} {
		if got := testKeySlot(k); got != want {
			t.Errorf("slot(%q) = %d, want %d", k, got, want)
		}
	}
}

// mustLimitdbClusterMode is an in-process limitdb with cluster-enabled yes
// (no Raft node: a group of one in memory).
func mustLimitdbClusterMode(t *testing.T) string {
	t.Helper()
	srv := mustLimitdbConfig(t, server.Config{Addr: "127.0.0.1:0", Dir: t.TempDir()}, "", "--cluster-enabled", "yes")
	return srv.Addr().String()
}

// mustRedisCluster is a redis-server in cluster mode with no slots. Its
// bus port is picked as the client ports are: Redis's default, port +
// 10000, lands in the kernel's ephemeral range, where an outgoing
// connection may hold it (redis-server then exits, "Failed listening on
// port … (cluster)": 3 starts in 40 on the shared machine).
func mustRedisCluster(t *testing.T) *Redis {
	t.Helper()
	bus, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return mustRedis(t, "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(t.TempDir(), "nodes.conf"),
		"--cluster-port", strconv.Itoa(bus))
}

var (
	hexID     = regexp.MustCompile(`[0-9a-f]{40}`)
	emptyIP   = regexp.MustCompile(`\$9\r\n127\.0\.0\.1\r\n`)
	portInt   = regexp.MustCompile(`:(\d{4,5})\r\n`)
	nodesAddr = regexp.MustCompile(`(127\.0\.0\.1)?:\d+@\d+`)
)

// normCluster makes the two servers' replies comparable: node ids, the
// ports, and the ip (a Redis node that met no other does not know its
// own, and says ""; limitdb says the address it listens on).
func normCluster(b []byte, ports ...string) []byte {
	b = hexID.ReplaceAll(b, []byte(strings.Repeat("x", 40)))
	b = emptyIP.ReplaceAllLiteral(b, []byte("$0\r\n\r\n"))
	for _, p := range ports {
		b = bytes.ReplaceAll(b, []byte(":"+p+"\r\n"), []byte(":PORT\r\n"))
	}
	return b
}

func portOf(addr string) string { return addr[strings.LastIndexByte(addr, ':')+1:] }

func TestClusterModeDiff(t *testing.T) {
	for _, proto := range []string{"2", "3"} {
		t.Run("resp"+proto, func(t *testing.T) { clusterModeDiff(t, proto) })
	}
}

func clusterModeDiff(t *testing.T, proto string) {
	r := mustRedisCluster(t)
	la := mustLimitdbClusterMode(t)
	rc, lc := mustDial(t, r.Addr), mustDial(t, la)
	mustDo(t, rc, "HELLO", proto)
	mustDo(t, lc, "HELLO", proto)
	ports := []string{portOf(r.Addr), portOf(la)}
	same := func(args ...string) {
		t.Helper()
		want, _ := rc.Do(args...)
		got, _ := lc.Do(args...)
		if w, g := normCluster(want, ports...), normCluster(got, ports...); !bytes.Equal(w, g) {
			t.Errorf("%q:\nredis   %q\nlimitdb %q", args, w, g)
		}
	}
	// before any slot: state fail, every keyed command unserved, SLOTS empty
	for _, c := range [][]string{
		{"CLUSTER", "INFO"}, {"CLUSTER", "SLOTS"}, {"SET", "a", "1"}, {"GET", "a"},
		{"MSET", "a", "1", "b", "2"}, {"PING"}, {"DBSIZE"},
		{"SELECT", "1"}, {"SELECT", "0"}, {"SELECT", "x"}, {"READONLY"}, {"READWRITE"}, {"ASKING"},
		{"CLUSTER", "KEYSLOT", "a"}, {"CLUSTER", "KEYSLOT", "{a}x"}, {"CLUSTER", "KEYSLOT", "{}a"}, {"CLUSTER", "KEYSLOT"},
		{"CLUSTER", "COUNTKEYSINSLOT", "16384"}, {"CLUSTER", "COUNTKEYSINSLOT", "-1"}, {"CLUSTER", "COUNTKEYSINSLOT", "x"},
		{"CLUSTER", "GETKEYSINSLOT", "1", "-1"}, {"CLUSTER", "GETKEYSINSLOT", "16384", "1"}, {"CLUSTER", "GETKEYSINSLOT", "x", "1"},
		{"CLUSTER", "GETKEYSINSLOT", "1", "x"}, {"CLUSTER", "FOO"},
		// assignment errors, then a partial assignment
		{"CLUSTER", "ADDSLOTS", "1", "2", "2"}, {"CLUSTER", "ADDSLOTS", "16384"}, {"CLUSTER", "ADDSLOTS", "-1"},
		{"CLUSTER", "ADDSLOTS", "x"}, {"CLUSTER", "ADDSLOTSRANGE", "5", "3"}, {"CLUSTER", "ADDSLOTSRANGE", "0", "10", "20"},
		{"CLUSTER", "ADDSLOTSRANGE", "0", "100"}, {"CLUSTER", "ADDSLOTS", "50"}, {"CLUSTER", "ADDSLOTSRANGE", "90", "200"},
		{"CLUSTER", "SLOTS"}, {"CLUSTER", "SHARDS"},
		// the cluster is down while slots are missing, even for an owned one
		{"SET", "{a}1", "1"}, {"SET", "foo", "1"},
		// a keyless script runs; its keyed command finds the cluster down
		{"EVAL", "return redis.call('get', 'foo')", "0"}, {"EVAL", "return redis.call('ping')", "0"},
		{"CLUSTER", "ADDSLOTSRANGE", "101", "16383"},
	} {
		same(c...)
	}
	// redis-server turns ok on its cron (a second or so); limitdb at once
	deadline := time.Now().Add(10 * time.Second)
	for !bytes.Contains(mustDo(t, rc, "CLUSTER", "INFO"), []byte("cluster_state:ok")) {
		if time.Now().After(deadline) {
			t.Fatal("redis-server's cluster_state never turned ok")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, c := range [][]string{
		{"CLUSTER", "INFO"}, {"CLUSTER", "SLOTS"}, {"CLUSTER", "SHARDS"},
		{"SET", "a", "1"}, {"SET", "{a}x", "2"}, {"SET", "b", "3"}, {"GET", "a"},
		{"MSET", "a", "1", "b", "2"}, {"MSET", "{a}1", "1", "{a}2", "2"}, {"MGET", "a", "{a}x"}, {"DEL", "a", "b"},
		{"CLUSTER", "COUNTKEYSINSLOT", "15495"}, {"CLUSTER", "COUNTKEYSINSLOT", strconv.Itoa(testKeySlot("b"))},
		{"CLUSTER", "GETKEYSINSLOT", "15495", "0"}, {"CLUSTER", "GETKEYSINSLOT", "15495", "1"},
		{"EVAL", "return 1", "2", "a", "b"}, {"EVAL", "return redis.call('get', KEYS[1])", "1", "{a}x"},
		// 7.0 lets a script reach an undeclared key its node serves
		{"EVAL", "return redis.call('get', 'b')", "1", "a"},
		{"MULTI"}, {"SET", "a", "1"}, {"SET", "b", "1"}, {"EXEC"},
		{"MULTI"}, {"SET", "a", "1"}, {"GET", "{a}x"}, {"EXEC"},
		{"WATCH", "a", "b"}, {"SELECT", "2"},
		// database 0 only
		{"MOVE", "a", "1"}, {"SWAPDB", "0", "1"}, {"COPY", "a", "{a}b", "DB", "1"}, {"COPY", "a", "{a}b", "DB", "0"},
		{"EVAL", "return redis.call('move', KEYS[1], 1)", "1", "a"},
		{"EVAL", "return redis.call('mset', 'a', 1, 'b', 2)", "0"},
		{"MULTI"}, {"MOVE", "a", "1"}, {"SWAPDB", "0", "1"}, {"EXEC"},
	} {
		same(c...)
	}
	// GETKEYSINSLOT's order is the dict's: compare as sets
	sorted := func(c *Conn) string {
		lines := strings.Split(string(mustDo(t, c, "CLUSTER", "GETKEYSINSLOT", "15495", "10")), "\r\n")
		sort.Strings(lines)
		return strings.Join(lines, " ")
	}
	if w, g := sorted(rc), sorted(lc); w != g || !strings.Contains(g, "{a}x") {
		t.Errorf("GETKEYSINSLOT 15495:\nredis   %q\nlimitdb %q", w, g)
	}
	// NODES: the same line but for the address (ip unknown to Redis) and
	// the bus port
	norm := func(b []byte) string {
		s := string(b[bytes.IndexByte(b, '\n')+1:])
		return nodesAddr.ReplaceAllString(hexID.ReplaceAllString(s, "ID"), "ADDR")
	}
	if w, g := norm(mustDo(t, rc, "CLUSTER", "NODES")), norm(mustDo(t, lc, "CLUSTER", "NODES")); w != g {
		t.Errorf("CLUSTER NODES:\nredis   %q\nlimitdb %q", w, g)
	}
	// the help text, and a MYID of 40 hex digits, the id NODES gives
	same("CLUSTER", "HELP")
	id := strings.TrimPrefix(strings.TrimSpace(string(mustDo(t, lc, "CLUSTER", "MYID"))), "$40\r\n")
	if len(id) != 40 || !hexID.MatchString(id) || !bytes.Contains(mustDo(t, lc, "CLUSTER", "NODES"), []byte(id+" ")) {
		t.Errorf("MYID %q", id)
	}
	// INFO's cluster section and HELLO's mode
	for _, c := range []*Conn{rc, lc} {
		if b := mustDo(t, c, "INFO", "cluster"); !bytes.Contains(b, []byte("cluster_enabled:1")) {
			t.Errorf("INFO cluster: %q", b)
		}
	}
}

// TestClusterModeOff: without cluster-enabled, CLUSTER and ASKING answer
// as a Redis without cluster support, and CONFIG SET cannot turn it on.
func TestClusterModeOff(t *testing.T) {
	_, l := mustRedisConn(t)
	lc := mustDial(t, limitAddr)
	for _, c := range [][]string{{"CLUSTER", "INFO"}, {"CLUSTER", "SLOTS"}, {"CLUSTER", "KEYSLOT", "a"}, {"ASKING"},
		{"CONFIG", "SET", "cluster-enabled", "yes"}, {"CONFIG", "GET", "cluster-enabled"}, {"SELECT", "1"}, {"SELECT", "0"}} {
		want, _ := l.Do(c...)
		got, _ := lc.Do(c...)
		if !bytes.Equal(want, got) {
			t.Errorf("%q:\nredis   %q\nlimitdb %q", c, want, got)
		}
	}
}

// clusterWorkload runs SET/GET, RL.ALLOW and EVALSHA over keys in many
// slots through cc, and checks every reply.
func clusterWorkload(t *testing.T, cc *redis.ClusterClient, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	slots := map[int]bool{}
	script := redis.NewScript(`return redis.call('INCRBY', KEYS[1], ARGV[1])`)
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("key:%d", i)
		slots[testKeySlot(k)] = true
		if err := cc.Set(ctx, k, i, 0).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
		if v, err := cc.Get(ctx, k).Int(); err != nil || v != i {
			t.Fatalf("GET %s: %d %v", k, v, err)
		}
		if v, err := script.Run(ctx, cc, []string{"ctr:{" + k + "}"}, 3).Int(); err != nil || v != 3 {
			t.Fatalf("EVALSHA ctr:{%s}: %d %v", k, v, err)
		}
		res, err := cc.Do(ctx, "RL.ALLOW", "rl:"+k, "2", "60").Slice()
		if err != nil || len(res) < 2 || res[0] != "allowed" {
			t.Fatalf("RL.ALLOW rl:%s: %v %v", k, res, err)
		}
	}
	if len(slots) < n/2 {
		t.Fatalf("only %d slots for %d keys", len(slots), n)
	}
	// a multi-key command within one hash tag, and one across two slots
	if err := cc.MSet(ctx, "{u}a", 1, "{u}b", 2).Err(); err != nil {
		t.Fatalf("MSET in one slot: %v", err)
	}
	if err := cc.Do(ctx, "MSET", "a", 1, "b", 2).Err(); err == nil || !strings.HasPrefix(err.Error(), "CROSSSLOT ") {
		t.Fatalf("MSET across slots: %v", err)
	}
}

func TestClusterModeGoRedisOneNode(t *testing.T) {
	addr := mustLimitdbClusterMode(t)
	c := mustDial(t, addr)
	if r := mustDo(t, c, "CLUSTER", "ADDSLOTSRANGE", "0", "16383"); string(r) != "+OK\r\n" {
		t.Fatalf("ADDSLOTSRANGE: %q", r)
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addr}, Protocol: 2})
	defer cc.Close()
	clusterWorkload(t, cc, 300)
}

func TestClusterModeGoRedisThreeNodes(t *testing.T) {
	c := mustCluster(t, 3, "--cluster-enabled", "yes")
	l := c.waitLeader(10 * time.Second)
	ctx := context.Background()
	// sent to a follower, the assignment is forwarded to the leader
	f := (l + 1) % 3
	if err := c.cli(f).Do(ctx, "CLUSTER", "ADDSLOTSRANGE", "0", "16383").Err(); err != nil {
		t.Fatalf("ADDSLOTSRANGE on a follower: %v", err)
	}
	for i := range c.nodes {
		deadline := time.Now().Add(10 * time.Second)
		for {
			s, _ := c.cli(i).Do(ctx, "CLUSTER", "INFO").Text()
			if strings.Contains(s, "cluster_state:ok") {
				if !strings.Contains(s, "cluster_known_nodes:3") {
					t.Errorf("node %d: %s", i, s)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d never ok: %s", i, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// every node shows the whole range, with the leader as its master and
	// both followers as replicas (a follower learns the other's address
	// from the leader's pong, once a second)
	leaderAddr := c.addr(l)
	for i := range c.nodes {
		deadline := time.Now().Add(10 * time.Second)
		for {
			slots, err := c.cli(i).ClusterSlots(ctx).Result()
			if err != nil || len(slots) != 1 || slots[0].Start != 0 || slots[0].End != 16383 || slots[0].Nodes[0].Addr != leaderAddr {
				t.Fatalf("node %d CLUSTER SLOTS: %+v %v (leader %s)", i, slots, err, leaderAddr)
			}
			if len(slots[0].Nodes) == 3 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d CLUSTER SLOTS lists %d nodes: %+v", i, len(slots[0].Nodes), slots)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// redis-cli's own check, from a follower: one master, every slot, two
	// replicas, and every node agreeing
	if out, err := exec.Command("redis-cli", "--cluster", "check", c.addr(f)).CombinedOutput(); err != nil ||
		!strings.Contains(string(out), "[OK] All 16384 slots covered.") || !strings.Contains(string(out), "2 additional replica(s)") ||
		!strings.Contains(string(out), "[OK] All nodes agree about slots configuration.") {
		t.Fatalf("redis-cli --cluster check: %v\n%s", err, out)
	}
	// NODES: the leader lists the three, itself the master with every
	// slot, the followers its replicas; a follower lists itself as one
	nodes, _ := c.cli(l).ClusterNodes(ctx).Result()
	lines := strings.Split(strings.TrimSpace(nodes), "\n")
	masterID := strings.Fields(lines[0])[0]
	if len(lines) != 3 || !strings.Contains(lines[0], " myself,master - ") || !strings.HasSuffix(lines[0], " connected 0-16383") {
		t.Fatalf("leader's NODES:\n%s", nodes)
	}
	for _, ln := range lines[1:] {
		if !strings.Contains(ln, " slave "+masterID+" ") {
			t.Fatalf("leader's NODES:\n%s", nodes)
		}
	}
	if fn, _ := c.cli(f).ClusterNodes(ctx).Result(); !strings.Contains(fn, " myself,slave "+masterID+" ") {
		t.Fatalf("follower's NODES:\n%s", fn)
	}
	// a follower answers MOVED to the leader for keyed commands, serves
	// reads itself after READONLY, and forwards keyless writes
	fc := mustDial(t, c.addr(f))
	want := "-MOVED " + strconv.Itoa(testKeySlot("a")) + " " + leaderAddr + "\r\n"
	for _, cmd := range [][]string{{"SET", "a", "1"}, {"GET", "a"}} {
		if r := mustDo(t, fc, cmd...); string(r) != want {
			t.Fatalf("%q on a follower: %q, want %q", cmd, r, want)
		}
	}
	mustDo(t, fc, "READONLY")
	if r := mustDo(t, fc, "GET", "a"); string(r) != "$-1\r\n" {
		t.Fatalf("GET after READONLY: %q", r)
	}
	if r := mustDo(t, fc, "SET", "a", "1"); string(r) != want {
		t.Fatalf("SET after READONLY: %q", r)
	}
	if r := mustDo(t, fc, "FLUSHALL"); string(r) != "+OK\r\n" {
		t.Fatalf("FLUSHALL on a follower: %q", r)
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{c.addr(0), c.addr(1), c.addr(2)}, Protocol: 2})
	defer cc.Close()
	clusterWorkload(t, cc, 200)
}

// effectClusterEnabled: immutable, as in Redis; a server started with it
// is in cluster mode (INFO, SELECT, CLUSTER answer as Redis's cluster
// mode does: TestClusterModeDiff).
func effectClusterEnabled(t *testing.T, c *Conn, addr, name string) {
	refusedWith("yes", immutable)(t, c, addr, name)
	expectDo(t, c, "-ERR This instance has cluster support disabled\r\n", "CLUSTER", "INFO")
	cm := mustDial(t, mustLimitdbClusterMode(t))
	expectDo(t, cm, "-ERR SELECT is not allowed in cluster mode\r\n", "SELECT", "1")
	if b := mustDo(t, cm, "INFO", "cluster"); !bytes.Contains(b, []byte("cluster_enabled:1")) {
		t.Fatalf("INFO cluster: %q", b)
	}
}

// TestClusterModeFailover: after the leader is killed, a follower's MOVED
// names the new leader once it has answered a ping (never the dead one
// once another leads), and a ClusterClient carries on over the two left.
func TestClusterModeFailover(t *testing.T) {
	c := mustCluster(t, 3, "--cluster-enabled", "yes")
	l := c.waitLeader(10 * time.Second)
	ctx := context.Background()
	if err := c.cli(l).Do(ctx, "CLUSTER", "ADDSLOTSRANGE", "0", "16383").Err(); err != nil {
		t.Fatal(err)
	}
	c.kill(l)
	nl := -1
	deadline := time.Now().Add(15 * time.Second)
	for nl < 0 || nl == l {
		if time.Now().After(deadline) {
			t.Fatal("no new leader")
		}
		nl = c.leader()
		time.Sleep(20 * time.Millisecond)
	}
	f := 3 - l - nl
	fc := mustDial(t, c.addr(f))
	want := "-MOVED " + strconv.Itoa(testKeySlot("a")) + " " + c.addr(nl) + "\r\n"
	for {
		r := string(mustDo(t, fc, "GET", "a"))
		if r == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("follower's GET after the failover: %q, want %q", r, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{c.addr(nl), c.addr(f)}, Protocol: 2})
	defer cc.Close()
	clusterWorkload(t, cc, 50)
}
