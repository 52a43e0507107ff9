package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"limitdb/door"
	"limitdb/engine"
	"limitdb/resp"
)

// The in-process harness: N Nodes in one test process, each with its own
// engine, door and dir, on loopback ports, bootstrapped and joined as
// server/cluster_start.go does it (the first bootstraps a cluster of one,
// the others start with Join naming a client port, where joinPort answers
// RAFT JOIN as the server's cmdRaftJoin does). Forwarded units run through
// testExec. Everything closes with t.Cleanup.

// inprocNode is one member: its Config (kept for a restart), the door of
// its engine, and its node.
type inprocNode struct {
	cfg Config
	d   *door.Door
	n   *Node
}

type inprocCluster struct {
	t     *testing.T
	mu    sync.Mutex // nodes and their n (a restart replaces it; joinPort reads them)
	nodes []*inprocNode
}

// quietLog drops the nodes' logs (Raft's own warnings go to stderr).
var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// newInprocCluster starts size nodes and waits until every one is a voter
// and the first one serves.
func newInprocCluster(t *testing.T, size int) *inprocCluster {
	t.Helper()
	began := time.Now()
	c := &inprocCluster{t: t}
	join := c.joinPort()
	for i := 0; i < size; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0") // a free port, kept across restarts
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		cfg := Config{NodeID: "n" + strconv.Itoa(i+1), RaftAddr: addr, ClientAddr: addr,
			Dir: t.TempDir(), AppendFsync: "no", Log: quietLog}
		if i > 0 {
			cfg.Join = join
		}
		x := &inprocNode{cfg: cfg}
		c.mu.Lock()
		c.nodes = append(c.nodes, x)
		c.mu.Unlock()
		c.start(x)
		if i == 0 {
			waitFor(t, 10*time.Second, "the first node serves", func() bool { return x.serving() })
		}
	}
	t.Cleanup(func() {
		// the leader first, which hands over; then the others together
		// (one by one, each new leader would hand over again)
		if l := c.leader(); l != nil {
			c.stop(l)
		}
		var wg sync.WaitGroup
		for _, x := range c.live() {
			wg.Add(1)
			go func() { defer wg.Done(); c.stop(x) }()
		}
		wg.Wait()
	})
	waitFor(t, 20*time.Second, "every node is a voter", func() bool {
		l := c.leader()
		if l == nil {
			return false
		}
		voters := 0
		for _, s := range l.n.raft.GetConfiguration().Configuration().Servers {
			if s.Suffrage == raft.Voter {
				voters++
			}
		}
		return voters == size
	})
	c.converge()
	t.Logf("%d nodes up in %v", size, time.Since(began))
	return c
}

// start makes x's node from its Config (a new engine: a restart rebuilds
// it from the log, as a process does), as StartCluster does.
func (c *inprocCluster) start(x *inprocNode) {
	c.t.Helper()
	e := engine.New()
	d := door.New(e, nil)
	e.NoLazyDelete = true // a follower never deletes on its own
	n, err := New(x.cfg, d, &testExec{d: d})
	if err != nil {
		c.t.Fatal(err)
	}
	c.mu.Lock()
	x.d, x.n = d, n
	c.mu.Unlock()
}

// stop closes x's node (restart with start).
func (c *inprocCluster) stop(x *inprocNode) {
	c.mu.Lock()
	n := x.n
	x.n = nil
	c.mu.Unlock()
	n.Close()
}

// joinPort is the client port joining nodes send RAFT JOIN to: it hands
// the join to the first node, which adds it through the leader
// (Node.Join), as cmdRaftJoin does.
func (c *inprocCluster) joinPort() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				for {
					argv, err := readCommand(r)
					if err != nil {
						return
					}
					reply := "+OK\r\n"
					c.mu.Lock()
					n := c.nodes[0].n
					c.mu.Unlock()
					switch {
					case len(argv) < 4 || !strings.EqualFold(argv[0], "RAFT") || !strings.EqualFold(argv[1], "JOIN"):
						reply = "-ERR unknown command\r\n"
					case n == nil:
						reply = "-ERR the member is down\r\n"
					default:
						if err := n.Join(argv[2], argv[3]); err != nil {
							reply = "-" + err.Error() + "\r\n"
						}
					}
					if _, err := io.WriteString(conn, reply); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// readCommand reads one RESP array of bulk strings (what joinOnce sends).
func readCommand(r *bufio.Reader) ([]string, error) {
	line := func() (string, error) {
		s, err := r.ReadString('\n')
		return strings.TrimRight(s, "\r\n"), err
	}
	h, err := line()
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(h, "*") {
		return nil, fmt.Errorf("not an array: %q", h)
	}
	k, err := strconv.Atoi(h[1:])
	if err != nil {
		return nil, err
	}
	argv := make([]string, 0, k)
	for i := 0; i < k; i++ {
		if _, err := line(); err != nil { // $len
			return nil, err
		}
		s, err := line()
		if err != nil {
			return nil, err
		}
		argv = append(argv, s)
	}
	return argv, nil
}

// waitFor polls cond every 10 ms until it holds, failing the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting until %s", d, what)
		}
	}
}

