package tests

import (
	"strconv"
	"testing"
	"time"
)

// fill1000 sets keys k0 … k999 in one MSET.
func fill1000(t *testing.T, c *Conn) {
	t.Helper()
	args := []string{"MSET"}
	for i := 0; i < 1000; i++ {
		args = append(args, "k"+strconv.Itoa(i), "v")
	}
	expectDo(t, c, "+OK\r\n", args...)
}

// bgsaveTime starts a BGSAVE and returns how long rdb_bgsave_in_progress
// stays 1 (polled every 20 ms). With slow (a save that lasts about a
// second) it checks at the first poll that a second BGSAVE gets Redis's
// refusal; a quick save may end between the poll and that BGSAVE, which
// then starts a save of its own (one CI run saw that at delay 0).
func bgsaveTime(t *testing.T, c *Conn, slow bool) time.Duration {
	t.Helper()
	start := time.Now()
	expectDo(t, c, "+Background saving started\r\n", "BGSAVE")
	checked := !slow
	for time.Since(start) < 10*time.Second {
		if infoSection(t, c, "persistence")["rdb_bgsave_in_progress"] == "0" {
			return time.Since(start)
		}
		// at the first poll: a check at 100 ms missed the save when the
		// test was descheduled that long under CI's load
		if !checked {
			expectDo(t, c, "-ERR Background save already in progress\r\n", "BGSAVE")
			checked = true
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("BGSAVE still in progress after 10 s")
	return 0
}

// effectRdbKeySaveDelay: a BGSAVE of 1000 keys lasts about a second at
// 1000 µs a key (a second BGSAVE meanwhile is refused as in Redis), and
// under 0.5 s at 0; SYNC's payload comes after about a second while
// PING is answered at once. TestKeySaveDelayDiff compares with redis-server.
func effectRdbKeySaveDelay(t *testing.T, c *Conn, addr, name string) {
	_, p := persistServer(t, "--save", "")
	fill1000(t, p)
	configSet(t, p, name, "1000")
	if d := bgsaveTime(t, p, true); d < 900*time.Millisecond || d > 5*time.Second {
		t.Fatalf("BGSAVE of 1000 keys at %s 1000: %v", name, d)
	}
	// SYNC's snapshot is slowed the same, off the engine lock: a PING
	// meanwhile is answered at once
	s := mustDial(t, p.nc.RemoteAddr().String())
	start := time.Now()
	if err := s.Send(Encode("SYNC")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	ping := time.Now()
	expectDo(t, p, "+PONG\r\n", "PING")
	if d := time.Since(ping); d > 300*time.Millisecond {
		t.Fatalf("PING during a slowed SYNC snapshot: %v", d)
	}
	s.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := s.br.ReadString('\n')
	if err != nil || line[0] != '$' {
		t.Fatalf("SYNC: %q %v", line, err)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Fatalf("SYNC's snapshot of 1000 keys at %s 1000 came after %v", name, d)
	}
	configSet(t, p, name, "0")
	if d := bgsaveTime(t, p, false); d > 500*time.Millisecond {
		t.Fatalf("BGSAVE of 1000 keys at %s 0: %v", name, d)
	}
	waitBgsave(t, p, "ok")
}

// effectKeyLoadDelay: DEBUG RELOAD of 1000 keys takes about a second at
// 1000 µs a key, under 0.5 s at 0.
func effectKeyLoadDelay(t *testing.T, c *Conn, addr, name string) {
	_, p := persistServer(t, "--save", "", "--enable-debug-command", "yes")
	fill1000(t, p)
	for _, v := range []string{"1000", "0"} {
		configSet(t, p, name, v)
		start := time.Now()
		expectDo(t, p, "+OK\r\n", "DEBUG", "RELOAD")
		d := time.Since(start)
		if v == "1000" && (d < 900*time.Millisecond || d > 5*time.Second) || v == "0" && d > 500*time.Millisecond {
			t.Fatalf("DEBUG RELOAD of 1000 keys at %s %s: %v", name, v, d)
		}
	}
	expectDo(t, p, ":1000\r\n", "DBSIZE")
}

func init() {
	configEffects["rdb-key-save-delay"] = effectRdbKeySaveDelay
	configEffects["key-load-delay"] = effectKeyLoadDelay
}
