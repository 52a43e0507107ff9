package tests

import (
	"testing"
	"time"
)

// TestClusterBlockingTimeoutWhileNoLeader: a BLPOP with a 1 s timeout on
// a follower that knows no leader waits for one (leader-wait-ms), and
// once one is elected its unit is sent with what is left of the client's
// timeout, none here: the client is answered nil after its 1 s, not 1 s
// after the leader came. The first send carried the full timeout: the
// leader, elected some 2 s later, blocked the unit for 1 s more, and the
// client waited about 3 s for a 1 s BLPOP.
func TestClusterBlockingTimeoutWhileNoLeader(t *testing.T) {
	c := mustCluster(t, 3, "--leader-wait-ms", "6000")
	defer c.stopAll()
	l := c.waitLeader(10 * time.Second)
	f1, f2 := (l+1)%3, (l+2)%3
	cn := mustDial(t, c.addr(f1))
	c.kill(l)
	c.kill(f2)
	time.Sleep(1500 * time.Millisecond) // f1 sees its leader gone
	type reply struct {
		r    []byte
		err  error
		took time.Duration
	}
	got := make(chan reply, 1)
	start := time.Now()
	if err := cn.Send(Encode("BLPOP", "q", "1")); err != nil {
		t.Fatal(err)
	}
	go func() {
		r, err := cn.ReadReply()
		got <- reply{r, err, time.Since(start)}
	}()
	// a leader only after the client's timeout: f1 and f2 elect one a
	// second or two after f2's start
	time.Sleep(1300 * time.Millisecond)
	c.start(f2)
	var rp reply
	select {
	case rp = <-got:
	case <-time.After(15 * time.Second):
		t.Fatal("BLPOP q 1 was not answered within 15 s")
	}
	if rp.err != nil || string(rp.r) != "*-1\r\n" {
		t.Fatalf("BLPOP q 1: %q %v after %v", rp.r, rp.err, rp.took)
	}
	if rp.took > 2*time.Second { // (before: 2.7 s and more; no leader before 1.3 s)
		t.Fatalf("BLPOP q 1 answered nil after %v", rp.took)
	}
	t.Logf("BLPOP q 1 answered nil after %v", rp.took)
}