// live returns the nodes that run.
func (c *inprocCluster) live() []*inprocNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*inprocNode
	for _, x := range c.nodes {
		if x.n != nil {
			out = append(out, x)
		}
	}
	return out
}

// leader returns the node that serves (nil: none now).
func (c *inprocCluster) leader() *inprocNode {
	for _, x := range c.live() {
		if x.serving() {
			return x
		}
	}
	return nil
}

// waitLeader waits for a node to serve.
func (c *inprocCluster) waitLeader() *inprocNode {
	c.t.Helper()
	var l *inprocNode
	waitFor(c.t, 10*time.Second, "a node serves", func() bool { l = c.leader(); return l != nil })
	return l
}

func (x *inprocNode) serving() bool {
	x.d.Lock()
	defer x.d.Unlock()
	return x.n.Serving()
}

// epoch is the leadership the node serves under (0: it does not).
func (x *inprocNode) epoch() uint64 {
	x.d.Lock()
	defer x.d.Unlock()
	return x.n.Epoch()
}

// exec runs one command on the node as its server runs a client's unit
// (engine lock, Serving, door.Exec, Ticket), and returns the reply and
// the ticket to wait for; ok is false when the node does not serve.
func (x *inprocNode) exec(args ...string) (reply string, ticket uint64, ok bool) {
	x.d.Lock()
	defer x.d.Unlock()
	if !x.n.Serving() {
		return "", 0, false
	}
	return execLocked(x.d, 0, 2, args), x.n.Ticket(), true
}

// execLocked runs argv on d's engine (lock held) and returns the reply.
func execLocked(d *door.Door, db, proto int, args []string) string {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	ctx := &engine.Ctx{E: d.E, DB: d.E.DBs[db], W: resp.NewWriter()}
	ctx.W.Proto = proto
	ctx.Now, _ = d.Now()
	if cmd := ctx.Resolve(argv); cmd != nil {
		d.Exec(ctx, cmd, argv)
	}
	return string(ctx.W.B)
}

// settle waits up to d for ticket's outcome: nil (committed), ErrUnknown
// (lost with its epoch), or an error saying it never settled.
func (x *inprocNode) settle(ticket uint64, d time.Duration) error {
	err := x.n.prop.Wait(ticket, d)
	if err != nil {
		if _, ok := x.n.prop.poll(ticket); !ok {
			return fmt.Errorf("ticket %d did not settle within %v", ticket, d)
		}
	}
	return err
}

// get reads key on the node's engine (any node: a read changes nothing
// on a follower, which never deletes on its own).
func (x *inprocNode) get(key string) string {
	x.d.Lock()
	defer x.d.Unlock()
	return execLocked(x.d, 0, 2, []string{"GET", key})
}

// counter is the integer at key ("$-1": 0).
func (x *inprocNode) counter(t *testing.T, key string) int {
	t.Helper()
	r := x.get(key)
	if r == "_\r\n" || r == "$-1\r\n" {
		return 0
	}
	lines := strings.Split(r, "\r\n")
	if len(lines) < 2 {
		t.Fatalf("%s: GET %s: %q", x.cfg.NodeID, key, r)
	}
	v, err := strconv.Atoi(lines[1])
	if err != nil {
		t.Fatalf("%s: GET %s: %q", x.cfg.NodeID, key, r)
	}
	return v
}

func (x *inprocNode) digest() string {
	x.d.Lock()
	defer x.d.Unlock()
	d := x.d.E.StrictDigest()
	return d.Hex()
}

