package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"limitdb/door"
)

// Clock agreement (DESIGN.md, "Time"). Deadlines and limiters run on the
// leader's clock, and the floor its entries carry makes every later node
// hold its time at least as high; so a leader whose clock is wrong would
// give every TTL and every limiter its error. A leader therefore serves
// only while its clock agrees, within max-clock-skew-ms, with enough
// voters that they and it form a quorum: while it leads it probes every
// other voter's clock (one round trip on a stream of its own, 'T', every
// clockProbeEvery), and a voter agrees when its offset, measured from the
// best round trip of the last clockFresh, is at most max-clock-skew-ms.
// A cluster with one voter has nobody to agree with and is exempt.
//
// Probe: the leader writes 8 bytes (a sequence number); the peer answers
// with them and its clock (unix ns, its test offset included). With t0
// and t1 the leader's monotonic clock at send and receipt, the peer's
// clock was read somewhere in [t0, t1], so offset = peer − leader's wall
// clock at (t0+t1)/2, within ±rtt/2.
const streamClock = 'T'

const (
	clockProbeEvery = 100 * time.Millisecond
	// clockFresh: a sample counts this long. Raft's HeartbeatTimeout (the
	// node's config, node.go): the agreement is measured again at least
	// once per heartbeat interval
	clockFresh = 500 * time.Millisecond
	// clockSamples kept per peer: the best (smallest round trip) of the
	// fresh ones counts
	clockSamples = 8
)

// errClockQuorum ends an epoch whose leader's clock lost its agreement.
var errClockQuorum = errors.New("cluster: this leader's clock no longer agrees within max-clock-skew-ms with a quorum of the voters")

type clockSample struct {
	mid  int64 // this node's monotonic ns at the round trip's midpoint
	peer int64 // the peer's clock then (unix ns)
	rtt  int64 // ns
}

type clockPeer struct {
	addr raft.ServerAddress
	stop chan struct{}

	mu      sync.Mutex
	samples [clockSamples]clockSample
	next    int
}

// clocks is the leader's view of the voters' clocks.
type clocks struct {
	n     *Node
	mu    sync.Mutex
	peers map[raft.ServerID]*clockPeer
	// warned: when the last "does not agree" warning was logged
	warned time.Time
	// transferred: when leadership was last handed away for the clock
	transferred time.Time
	// since: when this node's probers started (its leadership began);
	// zero while it does not lead
	since time.Time
}

func newClocks(n *Node) *clocks { return &clocks{n: n, peers: map[raft.ServerID]*clockPeer{}} }

// serveClock answers a leader's clock probes (any node: the one probing
// is the leader).
func (n *Node) serveClock(c net.Conn) {
	defer c.Close()
	var req [8]byte
	var resp [16]byte
	for {
		if _, err := io.ReadFull(c, req[:]); err != nil {
			return
		}
		copy(resp[:8], req[:])
		binary.BigEndian.PutUint64(resp[8:], uint64(n.door.WallNs()))
		if _, err := c.Write(resp[:]); err != nil {
			return
		}
	}
}

// reconcile runs a prober per other server of the configuration while
// this node is the Raft leader, and none otherwise (the monitor calls it
// every tick). A new leadership starts with no samples: its agreement is
// measured before it first serves.
func (k *clocks) reconcile(leader bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	want := map[raft.ServerID]raft.ServerAddress{}
	if leader && k.n.mux != nil {
		if cf := k.n.raft.GetConfiguration(); cf.Error() == nil {
			for _, s := range cf.Configuration().Servers {
				if s.ID != k.n.rid {
					want[s.ID] = s.Address
				}
			}
		}
	}
	switch {
	case !leader:
		k.since = time.Time{}
	case k.since.IsZero():
		k.since = time.Now()
	}
	for id, p := range k.peers {
		if a, ok := want[id]; !ok || a != p.addr {
			close(p.stop)
			delete(k.peers, id)
		}
	}
	for id, a := range want {
		if k.peers[id] == nil {
			p := &clockPeer{addr: a, stop: make(chan struct{})}
			k.peers[id] = p
			k.n.wg.Add(1)
			go func() { defer k.n.wg.Done(); k.probe(p) }()
		}
	}
}

