package tests

import (
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPubsubScenarios runs the scenarios of scenarios/pubsub/ (Redis's
// pubsub.tcl and keyspace notification tests, ported, and limitdb's own)
// against the shared pair of servers, in RESP2 and RESP3. TestScenarios
// leaves them out, so that the targeted run (-run 'TestPubsub|Keyspace')
// has them.
func TestPubsubScenarios(t *testing.T) {
	for _, f := range scenarioFiles(t, "scenarios/pubsub") {
		lines := readScenario(t, f)
		protos := []int{2, 3}
		for _, l := range lines {
			if p, ok := strings.CutPrefix(l.text, "@proto "); ok {
				protos = []int{int(p[0] - '0')}
			}
		}
		for _, p := range protos {
			name := strings.TrimPrefix(f, "scenarios/pubsub/") + "/resp" + string(rune('0'+p))
			t.Run(name, func(t *testing.T) { runScenario(t, f, lines, p) })
		}
	}
}

// effectNotify (TestConfigEffects): with notify-keyspace-events E$ a SET
// raises __keyevent@0__:set; with "" it raises nothing.
func effectNotify(t *testing.T, c *Conn, addr, name string) {
	sub := mustDial(t, addr)
	expectDo(t, sub, "*3\r\n$9\r\nsubscribe\r\n$18\r\n__keyevent@0__:set\r\n:1\r\n", "SUBSCRIBE", "__keyevent@0__:set")
	configSet(t, c, name, "E$")
	defer configSet(t, c, name, "")
	expectDo(t, c, "+OK\r\n", "SET", "notify:k", "v")
	expectDo(t, sub, "*3\r\n$7\r\nmessage\r\n$18\r\n__keyevent@0__:set\r\n$8\r\nnotify:k\r\n", "PING")
	if r, err := sub.ReadReply(); err != nil || string(r) != "*2\r\n$4\r\npong\r\n$0\r\n\r\n" {
		t.Fatalf("PING after the event: %q %v", r, err)
	}
	configSet(t, c, name, "")
	expectDo(t, c, "+OK\r\n", "SET", "notify:k", "v")
	expectDo(t, sub, "*2\r\n$4\r\npong\r\n$0\r\n\r\n", "PING")
}

// keyspaceCorpus are the scenario folders whose commands drive
// TestKeyspaceEventsCorpus: every data command limitdb shares with Redis.
var keyspaceCorpus = []string{"strings", "keys", "lists", "hashes", "sets", "zsets", "sort", "transactions", "scripting"}

// TestKeyspaceEventsCorpus runs the differential scenario files of the
// data types (some 15,000 commands) on both servers with every
// notification class on ("KEAnm") and compares the events each command
// raises, in order: after each command a PUBLISH on a sync channel marks
// where its events end on the subscriber's connection (a pattern
// subscription to every keyspace and keyevent channel). Active expiry is
// off on both (DEBUG SET-ACTIVE-EXPIRE 0), so an "expired" event comes
// from a command's lazy reclaim, which is deterministic; the replies
// themselves are TestScenarios' business.
func TestKeyspaceEventsCorpus(t *testing.T) {
	keyspaceCorpusRun(t, false)
}

// TestKeyspaceEventsSelfRESP3 is the same corpus on one RESP3 connection
// subscribed to the events of its own commands: its raw stream (replies
// and pushes interleaved) must be Redis's byte for byte, which checks
// where each event is pushed relative to the command's reply.
func TestKeyspaceEventsSelfRESP3(t *testing.T) {
	keyspaceCorpusRun(t, true)
}

func keyspaceCorpusRun(t *testing.T, self bool) {
	setup := dialPair(t, 2)
	defer setup.ref.Close()
	defer setup.cand.Close()
	for _, c := range []*Conn{setup.ref, setup.cand} {
		mustDo(t, c, "CONFIG", "SET", "notify-keyspace-events", "KEAnm")
		mustDo(t, c, "DEBUG", "SET-ACTIVE-EXPIRE", "0")
	}
	defer func() {
		for _, c := range []*Conn{setup.ref, setup.cand} {
			c.Do("CONFIG", "SET", "notify-keyspace-events", "")
			c.Do("DEBUG", "SET-ACTIVE-EXPIRE", "1")
		}
	}()
	total, events := 0, 0
	for _, dir := range keyspaceCorpus {
		for _, f := range scenarioFiles(t, "scenarios/"+dir) {
			n, e := keyspaceFile(t, f, self)
			total, events = total+n, events+e
			if t.Failed() {
				return
			}
		}
	}
	t.Logf("%d commands, %d events (self: replies and pushes) compared", total, events)
	if events < 10000 {
		t.Errorf("only %d events: the corpus no longer exercises the notifications", events)
	}
}

// keyspaceSkip are commands a corpus line may not run here: they would
// end the subscription or the connection, or change the protocol.
var keyspaceSkip = map[string]bool{"quit": true, "reset": true, "hello": true, "subscribe": true,
	"psubscribe": true, "unsubscribe": true, "punsubscribe": true, "client": true, "debug": true,
	"config": true, "shutdown": true, "select": true, "swapdb": true, "move": true, "copy": true}

// keyspaceFile runs one scenario file; it returns the commands run and
// the events compared. Files with RANDOMKEY or SCAN are left out: which
// expired key those reclaim (an "expired" event) is the hash table's
// choice, and the two servers' tables differ.
func keyspaceFile(t *testing.T, file string, self bool) (int, int) {
	for _, l := range readScenario(t, file) {
		w, _, _ := strings.Cut(strings.TrimPrefix(l.text, "@shape "), " ")
		if strings.EqualFold(w, "randomkey") || strings.EqualFold(w, "scan") {
			return 0, 0
		}
	}
	proto := 2
	if self {
		proto = 3
	}
	conns := map[string]*pair{}
	defer func() {
		for _, p := range conns {
			p.ref.Close()
			p.cand.Close()
		}
	}()
	cur := dialPair(t, proto)
	conns["default"] = cur
	sub, marker := cur, cur
	if !self {
		// the marker goes through a connection of its own: the corpus's
		// may be inside MULTI
		sub, marker = dialPair(t, 2), dialPair(t, 2)
		conns["\x00sub"], conns["\x00marker"] = sub, marker
	}
	for _, c := range []*Conn{sub.ref, sub.cand} {
		if err := c.Send(Encode("PSUBSCRIBE", "__key*__:*")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ReadReply(); err != nil {
			t.Fatal(err)
		}
		if !self {
			if _, err := c.Do("SUBSCRIBE", "sync"); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []*Conn{cur.ref, cur.cand} {
		if _, err := c.Do("FLUSHALL"); err != nil {
			t.Fatal(err)
		}
	}
	// the FLUSHALL raises nothing; each side's stream starts here
	mark := 0
	inMulti := false // self: the marker ECHO is queued, not answered
	syncUp := func(ctx string, compare, pushesOnly, unordered bool) int {
		mark++
		// a name no corpus line uses: "m19" was a member of a set there,
		// and a reply ending in it (SRANDMEMBER's last pick, 1 in 300)
		// passed for the marker
		m := "\x00mark:" + strconv.Itoa(mark)
		got := [2][]string{}
		for i, c := range []*Conn{sub.ref, sub.cand} {
			if self {
				if err := c.Send(Encode("ECHO", m)); err != nil {
					t.Fatal(err)
				}
			} else {
				pub := []*Conn{marker.ref, marker.cand}[i]
				if _, err := pub.Do("PUBLISH", "sync", m); err != nil {
					t.Fatal(err)
				}
			}
			for k := 0; ; k++ {
				if inMulti && k == 2 {
					break // the command's reply and the ECHO's QUEUED
				}
				r, err := c.ReadReply()
				if err != nil {
					t.Fatalf("%s: reading events (%s): %v", ctx, []string{"redis", "limitdb"}[i], err)
				}
				s := string(r)
				if tail := "$" + strconv.Itoa(len(m)) + "\r\n" + m + "\r\n"; s == tail || strings.HasSuffix(s, "\r\n"+tail) {
					break // the marker (the ECHO reply, the sync message)
				}
				if k > 1000000 {
					t.Fatalf("%s: no marker", ctx)
				}
				if !self || !pushesOnly || strings.HasPrefix(s, ">") {
					got[i] = append(got[i], s)
				}
			}
		}
		if unordered {
			sort.Strings(got[0])
			sort.Strings(got[1])
		}
		if compare && strings.Join(got[0], "") != strings.Join(got[1], "") {
			t.Errorf("%s: events differ\n  redis:   %q\n  limitdb: %q", ctx, got[0], got[1])
		}
		return len(got[0])
	}
	n, events := 0, 0
	for _, l := range readScenario(t, file) {
		text := l.text
		compare, pushesOnly := true, false
		if strings.HasPrefix(text, "@") {
			word, rest, _ := strings.Cut(text, " ")
			switch word {
			case "@sleep":
				ms, _ := strconv.Atoi(strings.TrimSpace(rest))
				time.Sleep(time.Duration(ms) * time.Millisecond)
				continue
			case "@conn":
				if self {
					return n, events // one connection only
				}
				name := strings.TrimSpace(rest)
				if conns[name] == nil {
					conns[name] = dialPair(t, proto)
				}
				cur = conns[name]
				continue
			case "@tol", "@sort", "@shape", "@nocompare", "@words", "@acllog", "@expect":
				// @shape and @nocompare mark random outcomes (SPOP's
				// member, a random key): their events may differ too
				compare = word != "@shape" && word != "@nocompare" && word != "@expect"
				pushesOnly = true // the reply itself is not exact
				text = rest
				if word == "@tol" {
					_, text, _ = strings.Cut(rest, " ")
				}
			default:
				continue
			}
		}
		args, err := SplitLine(text)
		if err != nil || len(args) == 0 || keyspaceSkip[strings.ToLower(args[0])] {
			continue
		}
		ctx := file + ":" + strconv.Itoa(l.n) + ": " + text
		if self {
			for _, c := range []*Conn{cur.ref, cur.cand} {
				if err := c.Send(Encode(args...)); err != nil {
					t.Fatal(err)
				}
			}
		} else {
			for _, c := range []*Conn{cur.ref, cur.cand} {
				if _, err := c.Do(args...); err != nil {
					t.Fatalf("%s: %v", ctx, err)
				}
			}
		}
		n++
		// SORT looks its BY/GET keys up in the order it walks the
		// input, a set's hash table order (the two servers' differ):
		// its keymiss events are compared as a multiset
		unordered := strings.HasPrefix(strings.ToLower(args[0]), "sort")
		if unordered {
			pushesOnly = true
		}
		switch strings.ToLower(args[0]) {
		case "multi":
			inMulti = self
		case "exec", "discard":
			inMulti = false
		}
		events += syncUp(ctx, compare, pushesOnly, unordered)
		if t.Failed() {
			return n, events
		}
	}
	return n, events
}

// TestPubsubOutputBufferLimit: a subscriber that does not read is of the
// pubsub class of client-output-buffer-limit: past its hard limit both
// servers close it (PUBSUB NUMSUB drops to 0), while the normal class's
// limit does not apply to it; with the pubsub class unlimited it stays.
func TestPubsubOutputBufferLimit(t *testing.T) {
	big := strings.Repeat("x", 64<<10)
	run := func(t *testing.T, addr, limits string, msgs, want int) int {
		c := mustDial(t, addr)
		defer c.Close()
		defer c.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0 pubsub 33554432 8388608 60")
		mustDo(t, c, "CONFIG", "SET", "client-output-buffer-limit", limits)
		sub := mustDial(t, addr)
		defer sub.Close()
		if _, err := sub.Do("SUBSCRIBE", "obuf:ch"); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < msgs; i++ {
			if _, err := c.Do("PUBLISH", "obuf:ch", big); err != nil {
				t.Fatal(err)
			}
		}
		// Redis closes it from its event loop, limitdb from its writer:
		// wait for the count to settle
		time.Sleep(300 * time.Millisecond)
		n := 1
		for i := 0; i < 100; i++ {
			r, err := c.Do("PUBSUB", "NUMSUB", "obuf:ch")
			if err != nil {
				t.Fatal(err)
			}
			n = int(r[len(r)-3] - '0')
			if n == want {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		return n
	}
	for _, tc := range []struct {
		limits string
		msgs   int
		want   int
	}{
		{"pubsub 1mb 0 0", 500, 0},             // 32 MB published, past any socket buffer
		{"normal 1mb 0 0 pubsub 0 0 0", 64, 1}, // 4 MB: the normal class is not its
	} {
		for _, addr := range []string{redisAddr, limitAddr} {
			if got := run(t, addr, tc.limits, tc.msgs, tc.want); got != tc.want {
				t.Errorf("%s, %s: subscribers left %d, want %d", addr, tc.limits, got, tc.want)
			}
		}
	}
}

// TestPubsubClientFields: a subscriber as CLIENT LIST, INFO, CLIENT KILL
// TYPE and the timeout parameter see it, on both servers: flag P, sub=,
// psub=, ssub=, the pubsub type, INFO's pubsub_channels, pubsub_patterns
// and pubsubshard_channels, and no idle timeout for it (Redis's rule).
func TestPubsubClientFields(t *testing.T) {
	field := func(line, k string) string {
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, k+"="); ok {
				return v
			}
		}
		return "?"
	}
	for _, addr := range []string{redisAddr, limitAddr} {
		c := mustDial(t, addr)
		sub := mustDial(t, addr)
		mustDo(t, sub, "CLIENT", "SETNAME", "subber")
		for _, cmd := range [][]string{{"SUBSCRIBE", "f:a", "f:b"}, {"PSUBSCRIBE", "f:*"}, {"SSUBSCRIBE", "f:s"}} {
			if err := sub.Send(Encode(cmd...)); err != nil {
				t.Fatal(err)
			}
			for range cmd[1:] {
				if _, err := sub.ReadReply(); err != nil {
					t.Fatal(err)
				}
			}
		}
		list := string(mustDoValue(t, c, "CLIENT", "LIST", "TYPE", "pubsub").(string))
		var line string
		for _, l := range strings.Split(list, "\n") {
			if field(l, "name") == "subber" {
				line = l
			}
		}
		got := strings.Join([]string{field(line, "flags"), field(line, "sub"), field(line, "psub"), field(line, "ssub"), field(line, "cmd")}, " ")
		if got != "P 2 1 1 ssubscribe" {
			t.Errorf("%s: CLIENT LIST TYPE pubsub: %q (flags sub psub ssub cmd: %q)", addr, line, got)
		}
		if normal := mustDoValue(t, c, "CLIENT", "LIST", "TYPE", "normal").(string); strings.Contains(normal, "name=subber") {
			t.Errorf("%s: a subscriber listed as normal", addr)
		}
		info := mustDoValue(t, c, "INFO", "stats").(string)
		for _, kv := range []string{"pubsub_channels:2", "pubsub_patterns:1", "pubsubshard_channels:1"} {
			if !strings.Contains(info, kv+"\r\n") {
				t.Errorf("%s: INFO stats lacks %s", addr, kv)
			}
		}
		// no idle timeout for a subscriber; an idle normal client goes
		idle := mustDial(t, addr)
		mustDo(t, idle, "PING")
		mustDo(t, c, "CONFIG", "SET", "timeout", "1")
		for i := 0; i < 10; i++ {
			time.Sleep(250 * time.Millisecond)
			mustDo(t, c, "PING") // c itself stays active
		}
		mustDo(t, c, "CONFIG", "SET", "timeout", "0")
		if _, err := idle.Do("PING"); err == nil {
			t.Errorf("%s: the idle normal client was not closed", addr)
		}
		if r, err := sub.Do("PING"); err != nil || !strings.Contains(string(r), "pong") {
			t.Errorf("%s: the idle subscriber: %q %v", addr, r, err)
		}
		if r := mustDo(t, c, "CLIENT", "KILL", "TYPE", "pubsub"); string(r) != ":1\r\n" {
			t.Errorf("%s: CLIENT KILL TYPE pubsub: %q", addr, r)
		}
		time.Sleep(100 * time.Millisecond)
		if r := mustDo(t, c, "PUBSUB", "NUMSUB", "f:a"); !strings.HasSuffix(string(r), ":0\r\n") {
			t.Errorf("%s: after the kill: %q", addr, r)
		}
		idle.Close()
		sub.Close()
		c.Close()
	}
}
