package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// redisAddr and limitAddr are the two servers every differential test
// talks to; TestMain starts them once.
var redisAddr, limitAddr string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "limitdb-tests-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	scratchDir = d
	r, err := StartRedis()
	if err != nil {
		fmt.Fprintln(os.Stderr, "differential tests need a real redis-server:", err)
		os.Exit(1)
	}
	// LIMITDB_TEST_ADDR points the differential tests at a running
	// limitdb instead (a binary with its default durable configuration,
	// a cluster's follower: the same replies are expected)
	redisAddr, limitAddr = r.Addr, os.Getenv("LIMITDB_TEST_ADDR")
	var l interface{ Close() error }
	if limitAddr == "" {
		srv, err := StartLimitdb()
		if err != nil {
			r.Stop()
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		l, limitAddr = srv, srv.Addr().String()
	}
	strays := newStrays()
	code := m.Run()
	if s := strays(); s != nil {
		fmt.Fprintf(os.Stderr, "the tests left %v in the package's folder: a server ran with dir \".\" (give it a temporary dir)\n", s)
		code = max(code, 1)
	}
	if limitdbBin.dir != "" {
		os.RemoveAll(limitdbBin.dir)
	}
	if l != nil {
		l.Close()
	}
	r.Stop()
	os.RemoveAll(d)
	os.Exit(code)
}

// TestScenarios runs every scenario file under scenarios/ against both
// servers, in RESP2 and in RESP3, and compares every reply.
//
// The format and its directives are documented in scenarios/README.md.
// A scenario file holds one command per line, quoted like redis-cli input.
// Lines starting with '#' are comments. Directives:
//
//	@proto 2|3          (file level) run only in this protocol
//	@sort CMD …         compare the reply's elements as a multiset
//	@tol N CMD …        integer replies may differ by up to N
//	@shape CMD …        compare only the reply's type and, for
//	                    aggregates, its length
//	@nocompare CMD …    send to both, compare nothing
//	@acllog CMD …       compare with the values of ACL LOG's age-seconds
//	                    and client-info fields masked (clock, ports, ids)
//	@words CMD …        compare with the space-separated words of every
//	                    bulk string sorted (ACL rule descriptions, whose
//	                    single-command order is Redis's hash table order)
//	@noeffects CMD …    replies compared; TestEffects leaves its effects
//	                    out (limitdb records what Redis leaves out)
//	@inmemory CMD …     compared against the in-process server only,
//	                    whose configuration is Redis's (appendonly no);
//	                    TestClusterOfOneScenarios leaves the line out
//	@sleep MS           pause
//	@minute S           wait, if fewer than S seconds are left in this
//	                    wall-clock minute, for the next one (LFU counters
//	                    decay once per minute crossed)
//	@conn NAME          continue on connection NAME (opened on first use)
//	@send CMD …         send to both, read nothing (SUBSCRIBE's replies,
//	                    CLIENT REPLY OFF, a blocking command)
//	@read [N]           read N (default 1) more replies on the current
//	                    connection and compare each (Pub/Sub messages)
//	@readsort N         read N replies and compare them as a multiset
//	@skip N             read N replies on both, compare nothing
//	                    (UNSUBSCRIBE without arguments: hash table order)
//	@blocked N          wait until both servers report blocked_clients:N
//	@close NAME         close connection pair NAME on both servers
//	@aclfile FILE       (file level, scenarios/acl/ only) both servers start
//	                    with a copy of FILE as their aclfile
func TestScenarios(t *testing.T) {
	runScenarioTree(t, redisAddr, limitAddr, false)
}

// TestClusterOfOneScenarios runs the same files against the binary's
// default configuration, a durable cluster of one (appendonly yes: every
// write's reply waits for its Raft entry's commit, expiry and eviction
// go through the log), started as a process, against a redis-server of
// its own: scripts' math.random is one sequence per server since start,
// and the shared redis-server's has moved on by TestScenarios' scripts.
// The in-process server of TestScenarios has no Raft node.
func TestClusterOfOneScenarios(t *testing.T) {
	r := mustRedis(t)
	addr, _ := mustLimitdbProcess(t, "--enable-debug-command", "yes", "--loglevel", "notice")
	runScenarioTree(t, r.Addr, addr, true)
}

