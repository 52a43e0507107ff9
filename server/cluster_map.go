package server

import (
	"math/bits"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"limitdb/cluster"
	"limitdb/engine"
)

// The map of the cluster (several Raft groups as one Redis Cluster): what
// CLUSTER SLOTS, SHARDS, NODES, REPLICAS and INFO show of the other groups
// and where a key of a slot this group does not own is MOVED to. This
// node's own group is never in it: it is rendered from the engine and the
// node's status as it is (shardView, OwnedSlots), so an ADDSLOTS shows at
// once. The other groups come from a refresh loop (mapLoop) that asks one
// member of each for its view (cluster_view.go) every mapPeriod, with the
// engine lock released; it installs what it learnt under the lock
// (installMap), where the replies and the routing read it: rendering asks
// nobody.

const (
	// mapPeriod is the refresh's period: a change committed in a group
	// reaches every node's map within a period and a round trip
	mapPeriod = 100 * time.Millisecond
	// mapAskWait bounds one ask of a refresh (an address that does not
	// answer costs that, then the next is tried)
	mapAskWait = 300 * time.Millisecond
	// a group none of whose members answered for mapLinkPeriods periods
	// is shown disconnected and its nodes fail? (Redis's PFAIL); for
	// mapFailPeriods, fail. Its last answer is kept meanwhile: its slots
	// stay assigned to it and MOVED still sends clients to its last
	// leader (its Raft group fails over by itself; the map follows once
	// a member answers again)
	mapLinkPeriods = 10
	mapFailPeriods = 50
	// holeGrace is how long a slot that no answer claims any more stays
	// with the group that claimed it last (fillHoles)
	holeGrace = 10 * mapPeriod
)

// linkState is how recently a group of the map answered.
type linkState uint8

const (
	linkOK     linkState = iota // answered within mapLinkPeriods
	linkPFail                   // not within mapLinkPeriods: disconnected, fail?
	linkFailed                  // not within mapFailPeriods: disconnected, fail
)

// mapGroup is one group as the map holds it, and as the CLUSTER replies
// render every group (this node's own too: clusterGroups).
type mapGroup struct {
	index int         // its index in the directory (-1: in no cluster)
	nodes []shardNode // its master first, then its replicas
	owned [][2]int    // the slots it owns (its own replicated bitmap)
	moved string      // MOVED's address: the master's client address
	state linkState
}

// epoch is the group's config epoch: index+1, 0 while in no cluster.
func (g *mapGroup) epoch() uint64 { return uint64(g.index + 1) }

// slotCount is how many slots the group owns.
func (g *mapGroup) slotCount() int {
	n := 0
	for _, r := range g.owned {
		n += r[1] - r[0] + 1
	}
	return n
}

// clusterMap is the installed map (engine lock) and the refresh's
// waiters (mu).
type clusterMap struct {
	// the other groups, by index, and per slot the position of its owner
	// among them (-1: none of them); version counts the changes of the
	// groups, their nodes and their slots (not of the replication
	// offsets, refreshed every period): the shape the routing follows
	groups  []mapGroup
	owner   []int16
	cover   slotSet // the slots the other groups own
	version uint64

	// the hole fill (fillHoles): per slot, the index of the group that
	// claimed it last, this one's included (-1: none), and when (unix ns);
	// kept is this group's slots as of the last refresh and those it
	// claimed last within holeGrace, counted by unionSlots
	claim   []int16
	claimAt []int64
	kept    slotSet

	mu      sync.Mutex
	running bool            // the loop runs (Serve started it, it has not stopped)
	waiters []chan struct{} // refreshMap's, closed by the next refresh
	kick    chan struct{}
}

// slotSet is a set of slots, one bit each.
type slotSet [engine.NumSlots / 64]uint64

func (b *slotSet) addRange(s, e int) {
	for slot := s; slot <= e; slot++ {
		b[slot>>6] |= 1 << (slot & 63)
	}
}

func (b *slotSet) has(slot int) bool { return b[slot>>6]&(1<<(slot&63)) != 0 }

// ranges is the set as ascending ranges.
func (b *slotSet) ranges() [][2]int {
	var out [][2]int
	for slot := 0; slot < engine.NumSlots; slot++ {
		if b.has(slot) {
			out = addSlotRange(out, slot)
		}
	}
	return out
}

