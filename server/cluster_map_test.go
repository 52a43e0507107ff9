package server

import (
	"fmt"
	"math/rand"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"limitdb/engine"
)

// startClusterMode starts a cluster-mode server without a Raft node (no
// refresh loop runs: the test installs the map itself) owning 0-8191.
func startClusterMode(t *testing.T) (*Server, *rconn) {
	t.Helper()
	s := New(Config{Addr: "127.0.0.1:0", Dir: scratchDir}, nil)
	if err := s.LoadConfig("", ArgsToOptions([]string{"--cluster-enabled", "yes"})); err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	c := dialT(t, s.Addr().String())
	if r := c.do(t, "CLUSTER", "ADDSLOTSRANGE", "0", "8191"); r != "+OK\r\n" {
		t.Fatalf("ADDSLOTSRANGE: %q", r)
	}
	return s, c
}

// otherGroup is group 1 of a fake map: a master and one replica, owning
// owned.
func otherGroup(owned ...[2]int) mapGroup {
	return mapGroup{index: 1, owned: owned, moved: "127.0.0.1:7001", nodes: []shardNode{
		{id: clusterNodeID("g1-a"), host: "127.0.0.1", port: 7001, busPort: 17001, offset: 40, master: true},
		{id: clusterNodeID("g1-b"), host: "127.0.0.1", port: 7002, busPort: 17002, offset: 39},
	}}
}

func install(s *Server, groups ...mapGroup) uint64 {
	s.door.Lock()
	defer s.door.Unlock()
	s.installMap(groups)
	return s.cmap.version
}

// slotKey is a key of a slot within [lo, hi].
func slotKey(lo, hi int) string {
	for i := 0; ; i++ {
		k := "k" + strconv.Itoa(i)
		if sl := engine.KeySlot([]byte(k)); sl >= lo && sl <= hi {
			return k
		}
	}
}

