package tests

import (
	"bufio"
	"context"
	"encoding/binary"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Membership and the inter-node links under requirepass, and a node
// whose dir was wiped (issue 18).

// recipeNode is one process of the README's three-node recipe, run as a
// user would run it: plain loopback addresses, no proxy.
type recipeNode struct {
	id, dir, raft string
	port          int
	cmd           *exec.Cmd
	logPath       string
}

func (n *recipeNode) addr() string { return "127.0.0.1:" + strconv.Itoa(n.port) }

func (n *recipeNode) log() string {
	b, _ := os.ReadFile(n.logPath)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// mustRecipeNode runs the README's command line for node id with extra
// options, and waits until it answers an authenticated PING.
func mustRecipeNode(t *testing.T, id, pass string, extra ...string) *recipeNode {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	n := &recipeNode{id: id, dir: t.TempDir(), port: port,
		raft: "127.0.0.1:" + strconv.Itoa(freePortOn(t, "127.0.0.1"))}
	n.logPath = filepath.Join(t.TempDir(), id+".log")
	args := []string{"--node-id", id, "--bind", "127.0.0.1", "--port", strconv.Itoa(port),
		"--raft-addr", n.raft, "--dir", n.dir, "--loglevel", "notice"}
	args = append(append(args, ioModelArgs()...), extra...)
	logf, err := os.Create(n.logPath)
	if err != nil {
		t.Fatal(err)
	}
	n.cmd = exec.Command(limitdbBinary(t), args...)
	n.cmd.Stdout, n.cmd.Stderr = logf, logf
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { n.cmd.Wait(); logf.Close(); close(exited) }()
	t.Cleanup(func() { n.cmd.Process.Kill() })
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case <-exited:
			t.Fatalf("%s exited\n%s", id, n.log())
		default:
		}
		if c, err := Dial(n.addr()); err == nil {
			c.Do("AUTH", pass)
			r, err := c.Do("PING")
			c.Close()
			if err == nil && string(r) == "+PONG\r\n" {
				return n
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer an authenticated PING\n%s", id, n.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// voters counts the voters in a RAFT INFO text.
func voters(info string) int {
	return strings.Count(info, "voter=1")
}

// waitRecipeVoters waits until admin's RAFT INFO counts n voters; a
// failure shows the joining nodes' logs.
func waitRecipeVoters(t *testing.T, admin *redis.Client, n int, joining ...*recipeNode) {
	t.Helper()
	if eventually(15*time.Second, func() bool {
		s, _ := admin.Do(context.Background(), "RAFT", "INFO").Text()
		return voters(s) == n
	}) {
		return
	}
	logs := make([]string, len(joining))
	for i, j := range joining {
		logs[i] = j.log()
	}
	t.Fatalf("not %d voters\n%s", n, strings.Join(logs, "\n"))
}

// TestClusterRecipeRequirepass: the README's three nodes with requirepass
// (and masterauth, which the joining nodes authenticate with) form a
// cluster and forward writes; RAFT JOIN and RAFT REMOVE obey requirepass
// and ACL like any administrative command. Before, RAFT JOIN was flagged
// no_auth and an unauthenticated `RAFT JOIN evil 127.0.0.1:1` answered
// +OK (evil became a member).
func TestClusterRecipeRequirepass(t *testing.T) {
	const pw = "a long random password"
	sec := []string{"--requirepass", pw, "--masterauth", pw}
	n1 := mustRecipeNode(t, "n1", pw, sec...)
	n2 := mustRecipeNode(t, "n2", pw, append(sec, "--join", n1.addr())...)
	n3 := mustRecipeNode(t, "n3", pw, append(sec, "--join", n1.addr())...)
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: n1.addr(), Password: pw, MaxRetries: -1, Protocol: 2})
	defer admin.Close()
	waitRecipeVoters(t, admin, 3, n2, n3)
	expect := func(addr, user, pass string, want string, args ...string) {
		t.Helper()
		c := mustDial(t, addr)
		defer c.Close()
		if pass != "" {
			if r, err := c.Do("AUTH", user, pass); err != nil || string(r) != "+OK\r\n" {
				t.Fatalf("AUTH %s: %q %v", user, r, err)
			}
		}
		if r, err := c.Do(args...); err != nil || string(r) != want+"\r\n" {
			t.Fatalf("%v as %q on %s: %q %v, want %q", args, user, addr, r, err, want)
		}
	}
	for _, n := range []*recipeNode{n1, n2} {
		expect(n.addr(), "", "", "-NOAUTH Authentication required.", "RAFT", "JOIN", "evil", "127.0.0.1:1")
		expect(n.addr(), "", "", "-NOAUTH Authentication required.", "RAFT", "REMOVE", "n3")
	}
	if err := admin.Do(ctx, "ACL", "SETUSER", "app", "on", ">apppw", "~*", "&*", "+@all", "-@admin").Err(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []*recipeNode{n1, n2} {
		expect(n.addr(), "app", "apppw", "-NOPERM this user has no permissions to run the 'raft|join' command", "RAFT", "JOIN", "evil", "127.0.0.1:1")
		expect(n.addr(), "app", "apppw", "-NOPERM this user has no permissions to run the 'raft|remove' command", "RAFT", "REMOVE", "n3")
	}
	// the app user writes through a follower (the forwarding link is
	// authenticated) and reads its write on another
	expect(n3.addr(), "app", "apppw", "+OK", "SET", "k", "v")
	expect(n2.addr(), "app", "apppw", "$1\r\nv", "GET", "k")
	s, _ := admin.Do(ctx, "RAFT", "INFO").Text()
	if strings.Contains(s, "evil") || !strings.Contains(s, "raft_members:3") {
		t.Fatalf("membership changed:\n%s", s)
	}
	// masteruser and masterauth are node-local parameters like the others
	for _, n := range []*recipeNode{n1, n2} {
		c := redis.NewClient(&redis.Options{Addr: n.addr(), Password: pw, MaxRetries: -1, Protocol: 2})
		if v := c.ConfigGet(ctx, "masteruser").Val(); len(v) != 1 || v["masteruser"] != "" {
			t.Fatalf("CONFIG GET masteruser on %s: %v", n.id, v)
		}
		if err := c.ConfigSet(ctx, "masteruser", "default").Err(); err != nil {
			t.Fatal(err)
		}
		if v := c.ConfigGet(ctx, "master*").Val(); v["masteruser"] != "default" || v["masterauth"] != pw {
			t.Fatalf("CONFIG GET master* on %s: %v", n.id, v)
		}
		c.Close()
	}
}

// TestClusterJoinMasteruser: an ACL user other than the default one,
// defined on each node at start and allowed RAFT JOIN, is what the nodes
// join and link with (masteruser/masterauth); the default user's
// password is not used for it. Before, masteruser was an unknown
// parameter and a joining node sent its own requirepass.
func TestClusterJoinMasteruser(t *testing.T) {
	const pw, rpw = "pw", "rpw"
	sec := []string{"--requirepass", pw, "--user", "repl", "on", ">" + rpw, "~*", "&*", "+@all",
		"--masteruser", "repl", "--masterauth", rpw}
	n1 := mustRecipeNode(t, "n1", pw, sec...)
	n2 := mustRecipeNode(t, "n2", pw, append(sec, "--join", n1.addr())...)
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: n1.addr(), Password: pw, MaxRetries: -1, Protocol: 2})
	defer admin.Close()
	waitRecipeVoters(t, admin, 2, n2)
	f := redis.NewClient(&redis.Options{Addr: n2.addr(), Password: pw, MaxRetries: -1, Protocol: 2})
	defer f.Close()
	if err := f.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("a write through the follower: %v\n%s", err, n2.log())
	}
	if v, _ := admin.Get(ctx, "k").Result(); v != "v" {
		t.Fatalf("the follower's write on the leader: %q", v)
	}
}