// converge waits until every live node has applied what the leader
// applied (the FSM's index: a new term's no-op is counted only with the
// next entry, on every node) and their strict digests are equal.
func (c *inprocCluster) converge() {
	c.t.Helper()
	var why string
	deadline := time.Now().Add(10 * time.Second)
	for {
		l := c.leader()
		why = "no leader"
		if l != nil {
			why = ""
			want := l.n.appliedIndex()
			dig := l.digest()
			for _, x := range c.live() {
				if a := x.n.appliedIndex(); a < want {
					why = fmt.Sprintf("%s applied %d of %d", x.cfg.NodeID, a, want)
					break
				}
				if g := x.digest(); g != dig {
					why = fmt.Sprintf("%s's digest %s, the leader's %s", x.cfg.NodeID, g, dig)
				}
			}
		}
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the nodes did not converge: %s", why)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// writeIncrs runs writers goroutines of per INCRs of key on the node,
// each waiting for its ticket before the next; it returns how many were
// acknowledged and how many ended ErrUnknown, failing on a ticket that
// never settles or a write the node refused to serve.
func writeIncrs(t *testing.T, x *inprocNode, key string, writers, per int) (acked, unknown int) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	var failed error
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				_, ticket, ok := x.exec("INCR", key)
				var err error
				if !ok {
					err = errors.New(x.cfg.NodeID + " stopped serving")
				} else {
					err = x.settle(ticket, 10*time.Second)
				}
				mu.Lock()
				switch {
				case err == nil:
					acked++
				case errors.Is(err, ErrUnknown):
					unknown++
				case failed == nil:
					failed = err
				}
				mu.Unlock()
				if err != nil && !errors.Is(err, ErrUnknown) {
					return
				}
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		t.Fatal(failed)
	}
	return acked, unknown
}

// entryStats counts the entries of epoch in x's log and their records.
func entryStats(t *testing.T, x *inprocNode, epoch uint64) (entries, records int) {
	t.Helper()
	first, err := x.n.logs.FirstIndex()
	if err != nil {
		t.Fatal(err)
	}
	last, err := x.n.logs.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	for i := first; i <= last && first > 0; i++ {
		var l raft.Log
		if err := x.n.logs.GetLog(i, &l); err != nil {
			t.Fatal(err)
		}
		if l.Type != raft.LogCommand {
			continue
		}
		h, _, err := decodeEntryHeader(l.Data)
		if err != nil {
			t.Fatal(err)
		}
		if h.epoch == epoch {
			entries++
			records += h.nrec
		}
	}
	return entries, records
}

// testExec is the Executor of the harness: a forwarded unit's commands
// run through the door on the node's engine, in its database and
// protocol, and their replies are concatenated (the server's
// ExecForwarded also checks ACLs, runs MULTI and scripts, and blocks).
type testExec struct{ d *door.Door }

func (x *testExec) LockForwarded(*Unit) []byte { x.d.Lock(); return nil }

func (x *testExec) ExecForwarded(u *Unit) ([]byte, BlockedUnit) {
	var out []byte
	for _, argv := range u.Cmds {
		args := make([]string, len(argv))
		for i, a := range argv {
			args[i] = string(a)
		}
		out = append(out, execLocked(x.d, u.DB, u.Proto, args)...)
	}
	return out, nil
}

func (*testExec) CancelForwarded(uint64, uint64, uint64, CancelMode) bool { return false }
func (*testExec) StopServing()                                            {}
func (*testExec) DropSession(uint64, uint64)                              {}
func (*testExec) PublishSettings()                                        {}

// followerOf returns a live node other than l.
func (c *inprocCluster) followerOf(l *inprocNode) *inprocNode {
	for _, x := range c.live() {
		if x != l {
			return x
		}
	}
	c.t.Fatal("no follower")
	return nil
}