// A map with another group owning the other half: the replies list both
// groups as Redis would two shards, and a key of the other group's slot
// is MOVED to its master, exactly as Redis words it.
func TestClusterMapRendering(t *testing.T) {
	s, c := startClusterMode(t)
	if r := c.do(t, "GET", slotKey(8192, 16383)); r != "-CLUSTERDOWN Hash slot not served\r\n" {
		t.Fatalf("no map: %q", r)
	}
	install(s, otherGroup([2]int{8192, 16383}))
	myID := strings.Trim(strings.Split(c.do(t, "CLUSTER", "MYID"), "\r\n")[1], " ")
	g1a, g1b := clusterNodeID("g1-a"), clusterNodeID("g1-b")

	info := c.do(t, "CLUSTER", "INFO")
	for _, f := range []string{"cluster_state:ok", "cluster_slots_assigned:16384", "cluster_slots_ok:16384", "cluster_slots_pfail:0",
		"cluster_known_nodes:3", "cluster_size:2", "cluster_current_epoch:2", "cluster_my_epoch:0"} {
		if !strings.Contains(info, f+"\r\n") {
			t.Errorf("CLUSTER INFO lacks %s:\n%s", f, info)
		}
	}

	port := s.Addr().(interface{ String() string }).String()
	_, myPort, _ := strings.Cut(port, ":")
	slots := c.do(t, "CLUSTER", "SLOTS")
	want := "*2\r\n" +
		"*3\r\n:0\r\n:8191\r\n*4\r\n$9\r\n127.0.0.1\r\n:" + myPort + "\r\n$40\r\n" + myID + "\r\n*0\r\n" +
		"*4\r\n:8192\r\n:16383\r\n*4\r\n$9\r\n127.0.0.1\r\n:7001\r\n$40\r\n" + g1a + "\r\n*0\r\n*4\r\n$9\r\n127.0.0.1\r\n:7002\r\n$40\r\n" + g1b + "\r\n*0\r\n"
	if slots != want {
		t.Errorf("CLUSTER SLOTS\n got %q\nwant %q", slots, want)
	}

	nodes := strings.Split(strings.TrimSuffix(verbatimText(t, c.do(t, "CLUSTER", "NODES")), "\n"), "\n")
	wantNodes := []string{
		myID + " 127.0.0.1:" + myPort + "@" + fmt.Sprint(atoi(myPort)+10000) + " myself,master - 0 0 0 connected 0-8191",
		g1a + " 127.0.0.1:7001@17001 master - 0 0 2 connected 8192-16383",
		g1b + " 127.0.0.1:7002@17002 slave " + g1a + " 0 0 2 connected",
	}
	if strings.Join(nodes, "\n") != strings.Join(wantNodes, "\n") {
		t.Errorf("CLUSTER NODES\n got %q\nwant %q", nodes, wantNodes)
	}

	shards := c.do(t, "CLUSTER", "SHARDS")
	if !strings.HasPrefix(shards, "*2\r\n") || strings.Count(shards, "$2\r\nid\r\n") != 3 ||
		!strings.Contains(shards, "$5\r\nslots\r\n*2\r\n:8192\r\n:16383\r\n") ||
		!strings.Contains(shards, "$2\r\nid\r\n$40\r\n"+g1b+"\r\n$4\r\nport\r\n:7002\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$7\r\nreplica\r\n$18\r\nreplication-offset\r\n:39\r\n$6\r\nhealth\r\n$6\r\nonline\r\n") {
		t.Errorf("CLUSTER SHARDS: %q", shards)
	}
	if r := c.do(t, "CLUSTER", "REPLICAS", g1a); r != "*1\r\n$"+strconv.Itoa(len(wantNodes[2]))+"\r\n"+wantNodes[2]+"\r\n" {
		t.Errorf("CLUSTER REPLICAS: %q", r)
	}
	if r := c.do(t, "CLUSTER", "REPLICAS", g1b); r != "-ERR The specified node is not a master\r\n" {
		t.Errorf("CLUSTER REPLICAS of a replica: %q", r)
	}
	if r := c.do(t, "CLUSTER", "COUNT-FAILURE-REPORTS", g1b); r != ":0\r\n" {
		t.Errorf("COUNT-FAILURE-REPORTS: %q", r)
	}

	// routing: the other group's slot is MOVED, this group's runs, a
	// command across the two is CROSSSLOT first, a script cannot reach it
	other, mine := slotKey(8192, 16383), slotKey(0, 8191)
	slot := engine.KeySlot([]byte(other))
	if r := c.do(t, "GET", other); r != fmt.Sprintf("-MOVED %d 127.0.0.1:7001\r\n", slot) {
		t.Errorf("GET of the other group's key: %q", r)
	}
	if r := c.do(t, "SET", mine, "v"); r != "+OK\r\n" {
		t.Errorf("SET of this group's key: %q", r)
	}
	if r := c.do(t, "MSET", other, "1", mine, "2"); r != "-CROSSSLOT Keys in request don't hash to the same slot\r\n" {
		t.Errorf("MSET across groups: %q", r)
	}
	if r := c.do(t, "EVAL", "return redis.call('GET', KEYS[1])", "1", other); !strings.HasPrefix(r, "-MOVED ") {
		t.Errorf("EVAL with the other group's key: %q", r)
	}
	if r := c.do(t, "EVAL", "return redis.call('GET', '"+other+"')", "1", mine); !strings.Contains(r, "non local key") {
		t.Errorf("a script reaching the other group's key: %q", r)
	}

	// a hole: its slot is not served, the other group's slots are down
	install(s, otherGroup([2]int{8192, 16000}))
	if r := c.do(t, "GET", slotKey(16001, 16383)); r != "-CLUSTERDOWN Hash slot not served\r\n" {
		t.Errorf("a slot no group owns: %q", r)
	}
	if r := c.do(t, "GET", slotKey(8192, 16000)); r != "-CLUSTERDOWN The cluster is down\r\n" {
		t.Errorf("the other group's slot, cluster down: %q", r)
	}
	if r := c.do(t, "CLUSTER", "INFO"); !strings.Contains(r, "cluster_state:fail\r\n") || !strings.Contains(r, "cluster_slots_assigned:16001\r\n") {
		t.Errorf("CLUSTER INFO with a hole: %q", r)
	}
}

