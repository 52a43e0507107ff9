package tests

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A test cluster: real limitdb processes on loopback. Node i listens for
// clients on 127.0.0.1 and for Raft on 127.0.0.(11+i), where it also
// dials from; its peers reach it through a proxy on the same IP, which
// the test can tell to drop traffic from chosen peers (a partition).

type clusterNode struct {
	i          int
	id         string
	port       int
	ip         string
	raftAddr   string // where the node listens
	proxyAddr  string // what the others dial (raft-advertise)
	dir        string
	args       []string
	cmd        *exec.Cmd
	exited     chan struct{} // closed once cmd has exited (spawn)
	proxy      *tcpProxy
	client     *redis.Client
	clientOnce sync.Once
	join       string // when set, the node joins through this client address (also node 0)
	bin        string // when set, the binary this node runs instead of the tree's
}

type testCluster struct {
	t     testing.TB
	bin   string
	nodes []*clusterNode
	logs  string
}

// mustCluster starts n nodes (the first bootstraps, the others join
// through it) with extra options for all, and waits until all are voters.
func mustCluster(t *testing.T, n int, extra ...string) *testCluster {
	t.Helper()
	return mustClusterWith(t, n, func(int) []string { return extra })
}

// mustClusterWith is mustCluster with each node's own extra options.
func mustClusterWith(t *testing.T, n int, opts func(i int) []string) *testCluster {
	t.Helper()
	c := newTestCluster(t, n, "n", opts)
	c.startAll()
	return c
}

// newTestCluster lays out n nodes (ids idPrefix1..n, ports, empty dirs,
// Raft proxies) without starting them.
func newTestCluster(t *testing.T, n int, idPrefix string, opts func(i int) []string) *testCluster {
	t.Helper()
	c := &testCluster{t: t, bin: limitdbBinary(t), logs: t.TempDir()}
	for i := 0; i < n; i++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		ip := "127.0.0." + strconv.Itoa(11+i)
		nd := &clusterNode{i: i, id: idPrefix + strconv.Itoa(i+1), port: port, ip: ip,
			raftAddr:  net.JoinHostPort(ip, strconv.Itoa(freePortOn(t, ip))),
			proxyAddr: net.JoinHostPort(ip, strconv.Itoa(freePortOn(t, ip))),
			dir:       t.TempDir(), args: opts(i)}
		nd.proxy = newTCPProxy(t, nd.proxyAddr, nd.raftAddr)
		c.nodes = append(c.nodes, nd)
	}
	t.Cleanup(c.stopAll)
	return c
}

// startAll starts every node (the first bootstraps, the others join
// through it) and waits until all are voters.
func (c *testCluster) startAll() {
	for i := range c.nodes {
		c.start(i)
		if i == 0 {
			c.waitLeader(10 * time.Second)
		}
	}
	c.waitVoters(len(c.nodes), 20*time.Second)
}