// probe measures one peer's clock every clockProbeEvery until stopped.
func (k *clocks) probe(p *clockPeer) {
	t := time.NewTicker(clockProbeEvery)
	defer t.Stop()
	var c net.Conn
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	var seq uint64
	var req [8]byte
	var resp [16]byte
	for {
		if c == nil {
			var err error
			if c, err = k.n.mux.dial(string(p.addr), streamClock, clockFresh); err != nil {
				c = nil
			}
		}
		if c != nil {
			seq++
			binary.BigEndian.PutUint64(req[:], seq)
			c.SetDeadline(time.Now().Add(clockFresh))
			t0 := door.Nanotime()
			_, err := c.Write(req[:])
			if err == nil {
				_, err = io.ReadFull(c, resp[:])
			}
			t1 := door.Nanotime()
			if err != nil || binary.BigEndian.Uint64(resp[:8]) != seq {
				c.Close()
				c = nil
			} else if rtt := t1 - t0; rtt <= int64(k.n.cfg.maxSkew()) {
				// a round trip longer than the bound says too little
				p.mu.Lock()
				p.samples[p.next%clockSamples] = clockSample{mid: t0 + rtt/2, peer: int64(binary.BigEndian.Uint64(resp[8:])), rtt: rtt}
				p.next++
				p.mu.Unlock()
			}
		}
		select {
		case <-p.stop:
			return
		case <-k.n.closing:
			return
		case <-t.C:
		}
	}
}

// ClockQuorum values (INFO's raft_clock_quorum).
const (
	ClockExempt   = "exempt"   // one voter: nobody to agree with
	ClockOK       = "ok"       // the leader's clock agrees with a quorum
	ClockLost     = "lost"     // it does not: the leader does not serve
	ClockFollower = "follower" // not the leader: the leader measures
)

// clockView is an evaluation of the agreement.
type clockView struct {
	state    string
	agreeing int   // voters whose clock agrees with this one's, itself included
	voters   int   // voters of the configuration
	maxErr   int64 // ns: the largest error (rtt/2) among the samples counted
	offsets  map[raft.ServerID]peerClock
	target   raft.Server // a voter whose clock agrees with a quorum's (transfer)
	hasTgt   bool
}

// peerClock is a voter's measured offset from this node's clock.
type peerClock struct{ offset, err int64 } // ns