// A group that stops answering keeps its slots, first fail? and
// disconnected, then fail; the version moves with the shape, not with
// the offsets.
func TestClusterMapStates(t *testing.T) {
	s, c := startClusterMode(t)
	g := otherGroup([2]int{8192, 16383})
	v1 := install(s, g)
	g.nodes = append([]shardNode(nil), g.nodes...)
	g.nodes[1].offset = 99
	if v := install(s, g); v != v1 {
		t.Errorf("an offset moved the version: %d → %d", v1, v)
	}
	g.state = linkPFail
	if v := install(s, g); v == v1 {
		t.Error("a state change left the version")
	}
	nodes := verbatimText(t, c.do(t, "CLUSTER", "NODES"))
	if !strings.Contains(nodes, " master,fail? - 0 0 2 disconnected 8192-16383\n") || !strings.Contains(nodes, " slave,fail? ") {
		t.Errorf("pfail NODES: %q", nodes)
	}
	if r := c.do(t, "CLUSTER", "INFO"); !strings.Contains(r, "cluster_state:ok\r\n") || !strings.Contains(r, "cluster_slots_pfail:8192\r\n") || !strings.Contains(r, "cluster_slots_ok:8192\r\n") {
		t.Errorf("pfail INFO: %q", r)
	}
	g.state = linkFailed
	install(s, g)
	if r := c.do(t, "CLUSTER", "SHARDS"); !strings.Contains(r, "$6\r\nhealth\r\n$6\r\nfailed\r\n") {
		t.Errorf("failed SHARDS: %q", r)
	}
	if r := c.do(t, "GET", slotKey(8192, 16383)); !strings.HasPrefix(r, "-MOVED ") {
		t.Errorf("a failed group's slot: %q", r)
	}
}

// The refresh's pure parts: a view's members become nodes (leader as
// master first, those without a client address left out; no leader: the
// answering member), and an answer ages into fail? then fail.
func TestClusterMapFromViews(t *testing.T) {
	v := groupView{self: "b", shard: engine.ShardRecord{Index: 1}, owned: [][2]int{{0, 10}}, members: []viewMember{
		{raftID: "a", clientAddr: "127.0.0.1:7000", raftAddr: "127.0.0.1:17000", applied: 5},
		{raftID: "b", clientAddr: "127.0.0.1:7001", raftAddr: "127.0.0.1:17001", leader: true, applied: 6},
		{raftID: "c", raftAddr: "127.0.0.1:17002"},
	}}
	n := viewNodes(&v)
	if len(n) != 2 || n[0].id != clusterNodeID("b") || !n[0].master || n[0].busPort != 17001 || n[1].id != clusterNodeID("a") || n[1].master || n[1].port != 7000 {
		t.Errorf("nodes %+v", n)
	}
	if !v.fromLeader() {
		t.Error("fromLeader")
	}
	v.members[1].leader = false
	if n := viewNodes(&v); n[0].id != clusterNodeID("b") || !n[0].master || n[1].master {
		t.Errorf("no leader: %+v", n)
	}
	now := time.Now()
	r := mapRefresher{list: []engine.DirGroup{{Index: 0}, {Index: 1}, {Index: 2}}, seen: map[int]*groupSeen{1: {view: v, at: now.Add(-mapLinkPeriods * mapPeriod)}}}
	gs := r.groups(0, now)
	if len(gs) != 1 || gs[0].index != 1 || gs[0].state != linkPFail || gs[0].moved != "127.0.0.1:7001" {
		t.Errorf("groups %+v", gs)
	}
	r.seen[1].at = now.Add(-mapFailPeriods * mapPeriod)
	if gs := r.groups(0, now); gs[0].state != linkFailed {
		t.Errorf("failed %+v", gs)
	}
}

