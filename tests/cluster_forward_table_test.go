package tests

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestClusterForwardTable: the replicated table of forwarded units (at
// most once), which a forwarding link's reset no longer clears, follows
// the followers' clients alive (INFO raft_forwarded_clients): a client
// that forwarded a write and left takes its row with it; one still
// connected keeps its row; and when its follower process dies and comes
// back (a new session), the old session's rows go, also on a leader
// elected while the follower was down, which never saw that session.
func TestClusterForwardTable(t *testing.T) {
	c := mustCluster(t, 3)
	l := c.waitLeader(10 * time.Second)
	f := (l + 1) % 3
	rows := func(i int) int {
		cn, err := Dial(c.addr(i))
		if err != nil {
			return -1
		}
		defer cn.Close()
		r, err := cn.Do("INFO", "raft")
		if err != nil {
			return -1
		}
		for _, line := range strings.Split(string(r), "\r\n") {
			if v, ok := strings.CutPrefix(line, "raft_forwarded_clients:"); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
		return -1
	}
	waitRows := func(what string, want int) {
		t.Helper()
		var got int
		if !eventually(10*time.Second, func() bool {
			l := c.leader()
			got = -1
			if l >= 0 {
				got = rows(l)
			}
			return got == want
		}) {
			t.Fatalf("%s: the leader's table holds %d forwarded clients, want %d", what, got, want)
		}
	}

	for k := 0; k < 20; k++ {
		cn := mustDial(t, c.addr(f))
		if r, err := cn.Do("INCR", "x"); err != nil || r[0] != ':' {
			t.Fatalf("INCR on the follower: %q %v", r, err)
		}
		cn.Close()
	}
	waitRows("20 clients that forwarded a write and left", 0)

	keep := mustDial(t, c.addr(f))
	if r, err := keep.Do("INCR", "x"); err != nil || r[0] != ':' {
		t.Fatalf("INCR on the follower: %q %v", r, err)
	}
	waitRows("a client still connected", 1)

	// the follower dies with its client; the leader is restarted while it
	// is down, so whoever leads next has no hello of the old session
	c.kill(f)
	c.kill(l)
	c.start(l)
	c.waitLeader(15 * time.Second)
	waitRows("the follower down", 1)
	c.start(f)
	waitRows("the follower back as a new process", 0)
}