// runScenarioTree runs every file of scenarios/ against refAddr (a
// redis-server) and candAddr, a subtest per file and protocol; durable
// leaves out the @inmemory lines.
func runScenarioTree(t *testing.T, refAddr, candAddr string, durable bool) {
	for _, f := range scenarioFiles(t, "scenarios") {
		var lines []scenarioLine
		protos := []int{2, 3}
		for _, l := range readScenario(t, f) {
			if strings.HasPrefix(l.text, "@proto ") {
				p, _ := strconv.Atoi(strings.TrimSpace(l.text[7:]))
				protos = []int{p}
			}
			if !durable || !strings.HasPrefix(l.text, "@inmemory ") {
				lines = append(lines, l)
			}
		}
		for _, p := range protos {
			name := strings.TrimPrefix(f, "scenarios/") + fmt.Sprintf("/resp%d", p)
			t.Run(name, func(t *testing.T) { runScenarioOn(t, refAddr, candAddr, f, lines, p) })
		}
	}
}

type scenarioLine struct {
	n    int
	text string
	// expect holds the `=>` lines after an @expect line: the reply
	// limitdb must give, for either protocol ("") or one ("2", "3").
	expect []expectLine
}

type expectLine struct {
	n           int
	proto, want string
}

// cutExpect splits an expected-reply line: `=> R` (either protocol),
// `=2> R` or `=3> R`.
func cutExpect(line string) (proto, want string, ok bool) {
	for _, p := range []string{"", "2", "3"} {
		if rest, ok := strings.CutPrefix(line, "="+p+"> "); ok {
			return p, strings.TrimSpace(rest), true
		}
	}
	return "", "", false
}

func readScenario(t *testing.T, path string) []scenarioLine {
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []scenarioLine
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if proto, want, ok := cutExpect(line); ok {
			if len(out) == 0 || !strings.HasPrefix(out[len(out)-1].text, "@expect ") {
				t.Fatalf("%s:%d: an expected reply (=>) must follow an @expect line", path, n)
			}
			last := &out[len(out)-1]
			last.expect = append(last.expect, expectLine{n, proto, want})
			continue
		}
		out = append(out, scenarioLine{n: n, text: line})
	}
	return out
}

type pair struct {
	ref, cand *Conn
	// the connections' CLIENT IDs, for $id:NAME in scenario lines
	refID, candID string
}

// awayFromMinute returns once at least margin is left in the current
// wall-clock minute, waiting for the next minute if need be (the
// servers' cached clocks may trail it by a cron tick, 100 ms: a little
// more is waited).
func awayFromMinute(margin time.Duration) {
	now := time.Now()
	if left := now.Truncate(time.Minute).Add(time.Minute).Sub(now); left < margin {
		time.Sleep(left + 250*time.Millisecond)
	}
}

func dialPair(t *testing.T, proto int) *pair {
	return dialPairOn(t, redisAddr, limitAddr, proto)
}

func dialPairOn(t *testing.T, refAddr, candAddr string, proto int) *pair {
	r := mustDial(t, refAddr)
	l := mustDial(t, candAddr)
	p := &pair{ref: r, cand: l}
	if proto == 3 {
		for _, c := range []*Conn{r, l} {
			if _, err := c.Do("HELLO", "3"); err != nil {
				t.Fatal(err)
			}
		}
	}
	return p
}

func runScenario(t *testing.T, file string, lines []scenarioLine, proto int) {
	runScenarioOn(t, redisAddr, limitAddr, file, lines, proto)
}