// The hole fill: at a handover's end the source's answer stops claiming
// slots the target's answer does not claim yet (its view is cached, or
// from before its OWN); the slots stay with the source for holeGrace, so
// the union never has a hole (a hole is CLUSTERDOWN for every key), and
// this group's own slots stay counted until the next refresh. A slot
// nobody claims for holeGrace leaves; DELSLOTS forgets at once.
func TestClusterMapFillsHoles(t *testing.T) {
	// addRange sets whole words and parts of words
	var b slotSet
	for _, r := range [][2]int{{0, 0}, {3, 70}, {127, 128}, {200, 16383}} {
		b.addRange(r[0], r[1])
	}
	if fmt.Sprint(b.ranges()) != "[[0 0] [3 70] [127 128] [200 16383]]" || b.count() != 1+68+2+16184 {
		t.Fatalf("addRange: %v (%d)", b.ranges(), b.count())
	}

	var m clusterMap
	now := time.Now()
	g1 := func(owned ...[2]int) []mapGroup { return []mapGroup{{index: 1, moved: "127.0.0.1:7001", owned: owned}} }
	gs := m.fillHoles(g1([2]int{8192, 16383}), 0, [][2]int{{0, 8191}}, now)
	if fmt.Sprint(gs[0].owned) != "[[8192 16383]]" || m.kept.count() != 8192 {
		t.Fatalf("nothing to fill: %v, kept %d", gs[0].owned, m.kept.count())
	}
	// group 1 hides 9000-9009 and this group dropped 100-109: both kept
	answer := [][2]int{{8192, 8999}, {9010, 16383}}
	gs = m.fillHoles(g1(answer...), 0, [][2]int{{0, 99}, {110, 8191}}, now.Add(mapPeriod))
	if fmt.Sprint(gs[0].owned) != "[[8192 16383]]" || m.kept.count() != 8192 {
		t.Fatalf("filled: %v, kept %d", gs[0].owned, m.kept.count())
	}
	if fmt.Sprint(answer) != "[[8192 8999] [9010 16383]]" {
		t.Fatalf("the answer itself changed: %v", answer)
	}
	// group 1's slots claimed by a group 2 that answers now: no fill
	both := append(g1(answer...), mapGroup{index: 2, moved: "127.0.0.1:7002", owned: [][2]int{{9000, 9009}}})
	gs = m.fillHoles(both, 0, [][2]int{{0, 99}, {110, 8191}}, now.Add(2*mapPeriod))
	if fmt.Sprint(gs[0].owned) != "[[8192 8999] [9010 16383]]" {
		t.Fatalf("claimed elsewhere: %v", gs[0].owned)
	}
	// 100-109, claimed by nobody since now+0, go after holeGrace
	m.fillHoles(both, 0, [][2]int{{0, 99}, {110, 8191}}, now.Add(holeGrace-time.Millisecond))
	if m.kept.count() != 8192 {
		t.Fatalf("kept before holeGrace: %d", m.kept.count())
	}
	m.fillHoles(both, 0, [][2]int{{0, 99}, {110, 8191}}, now.Add(holeGrace))
	if m.kept.count() != 8182 || m.kept.has(100) {
		t.Fatalf("kept after holeGrace: %d", m.kept.count())
	}
	m.forgetClaims([][2]int{{0, 9}})
	if m.kept.count() != 8172 || m.holes.has(5) || m.prev[0].slots.has(5) {
		t.Fatalf("after DELSLOTS: %d", m.kept.count())
	}
	// and it is no hole at the next refresh either
	m.fillHoles(both, 0, [][2]int{{10, 99}, {110, 8191}}, now.Add(holeGrace+mapPeriod))
	if m.kept.count() != 8172 || m.kept.has(5) {
		t.Fatalf("a refresh after DELSLOTS kept %d", m.kept.count())
	}
	if m.fillHoles(g1(), -1, nil, now); m.prev != nil || m.kept.count() != 0 {
		t.Fatal("in no cluster: nothing kept")
	}
}

var verbatimRe = regexp.MustCompile(`(?s)^[=$]\d+\r\n(?:txt:)?(.*)\r\n$`)

// verbatimText is a verbatim (RESP3) or bulk (RESP2) reply's text.
func verbatimText(t *testing.T, r string) string {
	t.Helper()
	m := verbatimRe.FindStringSubmatch(r)
	if m == nil {
		t.Fatalf("not a bulk reply: %q", r)
	}
	return m[1]
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// fakeViews answers asks from a table (a missing address fails) and
// records their order.
type fakeViews struct {
	mu    sync.Mutex // (askOthers asks groups concurrently)
	views map[string]groupView
	asked []string
}

func (f *fakeViews) ask(addr string) (groupView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, addr)
	if v, ok := f.views[addr]; ok {
		return v, nil
	}
	return groupView{}, errViewAnswer
}