func freePortOn(t testing.TB, ip string) int {
	port, err := pickPort(ip)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func (c *testCluster) addr(i int) string { return "127.0.0.1:" + strconv.Itoa(c.nodes[i].port) }

// start runs node i (again, with the same dir, after a kill) and waits
// until it answers.
func (c *testCluster) start(i int) {
	c.spawn(i)
	if err := waitPing(c.addr(i)); err != nil {
		c.t.Fatalf("node %s: %v\n%s", c.nodes[i].id, err, c.log(i))
	}
}

// spawn runs node i without waiting for it to answer (a test that
// expects it to exit, or to answer late); the channel is closed when the
// process exits. A joining node answers while it joins (RAFT INFO's
// raft_joining:1 until the leader has added it).
func (c *testCluster) spawn(i int) chan struct{} {
	nd := c.nodes[i]
	args := []string{"--bind", "127.0.0.1", "--port", strconv.Itoa(nd.port), "--dir", nd.dir,
		"--node-id", nd.id, "--raft-addr", nd.raftAddr, "--raft-advertise", nd.proxyAddr,
		"--enable-debug-command", "yes", "--loglevel", "notice"}
	args = append(args, ioModelArgs()...)
	if nd.join != "" {
		args = append(args, "--join", nd.join)
	} else if i > 0 {
		args = append(args, "--join", c.addr(0))
	}
	args = append(args, nd.args...)
	bin := c.bin
	if nd.bin != "" {
		bin = nd.bin
	}
	cmd := exec.Command(bin, args...)
	logf, err := os.OpenFile(filepath.Join(c.logs, nd.id+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(exited) }()
	nd.cmd, nd.exited = cmd, exited
	return exited
}

// waitExit waits up to d for node's process to exit and reports whether
// it did (through the channel cmd.Wait's goroutine closes: reading
// cmd.ProcessState while that goroutine sets it is a data race).
func (nd *clusterNode) waitExit(d time.Duration) bool {
	if nd.exited == nil {
		return true
	}
	select {
	case <-nd.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// log returns node i's log (for failure messages).
func (c *testCluster) log(i int) string {
	b, _ := os.ReadFile(filepath.Join(c.logs, c.nodes[i].id+".log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// kill ends node i with SIGKILL.
func (c *testCluster) kill(i int) {
	nd := c.nodes[i]
	if nd.cmd != nil && nd.cmd.Process != nil {
		nd.cmd.Process.Kill()
		nd.waitExit(2 * time.Second)
	}
	nd.cmd = nil
	if nd.client != nil {
		nd.client.Close()
		nd.client, nd.clientOnce = nil, sync.Once{}
	}
}

// terminate ends node i with SIGTERM and waits for it to exit.
func (c *testCluster) terminate(i int) {
	nd := c.nodes[i]
	if nd.cmd != nil && nd.cmd.Process != nil {
		nd.cmd.Process.Signal(os.Interrupt)
		if !nd.waitExit(10 * time.Second) {
			nd.cmd.Process.Kill()
		}
	}
	nd.cmd = nil
	if nd.client != nil {
		nd.client.Close()
		nd.client, nd.clientOnce = nil, sync.Once{}
	}
}

// mustConverge waits until every node has applied the leader's commit
// and fails the test unless their strict digests are equal.
func (c *testCluster) mustConverge(d time.Duration) {
	c.t.Helper()
	ds := c.waitConverged(d)
	for _, x := range ds[1:] {
		if x != ds[0] {
			c.t.Fatalf("digests differ: %v", ds)
		}
	}
}

// dumpStacks ends every running node with SIGQUIT, on which Go's runtime
// writes each goroutine's stack to the node's log: a schedule that
// stopped because a node hung keeps where every node was.
func (c *testCluster) dumpStacks() {
	for _, nd := range c.nodes {
		if nd.cmd != nil && nd.cmd.Process != nil {
			nd.cmd.Process.Signal(syscall.SIGQUIT)
		}
	}
	for _, nd := range c.nodes {
		nd.waitExit(5 * time.Second)
	}
}

func (c *testCluster) stopAll() {
	for i := range c.nodes {
		c.kill(i)
		c.nodes[i].proxy.close()
	}
}

// cli returns a client of node i: no retries (a retried INCR would be a
// second command), bounded timeouts.
func (c *testCluster) cli(i int) *redis.Client {
	nd := c.nodes[i]
	nd.clientOnce.Do(func() {
		nd.client = redis.NewClient(&redis.Options{Addr: c.addr(i), MaxRetries: -1, DialTimeout: 2 * time.Second,
			ReadTimeout: 15 * time.Second, WriteTimeout: 5 * time.Second, PoolSize: 32, Protocol: 2})
	})
	return nd.client
}

// info returns node i's RAFT INFO fields (nil when it does not answer).
func (c *testCluster) info(i int) map[string]string { return c.fields(i, "RAFT", "INFO") }

// fields returns the name:value lines of node i's reply to an INFO-like
// command (nil when it does not answer).
func (c *testCluster) fields(i int, cmd ...any) map[string]string {
	if c.nodes[i].cmd == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s, err := c.cli(i).Do(ctx, cmd...).Text()
	if err != nil {
		return nil
	}
	m := map[string]string{}
	for _, l := range strings.Split(s, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// leader returns the index of the node that is leader and serving, or -1
// (also between two polls: an election, or a RAFT INFO slower than 2 s on
// a loaded machine; a test that needs the leader uses waitLeader, a
// panic on index -1 in TestClusterBusyLeader came from leader() just
// after mustCluster).
//
// Two nodes can both say so for a moment (a leader that lost its lease
// and has not noticed yet, beside the one elected in a later term): the
// later term's wins.
func (c *testCluster) leader() int {
	l, term := -1, uint64(0)
	for i := range c.nodes {
		if m := c.info(i); m != nil && m["raft_state"] == "leader" && m["raft_serving"] == "1" {
			if t, _ := strconv.ParseUint(m["raft_term"], 10, 64); l < 0 || t > term {
				l, term = i, t
			}
		}
	}
	return l
}

func (c *testCluster) waitLeader(d time.Duration) int {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if l := c.leader(); l >= 0 {
			return l
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("no leader within %v\n%s", d, c.log(0))
	return -1
}

// waitJoined waits until node i says the leader has added it (RAFT
// INFO's raft_joining:0). A node started with --join on an empty dir
// answers while it joins, and until it is added the leader's
// configuration may still hold the incarnation it replaces: waitVoters
// alone would count that one.
func (c *testCluster) waitJoined(i int, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if m := c.info(i); m != nil && m["raft_joining"] == "0" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("node %s was not added within %v\n%s", c.nodes[i].id, d, c.log(i))
}

// waitVoters waits until the leader sees n voters.
func (c *testCluster) waitVoters(n int, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if l := c.leader(); l >= 0 {
			m := c.info(l)
			voters := 0
			for k, v := range m {
				if strings.HasPrefix(k, "raft_member") && strings.Contains(v, "voter=1") {
					voters++
				}
			}
			if voters == n {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("not %d voters within %v", n, d)
}

// waitCaughtUp waits until every running node has applied as far as the
// leader's commit index (read once per try), as a test that goes on
// writing needs: waitConverged's digests of one state need a moment
// without commits, which a load running on never gives.
func (c *testCluster) waitCaughtUp(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if l := c.leader(); l >= 0 {
			commit, _ := strconv.ParseUint(c.info(l)["raft_commit_index"], 10, 64)
			if commit > 0 && c.allApplied(commit) {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("nodes did not catch up within %v", d)
}

// allApplied tells whether every running node has applied up to commit.
func (c *testCluster) allApplied(commit uint64) bool {
	for i, nd := range c.nodes {
		if nd.cmd == nil {
			continue
		}
		m := c.info(i)
		a, _ := strconv.ParseUint(m["raft_applied_index"], 10, 64)
		if m == nil || a < commit {
			return false
		}
	}
	return true
}

// waitConverged waits until every running node has applied as far as
// the leader's commit index, then returns their strict digests, read
// while nothing was committed: the leader's commit index, read again
// after the digests, must not have moved, and the leader must be the
// same. Otherwise the digests are of different states (the leader's
// active expiry, or a unit still in flight, committed an entry while
// they were read one after another: the leader's DEBUG reply waits for
// the commit of what it executed, a follower's shows what it applied)
// and they are read again. Without this the fault suite reported the
// leader's expiry of its workloads' keys right after the load as
// diverged nodes (TestClusterConvergedWhileExpiring).
func (c *testCluster) waitConverged(d time.Duration) []string {
	deadline := time.Now().Add(d)
	commitOf := func(l int) (uint64, bool) {
		m := c.info(l)
		if m == nil || m["raft_state"] != "leader" {
			return 0, false
		}
		v, err := strconv.ParseUint(m["raft_commit_index"], 10, 64)
		return v, err == nil
	}
	for time.Now().Before(deadline) {
		l := c.leader()
		if l < 0 {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		commit, ok := commitOf(l)
		if ok && c.allApplied(commit) {
			var ds []string
			for i, nd := range c.nodes {
				if nd.cmd == nil {
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				d, err := c.cli(i).Do(ctx, "DEBUG", "DIGEST-STRICT").Text()
				cancel()
				if err != nil {
					c.t.Fatalf("DEBUG DIGEST-STRICT on %s: %v", nd.id, err)
				}
				ds = append(ds, d)
			}
			if after, ok := commitOf(l); ok && after == commit {
				return ds
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("nodes did not converge within %v", d)
	return nil
}

// partition cuts node i off from every other node (both directions).
func (c *testCluster) partition(i int) {
	for j, nd := range c.nodes {
		if j == i {
			for k, other := range c.nodes {
				if k != i {
					nd.proxy.block(other.ip)
				}
			}
		} else {
			nd.proxy.block(c.nodes[i].ip)
		}
	}
}

// heal restores every link.
func (c *testCluster) heal() {
	for _, nd := range c.nodes {
		nd.proxy.unblock()
	}
}

// tcpProxy forwards connections to target, except from blocked source
// IPs, whose connections it refuses and cuts.
type tcpProxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	blocked map[string]bool
	conns   map[net.Conn]string // accepted connections and their source IP
	closed  bool
	// copy, when set, moves one direction of a connection instead of
	// io.Copy (toTarget: from the source IP's node to the target); the
	// fault suite delays bytes with it (tests/faults_proxy_test.go)
	copy func(dst, src net.Conn, srcIP string, toTarget bool)
}

func newTCPProxy(t testing.TB, addr, target string) *tcpProxy {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target, blocked: map[string]bool{}, conns: map[net.Conn]string{}}
	go p.serve()
	return p
}

func (p *tcpProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		src, _, _ := net.SplitHostPort(c.RemoteAddr().String())
		p.mu.Lock()
		if p.blocked[src] || p.closed {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.DialTimeout("tcp", p.target, 2*time.Second)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c], p.conns[up] = src, src
		cp := p.copy
		p.mu.Unlock()
		srcIP := src
		pipe := func(dst, src net.Conn, toTarget bool) {
			if cp != nil {
				cp(dst, src, srcIP, toTarget)
			} else {
				io.Copy(dst, src)
			}
			dst.Close()
			src.Close()
			p.mu.Lock()
			delete(p.conns, dst)
			delete(p.conns, src)
			p.mu.Unlock()
		}
		go pipe(up, c, true)
		go pipe(c, up, false)
	}
}

// block refuses and cuts the connections from ip.
func (p *tcpProxy) block(ip string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blocked[ip] = true
	for c, src := range p.conns {
		if src == ip {
			c.Close()
		}
	}
}

// resetConns resets every connection open through the proxy now (both
// sides get an RST: SO_LINGER 0 before the close) and keeps accepting
// new ones: a link that flaps rather than a partition.
func (p *tcpProxy) resetConns() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		c.Close()
	}
}

func (p *tcpProxy) unblock() {
	p.mu.Lock()
	p.blocked = map[string]bool{}
	p.mu.Unlock()
}

func (p *tcpProxy) close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
}

var _ = fmt.Sprintf

// loadLoop calls f(0), f(1), … on its own goroutine, at most n times,
// until stop is closed or f returns false (wg.Wait waits for it): a
// test's load that is bounded in count and stops by itself.
func loadLoop(wg *sync.WaitGroup, stop <-chan struct{}, n int, f func(i int) bool) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if !f(i) {
				return
			}
		}
	}()
}