// TestInprocGroupCommit: 8 writers × 500 INCRs on the leader of three.
// Every ticket settles and is acknowledged, every node's counter equals
// the acknowledged count, the digests agree, and the leader's entries of
// the epoch carry several records each (group commit: 7 a entry here; 8
// writers with 4 entries in flight make at least 2). Mutations caught:
// fsm.apply applying its own epoch's entries again instead of counting
// them (the proposer is never told: ticket 4 does not settle); Flush
// cutting each hold as an entry of its own, with no limit in flight (1.1
// records a entry).
func TestInprocGroupCommit(t *testing.T) {
	c := newInprocCluster(t, 3)
	l := c.leader()
	epoch := l.epoch()
	start := time.Now()
	acked, unknown := writeIncrs(t, l, "ctr", 8, 500)
	t.Logf("4000 INCRs in %v", time.Since(start))
	if unknown > 0 && l.epoch() == epoch {
		t.Fatalf("%d tickets ended UNCERTAIN while the epoch lasted", unknown)
	}
	if unknown == 0 && acked != 4000 {
		t.Fatalf("%d acknowledged of 4000", acked)
	}
	c.converge()
	for _, x := range c.live() {
		if got := x.counter(t, "ctr"); got < acked || got > acked+unknown {
			t.Errorf("%s: ctr = %d, acknowledged %d (%d unknown)", x.cfg.NodeID, got, acked, unknown)
		}
	}
	entries, records := entryStats(t, l, epoch)
	t.Logf("epoch's entries %d, records %d (%.1f a entry)", entries, records, float64(records)/float64(entries))
	if records < acked {
		t.Errorf("the log holds %d records of the epoch, %d were acknowledged", records, acked)
	}
	if entries == 0 || float64(records)/float64(entries) < 2 {
		t.Errorf("%d entries for %d records: no group commit", entries, records)
	}
}

// othersOf returns the live nodes other than x.
func (c *inprocCluster) othersOf(x *inprocNode) []*inprocNode {
	var out []*inprocNode
	for _, y := range c.live() {
		if y != x {
			out = append(out, y)
		}
	}
	return out
}

// expectCounter checks key on every live node.
func (c *inprocCluster) expectCounter(key string, want int) {
	c.t.Helper()
	for _, x := range c.live() {
		if got := x.counter(c.t, key); got != want {
			c.t.Errorf("%s: %s = %d, want %d", x.cfg.NodeID, key, got, want)
		}
	}
}

// TestInprocLeaderChange: followers apply exactly what the leader
// counted, across leaderships. Writes on the first leader; a transfer
// (the new leader serves under a new epoch, the old one applies its
// entries); then the new leader loses both followers, executes an INCR
// that cannot commit and loses its leadership: the INCR's ticket is
// UNCERTAIN and its engine, rebuilt from the log, no longer holds the
// effect (DESIGN.md, "Speculation, made exact"); the followers come back
// and all nodes converge on the log, with or without that entry (the
// next leader may commit it). Mutation caught: leadershipLost without
// the rebuild (f.reset): the old leader's counter keeps the uncommitted
// INCR.
func TestInprocLeaderChange(t *testing.T) {
	c := newInprocCluster(t, 3)
	l1 := c.leader()
	e1 := l1.epoch()
	acked, unknown := writeIncrs(t, l1, "ctr", 4, 100)
	if unknown > 0 {
		t.Fatalf("%d UNCERTAIN before any leadership change", unknown)
	}
	c.converge()
	c.expectCounter("ctr", acked)

	if err := l1.n.Transfer(""); err != nil {
		t.Fatal(err)
	}
	l2 := c.waitLeader()
	e2 := l2.epoch()
	if l2 == l1 || e2 == 0 || e2 == e1 {
		t.Fatalf("after the transfer %s leads under epoch %x (before: %s, %x)", l2.cfg.NodeID, e2, l1.cfg.NodeID, e1)
	}
	a, u := writeIncrs(t, l2, "ctr", 4, 100)
	if u > 0 {
		t.Fatalf("%d UNCERTAIN on the new leader", u)
	}
	acked += a
	c.converge()
	c.expectCounter("ctr", acked)

	// speculation: an INCR that cannot commit, then the leadership lost
	followers := c.othersOf(l2)
	for _, x := range followers {
		c.stop(x)
	}
	_, ticket, ok := l2.exec("INCR", "ctr")
	if !ok {
		t.Fatalf("%s stopped serving as soon as its followers closed", l2.cfg.NodeID)
	}
	if got := l2.counter(t, "ctr"); got != acked+1 {
		t.Fatalf("the leader's engine holds %d after the INCR, want %d (executed, not committed)", got, acked+1)
	}
	if err := l2.settle(ticket, 15*time.Second); !errors.Is(err, ErrUnknown) {
		t.Fatalf("the uncommitted INCR's ticket: %v, want ErrUnknown", err)
	}
	waitFor(t, 5*time.Second, "the old leader stops serving", func() bool { return !l2.serving() })
	if got := l2.counter(t, "ctr"); got != acked {
		t.Fatalf("after losing the leadership %s holds ctr = %d, the committed %d: its uncommitted effect stayed", l2.cfg.NodeID, got, acked)
	}

	for _, x := range followers {
		c.start(x)
	}
	l3 := c.waitLeader()
	if e3 := l3.epoch(); e3 == e2 || e3 == e1 {
		t.Fatalf("the third leadership reuses epoch %x", e3)
	}
	c.converge()
	got := l3.counter(t, "ctr")
	if got != acked && got != acked+1 {
		t.Fatalf("ctr = %d after the change, want %d or %d (the UNCERTAIN INCR committed)", got, acked, acked+1)
	}
	t.Logf("%s leads next; the UNCERTAIN INCR committed: %v", l3.cfg.NodeID, got == acked+1)
	c.expectCounter("ctr", got)
	a, u = writeIncrs(t, l3, "ctr", 2, 50)
	if u > 0 {
		t.Fatalf("%d UNCERTAIN on the third leader", u)
	}
	c.converge()
	c.expectCounter("ctr", got+a)
}