func (b *slotSet) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// installMap makes groups (the other groups, by index) the map (engine
// lock held): the version moves when anything but the offsets changed,
// and cluster_state is recomputed over the new union.
func (s *Server) installMap(groups []mapGroup) {
	m := &s.cmap
	if !sameShape(m.groups, groups) {
		m.version++
		m.owner, m.cover = nil, slotSet{}
		if len(groups) > 0 {
			m.owner = make([]int16, engine.NumSlots)
			for i := range m.owner {
				m.owner[i] = -1
			}
			for i, g := range groups {
				if g.moved == "" {
					continue // no master known: nowhere to send a client
				}
				for _, r := range g.owned {
					m.cover.addRange(r[0], r[1])
					for slot := r[0]; slot <= r[1]; slot++ {
						if m.owner[slot] < 0 { // two claims (a stale answer): the lower index
							m.owner[slot] = int16(i)
						}
					}
				}
			}
		}
	}
	m.groups = groups
	s.updateClusterState()
}

// sameShape: the two lists differ at most in their nodes' offsets.
func sameShape(a, b []mapGroup) bool {
	return slices.EqualFunc(a, b, func(x, y mapGroup) bool {
		return x.index == y.index && x.moved == y.moved && x.state == y.state &&
			slices.Equal(x.owned, y.owned) &&
			slices.EqualFunc(x.nodes, y.nodes, func(n, o shardNode) bool { n.offset = o.offset; return n == o })
	})
}

// movedTo is the client address of the master of the group the map says
// owns slot, "" when none does (engine lock held).
func (s *Server) movedTo(slot int) string {
	if s.cmap.owner == nil {
		return ""
	}
	if i := s.cmap.owner[slot]; i >= 0 {
		return s.cmap.groups[i].moved
	}
	return ""
}

// unionSlots is how many slots this group or the map's others own
// (engine lock held).
func (s *Server) unionSlots() int {
	if s.cmap.owner == nil {
		return s.eng.OwnedSlotCount()
	}
	u := s.cmap.cover
	for i, w := range s.cmap.kept {
		u[i] |= w
	}
	for _, r := range s.eng.OwnedSlots() {
		u.addRange(r[0], r[1])
	}
	return u.count()
}

// clusterGroups is every group as the CLUSTER replies render them
// (engine lock held): this node's first, from its engine and its node as
// they are, then the map's.
func (s *Server) clusterGroups() []mapGroup {
	own := mapGroup{index: s.eng.Shard().Index, nodes: s.shardView(), owned: s.eng.OwnedSlots()}
	return append([]mapGroup{own}, s.cmap.groups...)
}

// refreshMap asks the refresh loop for a refresh now (after a MEET or
// an ADDSLOTS here, so that the others' map and this one's follow at
// once): the channel is closed when a refresh that started after the
// call has been installed, at once when no loop runs. Callable with the
// engine lock held or not; wait on the channel only without it.
func (s *Server) refreshMap() <-chan struct{} {
	done := make(chan struct{})
	m := &s.cmap
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.running {
		close(done)
		return done
	}
	m.waiters = append(m.waiters, done)
	select {
	case m.kick <- struct{}{}:
	default: // a kick is pending already
	}
	return done
}

// startMap starts the refresh loop (Serve: cluster mode with a Raft
// node); it stops with the server (s.stop), before the node is closed.
func (s *Server) startMap() {
	if !s.clusterMode || s.node == nil {
		return
	}
	m := &s.cmap
	m.mu.Lock()
	m.running = true
	m.kick = make(chan struct{}, 1)
	m.mu.Unlock()
	s.wg.Add(1)
	go s.mapLoop()
}

func (s *Server) mapLoop() {
	defer s.wg.Done()
	r := mapRefresher{s: s, seen: map[int]*groupSeen{}, empty: true, stop: s.stop,
		askView: func(addr string) (groupView, error) { return s.askViewWait(addr, mapAskWait) }}
	t := time.NewTicker(mapPeriod)
	defer t.Stop()
	m := &s.cmap
	defer func() {
		m.mu.Lock()
		m.running = false
		for _, w := range m.waiters {
			close(w)
		}
		m.waiters = nil
		m.mu.Unlock()
	}()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-m.kick:
		}
		m.mu.Lock()
		waiters := m.waiters
		m.waiters = nil
		m.mu.Unlock()
		r.refresh()
		for _, w := range waiters {
			close(w)
		}
	}
}

