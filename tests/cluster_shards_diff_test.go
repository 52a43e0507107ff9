package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestClusterShardsDiff runs scenarios/cluster/*.txt against a 3-master
// redis-server 7.0 cluster and a 3-group limitdb cluster (one node per
// group) with the same slot ranges, redis-cli --cluster create's split
// (0-5460, 5461-10922, 10923-16383), once in RESP2 and once in RESP3.
// Each line goes to the node of the current index (@node N) on both
// sides; the replies are compared byte for byte after normalization
// (normShardReply): node ids become n<i>, client ports p<i> and bus ports
// b<i>, i being the node's index on its side, and the bulk lengths are
// written again.
func TestClusterShardsDiff(t *testing.T) {
	ref := startRedisShards(t)
	cand := startLimitdbShards(t)
	files := scenarioFiles(t, "scenarios/cluster")
	cases, own := 0, 0
	for _, proto := range []int{2, 3} {
		for _, f := range files {
			lines := readScenario(t, f)
			name := strings.TrimPrefix(f, "scenarios/") + fmt.Sprintf("/resp%d", proto)
			t.Run(name, func(t *testing.T) {
				c, o := runShardScenario(t, ref, cand, f, lines, proto)
				cases, own = cases+c, own+o
			})
		}
	}
	t.Logf("%d replies compared with redis-server's, %d limitdb-only (@expect)", cases, own)
}

// shardSide is one side of the comparison: each master's client address,
// node id, client port and bus port, by index.
type shardSide struct {
	name              string
	addrs, ids        []string
	ports, busPorts   []string
	portInts, busInts map[int64]string
	replacer          *strings.Replacer
}

func newShardSide(t *testing.T, name string, addrs, busPorts []string) *shardSide {
	t.Helper()
	s := &shardSide{name: name, addrs: addrs, busPorts: busPorts, portInts: map[int64]string{}, busInts: map[int64]string{}}
	var pairs []string
	for i, a := range addrs {
		c := mustDial(t, a)
		id := strings.TrimSpace(string(mustDo(t, c, "CLUSTER", "MYID")))
		id = id[strings.IndexByte(id, '\n')+1:]
		c.Close()
		p := portOf(a)
		s.ids = append(s.ids, id)
		s.ports = append(s.ports, p)
		n, _ := strconv.ParseInt(p, 10, 64)
		s.portInts[n] = "p" + strconv.Itoa(i)
		n, _ = strconv.ParseInt(busPorts[i], 10, 64)
		s.busInts[n] = "b" + strconv.Itoa(i)
		pairs = append(pairs, id, "n"+strconv.Itoa(i), ":"+p, ":p"+strconv.Itoa(i), "@"+busPorts[i], "@b"+strconv.Itoa(i))
	}
	s.replacer = strings.NewReplacer(pairs...)
	return s
}

// subst replaces the arguments $node:N with node N's id on this side.
func (s *shardSide) subst(args []string) []string {
	out := append([]string(nil), args...)
	for i, a := range out {
		if n, ok := strings.CutPrefix(a, "$node:"); ok {
			if k, err := strconv.Atoi(n); err == nil && k >= 0 && k < len(s.ids) {
				out[i] = s.ids[k]
			}
		}
	}
	return out
}

// shardRanges is redis-cli --cluster create's split of the slots over
// three masters.
var shardRanges = [][2]string{{"0", "5460"}, {"5461", "10922"}, {"10923", "16383"}}

// startRedisShards starts three redis-servers in cluster mode (bus ports
// picked as mustRedisCluster picks them), gives each its range, meets
// them and waits until every node knows the three, says
// cluster_state:ok, and the config epochs differ (Redis resolves the
// collision of three masters at epoch 0 on its cron).
func startRedisShards(t *testing.T) *shardSide {
	t.Helper()
	var addrs, buses []string
	for i := 0; i < 3; i++ {
		bus, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		r := mustRedis(t, "--cluster-enabled", "yes", "--cluster-config-file", t.TempDir()+"/nodes.conf",
			"--cluster-port", strconv.Itoa(bus))
		addrs = append(addrs, r.Addr)
		buses = append(buses, strconv.Itoa(bus))
		c := mustDial(t, r.Addr)
		expectDo(t, c, "+OK\r\n", "CLUSTER", "ADDSLOTSRANGE", shardRanges[i][0], shardRanges[i][1])
		if i > 0 {
			expectDo(t, c, "+OK\r\n", "CLUSTER", "MEET", "127.0.0.1", portOf(addrs[0]), buses[0])
		}
		c.Close()
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, a := range addrs {
		c := mustDial(t, a)
		for {
			info := string(mustDo(t, c, "CLUSTER", "INFO"))
			nodes := string(mustDo(t, c, "CLUSTER", "NODES"))
			epochs := map[string]bool{}
			for _, ln := range strings.Split(strings.TrimSpace(nodes[strings.IndexByte(nodes, '\n')+1:]), "\n") {
				if f := strings.Fields(ln); len(f) > 6 {
					epochs[f[6]] = true
				}
			}
			if strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_known_nodes:3") &&
				!strings.Contains(nodes, "handshake") && !strings.Contains(nodes, "noaddr") && len(epochs) == 3 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("redis %s never settled:\n%s\n%s", a, info, nodes)
			}
			time.Sleep(100 * time.Millisecond)
		}
		c.Close()
	}
	return newShardSide(t, "redis", addrs, buses)
}

// startLimitdbShards starts three 1-node limitdb groups (harness_shards_test.go),
// meets them and gives each its range.
func startLimitdbShards(t *testing.T) *shardSide {
	t.Helper()
	s := mustShardGroups(t, 3, 1)
	for i := range shardRanges {
		lo, _ := strconv.Atoi(shardRanges[i][0])
		hi, _ := strconv.Atoi(shardRanges[i][1])
		s.ranges = append(s.ranges, [2]int{lo, hi})
	}
	s.meetAll()
	var addrs, buses []string
	for g := range s.groups {
		c := mustDial(t, s.leaderAddr(g))
		expectDo(t, c, "+OK\r\n", "CLUSTER", "ADDSLOTSRANGE", shardRanges[g][0], shardRanges[g][1])
		c.Close()
		addrs = append(addrs, s.leaderAddr(g))
		buses = append(buses, portOf(s.groups[g].nodes[0].proxyAddr))
	}
	s.waitOK(30 * time.Second)
	return newShardSide(t, "limitdb", addrs, buses)
}

// runShardScenario runs one file on both sides and returns the number of
// replies compared with Redis's and of @expect lines checked.
func runShardScenario(t *testing.T, ref, cand *shardSide, file string, lines []scenarioLine, proto int) (compared, own int) {
	type conns struct{ ref, cand *Conn }
	open := map[string]*conns{}
	defer func() {
		for _, c := range open {
			c.ref.Close()
			c.cand.Close()
		}
	}()
	node, name := 0, "default"
	cur := func() *conns {
		k := strconv.Itoa(node) + "/" + name
		if open[k] == nil {
			p := dialPairOn(t, ref.addrs[node], cand.addrs[node], proto)
			open[k] = &conns{p.ref, p.cand}
		}
		return open[k]
	}
	// every node starts empty
	for i := range ref.addrs {
		node = i
		for _, c := range []*Conn{cur().ref, cur().cand} {
			if r, err := c.Do("FLUSHALL"); err != nil || string(r) != "+OK\r\n" {
				t.Fatalf("FLUSHALL on node %d: %q %v", i, r, err)
			}
		}
	}
	node = 0
	for _, l := range lines {
		text, mode := l.text, "exact"
		if strings.HasPrefix(text, "@") {
			word, rest, _ := strings.Cut(text, " ")
			switch word {
			case "@proto":
				if p, _ := strconv.Atoi(strings.TrimSpace(rest)); p != proto {
					return compared, own
				}
				continue
			case "@node":
				node, _ = strconv.Atoi(strings.TrimSpace(rest))
				if node < 0 || node >= len(ref.addrs) {
					t.Fatalf("%s:%d: no node %d", file, l.n, node)
				}
				continue
			case "@conn":
				name = strings.TrimSpace(rest)
				continue
			case "@sleep":
				ms, _ := strconv.Atoi(strings.TrimSpace(rest))
				time.Sleep(time.Duration(ms) * time.Millisecond)
				continue
			case "@sort", "@nodes", "@info", "@nocompare", "@expect":
				mode, text = word[1:], rest
			default:
				t.Fatalf("%s:%d: unknown directive %s", file, l.n, word)
			}
		}
		args, err := SplitLine(text)
		if err != nil {
			t.Fatalf("%s:%d: %v", file, l.n, err)
		}
		c := cur()
		if mode == "expect" {
			// limitdb's own commands: redis-server is not asked
			cr, err := c.cand.Do(cand.subst(args)...)
			if err != nil {
				t.Fatalf("%s:%d: limitdb: %v", file, l.n, err)
			}
			own++
			checkExpect(t, file, l, proto, normShardReply(cand, cr, "exact"))
			continue
		}
		rr, err := c.ref.Do(ref.subst(args)...)
		if err != nil {
			t.Fatalf("%s:%d: redis: %v", file, l.n, err)
		}
		cr, err := c.cand.Do(cand.subst(args)...)
		if err != nil {
			t.Fatalf("%s:%d: limitdb: %v (redis said %q)", file, l.n, err, rr)
		}
		if mode == "nocompare" {
			continue
		}
		compared++
		w, g := normShardReply(ref, rr, mode), normShardReply(cand, cr, mode)
		if !bytes.Equal(w, g) {
			t.Errorf("%s:%d: node %d: %s\n  redis:   %q\n  limitdb: %q", file, l.n, node, text, w, g)
		}
	}
	return compared, own
}

// a RESP value, as the test reads it
type respValue struct {
	kind  byte
	text  string // a scalar's line, or a string's bytes
	elems []respValue
	null  bool // $-1 or *-1
}

func parseResp(br *bufio.Reader) (respValue, error) {
	var sink bytes.Buffer
	line, err := readLine(br, &sink)
	if err != nil {
		return respValue{}, err
	}
	v := respValue{kind: line[0], text: line[1:]}
	if !strings.ContainsRune("$=!*~>%|", rune(v.kind)) {
		return v, nil // a scalar: its line is all of it
	}
	n, err := strconv.Atoi(v.text)
	if err != nil {
		return v, err
	}
	if n < 0 {
		v.null = true
		return v, nil
	}
	switch v.kind {
	case '$', '=', '!':
		buf := make([]byte, n+2)
		if _, err := ioReadFull(br, buf); err != nil {
			return v, err
		}
		v.text = string(buf[:n])
	default:
		if v.kind == '%' || v.kind == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			e, err := parseResp(br)
			if err != nil {
				return v, err
			}
			v.elems = append(v.elems, e)
		}
		if v.kind == '|' {
			return parseResp(br) // an attribute: the reply after it is compared
		}
	}
	return v, nil
}

func (v respValue) write(b *bytes.Buffer) {
	if v.null {
		fmt.Fprintf(b, "%c-1\r\n", v.kind)
		return
	}
	switch v.kind {
	case '$', '=', '!':
		fmt.Fprintf(b, "%c%d\r\n%s\r\n", v.kind, len(v.text), v.text)
	case '*', '~', '>', '%':
		n := len(v.elems)
		if v.kind == '%' {
			n /= 2
		}
		fmt.Fprintf(b, "%c%d\r\n", v.kind, n)
		for _, e := range v.elems {
			e.write(b)
		}
	default:
		fmt.Fprintf(b, "%c%s\r\n", v.kind, v.text)
	}
}

// a CLUSTER NODES line's ping-sent and pong-received times (ms since the
// epoch on Redis, when it last heard from the node)
// and its config epoch (Redis's come from resolving the collision of
// masters that start at 0, limitdb's are the group's index + 1)
var nodesTimes = regexp.MustCompile(`(?m)^(\S+ \S+ \S+ \S+) \d+ \d+ \d+ `)

// normShardReply rewrites a reply of side s for the comparison: node ids,
// ports and bus ports by index (inside strings, and integers that are
// one of the side's ports), bulk lengths recomputed. mode "sort" sorts an
// aggregate's elements; "nodes" masks CLUSTER NODES' ping/pong times and
// sorts its lines (Redis lists the nodes in its dict's order); "info"
// leaves out the CLUSTER INFO fields that differ by design
// (commands.md, "Cluster mode").
func normShardReply(s *shardSide, raw []byte, mode string) []byte {
	v, err := parseResp(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		return raw
	}
	var walk func(v *respValue)
	walk = func(v *respValue) {
		switch v.kind {
		case '$', '=', '+', '-', '!':
			v.text = s.replacer.Replace(v.text)
		case ':':
			n, _ := strconv.ParseInt(v.text, 10, 64)
			if p, ok := s.portInts[n]; ok {
				v.text = p
			} else if p, ok := s.busInts[n]; ok {
				v.text = p
			}
		}
		for i := range v.elems {
			walk(&v.elems[i])
			// SHARDS: Redis's master_repl_offset, limitdb's Raft
			// applied index (commands.md, "Cluster mode")
			if i > 0 && v.elems[i-1].text == "replication-offset" && v.elems[i].kind == ':' {
				v.elems[i].text = "OFFSET"
			}
		}
	}
	walk(&v)
	switch mode {
	case "sort":
		var keys []string
		for _, e := range v.elems {
			var b bytes.Buffer
			e.write(&b)
			keys = append(keys, b.String())
		}
		sort.Strings(keys)
		var b bytes.Buffer
		fmt.Fprintf(&b, "%c%d\r\n%s", v.kind, len(keys), strings.Join(keys, ""))
		return b.Bytes()
	case "nodes":
		// (a RESP3 verbatim string starts with its format, "txt:")
		format := ""
		if v.kind == '=' {
			format, v.text = v.text[:4], v.text[4:]
		}
		t := nodesTimes.ReplaceAllString(v.text, "$1 T T E ")
		ls := strings.Split(strings.TrimSuffix(t, "\n"), "\n")
		sort.Strings(ls)
		v.text = format + strings.Join(ls, "\n") + "\n"
	case "info":
		var keep []string
		for _, ln := range strings.Split(v.text, "\r\n") {
			if !infoByDesign(ln) {
				keep = append(keep, ln)
			}
		}
		v.text = strings.Join(keep, "\r\n")
	}
	var b bytes.Buffer
	v.write(&b)
	return b.Bytes()
}

// infoByDesign: the CLUSTER INFO fields left out of the comparison: the
// bus's message counters (limitdb has no gossip bus: its groups exchange
// views over the Raft transport, and it reports no cluster_stats_*) and
// the epochs (nodesTimes).
func infoByDesign(line string) bool {
	return strings.HasPrefix(line, "cluster_stats_") || strings.HasPrefix(line, "cluster_current_epoch:") ||
		strings.HasPrefix(line, "cluster_my_epoch:")
}
