package tests

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// waitBlockedClients waits (5 s at most) until the server at addr reports
// blocked_clients:n in INFO clients, as Redis's test suite's
// wait_for_blocked_clients_count does.
func waitBlockedClients(addr string, n int) error {
	c, err := Dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	var got int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		got = blockedClients(c)
		if got == n {
			return nil
		}
	}
	return fmt.Errorf("%s: blocked_clients is %d, want %d", addr, got, n)
}

// blockedClients reads INFO clients' blocked_clients (-1 when unreadable).
func blockedClients(c *Conn) int {
	r, err := c.Do("INFO", "clients")
	if err != nil {
		return -1
	}
	s := string(r)
	i := strings.Index(s, "blocked_clients:")
	if i < 0 {
		return -1
	}
	s = s[i+len("blocked_clients:"):]
	if j := strings.IndexByte(s, '\r'); j >= 0 {
		s = s[:j]
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// substIDs replaces each argument $id:NAME by the CLIENT ID of the
// scenario connection NAME on each server (CLIENT UNBLOCK, CLIENT KILL).
func substIDs(args []string, conns map[string]*pair) (ref, cand []string) {
	ref, cand = args, args
	for i, a := range args {
		name, ok := strings.CutPrefix(a, "$id:")
		if !ok || conns[name] == nil {
			continue
		}
		if &ref[0] == &args[0] {
			ref = append([]string(nil), args...)
			cand = append([]string(nil), args...)
		}
		ref[i], cand[i] = conns[name].refID, conns[name].candID
	}
	return ref, cand
}

// blockingScenario reports whether a scenario blocks clients (@send,
// @read, @blocked): the engine-level TestEffects cannot run it.
func blockingScenario(lines []scenarioLine) bool {
	for _, l := range lines {
		if strings.HasPrefix(l.text, "@send") || strings.HasPrefix(l.text, "@read") || strings.HasPrefix(l.text, "@blocked") {
			return true
		}
	}
	return false
}
