package cluster

import (
	"net"
	"testing"
	"time"
)

// A query connection is reused while idle less than queryIdleMax, at most
// queryIdlePeer per address; an older one is closed, never handed out.
func TestQueryConnsReuse(t *testing.T) {
	var q queryConns
	pipe := func() net.Conn { a, b := net.Pipe(); t.Cleanup(func() { a.Close(); b.Close() }); return a }
	if q.get("x") != nil {
		t.Fatal("an empty pool handed out a connection")
	}
	c := pipe()
	q.put("x", c)
	if got := q.get("x"); got != c {
		t.Fatal("a fresh idle connection was not reused")
	}
	if q.get("x") != nil {
		t.Fatal("one connection was handed out twice")
	}
	for range queryIdlePeer + 2 {
		q.put("x", pipe())
	}
	if n := len(q.idle["x"]); n != queryIdlePeer {
		t.Fatalf("%d idle connections kept, want %d", n, queryIdlePeer)
	}
	q.mu.Lock()
	for i := range q.idle["x"] {
		q.idle["x"][i].at = time.Now().Add(-queryIdleMax)
	}
	q.mu.Unlock()
	if q.get("x") != nil {
		t.Fatal("a connection idle for queryIdleMax was reused")
	}
	if len(q.idle) != 0 {
		t.Fatal("the stale connections were kept")
	}
}