// forwardFrame is the forwarding stream's frame (cluster/forward.go):
// uint32 length, type, uvarint request ID, body.
func forwardFrame(typ byte, id uint64, body []byte) []byte {
	b := []byte{0, 0, 0, 0, typ}
	b = binary.AppendUvarint(b, id)
	b = append(b, body...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func uvBytes(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// TestClusterLinkRequiresAuth: with requirepass set and no cluster
// secret, a local process that connects to the raft-addr cannot open
// any of its streams without credentials. Before, the forwarding stream
// ran `SET pwned 1` as the default user for it (and a Raft stream was
// accepted too): a bypass of requirepass by anyone on the machine.
func TestClusterLinkRequiresAuth(t *testing.T) {
	const pw = "s3cret"
	n1 := mustRecipeNode(t, "n1", pw, "--requirepass", pw, "--masterauth", pw)
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: n1.addr(), Password: pw, MaxRetries: -1, Protocol: 2})
	defer admin.Close()
	if !eventually(10*time.Second, func() bool {
		s, _ := admin.Do(ctx, "RAFT", "INFO").Text()
		return strings.Contains(s, "raft_serving:1")
	}) {
		t.Fatal("n1 does not serve")
	}
	for _, tag := range []byte{'F', 'R', 'M'} {
		c, err := net.DialTimeout("tcp", n1.raft, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte{tag})
		if tag == 'F' {
			hello := uvBytes(uvBytes(binary.AppendUvarint(nil, 7), "intruder"), "127.0.0.1:1")
			unit := binary.AppendUvarint(nil, 1) // seq
			unit = binary.AppendUvarint(unit, 1) // client
			unit = binary.AppendUvarint(unit, 0) // db
			unit = append(unit, 2)               // proto
			unit = uvBytes(unit, "default")      // user
			unit = append(unit, 0)               // flags
			unit = binary.AppendUvarint(unit, 1) // one command
			unit = binary.AppendUvarint(unit, 3) // of three arguments
			unit = uvBytes(uvBytes(uvBytes(unit, "SET"), "pwned"), "1")
			c.Write(append(append(forwardFrame('H', 1, hello), forwardFrame('U', 2, unit)...),
				forwardFrame('J', 3, uvBytes(uvBytes(nil, "evil"), "127.0.0.1:1"))...))
		}
		// the node closes a connection that did not authenticate, within
		// its 5 s handshake timeout at most
		c.SetReadDeadline(time.Now().Add(7 * time.Second))
		br := bufio.NewReader(c)
		var got []byte
		for {
			b, err := br.ReadByte()
			if err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Errorf("stream %q: the connection stayed open (got %q)", tag, got)
				}
				break
			}
			got = append(got, b)
		}
		c.Close()
		if len(got) > 0 {
			t.Errorf("stream %q: an unauthenticated peer was answered %q", tag, got)
		}
	}
	if n, _ := admin.Exists(ctx, "pwned").Result(); n != 0 {
		t.Error("the unauthenticated forwarding stream wrote pwned")
	}
	if s, _ := admin.Do(ctx, "RAFT", "INFO").Text(); strings.Contains(s, "evil") {
		t.Errorf("the unauthenticated forwarding stream added a member:\n%s", s)
	}
}

