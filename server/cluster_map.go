package server

import (
	"maps"
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
	asks  []string // its members' inter-node addresses, the leader's first (requests to its leader)
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

	// the hole fill (fillHoles): what each group claimed at the last
	// refresh, in the order marked, and when (unix ns); holes, the slots
	// no answer claims now that one claimed within holeGrace, with the
	// index of the group that claimed each last (this one's included)
	// and when; kept, this group's slots as of the last refresh and the
	// holes it claimed last, counted by unionSlots
	prev   []groupClaim
	prevAt int64
	holes  slotSet
	holeBy []int16
	holeAt []int64
	kept   slotSet

	mu      sync.Mutex
	running bool            // the loop runs (Serve started it, it has not stopped)
	waiters []chan struct{} // refreshMap's, closed by the next refresh
	kick    chan struct{}
}

// slotSet is a set of slots, one bit each.
type slotSet [engine.NumSlots / 64]uint64

func (b *slotSet) addRange(s, e int) {
	for s <= e {
		w, lo := s>>6, s&63
		hi := min(e-s+lo, 63) // the range's last bit in this word
		b[w] |= (^uint64(0) >> (63 - hi)) &^ (1<<lo - 1)
		s += hi - lo + 1
	}
}

func (b *slotSet) has(slot int) bool { return b[slot>>6]&(1<<(slot&63)) != 0 }

func (b *slotSet) remove(slot int) { b[slot>>6] &^= 1 << (slot & 63) }

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

// groupAsks is where a request to group index's leader goes first: its
// members' inter-node addresses as the map has them, the leader's first
// (nil when the map has no such group; engine lock held).
func (s *Server) groupAsks(index int) []string {
	for _, g := range s.cmap.groups {
		if g.index == index {
			return g.asks
		}
	}
	return nil
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
	return append([]mapGroup{own}, s.claimsOnce(&own)...)
}

// claimsOnce is the map's groups with each slot shown by one group only
// (engine lock held). Between a handover's OWN and the source's DONE the
// target's answer and the source's can both claim a slot (the source
// hides it only once told, finishHere), and a CLUSTER SLOTS with one slot
// in two ranges failed ioredis's check of the map (TestClusterShardsNode):
// a slot frozen here goes to the map's claimant (the target: OWN came
// first), any other of this group's stays here, and two of the map's
// claims go as the routing sends them (installMap: the lower index).
func (s *Server) claimsOnce(own *mapGroup) []mapGroup {
	m := &s.cmap
	var mine slotSet
	for _, r := range own.owned {
		mine.addRange(r[0], r[1])
	}
	claims, overlap := 0, false
	for _, g := range m.groups {
		claims += g.slotCount()
	}
	for w := range mine {
		overlap = overlap || mine[w]&m.cover[w] != 0
	}
	if !overlap && claims == m.cover.count() {
		return m.groups
	}
	var shownHere slotSet
	for slot := range engine.NumSlots {
		if mine.has(slot) && !(m.owner != nil && m.owner[slot] >= 0 && s.slotFrozen(slot)) {
			shownHere.addRange(slot, slot)
		}
	}
	own.owned = shownHere.ranges()
	out := slices.Clone(m.groups)
	for i := range out {
		var b slotSet
		for _, r := range out[i].owned {
			for slot := r[0]; slot <= r[1]; slot++ {
				if m.owner != nil && int(m.owner[slot]) == i && !shownHere.has(slot) {
					b.addRange(slot, slot)
				}
			}
		}
		out[i].owned = b.ranges()
	}
	return out
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
		askView: func(addr string) (groupView, error) { return s.askViewWait(addr, mapAskWait) },
		watchView: func(addr string, shape uint64) (groupView, error) {
			return s.watchViewWait(addr, shape, mapAskWait)
		},
		watchers: map[int]chan struct{}{}, moved: make(chan struct{}, 1)}
	defer r.stopWatchers()
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
	r.refresh(true) // at once: a node just started has no map until then
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-r.moved:
		case <-m.kick:
		}
		m.mu.Lock()
		waiters := m.waiters
		m.waiters = nil
		m.mu.Unlock()
		r.refresh(len(waiters) > 0)
		for _, w := range waiters {
			close(w)
		}
	}
}

// groupSeen is what the refresh keeps of a group between periods.
type groupSeen struct {
	view  groupView
	at    time.Time // of the last answer
	shape uint64    // viewShape(&view)
}

func newSeen(v groupView, at time.Time) *groupSeen {
	return &groupSeen{view: v, at: at, shape: viewShape(&v)}
}

