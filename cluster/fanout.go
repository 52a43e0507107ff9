package cluster

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Pub/Sub messages between nodes. A message is not state: it never enters
// the Raft log (replaying the log must not deliver it again), it is not
// in snapshots, and a node that is down when it is published never gets
// it, as on Redis Cluster's bus. The node where a message is published
// (PUBLISH on any node; a keyspace event on the node that executed the
// unit, the leader) delivers it to its own subscribers and sends it to
// every other member over a stream of its own on the inter-node listener
// ('M', authenticated like the others), one connection per peer, dialed
// by the sender. The receiving node delivers it to its subscribers and
// sends it nowhere else.
//
// Order and commit. Messages are queued in execution order (the engine
// lock is held) and released per batch of the publishing client, after
// the records that batch's replies wait for are committed: a keyspace
// event never reaches another node before the write it reports is
// committed. One sender goroutine releases batches in order and hands
// them to each peer's queue; each peer's goroutine writes them in order,
// so every node sees one publisher's messages in its order.
//
// Frames: uint32 length, then messages: a flags byte (1: shard channel),
// uvarint-prefixed channel and payload.
const streamMessages = 'M'

// fanPeerQueueMax bounds what waits for one peer (a slow or unreachable
// node): past it new batches are dropped for that peer, as a message for
// a subscriber past its output limit is.
const fanPeerQueueMax = 64 << 20

// fanRedial is the pause before dialing a peer again after a failure;
// batches for it meanwhile are dropped.
const fanRedial = 500 * time.Millisecond

type fanout struct {
	n       *Node
	deliver atomic.Pointer[func([]byte)] // the server's local delivery

	mu      sync.Mutex
	pend    []byte     // messages of the batch running (engine lock held)
	batches []fanBatch // settled, in order
	wake    chan struct{}

	peers   map[raft.ServerAddress]*fanPeer // the sender goroutine's
	peersAt time.Time
	dropped atomic.Int64
}

type fanBatch struct {
	ticket uint64
	b      []byte
}

type fanPeer struct {
	addr  raft.ServerAddress
	mu    sync.Mutex
	q     [][]byte
	bytes int
	wake  chan struct{}
	stop  chan struct{}
}

func newFanout(n *Node) *fanout {
	f := &fanout{n: n, wake: make(chan struct{}, 1), peers: map[raft.ServerAddress]*fanPeer{}}
	if n.mux != nil {
		n.mux.msgs = f.serveConn
	}
	n.wg.Add(1)
	go func() { defer n.wg.Done(); f.run() }()
	return f
}

// queueFanout does Fanout (api.go).
func (n *Node) queueFanout(channel, message []byte, shard bool) bool {
	if !n.peers.Load() || n.mux == nil {
		return false
	}
	f := n.fan
	var flags byte
	if shard {
		flags = 1
	}
	f.mu.Lock()
	f.pend = append(f.pend, flags)
	f.pend = appendBytes(f.pend, channel)
	f.pend = appendBytes(f.pend, message)
	f.mu.Unlock()
	return true
}