// groupSeen is what the refresh keeps of a group between periods.
type groupSeen struct {
	view groupView
	at   time.Time // of the last answer
}

// mapRefresher is the refresh loop's own state.
type mapRefresher struct {
	s       *Server
	list    []engine.DirGroup // the directory's groups, as last learnt
	seen    map[int]*groupSeen
	empty   bool // the installed map has no group
	stop    <-chan struct{}
	askView func(addr string) (groupView, error) // one ask, bounded (mapAskWait)
}

// refresh learns the group list (this group's engine when it holds the
// directory, else the directory group's view) and every other group's
// view, then installs the map. Nothing is asked with the engine lock held;
// a group that does not answer keeps its last answer.
func (r *mapRefresher) refresh() {
	s := r.s
	if !s.door.LockOr(s.stop) {
		return
	}
	my := groupView{shard: s.eng.Shard()}
	if my.shard.Index >= 0 {
		my = s.myView()
	}
	s.door.Unlock()
	now := time.Now()
	if my.shard.Index < 0 {
		r.list, r.seen = nil, map[int]*groupSeen{}
	} else {
		if my.shard.Directory {
			r.list = my.groups
		} else if v, ok := r.ask(0, r.seen[0], my.shard.DirSeeds); ok {
			r.list = v.groups
			r.seen[0] = &groupSeen{view: v, at: now}
		}
		r.askOthers(my.shard, now)
	}
	groups := r.groups(my.shard.Index, now)
	if len(groups) == 0 && r.empty {
		return // (a group in no cluster: nothing to install, period after period)
	}
	if !s.door.LockOr(s.stop) {
		return
	}
	groups = s.cmap.fillHoles(groups, my.shard.Index, s.eng.OwnedSlots(), now)
	s.installMap(groups)
	s.door.Unlock()
	r.empty = len(groups) == 0
}

// fillHoles gives a slot that no group's answer (nor this group's
// engine) claims to the group that claimed it last, for holeGrace (engine
// lock held). The answers of one refresh are not one instant: at a
// handover's end the source stops showing the slots (finishHere) or
// drops them (DONE) a moment after the target owns them, and the
// target's answer may be from before its OWN (cached for viewCacheFor,
// or a follower's engine behind its leader's). Without the fill, the
// union had a hole for a refresh or two and every node that saw it
// answered every key -CLUSTERDOWN The cluster is down
// (TestClusterShardsNode, seen in CI). A filled slot sends its client to
// the last claimant, which answers MOVED to the target: an extra MOVED,
// as any stale map costs. This group's own slots are kept (kept) until
// the next refresh for the same reason: DONE applied here between two
// refreshes would otherwise open the hole at once.
func (m *clusterMap) fillHoles(groups []mapGroup, own int, ownSlots [][2]int, now time.Time) []mapGroup {
	m.kept = slotSet{}
	if own < 0 {
		m.claim, m.claimAt = nil, nil
		return groups
	}
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
	fill := map[int]*slotSet{} // by index: the slots given back to it
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
			groups[i].owned = b.ranges() // a new slice: owned is the answer's, kept by the refresh
		}
	}
	return groups
}

// forgetClaims drops ranges from the hole fill (engine lock held):
// slots this group gave up by DELSLOTS are not kept.
func (m *clusterMap) forgetClaims(ranges [][2]int) {
	for _, r := range ranges {
		for slot := r[0]; slot <= r[1]; slot++ {
			m.kept[slot>>6] &^= 1 << (slot & 63)
			if m.claim != nil {
				m.claim[slot] = -1
			}
		}
	}
}