// mapRefresher is the refresh loop's own state. The other groups' views
// come from a watcher per group (watchGroup): it asks the group with the
// shape of the view it holds, the answer is held until the view moves
// (viewWatch), and a moved view wakes the loop (moved), which installs
// the map every period from what the watchers hold. A refresh asked for
// (refreshMap: after a MEET, an assignment, a handover step) asks every
// group at once as well (full).
type mapRefresher struct {
	s     *Server
	mu    sync.Mutex        // seen, list and dirSeeds, shared with the watchers
	list  []engine.DirGroup // the directory's groups, as last learnt
	seen  map[int]*groupSeen
	empty bool // the installed map has no group
	stop  <-chan struct{}

	dirSeeds  []string
	watchers  map[int]chan struct{}                              // by group index: closed to stop its watcher
	moved     chan struct{}                                      // a watcher's view moved
	askView   func(addr string) (groupView, error)               // one ask, bounded (mapAskWait)
	watchView func(addr string, shape uint64) (groupView, error) // one held ask (viewHold + mapAskWait)
}

// refresh learns the group list (this group's engine when it holds the
// directory, else the directory group's view) and, when full, asks every
// other group for its view, then installs the map from the views held.
// Nothing is asked with the engine lock held; a group that does not
// answer keeps its last answer.
func (r *mapRefresher) refresh(full bool) {
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
	r.mu.Lock()
	seen0 := r.seen[0]
	r.dirSeeds = my.shard.DirSeeds
	r.mu.Unlock()
	if my.shard.Index < 0 {
		r.stopWatchers()
		r.mu.Lock()
		r.list, r.seen = nil, map[int]*groupSeen{}
		r.mu.Unlock()
	} else {
		if my.shard.Directory {
			r.mu.Lock()
			r.list = my.groups
			r.mu.Unlock()
		} else if full || seen0 == nil {
			if v, ok := r.ask(0, seen0, my.shard.DirSeeds); ok {
				r.mu.Lock()
				r.seen[0] = newSeen(v, now)
				r.mu.Unlock()
			}
		}
		r.mu.Lock()
		if !my.shard.Directory && r.seen[0] != nil {
			r.list = r.seen[0].view.groups
		}
		r.mu.Unlock()
		if full {
			r.askOthers(my.shard, now)
		}
		r.forget()
		r.watch(my.shard)
	}
	r.mu.Lock()
	groups := r.groups(my.shard.Index, now)
	r.mu.Unlock()
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
		m.prev, m.holes, m.holeBy, m.holeAt = nil, slotSet{}, nil, nil
		return groups
	}
	if m.holeBy == nil {
		m.holeBy, m.holeAt = make([]int16, engine.NumSlots), make([]int64, engine.NumSlots)
	}
	ns := now.UnixNano()
	// what each answer claims now, in the order of the last claimant's
	// precedence (a group's answer after this group's engine)
	var claimed slotSet // their union
	claim := func(index int, ranges [][2]int) groupClaim {
		c := groupClaim{index: index}
		for _, r := range ranges {
			c.slots.addRange(r[0], r[1])
			claimed.addRange(r[0], r[1])
		}
		return c
	}
	claims := []groupClaim{claim(own, ownSlots)}
	m.kept = claims[0].slots
	for _, g := range groups {
		if g.moved != "" {
			claims = append(claims, claim(g.index, g.owned))
		}
	}
	fill := map[int]*slotSet{} // by index: the slots given back to it
	for w := range claimed {
		// claimed at the last refresh and by nobody now: a hole since then
		for gone := m.prev0(w) &^ claimed[w]; gone != 0; gone &= gone - 1 {
			slot := w<<6 | bits.TrailingZeros64(gone)
			for i := len(m.prev) - 1; i >= 0; i-- {
				if m.prev[i].slots.has(slot) {
					m.holeBy[slot] = int16(m.prev[i].index)
					break
				}
			}
			m.holeAt[slot] = m.prevAt
			m.holes[w] |= 1 << (slot & 63)
		}
		m.holes[w] &^= claimed[w]
		for h := m.holes[w]; h != 0; h &= h - 1 {
			slot := w<<6 | bits.TrailingZeros64(h)
			switch index := int(m.holeBy[slot]); {
			case ns-m.holeAt[slot] >= int64(holeGrace):
				m.holes.remove(slot)
			case index == own:
				m.kept.addRange(slot, slot)
			default:
				if fill[index] == nil {
					fill[index] = &slotSet{}
				}
				fill[index].addRange(slot, slot)
			}
		}
	}
	m.prev, m.prevAt = claims, ns
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

// groupClaim is the slots one answer (or this group's engine) claimed.
type groupClaim struct {
	index int
	slots slotSet
}

