package tests

import (
	"net"
	"sync"
	"time"
)

// The fault suite's control of the links between nodes. Node i's peers
// reach its Raft address (which also carries the forwarding links)
// through the harness's tcpProxy i, and each node dials from its own IP,
// so a byte that proxy i moves toward its target goes from the source
// IP's node to node i, and one it moves back goes from node i to the
// source's node. linkShaper keeps a delay per ordered pair (from, to) and
// applies it to both proxies' halves that carry that direction: a delay
// set one way only slows Raft's requests but not the replies (or the
// reverse), as an asymmetric route would. A cut one way holds that
// direction's bytes (the connections stay open and the other direction
// flows) until it is lifted, as a route that loses every packet one way
// does to TCP.

type linkShaper struct {
	c     *testCluster
	mu    sync.Mutex
	delay map[[2]int]time.Duration // (from, to) node indexes
	cut   map[[2]int]bool
}

// installShaper makes every proxy of c move bytes through the shaper
// and resets the connections already open, so that all of them do.
func installShaper(c *testCluster) *linkShaper {
	s := &linkShaper{c: c, delay: map[[2]int]time.Duration{}, cut: map[[2]int]bool{}}
	for i, nd := range c.nodes {
		i := i
		nd.proxy.mu.Lock()
		nd.proxy.copy = func(dst, src net.Conn, srcIP string, toTarget bool) {
			from := s.nodeOf(srcIP)
			to := i
			if !toTarget {
				from, to = i, from
			}
			s.pipe(dst, src, from, to)
		}
		nd.proxy.mu.Unlock()
		resetProxyConns(nd.proxy)
	}
	return s
}

func (s *linkShaper) nodeOf(ip string) int {
	for j, nd := range s.c.nodes {
		if nd.ip == ip {
			return j
		}
	}
	return -1
}

// setDelay sets the delay of the bytes from node a to node b.
func (s *linkShaper) setDelay(a, b int, d time.Duration) {
	s.mu.Lock()
	s.delay[[2]int{a, b}] = d
	s.mu.Unlock()
}

// setCut cuts (or restores) the bytes from node a to node b.
func (s *linkShaper) setCut(a, b int, cut bool) {
	s.mu.Lock()
	s.cut[[2]int{a, b}] = cut
	s.mu.Unlock()
}

// clear lifts every delay and cut.
func (s *linkShaper) clear() {
	s.mu.Lock()
	s.delay = map[[2]int]time.Duration{}
	s.cut = map[[2]int]bool{}
	s.mu.Unlock()
}

func (s *linkShaper) isCut(a, b int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cut[[2]int{a, b}]
}

func (s *linkShaper) get(a, b int) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delay[[2]int{a, b}]
}

// pipe copies src to dst, each chunk held until its arrival time plus the
// delay in force when it arrived, and while the direction is cut (a
// reader and a writer goroutine, so a delay adds latency without cutting
// the throughput to a chunk per delay, and a cut holds what it reads).
func (s *linkShaper) pipe(dst, src net.Conn, from, to int) {
	type chunk struct {
		at time.Time
		b  []byte
	}
	ch := make(chan chunk, 4096)
	go func() {
		defer close(ch)
		for {
			b := make([]byte, 32<<10)
			n, err := src.Read(b)
			if n > 0 {
				ch <- chunk{time.Now().Add(s.get(from, to)), b[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range ch {
		if d := time.Until(c.at); d > 0 {
			time.Sleep(d)
		}
		for s.isCut(from, to) {
			time.Sleep(2 * time.Millisecond)
		}
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	// closing both ends ends the reader too (and the harness's pipe
	// closes them again, harmlessly)
	dst.Close()
	src.Close()
	for range ch {
	}
}

// resetProxyConns closes every connection the proxy carries (both
// halves, as a TCP reset between the nodes would); new ones are accepted.
func resetProxyConns(p *tcpProxy) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for c := range p.conns {
		c.Close()
		n++
	}
	return n / 2
}
