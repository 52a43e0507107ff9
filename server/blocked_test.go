package server

import (
	"strings"
	"testing"
	"time"
)

// TestBlockedPeerClosed: a push that finds a blocked client whose peer
// has hung up after the push was read. With a goroutine per connection
// the push leaves the element where it is: nothing orders the two
// goroutines, and Redis handles the earlier hang-up first (peerClosed's
// look at the socket). The engine lock orders it here: the push's
// goroutine waits for the lock before the hang-up happens, the blocked
// goroutine's drop waits behind it. An event loop reads events in the
// order they came, as Redis's does: it read the push first (and waits
// for the lock in it), so it serves the worker, as Redis would, and
// BRPOPLPUSH moves the job.
func TestBlockedPeerClosed(t *testing.T) {
	s := startTest(t, Config{})
	worker, producer, ctl := dialT(t, s.Addr().String()), dialT(t, s.Addr().String()), dialT(t, s.Addr().String())
	worker.nc.Write([]byte("*4\r\n$10\r\nBRPOPLPUSH\r\n$4\r\njobs\r\n$6\r\nactive\r\n$1\r\n0\r\n"))
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(ctl.do(t, "INFO", "clients"), "blocked_clients:1\r\n") {
		if time.Now().After(deadline) {
			t.Fatal("the worker did not block")
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.door.Lock()
	producer.nc.Write([]byte("*3\r\n$5\r\nLPUSH\r\n$4\r\njobs\r\n$2\r\nj1\r\n"))
	time.Sleep(50 * time.Millisecond) // the push waits for the lock
	worker.nc.Close()
	time.Sleep(50 * time.Millisecond) // so does the worker's drop
	s.door.Unlock()
	producer.nc.SetDeadline(time.Now().Add(5 * time.Second))
	if l, err := producer.br.ReadString('\n'); err != nil || l != ":1\r\n" {
		t.Fatalf("LPUSH: %q %v", l, err)
	}
	want := "jobs"
	if s.conf.params["io-model"] == "loop" {
		want = "active"
	}
	if got := ctl.do(t, "LRANGE", want, "0", "-1"); got != "*1\r\n$2\r\nj1\r\n" {
		t.Fatalf("io-model %s: %s: %q (jobs: %q, active: %q)", s.conf.params["io-model"], want, got,
			ctl.do(t, "LRANGE", "jobs", "0", "-1"), ctl.do(t, "LRANGE", "active", "0", "-1"))
	}
}
