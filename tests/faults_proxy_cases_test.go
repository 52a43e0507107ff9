package tests

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// TestFaultsLinkShaper: a delay set one way slows only that direction.
// A server on 127.0.0.11 (node 0) behind a harness proxy notes when each
// line arrives and echoes it; a client dials from 127.0.0.12 (node 1).
// Delaying 1→0 holds the line before it arrives; delaying 0→1 holds
// only the echo; cutting 0→1 holds the echo until the cut is lifted.
func TestFaultsLinkShaper(t *testing.T) {
	target, err := net.Listen("tcp", "127.0.0.11:0")
	if err != nil {
		t.Skipf("no 127.0.0.11: %v", err)
	}
	defer target.Close()
	arrived := make(chan time.Time, 16)
	go func() {
		for {
			c, err := target.Accept()
			if err != nil {
				return
			}
			go func() {
				r := bufio.NewReader(c)
				for {
					l, err := r.ReadString('\n')
					if err != nil {
						c.Close()
						return
					}
					arrived <- time.Now()
					c.Write([]byte(l))
				}
			}()
		}
	}()
	p := newTCPProxy(t, net.JoinHostPort("127.0.0.11", "0"), target.Addr().String())
	defer p.close()
	p1 := newTCPProxy(t, net.JoinHostPort("127.0.0.12", "0"), target.Addr().String()) // node 1's, unused
	defer p1.close()
	c := &testCluster{t: t, nodes: []*clusterNode{{i: 0, ip: "127.0.0.11", proxy: p}, {i: 1, ip: "127.0.0.12", proxy: p1}}}
	s := installShaper(c)

	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.12")}, Timeout: time.Second}
	conn, err := d.Dial("tcp", p.ln.Addr().String())
	if err != nil {
		t.Skipf("cannot dial from 127.0.0.12: %v", err)
	}
	defer conn.Close()
	rd := bufio.NewReader(conn)
	// one round: the time to arrive and the time for the echo to come back
	round := func() (time.Duration, time.Duration) {
		t0 := time.Now()
		if _, err := conn.Write([]byte("x\n")); err != nil {
			t.Fatal(err)
		}
		var at time.Time
		select {
		case at = <-arrived:
		case <-time.After(5 * time.Second):
			t.Fatal("the line did not arrive")
		}
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := rd.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		return at.Sub(t0), time.Since(t0)
	}
	const lat = 300 * time.Millisecond
	if there, back := round(); back > lat/2 {
		t.Fatalf("undelayed round took %v (arrival %v)", back, there)
	}
	s.setDelay(1, 0, lat)
	if there, back := round(); there < lat || back < lat {
		t.Errorf("1→0 delayed: arrived after %v, echo after %v; want both ≥ %v", there, back, lat)
	}
	s.clear()
	s.setDelay(0, 1, lat)
	if there, back := round(); there > lat/2 || back < lat {
		t.Errorf("0→1 delayed: arrived after %v (want < %v), echo after %v (want ≥ %v)", there, lat/2, back, lat)
	}
	s.clear()
	// a cut 0→1: the line arrives, its echo waits in the proxy until the
	// cut is lifted, on the same connection
	s.setCut(0, 1, true)
	if _, err := conn.Write([]byte("y\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("0→1 cut: the line did not arrive")
	}
	conn.SetReadDeadline(time.Now().Add(lat))
	if l, err := rd.ReadString('\n'); err == nil {
		t.Fatalf("0→1 cut: the echo %q came through", l)
	}
	s.setCut(0, 1, false)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if l, err := rd.ReadString('\n'); err != nil || l != "y\n" {
		t.Fatalf("after the cut: %q %v, want the held echo", l, err)
	}
	if n := resetProxyConns(p); n != 1 {
		t.Errorf("reset closed %d connections, want 1", n)
	}
	conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := rd.ReadString('\n'); err == nil {
		t.Error("the connection still works after a reset")
	}
}