// settleFanout does FanoutSettle (api.go).
func (n *Node) settleFanout(ticket uint64) {
	f := n.fan
	f.mu.Lock()
	if len(f.pend) > 0 {
		f.batches = append(f.batches, fanBatch{ticket, f.pend})
		f.pend = nil
	}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// run releases settled batches in order and hands them to the peers.
func (f *fanout) run() {
	for {
		select {
		case <-f.wake:
		case <-f.n.closing:
			for _, p := range f.peers {
				close(p.stop)
			}
			return
		}
		for {
			f.mu.Lock()
			bs := f.batches
			f.batches = nil
			f.mu.Unlock()
			if len(bs) == 0 {
				break
			}
			for _, b := range bs {
				if b.ticket != 0 && f.n.prop.Wait(b.ticket, 10*time.Second) != nil {
					// an unknown outcome (leadership lost): the write may
					// never happen, so its events are not sent (the local
					// subscribers' are cut too, server/pubsub.go)
					continue
				}
				f.refreshPeers()
				for _, p := range f.peers {
					p.enqueue(f, b.b)
				}
			}
		}
	}
}

// refreshPeers follows the Raft configuration, at most once a second.
func (f *fanout) refreshPeers() {
	if time.Since(f.peersAt) < time.Second && len(f.peers) > 0 {
		return
	}
	f.peersAt = time.Now()
	cf := f.n.raft.GetConfiguration()
	if cf.Error() != nil {
		return
	}
	self := f.n.rid
	seen := map[raft.ServerAddress]bool{}
	for _, s := range cf.Configuration().Servers {
		if s.ID == self {
			continue
		}
		seen[s.Address] = true
		if f.peers[s.Address] == nil {
			p := &fanPeer{addr: s.Address, wake: make(chan struct{}, 1), stop: make(chan struct{})}
			f.peers[s.Address] = p
			f.n.wg.Add(1)
			go func() { defer f.n.wg.Done(); p.run(f) }()
		}
	}
	for a, p := range f.peers {
		if !seen[a] {
			close(p.stop)
			delete(f.peers, a)
		}
	}
}

func (p *fanPeer) enqueue(f *fanout, b []byte) {
	p.mu.Lock()
	if p.bytes+len(b) > fanPeerQueueMax {
		p.mu.Unlock()
		f.dropped.Add(1)
		return
	}
	p.q = append(p.q, b)
	p.bytes += len(b)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// run writes the peer's batches in order over one connection, dialing it
// when needed; while the peer cannot be reached its batches are dropped.
func (p *fanPeer) run(f *fanout) {
	var c net.Conn
	var w *bufio.Writer
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	var failedAt time.Time
	for {
		select {
		case <-p.wake:
		case <-p.stop:
			return
		}
		p.mu.Lock()
		q := p.q
		p.q, p.bytes = nil, 0
		p.mu.Unlock()
		if c == nil && time.Since(failedAt) >= fanRedial && f.n.mux != nil {
			var err error
			if c, err = f.n.mux.dial(string(p.addr), streamMessages, 2*time.Second); err != nil {
				c, failedAt = nil, time.Now()
			} else {
				w = bufio.NewWriterSize(c, 64<<10)
				go drainConn(c) // the receiver never answers; notice its close
			}
		}
		if c == nil {
			f.dropped.Add(int64(len(q)))
			continue
		}
		var err error
		for _, b := range q {
			var hdr [4]byte
			binary.BigEndian.PutUint32(hdr[:], uint32(len(b)))
			if _, err = w.Write(hdr[:]); err == nil {
				_, err = w.Write(b)
			}
			if err != nil {
				break
			}
		}
		if err == nil {
			c.SetWriteDeadline(time.Now().Add(10 * time.Second))
			err = w.Flush()
		}
		if err != nil {
			// what q held may or may not have reached the peer: counted
			// as dropped, since its subscribers cannot be told
			f.dropped.Add(int64(len(q)))
			c.Close()
			c, failedAt = nil, time.Now()
		}
	}
}

// drainConn reads c until it closes (nothing is expected from it), and
// then closes it, so that the next batch fails at once (counted, and the
// peer dialed again) instead of going into a socket whose peer is gone.
func drainConn(c net.Conn) {
	io.Copy(io.Discard, c)
	c.Close()
}

// serveConn reads another node's messages and delivers them here.
func (f *fanout) serveConn(c net.Conn) {
	defer c.Close()
	r := bufio.NewReaderSize(c, 64<<10)
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n > maxFrame {
			return
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return
		}
		if d := f.deliver.Load(); d != nil {
			(*d)(buf)
		}
	}
}

// DecodeMessages calls fn for each message of a batch; false when it is
// malformed.
func DecodeMessages(b []byte, fn func(channel, message []byte, shard bool)) bool {
	r := &reader{p: b}
	for len(r.p) > 0 && r.err == nil {
		flags := r.byte()
		ch := r.bytes()
		msg := r.bytes()
		if r.err != nil {
			return false
		}
		fn(ch, msg, flags&1 != 0)
	}
	return r.err == nil
}