// member1 is a view of group index answered by self, whose leader (in
// its eyes) is leader ("": none).
func member1(index int, self, leader string) groupView {
	v := groupView{self: self, shard: engine.ShardRecord{Index: index}, owned: [][2]int{{100, 200}}}
	for _, id := range []string{"a1", "a2", "a3"} {
		v.members = append(v.members, viewMember{raftID: id, raftAddr: id, clientAddr: "127.0.0.1:7" + id[1:], leader: id == leader})
	}
	return v
}

// The refresh's asks: the last leader first, then the members, then the
// seeds; a follower's answer sends the next ask to the leader it names;
// an address of another group does not count; a group no member of which
// answers keeps its last answer (and ages), one the directory no longer
// lists is forgotten.
func TestClusterMapAsks(t *testing.T) {
	f := &fakeViews{views: map[string]groupView{"a2": member1(1, "a2", "a3"), "a3": member1(1, "a3", "a3"), "x": member1(2, "a1", "a1")}}
	r := mapRefresher{seen: map[int]*groupSeen{}, askView: f.ask, stop: make(chan struct{})}
	v, ok := r.ask(1, nil, []string{"x", "a1", "a2", "a3"})
	if !ok || v.self != "a3" || strings.Join(f.asked, ",") != "x,a1,a2,a3" {
		t.Fatalf("first ask: %v %q, asked %q", ok, v.self, f.asked)
	}
	// the leader a3 dies; a1 still believes in it
	f.views = map[string]groupView{"a1": member1(1, "a1", "a3"), "a2": member1(1, "a2", "")}
	f.asked = nil
	v, ok = r.ask(1, &groupSeen{view: member1(1, "a3", "a3")}, []string{"a1", "a2", "a3"})
	if !ok || v.self != "a1" || strings.Join(f.asked, ",") != "a3,a1,a2" {
		t.Fatalf("leader gone: %v %q, asked %q", ok, v.self, f.asked)
	}
	// the leader moved to a2: a follower's answer leads to it at once
	f.views = map[string]groupView{"a1": member1(1, "a1", "a2"), "a2": member1(1, "a2", "a2")}
	f.asked = nil
	if v, _ := r.ask(1, &groupSeen{view: member1(1, "a1", "a1")}, nil); v.self != "a2" || strings.Join(f.asked, ",") != "a1,a2" {
		t.Fatalf("new leader: %q, asked %q", v.self, f.asked)
	}

	// askOthers: group 1 answers, group 2 keeps its last answer, group 3
	// is gone from the list
	then := time.Now().Add(-time.Hour)
	r.list = []engine.DirGroup{{Index: 0}, {Index: 1, Seeds: []string{"a2"}}, {Index: 2, Seeds: []string{"y"}}}
	r.seen = map[int]*groupSeen{2: {view: member1(2, "a1", "a1"), at: then}, 3: {view: member1(3, "a1", "a1"), at: then}}
	now := time.Now()
	r.askOthers(engine.ShardRecord{Index: 0, Directory: true}, now)
	if len(r.seen) != 2 || r.seen[1] == nil || r.seen[1].at != now || r.seen[2].at != then {
		t.Fatalf("askOthers: %+v", r.seen)
	}
	gs := r.groups(0, now)
	if len(gs) != 2 || gs[0].state != linkOK || gs[0].moved != "127.0.0.1:72" || gs[1].state != linkFailed {
		t.Fatalf("groups %+v", gs)
	}
}

// A slot two answers claim (a handover between the target's OWN and the
// source's DONE) is shown by one group only: the map's claimant when it
// is frozen here, else this group, and between two of the map's groups
// the one the routing sends to.
func TestClusterMapClaimsOnce(t *testing.T) {
	s, c := startClusterMode(t)
	g2 := otherGroup([2]int{100, 199}, [2]int{8192, 16383})
	g2.index = 2
	g1 := otherGroup([2]int{8192, 8291})
	install(s, g1, g2)
	slots := c.do(t, "CLUSTER", "SLOTS")
	for _, want := range []string{":0\r\n:8191\r\n", ":8192\r\n:8291\r\n", ":8292\r\n:16383\r\n"} {
		if !strings.Contains(slots, want) {
			t.Errorf("CLUSTER SLOTS lacks %q:\n%q", want, slots)
		}
	}
	if strings.Contains(slots, ":100\r\n:199\r\n") || strings.Count(slots, ":8192\r\n") != 1 {
		t.Errorf("a slot shown twice:\n%q", slots)
	}
}