// TestClusterWipedNodeNoVote: a follower whose dir was wiped, restarted
// with the same --node-id and address, must not vote under its old
// identity. The leader and that follower hold writes the third node
// lacks (it was cut off); both stop, the follower's dir is wiped and it
// starts again. Before, it voted (an empty configuration grants any
// vote) and made the third node leader without the acknowledged writes:
// "k0" was nil on the new leader. Now its old identity is refused on the
// link (its Raft ID carries a new incarnation), no leader is elected
// until the old leader returns, and the wiped node comes back as a new
// member with every write.
func TestClusterWipedNodeNoVote(t *testing.T) {
	c := mustCluster(t, 3)
	t.Cleanup(func() {
		if t.Failed() {
			for i := range c.nodes {
				t.Logf("%s: %v\n%s", c.nodes[i].id, c.info(i), c.log(i))
			}
		}
	})
	ctx := context.Background()
	l := c.waitLeader(10 * time.Second)
	w, lag := (l+1)%3, (l+2)%3 // the node to wipe, the node cut off
	c.partition(lag)
	for i := 0; i < 20; i++ {
		if err := c.cli(l).Set(ctx, "k"+strconv.Itoa(i), "v", 0).Err(); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	c.kill(l)
	c.kill(w)
	if err := os.RemoveAll(c.nodes[w].dir); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(c.nodes[w].dir, 0o755)
	c.heal()
	// the wiped node joins through the node that lacks the writes (the
	// old leader is down, so no leader can add it yet)
	c.nodes[w].join = c.addr(lag)
	c.spawn(w)
	// give the lagging node time to stand for election (it times out
	// every 0.5-1 s) with the wiped node's vote at hand
	deadline := time.Now().Add(6 * time.Second)
	for time.Now().Before(deadline) {
		if m := c.info(lag); m != nil && m["raft_state"] == "leader" && m["raft_serving"] == "1" {
			v, err := c.cli(lag).Get(ctx, "k0").Result()
			t.Fatalf("%s was elected without the acknowledged writes, with the wiped node's vote: k0 %q %v", c.nodes[lag].id, v, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// the wiped node answers while its join waits for a leader, and
	// says it is joining (before, it answered nothing until joined:
	// waitPing gave up after 10 s)
	if err := waitPing(c.addr(w)); err != nil {
		t.Fatalf("the wiped node, joining while no leader can add it: %v\n%s", err, c.log(w))
	}
	if m := c.info(w); m["raft_joining"] != "1" {
		t.Fatalf("the wiped node before any leader could add it: raft_joining %q", m["raft_joining"])
	}
	// the old leader returns: it leads, the wiped node joins as a new
	// member, is promoted and holds every write
	c.start(l)
	c.waitJoined(w, 20*time.Second)
	c.waitVoters(3, 20*time.Second)
	// a write after the membership changes: the applied index counts the
	// state machine's entries, not the configuration's
	if err := c.cli(c.waitLeader(5*time.Second)).Set(ctx, "after", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	ds := c.waitConverged(15 * time.Second)
	for i, d := range ds {
		if d != ds[0] {
			t.Fatalf("node %d diverged: digests %v", i, ds)
		}
	}
	for i := 0; i < 20; i++ {
		if v, err := c.cli(w).Get(ctx, "k"+strconv.Itoa(i)).Result(); err != nil || v != "v" {
			t.Fatalf("k%d on the rejoined node: %q %v\n%s", i, v, err, c.log(w))
		}
	}
	if s := c.info(c.waitLeader(5 * time.Second)); s["raft_members"] != "3" {
		t.Fatalf("members after the rejoin: %v", s)
	}
}

// TestClusterWipedBootstrapNode: the first node of the README's recipe,
// its dir wiped and its command line run again (no --join), bootstraps a
// new cluster of one at its old address. The old members still dial it as
// the member it was (and are refused: a new incarnation); it stops, saying
// how to rejoin, instead of serving its clients an empty data set apart
// from the cluster. Before, it did not stop: the old leader's appends made
// it the old member n1 again, with an empty log and no vote record (the
// hazard TestClusterWipedNodeNoVote shows). Then the README's procedure:
// an empty dir and --join through a member bring it back with every key.
func TestClusterWipedBootstrapNode(t *testing.T) {
	c := mustCluster(t, 3)
	ctx := context.Background()
	l := c.waitLeader(10 * time.Second)
	for i := 0; i < 10; i++ {
		if err := c.cli(l).Set(ctx, "b"+strconv.Itoa(i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	c.waitCaughtUp(10 * time.Second)
	wipe := func() {
		os.RemoveAll(c.nodes[0].dir)
		os.MkdirAll(c.nodes[0].dir, 0o755)
	}
	c.kill(0)
	wipe()
	exited := c.spawn(0)
	select {
	case <-exited:
		if !strings.Contains(c.log(0), "another cluster holds this node as its member") {
			t.Fatalf("n1 exited without saying why:\n%s", c.log(0))
		}
	case <-time.After(8 * time.Second):
		v, err := c.cli(0).Get(ctx, "b0").Result()
		t.Fatalf("n1, wiped and started again without --join, did not stop (b0 on it: %q %v)", v, err)
	}
	c.nodes[0].cmd = nil
	wipe()
	c.nodes[0].args = append(c.nodes[0].args, "--join", c.addr(1))
	c.start(0)
	c.waitJoined(0, 20*time.Second)
	c.waitVoters(3, 20*time.Second)
	if err := c.cli(c.waitLeader(5*time.Second)).Set(ctx, "after", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	c.waitCaughtUp(15 * time.Second)
	for i := 0; i < 10; i++ {
		if v, err := c.cli(0).Get(ctx, "b"+strconv.Itoa(i)).Result(); err != nil || v != "v" {
			t.Fatalf("b%d on the rejoined n1: %q %v\n%s", i, v, err, c.log(0))
		}
	}
}

func init() {
	configEffects["masterauth"] = effectMasterAuth
	configEffects["masteruser"] = effectMasterAuth
}

// effectMasterAuth: masteruser/masterauth are what a node joining a
// cluster whose requirepass is set authenticates with: a wrong masterauth,
// or a masteruser the cluster lacks, is refused with Redis's WRONGPASS
// (TestClusterRecipeRequirepass joins with the right ones). CONFIG SET
// stores and shows the value, as Redis's.
func effectMasterAuth(t *testing.T, c *Conn, addr, name string) {
	configSet(t, c, name, "x")
	if got := mustDoValue(t, c, "CONFIG", "GET", name).([]any); len(got) != 2 || got[1] != "x" {
		t.Fatalf("CONFIG GET %s: %v", name, got)
	}
	configSet(t, c, name, "")
	const pw = "pw"
	a := mustRecipeNode(t, "a", pw, "--requirepass", pw, "--masterauth", pw)
	bad := []string{"--masterauth", "wrong"}
	if name == "masteruser" {
		bad = []string{"--masteruser", "nobody", "--masterauth", pw}
	}
	port, _ := freePort()
	args := append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", t.TempDir(),
		"--raft-addr", "127.0.0.1:" + strconv.Itoa(freePortOn(t, "127.0.0.1")), "--join", a.addr(), "--requirepass", pw}, bad...)
	out, err := runBounded(exec.Command(limitdbBinary(t), args...), 20*time.Second)
	if err == nil || !strings.Contains(out, "WRONGPASS") {
		t.Fatalf("joining with %v: %v\n%s", bad, err, out)
	}
}
