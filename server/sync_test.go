package server

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// TestSyncGivesLogBack: while a SYNC reader is attached the door's log is
// the tee; once it hangs up, a server without a log (appendonly no) has
// none again, so its units stop recording effects.
func TestSyncGivesLogBack(t *testing.T) {
	s := startTest(t, Config{})
	if s.door.Log() != nil {
		t.Fatal("a server without persistence has a log")
	}
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write([]byte("*1\r\n$4\r\nSYNC\r\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(nc).ReadString('\n'); err != nil { // the RDB bulk's header
		t.Fatal(err)
	}
	s.door.Lock()
	_, tee := s.door.Log().(*syncTee)
	s.door.Unlock()
	if !tee {
		t.Fatal("no tee while a SYNC reader is attached")
	}
	nc.Close()
	c := dialT(t, s.Addr().String())
	for deadline := time.Now().Add(5 * time.Second); ; {
		// writes make the writer notice the closed connection
		c.do(t, "SET", "k", "v")
		s.door.Lock()
		l := s.door.Log()
		s.door.Unlock()
		if l == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the door's log is still %T 5 s after the reader left", l)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
