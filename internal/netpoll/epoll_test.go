package netpoll

import (
	"io"
	"runtime"
	"testing"
	"time"
)

// ready returns the descriptors of the events ready now (Poll), and
// whether the eventfd's was among them.
func ready(t *testing.T, e *Epoll) (fds []int32, woken bool) {
	t.Helper()
	events := make([]Event, 8)
	n, err := e.Poll(events)
	if err != nil {
		t.Fatal(err)
	}
	for i := range events[:n] {
		if e.IsWake(&events[i]) {
			woken = true
			continue
		}
		fds = append(fds, events[i].Fd)
	}
	return fds, woken
}

// TestEpoll: a loopback socket in the set is ready while it has input
// (level-triggered), not while disarmed or deleted; Read gives its bytes,
// then ErrWouldBlock, then io.EOF after the peer's close; Wake's event
// lasts until Drain.
func TestEpoll(t *testing.T) {
	e, err := NewEpoll()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	fd, peer := tcpPair(t)
	if err := e.Add(int32(fd)); err != nil {
		t.Fatal(err)
	}
	if fds, woken := ready(t, e); len(fds) != 0 || woken {
		t.Fatalf("ready with no input: %v, woken %v", fds, woken)
	}
	b := make([]byte, 64)
	if _, err := Read(fd, b); err != ErrWouldBlock {
		t.Fatalf("a read with no input: %v, want ErrWouldBlock", err)
	}

	peer.Write([]byte("PING\r\n"))
	events := make([]Event, 8)
	if n, err := e.Wait(events, 5000); err != nil || n != 1 || events[0].Fd != int32(fd) {
		t.Fatalf("Wait after input: %d events (%v)", n, err)
	}
	if err := e.Disarm(int32(fd)); err != nil {
		t.Fatal(err)
	}
	if fds, _ := ready(t, e); len(fds) != 0 {
		t.Fatalf("ready while disarmed: %v", fds)
	}
	if err := e.Arm(int32(fd)); err != nil {
		t.Fatal(err)
	}
	if fds, _ := ready(t, e); len(fds) != 1 || fds[0] != int32(fd) {
		t.Fatalf("ready after Arm: %v, want [%d] (level-triggered)", fds, fd)
	}
	if n, err := Read(fd, b); err != nil || string(b[:n]) != "PING\r\n" {
		t.Fatalf("read %q, %v", b[:n], err)
	}
	if fds, _ := ready(t, e); len(fds) != 0 {
		t.Fatalf("ready after the read: %v", fds)
	}

	e.Wake()
	if _, woken := ready(t, e); !woken {
		t.Fatal("no wake-up event after Wake")
	}
	if _, woken := ready(t, e); !woken {
		t.Fatal("the wake-up event did not last until Drain")
	}
	e.Drain()
	if _, woken := ready(t, e); woken {
		t.Fatal("a wake-up event after Drain")
	}

	peer.Close()
	if fds, _ := ready(t, e); len(fds) != 1 {
		t.Fatalf("ready after the peer's close: %v", fds)
	}
	if _, err := Read(fd, b); err != io.EOF {
		t.Fatalf("a read after the peer's close: %v, want io.EOF", err)
	}
	if err := e.Del(int32(fd)); err != nil {
		t.Fatal(err)
	}
	if fds, _ := ready(t, e); len(fds) != 0 {
		t.Fatalf("ready after Del: %v", fds)
	}
}

// TestEpollWaitWake: a Wait with no timeout returns on another
// goroutine's Wake, both where it waits in Go's poller (one P) and in
// epoll_wait(2).
func TestEpollWaitWake(t *testing.T) {
	for _, procs := range []int{1, 2} {
		prev := runtime.GOMAXPROCS(procs)
		e, err := NewEpoll()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			time.Sleep(20 * time.Millisecond)
			e.Wake()
		}()
		events := make([]Event, 8)
		done := make(chan bool, 1)
		go func() {
			n, err := e.Wait(events, -1)
			done <- err == nil && n == 1 && e.IsWake(&events[0])
		}()
		select {
		case ok := <-done:
			if !ok {
				t.Fatalf("GOMAXPROCS %d: Wait returned without the wake-up", procs)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("GOMAXPROCS %d: Wait did not return on Wake", procs)
		}
		e.Close()
		runtime.GOMAXPROCS(prev)
	}
}

// TestRawWrite: RawWrite's bytes reach the peer; a closed descriptor's
// errno comes back.
func TestRawWrite(t *testing.T) {
	fd, peer := tcpPair(t)
	if n, err := RawWrite(fd, []byte("+OK\r\n")); err != nil || n != 5 {
		t.Fatalf("RawWrite: %d, %v", n, err)
	}
	b := make([]byte, 5)
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(peer, b); err != nil || string(b) != "+OK\r\n" {
		t.Fatalf("peer read %q (%v)", b, err)
	}
	if _, err := RawWrite(-1, b); err == nil {
		t.Fatal("RawWrite on descriptor -1: no error")
	}
}