// refHoles is the hole fill as it was first written, slot by slot (a
// claimant and a time per slot, every slot visited at every refresh):
// the model TestClusterMapFillsHolesModel checks the bitmap one against.
type refHoles struct {
	claim   []int16
	claimAt []int64
	kept    slotSet
}

func (m *refHoles) fill(groups []mapGroup, own int, ownSlots [][2]int, now time.Time) []mapGroup {
	m.kept = slotSet{}
	if m.claim == nil {
		m.claim, m.claimAt = make([]int16, engine.NumSlots), make([]int64, engine.NumSlots)
		for i := range m.claim {
			m.claim[i] = -1
		}
	}
	ns := now.UnixNano()
	var claimed slotSet
	mark := func(index int, ranges [][2]int) {
		for _, r := range ranges {
			claimed.addRange(r[0], r[1])
			for slot := r[0]; slot <= r[1]; slot++ {
				m.claim[slot], m.claimAt[slot] = int16(index), ns
			}
		}
	}
	mark(own, ownSlots)
	m.kept = claimed
	for _, g := range groups {
		if g.moved != "" {
			mark(g.index, g.owned)
		}
	}
	fill := map[int]*slotSet{}
	for slot, index := range m.claim {
		if index < 0 || claimed.has(slot) {
			continue
		}
		if ns-m.claimAt[slot] >= int64(holeGrace) {
			m.claim[slot] = -1
			continue
		}
		if int(index) == own {
			m.kept.addRange(slot, slot)
			continue
		}
		if fill[int(index)] == nil {
			fill[int(index)] = &slotSet{}
		}
		fill[int(index)].addRange(slot, slot)
	}
	for i := range groups {
		if b := fill[groups[i].index]; b != nil {
			for _, r := range groups[i].owned {
				b.addRange(r[0], r[1])
			}
			groups[i].owned = b.ranges()
		}
	}
	return groups
}

// TestClusterMapFillsHolesModel: random claims of four groups over 64
// slot blocks, refreshes 0-600 ms apart, and DELSLOTS now and then; the
// bitmap fill gives what the slot-by-slot model gives, refresh after
// refresh.
func TestClusterMapFillsHolesModel(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for run := 0; run < 20; run++ {
		var m clusterMap
		var ref refHoles
		now := time.Now()
		blocks := func() [][2]int {
			var out [][2]int
			for b := 0; b < engine.NumSlots/256; b++ {
				if rng.Intn(3) == 0 {
					lo := b*256 + rng.Intn(128)
					out = append(out, [2]int{lo, lo + rng.Intn(128)})
				}
			}
			return out
		}
		for step := 0; step < 30; step++ {
			own := blocks()
			var gs, rs []mapGroup
			for i := 1; i <= 3; i++ {
				moved := "127.0.0.1:7001"
				if rng.Intn(5) == 0 {
					moved = "" // a group with no node known: not counted
				}
				owned := blocks()
				gs = append(gs, mapGroup{index: i, moved: moved, owned: owned})
				rs = append(rs, mapGroup{index: i, moved: moved, owned: owned})
			}
			now = now.Add(time.Duration(rng.Intn(600)) * time.Millisecond)
			got := m.fillHoles(gs, 0, own, now)
			want := ref.fill(rs, 0, own, now)
			for i := range got {
				if fmt.Sprint(got[i].owned) != fmt.Sprint(want[i].owned) {
					t.Fatalf("run %d step %d group %d: %v, the model %v", run, step, got[i].index, got[i].owned, want[i].owned)
				}
			}
			if m.kept != ref.kept {
				t.Fatalf("run %d step %d: kept %v, the model %v", run, step, m.kept.ranges(), ref.kept.ranges())
			}
			if rng.Intn(6) == 0 {
				lo := rng.Intn(engine.NumSlots - 200)
				r := [][2]int{{lo, lo + rng.Intn(200)}}
				m.forgetClaims(r)
				for slot := r[0][0]; slot <= r[0][1]; slot++ {
					ref.kept.remove(slot)
					ref.claim[slot] = -1
				}
			}
		}
	}
}