// incrUnit is a follower client's unit: INCR key.
func incrUnit(client, seq uint64, key string) *Unit {
	return &Unit{Client: client, Seq: seq, Proto: 2, Cmds: [][][]byte{{[]byte("INCR"), []byte(key)}}}
}

// TestInprocForwardOnce: a forwarded unit (session, client, seq) runs
// once however often it reaches a leader. A unit forwarded twice is
// refused the second time (the leader's table); the follower that asks
// after a broken link ('Q') gets the kept answer of the one run; and
// after a transfer the new leader, which learnt the IDs from the log,
// refuses a resend too. Mutations caught: runForwarded without its
// seenUnit check (the second INCR runs: fk = 2); keep not storing the
// answer (the 'Q' finds none); fsm.apply not marking the entry's IDs
// (the new leader runs the resend: fk = 3).
func TestInprocForwardOnce(t *testing.T) {
	c := newInprocCluster(t, 3)
	l := c.leader()
	f := c.followerOf(l)
	u1 := incrUnit(7, 1, "fk")
	if data, err := f.n.Forward(u1); err != nil || string(data) != ":1\r\n" {
		t.Fatalf("forwarded INCR: %q, %v", data, err)
	}
	if got := f.counter(t, "fk"); got != 1 {
		t.Fatalf("the follower holds fk = %d once its forward returned, want 1 (it reads its own writes)", got)
	}
	if data, err := f.n.Forward(u1); err == nil || err.Error() != errDuplicate.Error() {
		t.Fatalf("the same unit forwarded again: %q, %v; want %q", data, err, errDuplicate)
	}
	if got := l.counter(t, "fk"); got != 1 {
		t.Fatalf("fk = %d on the leader after a unit forwarded twice, want 1", got)
	}
	if kept, _ := f.n.askAnswer(u1); kept == nil || !kept.ok() || string(kept.data) != ":1\r\n" {
		t.Fatalf("the kept answer of unit 1: %+v", kept)
	}

	// the link breaks once unit 2 ran, before the follower read its answer
	u2 := incrUnit(7, 2, "fk")
	u2.Session = f.n.fwd.session
	if _, _, err := f.n.fwd.request(frameUnit, u2.encode(nil), 1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "unit 2 ran on the leader", func() bool { return l.counter(t, "fk") == 2 })
	f.n.fwd.mu.Lock()
	f.n.fwd.dropLocked(errConnLost)
	f.n.fwd.mu.Unlock()
	kept, _ := f.n.askAnswer(u2)
	if kept == nil || !kept.ok() || string(kept.data) != ":2\r\n" {
		t.Fatalf("the kept answer of unit 2 after the link broke: %+v", kept)
	}
	if _, err := f.n.Forward(u2); err == nil || err.Error() != errDuplicate.Error() {
		t.Fatalf("unit 2 resent: %v; want %q", err, errDuplicate)
	}

	// the table rides the log: the next leader refuses the resend too
	var third *inprocNode
	for _, x := range c.othersOf(l) {
		if x != f {
			third = x
		}
	}
	if err := l.n.Transfer(third.cfg.NodeID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, third.cfg.NodeID+" serves", third.serving)
	if _, err := f.n.Forward(u2); err == nil || err.Error() != errDuplicate.Error() {
		t.Fatalf("unit 2 resent to the new leader: %v; want %q", err, errDuplicate)
	}
	if data, err := f.n.Forward(incrUnit(7, 3, "fk")); err != nil || string(data) != ":3\r\n" {
		t.Fatalf("unit 3 on the new leader: %q, %v", data, err)
	}
	c.converge()
	c.expectCounter("fk", 3)
}