// prev0 is word w of the union of the last refresh's claims.
func (m *clusterMap) prev0(w int) uint64 {
	var u uint64
	for i := range m.prev {
		u |= m.prev[i].slots[w]
	}
	return u
}

// forgetClaims drops ranges from the hole fill (engine lock held):
// slots this group gave up by DELSLOTS are not kept.
func (m *clusterMap) forgetClaims(ranges [][2]int) {
	for _, r := range ranges {
		for slot := r[0]; slot <= r[1]; slot++ {
			m.kept.remove(slot)
			m.holes.remove(slot)
			for i := range m.prev {
				m.prev[i].slots.remove(slot)
			}
		}
	}
}

// watch runs a watcher for every other group of the list and stops
// those of groups it no longer lists.
func (r *mapRefresher) watch(own engine.ShardRecord) {
	r.mu.Lock()
	want := map[int]bool{}
	for _, g := range r.list {
		if g.Index != own.Index {
			want[g.Index] = true
		}
	}
	if !own.Directory {
		want[0] = true
	}
	r.mu.Unlock()
	for i, stop := range r.watchers {
		if !want[i] {
			close(stop)
			delete(r.watchers, i)
		}
	}
	for i := range want {
		if r.watchers[i] == nil {
			stop := make(chan struct{})
			r.watchers[i] = stop
			go r.watchGroup(i, stop)
		}
	}
}

func (r *mapRefresher) stopWatchers() {
	for i, stop := range r.watchers {
		close(stop)
		delete(r.watchers, i)
	}
}

// watchGroup keeps group index's view: one held ask after another, at
// least mapPeriod apart (a member that does not hold answers at once: an
// older binary, or a failure). It is not waited for when the server
// stops: an ask in flight ends within its bound and changes nothing.
func (r *mapRefresher) watchGroup(index int, stop chan struct{}) {
	for {
		start := time.Now()
		r.mu.Lock()
		prev := r.seen[index]
		var seeds []string
		for _, g := range r.list {
			if g.Index == index {
				seeds = g.Seeds
			}
		}
		if index == 0 && len(r.dirSeeds) > 0 {
			seeds = r.dirSeeds
		}
		r.mu.Unlock()
		var shape uint64
		if prev != nil {
			shape = prev.shape
		}
		v, ok := r.askWith(index, prev, seeds, func(addr string) (groupView, error) { return r.watchView(addr, shape) })
		select {
		case <-stop:
			return
		case <-r.stop:
			return
		default:
		}
		if ok {
			g := newSeen(v, time.Now())
			r.mu.Lock()
			r.seen[index] = g
			r.mu.Unlock()
			if g.shape != shape {
				select {
				case r.moved <- struct{}{}:
				default:
				}
			}
		}
		t := time.NewTimer(mapPeriod - time.Since(start))
		select {
		case <-stop:
			t.Stop()
			return
		case <-r.stop:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// forget drops the views of the groups the directory no longer lists.
func (r *mapRefresher) forget() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.seen {
		if !slices.ContainsFunc(r.list, func(g engine.DirGroup) bool { return g.Index == i }) {
			delete(r.seen, i)
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
	r.mu.Lock()
	list := slices.Clone(r.list)
	seen := maps.Clone(r.seen)
	r.mu.Unlock()
	for _, g := range list {
		if g.Index == own.Index || (g.Index == 0 && !own.Directory) {
			continue
		}
		prev := seen[g.Index]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, ok := r.ask(g.Index, prev, g.Seeds); ok {
				mu.Lock()
				got[g.Index] = newSeen(v, now)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	r.mu.Lock()
	for i, g := range got {
		if cur := r.seen[i]; cur == nil || !cur.at.After(g.at) {
			r.seen[i] = g
		}
	}
	r.mu.Unlock()
	r.forget()
}

// ask asks group index for its view: its last known leader first, then
// the members its last answer named, then seeds; an answer from a
// follower that names a leader is followed by an ask of that leader (the
// map shows the members a leader knows). An answer from a node in
// another group (an address reused) is not the group's. prev is the
// group's last answer (nil: none yet).
func (r *mapRefresher) ask(index int, prev *groupSeen, seeds []string) (groupView, bool) {
	return r.askWith(index, prev, seeds, r.askView)
}

// askWith is ask with askView's place taken by one.
func (r *mapRefresher) askWith(index int, prev *groupSeen, seeds []string, one func(addr string) (groupView, error)) (groupView, bool) {
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
		v, err := one(a)
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
		mg := mapGroup{index: g.Index, nodes: viewNodes(&seen.view), owned: seen.view.owned, asks: seen.view.leaderFirst()}
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
