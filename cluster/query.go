package cluster

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
)

// Queries between nodes: a node asks every other member for something
// node-local (RL.STATS CLUSTER asks for each node's decision counters)
// over a stream of its own on the inter-node listener ('S'),
// authenticated like the others, one connection per query and peer. What a query means is the server's:
// the node carries a request and a status-coded answer, never reply text
// to parse.
//
// Frames: the request is uint32 length then the body; the answer a
// status byte (QueryOK, or the handler's own codes), uint32 length and
// the body.
const streamQuery = 'S'

// QueryOK is the status of an answer the handler gave; QueryNoHandler
// answers a node whose server set none.
const (
	QueryOK        byte = 0
	QueryNoHandler byte = 1
)

// queryBodyMax bounds a request's and an answer's body.
const queryBodyMax = 16 << 20

// queryPeers does QueryPeers (api.go).
func (n *Node) queryPeers(req []byte, timeout time.Duration) (answers []PeerAnswer, missing []string) {
	if n.mux == nil || n.raft == nil {
		return nil, nil
	}
	cf := n.raft.GetConfiguration()
	if cf.Error() != nil {
		return nil, nil
	}
	deadline := time.Now().Add(timeout)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, s := range cf.Configuration().Servers {
		if s.ID == n.rid {
			continue
		}
		name := nodeName(s.ID)
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, body, err := n.queryPeer(string(s.Address), req, deadline)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				missing = append(missing, name)
				return
			}
			answers = append(answers, PeerAnswer{Node: name, Status: st, Body: body})
		}()
	}
	wg.Wait()
	return answers, missing
}

var errQueryFrame = errors.New("cluster: malformed query frame")

// ErrNotSent wraps a query's failure before its request could be whole
// at the other end (the dial, or a write that failed: a frame cut short
// is never run); any other failure leaves the outcome unknown.
var ErrNotSent = errors.New("cluster: query not sent")

func (n *Node) queryPeer(addr string, req []byte, deadline time.Time) (byte, []byte, error) {
	c := n.queries.get(addr)
	if c == nil {
		var err error
		if c, err = n.mux.dial(addr, streamQuery, time.Until(deadline)); err != nil {
			return 0, nil, fmt.Errorf("%w: %w", ErrNotSent, err)
		}
	}
	st, body, err := askOn(c, req, deadline)
	if err != nil {
		c.Close()
		return 0, nil, err
	}
	n.queries.put(addr, c)
	return st, body, nil
}

// askOn sends one request on c and reads its answer.
func askOn(c net.Conn, req []byte, deadline time.Time) (byte, []byte, error) {
	c.SetDeadline(deadline)
	frame := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(req)), uint32(len(req)))
	if _, err := c.Write(append(frame, req...)); err != nil {
		return 0, nil, fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	var hdr [5]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return 0, nil, err
	}
	size := binary.BigEndian.Uint32(hdr[1:])
	if size > queryBodyMax {
		return 0, nil, errQueryFrame
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(c, body); err != nil {
		return 0, nil, err
	}
	return hdr[0], body, nil
}

// queryConns keeps the query connections a node opened for reuse: the
// map of a cluster of several groups asks every other group every 100 ms
// (the server's cluster_map.go), and a connection per ask cost a TCP
// handshake, the authentication exchange (and TLS's) each time. A
// connection is reused only while it has been idle less than
// queryIdleMax, well inside the idle bound serveQuery gives the other
// end (handshakeTimeout), so a request is never sent on a connection the
// other end is closing: a failed request is never resent (a directory or
// handover request must not run twice), the failure is the caller's.
type queryConns struct {
	mu   sync.Mutex
	idle map[string][]idleConn
}

type idleConn struct {
	c  net.Conn
	at time.Time
}

const (
	queryIdleMax  = 2 * time.Second
	queryIdlePeer = 4 // idle connections kept per address
)

func (q *queryConns) get(addr string) net.Conn {
	q.mu.Lock()
	defer q.mu.Unlock()
	cs := q.idle[addr]
	for len(cs) > 0 {
		ic := cs[len(cs)-1]
		cs = cs[:len(cs)-1]
		if time.Since(ic.at) < queryIdleMax && idleAlive(ic.c) {
			q.idle[addr] = cs
			return ic.c
		}
		ic.c.Close()
	}
	delete(q.idle, addr)
	return nil
}

// idleAlive: nothing is pending on the idle connection c, not even its
// end (a peek that does not wait). The other end killed, its FIN is
// there: a request written on c would be lost, and a failure after the
// write leaves its outcome unknown to a caller that must not send it
// twice (a cluster-wide change: the directory's leader killed, the next
// change found its pooled connection and answered "may or may not have
// been made", TestClusterGlobalDirectoryLeaderKilled). Data pending on an
// idle connection is no answer of ours either: the connection goes.
func idleAlive(c net.Conn) bool {
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, e := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		alive = e == syscall.EAGAIN || e == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && alive
}

func (q *queryConns) put(addr string, c net.Conn) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.idle == nil {
		q.idle = map[string][]idleConn{}
	}
	if len(q.idle[addr]) >= queryIdlePeer {
		c.Close()
		return
	}
	q.idle[addr] = append(q.idle[addr], idleConn{c, time.Now()})
}

// closeAll closes the idle connections (Close).
func (q *queryConns) closeAll() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, cs := range q.idle {
		for _, ic := range cs {
			ic.c.Close()
		}
	}
	q.idle = nil
}

// serveQuery answers the queries of one connection (the mux's goroutine).
func (n *Node) serveQuery(c net.Conn) {
	defer c.Close()
	for {
		c.SetReadDeadline(time.Now().Add(handshakeTimeout))
		var hdr [4]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		size := binary.BigEndian.Uint32(hdr[:])
		if size > queryBodyMax {
			return
		}
		req := make([]byte, size)
		if _, err := io.ReadFull(c, req); err != nil {
			return
		}
		st, body := QueryNoHandler, []byte(nil)
		if f := n.query.Load(); f != nil {
			st, body = (*f)(req)
		}
		out := binary.BigEndian.AppendUint32([]byte{st}, uint32(len(body)))
		c.SetWriteDeadline(time.Now().Add(handshakeTimeout))
		if _, err := c.Write(append(out, body...)); err != nil {
			return
		}
	}
}