// view evaluates the agreement now. Offsets are taken against this
// node's wall clock as it is now (its monotonic clock at each sample's
// midpoint, plus the current wall offset), so a step of this node's own
// clock shows at the next evaluation, not at the next sample; a peer's
// step shows at its next sample (the newest sample, when it disagrees
// with the best beyond both errors, counts instead).
func (k *clocks) view() clockView {
	v := clockView{state: ClockFollower}
	if k.n.raft.State() != raft.Leader {
		return v
	}
	cf := k.n.raft.GetConfiguration()
	if cf.Error() != nil {
		v.state = ClockLost
		return v
	}
	var voters []raft.Server
	self := false
	for _, s := range cf.Configuration().Servers {
		if s.Suffrage == raft.Voter {
			voters = append(voters, s)
			self = self || s.ID == k.n.rid
		}
	}
	v.voters = len(voters)
	if len(voters) <= 1 {
		v.state, v.agreeing = ClockExempt, len(voters)
		return v
	}
	skew := int64(k.n.cfg.maxSkew())
	mono := door.Nanotime()
	wallOff := k.n.door.WallNs() - door.Nanotime()
	v.offsets = map[raft.ServerID]peerClock{}
	k.mu.Lock()
	for _, s := range voters {
		p := k.peers[s.ID]
		if p == nil {
			continue
		}
		p.mu.Lock()
		var best, newest *clockSample
		for i := range p.samples {
			smp := &p.samples[i]
			if smp.rtt == 0 || mono-smp.mid > int64(clockFresh) {
				continue
			}
			if best == nil || smp.rtt < best.rtt {
				best = smp
			}
			if newest == nil || smp.mid > newest.mid {
				newest = smp
			}
		}
		if best != nil {
			b := peerClock{offset: best.peer - (best.mid + wallOff), err: best.rtt / 2}
			nw := peerClock{offset: newest.peer - (newest.mid + wallOff), err: newest.rtt / 2}
			if abs64(nw.offset-b.offset) > nw.err+b.err+int64(time.Millisecond) {
				b = nw // the peer's clock stepped since the best sample
			}
			v.offsets[s.ID] = b
		}
		p.mu.Unlock()
	}
	k.mu.Unlock()
	if self {
		v.agreeing = 1
	}
	for _, pc := range v.offsets {
		if abs64(pc.offset) <= skew {
			v.agreeing++
			v.maxErr = max(v.maxErr, pc.err)
		}
	}
	quorum := len(voters)/2 + 1
	v.state = ClockLost
	if v.agreeing >= quorum {
		v.state = ClockOK
	}
	// a voter whose clock agrees with a quorum's (the others measured
	// from here; this node at offset 0), for a leader that does not:
	// the one agreeing with the most, then the closest to this node's
	best := -1
	for _, s := range voters {
		o, ok := v.offsets[s.ID]
		if !ok {
			continue
		}
		n := 0
		if self && abs64(o.offset) <= skew {
			n++
		}
		for _, q := range v.offsets {
			if abs64(q.offset-o.offset) <= skew {
				n++
			}
		}
		if n >= quorum && (n > best || n == best && abs64(o.offset) < abs64(v.offsets[v.target.ID].offset)) {
			best, v.target, v.hasTgt = n, s, true
		}
	}
	return v
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// settle is view for a leader about to serve: a leadership younger than
// clockFresh may still lack its first samples (the probers start with
// it), so it waits for them a little (up to 100 ms) rather than a
// monitor tick.
func (k *clocks) settle() clockView {
	v := k.view()
	for i := 0; i < 20 && v.state == ClockLost; i++ {
		k.mu.Lock()
		young := time.Since(k.since) < clockFresh
		k.mu.Unlock()
		if !young {
			break
		}
		time.Sleep(5 * time.Millisecond)
		v = k.view()
	}
	return v
}

// describe lists the voters' measured offsets for a log line.
func (v clockView) describe() string {
	var parts []string
	for id, pc := range v.offsets {
		parts = append(parts, fmt.Sprintf("%s:%+dms(±%dms)", id, pc.offset/1e6, pc.err/1e6))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// disagrees is the leader's answer to a clock that does not agree with a
// quorum (it does not serve meanwhile): a warning at most every 5 s, and
// the leadership handed to a voter whose clock agrees with a quorum's
// when there is one (at most once a second), so the cluster stays
// available; with none it stays leader, not serving, until the clocks
// agree (its clients wait and get CLUSTERDOWN).
func (k *clocks) disagrees(v clockView) {
	k.mu.Lock()
	young := time.Since(k.since) < clockFresh
	k.mu.Unlock()
	if young {
		return // the first probes are still under way
	}
	if time.Since(k.warned) > 5*time.Second {
		k.warned = time.Now()
		k.n.log.Warn("cluster: CLOCK SKEW: this leader's clock does not agree within max-clock-skew-ms with a quorum of the voters; not serving",
			"agreeing", v.agreeing, "voters", v.voters, "max_ms", k.n.cfg.maxSkew().Milliseconds(), "offsets", v.describe())
	}
	if v.hasTgt && time.Since(k.transferred) > time.Second {
		k.transferred = time.Now()
		k.n.log.Warn("cluster: handing leadership to a node whose clock agrees with a quorum", "to", string(v.target.ID))
		k.n.raft.LeadershipTransferToServer(v.target.ID, v.target.Address)
	}
}