// askOthers asks every other group of the list (but the directory's,
// asked already when this group is not it) for its view, concurrently:
// an unreachable group costs its own asks only.
func (r *mapRefresher) askOthers(own engine.ShardRecord, now time.Time) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[int]*groupSeen{}
	for _, g := range r.list {
		if g.Index == own.Index || (g.Index == 0 && !own.Directory) {
			continue
		}
		prev := r.seen[g.Index]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, ok := r.ask(g.Index, prev, g.Seeds); ok {
				mu.Lock()
				got[g.Index] = &groupSeen{view: v, at: now}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for i, g := range got {
		r.seen[i] = g
	}
	// forget the groups the directory no longer lists
	for i := range r.seen {
		if !slices.ContainsFunc(r.list, func(g engine.DirGroup) bool { return g.Index == i }) {
			delete(r.seen, i)
		}
	}
}

// ask asks group index for its view: its last known leader first, then
// the members its last answer named, then seeds; an answer from a
// follower that names a leader is followed by an ask of that leader (the
// map shows the members a leader knows). An answer from a node in
// another group (an address reused) is not the group's. prev is the
// group's last answer (nil: none yet).
func (r *mapRefresher) ask(index int, prev *groupSeen, seeds []string) (groupView, bool) {
	var addrs []string
	if g := prev; g != nil {
		addrs = append(addrs, g.view.leaderRaft())
		for _, m := range g.view.members {
			addrs = append(addrs, m.raftAddr)
		}
	}
	addrs = append(addrs, seeds...)
	tried := map[string]bool{"": true}
	var found *groupView
	for i := 0; i < len(addrs); i++ {
		a := addrs[i]
		if tried[a] {
			continue
		}
		tried[a] = true
		select {
		case <-r.stop:
			return groupView{}, false
		default:
		}
		v, err := r.askView(a)
		if err != nil || v.shard.Index != index || (index == 0 && !v.shard.Directory) {
			continue
		}
		if v.fromLeader() {
			return v, true
		}
		if found == nil {
			found = &v
		}
		if l := v.leaderRaft(); !tried[l] {
			// the leader next, before the other addresses
			addrs = slices.Insert(addrs, i+1, l)
		}
	}
	if found != nil {
		return *found, true
	}
	return groupView{}, false
}

// groups builds the map's groups from the last answers, by index: a
// group of the list that has never answered is not shown (nothing names
// its nodes), so its slots are not served here until it does.
func (r *mapRefresher) groups(own int, now time.Time) []mapGroup {
	var out []mapGroup
	for _, g := range r.list {
		seen := r.seen[g.Index]
		if g.Index == own || seen == nil {
			continue
		}
		mg := mapGroup{index: g.Index, nodes: viewNodes(&seen.view), owned: seen.view.owned}
		if len(mg.nodes) > 0 {
			mg.moved = net.JoinHostPort(mg.nodes[0].host, strconv.Itoa(mg.nodes[0].port))
		}
		switch age := now.Sub(seen.at); {
		case age >= mapFailPeriods*mapPeriod:
			mg.state = linkFailed
		case age >= mapLinkPeriods*mapPeriod:
			mg.state = linkPFail
		}
		out = append(out, mg)
	}
	slices.SortFunc(out, func(a, b mapGroup) int { return a.index - b.index })
	return out
}

// fromLeader: the member that answered is the group's leader.
func (v *groupView) fromLeader() bool {
	for _, m := range v.members {
		if m.raftID == v.self {
			return m.leader
		}
	}
	return false
}

// viewNodes are a view's members as the map shows them: those whose
// client address the answering member knows, the leader as master first
// (without a leader, the answering member, as shardView shows itself).
func viewNodes(v *groupView) []shardNode {
	hasLeader := slices.ContainsFunc(v.members, func(m viewMember) bool { return m.leader && m.clientAddr != "" })
	var master, reps []shardNode
	for _, m := range v.members {
		if m.clientAddr == "" {
			continue
		}
		n := shardNode{id: clusterNodeID(m.raftID), offset: int64(m.applied), master: m.leader || (!hasLeader && m.raftID == v.self)}
		n.host, n.port = cluster.SplitHostPort(m.clientAddr)
		_, n.busPort = cluster.SplitHostPort(m.raftAddr)
		if n.master && len(master) == 0 {
			master = append(master, n)
		} else {
			n.master = false
			reps = append(reps, n)
		}
	}
	return append(master, reps...)
}