// runScenarioOn runs a scenario against the given pair of servers.
func runScenarioOn(t *testing.T, refAddr, candAddr, file string, lines []scenarioLine, proto int) {
	dialPair := func(t *testing.T, proto int) *pair { return dialPairOn(t, refAddr, candAddr, proto) }
	conns := map[string]*pair{}
	defer func() {
		for _, p := range conns {
			p.ref.Close()
			p.cand.Close()
		}
	}()
	dialPair = func(t *testing.T, proto int) *pair {
		p := dialPairOn(t, refAddr, candAddr, proto)
		r1, err1 := p.ref.Do("CLIENT", "ID")
		r2, err2 := p.cand.Do("CLIENT", "ID")
		if err1 != nil || err2 != nil || len(r1) < 3 || len(r2) < 3 {
			t.Fatalf("CLIENT ID: %q %q %v %v", r1, r2, err1, err2)
		}
		p.refID, p.candID = string(r1[1:len(r1)-2]), string(r2[1:len(r2)-2])
		return p
	}
	cur := dialPair(t, proto)
	conns["default"] = cur
	for _, c := range []*Conn{cur.ref, cur.cand} {
		// function libraries are server state that FLUSHALL keeps
		for _, cmd := range [][]string{{"FLUSHALL"}, {"FUNCTION", "FLUSH"}} {
			if _, err := c.Do(cmd...); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, l := range lines {
		text := l.text
		mode, tol := "exact", int64(0)
		if strings.HasPrefix(text, "@") {
			word, rest, _ := strings.Cut(text, " ")
			switch word {
			case "@proto", "@aclfile":
				continue
			case "@noeffects":
				text = rest // (TestEffects does not compare its effects)
			case "@inmemory":
				text = rest // (TestClusterOfOneScenarios leaves it out)
			case "@sleep":
				ms, _ := strconv.Atoi(strings.TrimSpace(rest))
				time.Sleep(time.Duration(ms) * time.Millisecond)
				continue
			case "@minute":
				s, _ := strconv.Atoi(strings.TrimSpace(rest))
				awayFromMinute(time.Duration(s) * time.Second)
				continue
			case "@conn":
				name := strings.TrimSpace(rest)
				if conns[name] == nil {
					conns[name] = dialPair(t, proto)
				}
				cur = conns[name]
				continue
			case "@close":
				name := strings.TrimSpace(rest)
				if p := conns[name]; p != nil {
					p.ref.Close()
					p.cand.Close()
					delete(conns, name)
				}
				continue
			case "@send":
				args, err := SplitLine(rest)
				if err != nil {
					t.Fatalf("%s:%d: %v", file, l.n, err)
				}
				if err := cur.ref.Send(Encode(args...)); err != nil {
					t.Fatalf("%s:%d: redis: %v", file, l.n, err)
				}
				if err := cur.cand.Send(Encode(args...)); err != nil {
					t.Fatalf("%s:%d: limitdb: %v", file, l.n, err)
				}
				continue
			case "@read", "@readsort", "@skip":
				n := 1
				if r := strings.TrimSpace(rest); r != "" {
					n, _ = strconv.Atoi(r)
				}
				readPending(t, file, l.n, cur, n, word[1:])
				continue
			case "@blocked":
				n, _ := strconv.Atoi(strings.TrimSpace(rest))
				for _, addr := range []string{refAddr, candAddr} {
					if err := waitBlockedClients(addr, n); err != nil {
						t.Fatalf("%s:%d: %v", file, l.n, err)
					}
				}
				continue
			case "@sort", "@shape", "@nocompare", "@words", "@acllog", "@expect":
				mode = word[1:]
				text = rest
			case "@tol":
				n, rest2, _ := strings.Cut(rest, " ")
				tol, _ = strconv.ParseInt(n, 10, 64)
				mode = "tol"
				text = rest2
			default:
				t.Fatalf("%s:%d: unknown directive %s", file, l.n, word)
			}
		}
		args, err := SplitLine(text)
		if err != nil {
			t.Fatalf("%s:%d: %v", file, l.n, err)
		}
		refArgs, candArgs := substIDs(args, conns)
		ref, err := cur.ref.Do(refArgs...)
		if err != nil {
			t.Fatalf("%s:%d: redis: %v", file, l.n, err)
		}
		cand, err := cur.cand.Do(candArgs...)
		if err != nil {
			t.Fatalf("%s:%d: limitdb: %v (redis said %q)", file, l.n, err, ref)
		}
		if mode == "expect" {
			checkExpect(t, file, l, proto, cand)
			continue
		}
		if msg := compareReplies(mode, tol, ref, cand); msg != "" {
			t.Errorf("%s:%d: %s\n  command: %s\n  redis:   %q\n  limitdb: %q", file, l.n, msg, text, ref, cand)
		}
	}
}

// checkExpect compares limitdb's reply to an @expect line with the
// expected replies after it for protocol proto; a mismatch prints the
// line to paste.
func checkExpect(t *testing.T, file string, l scenarioLine, proto int, reply []byte) {
	t.Helper()
	got, err := renderReply(reply)
	if err != nil {
		t.Errorf("%s:%d: %v in %q", file, l.n, err, reply)
		return
	}
	p := strconv.Itoa(proto)
	var want *expectLine
	for i := range l.expect {
		if e := &l.expect[i]; e.proto == p || (e.proto == "" && want == nil) {
			want = e
		}
	}
	switch {
	case want == nil:
		t.Errorf("%s:%d: no expected reply for RESP%d; limitdb said\n=%s> %s", file, l.n, proto, p, got)
	case !matchExpect(want.want, got):
		t.Errorf("%s:%d: %s\n  want: %s\n  got:  %s\n=%s> %s", file, want.n, strings.TrimPrefix(l.text, "@expect "), want.want, got, p, got)
	}
}

// compareReplies returns "" when the replies agree under mode.
func compareReplies(mode string, tol int64, ref, cand []byte) string {
	switch mode {
	case "nocompare":
		return ""
	case "exact":
		if !bytes.Equal(ref, cand) {
			return "replies differ"
		}
	case "sort":
		a, b := sortedElements(ref), sortedElements(cand)
		if !bytes.Equal(a, b) {
			return "replies differ as multisets"
		}
	case "acllog":
		if maskACLLog(ref) != maskACLLog(cand) {
			return "replies differ (age-seconds and client-info masked)"
		}
	case "words":
		if wordsSorted(ref) != wordsSorted(cand) {
			return "replies differ (words of each bulk string as a multiset)"
		}
	case "shape":
		if len(ref) == 0 || len(cand) == 0 || ref[0] != cand[0] {
			return "reply types differ"
		}
		if strings.ContainsRune("*%~>", rune(ref[0])) {
			if firstLine(ref) != firstLine(cand) {
				return "aggregate lengths differ"
			}
		}
	case "tol":
		x, ok1 := replyInt(ref)
		y, ok2 := replyInt(cand)
		if !ok1 || !ok2 {
			if !bytes.Equal(ref, cand) {
				return "replies differ"
			}
			return ""
		}
		if x-y > tol || y-x > tol {
			return fmt.Sprintf("integers differ by more than %d", tol)
		}
	}
	return ""
}

func firstLine(b []byte) string {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return string(b)
	}
	return string(b[:i])
}

// replyInt reads an integer reply, or a bulk string holding an integer.
func replyInt(b []byte) (int64, bool) {
	s := string(b)
	switch {
	case strings.HasPrefix(s, ":"):
		n, err := strconv.ParseInt(strings.TrimSpace(s[1:]), 10, 64)
		return n, err == nil
	case strings.HasPrefix(s, "$"):
		parts := strings.Split(s, "\r\n")
		if len(parts) >= 2 {
			n, err := strconv.ParseInt(parts[1], 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// sortedElements splits an aggregate reply into its top-level elements
// (pairs for maps) and returns the header followed by the sorted elements.
func sortedElements(b []byte) []byte {
	if len(b) == 0 || !strings.ContainsRune("*%~>", rune(b[0])) {
		return b
	}
	br := bufio.NewReader(bytes.NewReader(b))
	var hdr bytes.Buffer
	line, err := readLine(br, &hdr)
	if err != nil {
		return b
	}
	n, _ := strconv.Atoi(line[1:])
	per := 1
	if b[0] == '%' {
		per = 2
	}
	var elems []string
	for i := 0; i < n; i++ {
		var e bytes.Buffer
		for j := 0; j < per; j++ {
			if readValue(br, &e) != nil {
				return b
			}
		}
		elems = append(elems, e.String())
	}
	sort.Strings(elems)
	return append(hdr.Bytes(), strings.Join(elems, "")...)
}

// wordsSorted rewrites a reply with the words of each bulk string sorted
// (bulk lengths are kept: the words are the same bytes).
func wordsSorted(b []byte) string {
	lines := strings.Split(string(b), "\r\n")
	for i := 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i-1], "$") {
			w := strings.Fields(lines[i])
			sort.Strings(w)
			lines[i] = strings.Join(w, " ")
		}
	}
	return strings.Join(lines, "\r\n")
}

// maskACLLog replaces the values that follow "age-seconds" and
// "client-info" in an ACL LOG reply by "?".
func maskACLLog(b []byte) string {
	lines := strings.Split(string(b), "\r\n")
	for i := 1; i+1 < len(lines); i++ {
		if lines[i] != "age-seconds" && lines[i] != "client-info" {
			continue
		}
		j := i + 1
		if strings.HasPrefix(lines[j], "$") && j+1 < len(lines) {
			lines[j], lines[j+1] = "?", "?"
		} else {
			lines[j] = "?"
		}
	}
	return strings.Join(lines, "\r\n")
}

// readPending reads n replies already due on both connections of p (a
// scenario's @read: Pub/Sub messages, replies of an @send) and compares
// them one by one, or as a multiset when sorted.
func readPending(t *testing.T, file string, line int, p *pair, n int, mode string) {
	t.Helper()
	var refs, cands []string
	for i := 0; i < n; i++ {
		ref, err := p.ref.ReadReply()
		if err != nil {
			t.Fatalf("%s:%d: redis: reading reply %d of %d: %v", file, line, i+1, n, err)
		}
		cand, err := p.cand.ReadReply()
		if err != nil {
			t.Fatalf("%s:%d: limitdb: reading reply %d of %d: %v (redis sent %q)", file, line, i+1, n, err, ref)
		}
		refs, cands = append(refs, string(ref)), append(cands, string(cand))
	}
	switch mode {
	case "skip":
		return
	case "readsort":
		sort.Strings(refs)
		sort.Strings(cands)
	}
	for i := range refs {
		if refs[i] != cands[i] {
			t.Errorf("%s:%d: pending reply %d of %d differs\n  redis:   %q\n  limitdb: %q", file, line, i+1, n, refs[i], cands[i])
		}
	}
}
