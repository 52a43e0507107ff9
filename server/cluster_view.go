package server

import (
	"encoding/binary"
	"errors"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"limitdb/cluster"
	"limitdb/engine"
)

// A group's view (query kind 'v'), what the nodes of a cluster of
// several groups exchange to build their map of the cluster (each node
// asks one member of every other group) and what CLUSTER MEET reads of
// the node it meets. Any member answers, from its applied state: the
// group's record in the cluster (engine.ShardRecord), the members it
// knows with their addresses (a leader knows every member's client
// address, a follower its own and the leader's), the slots the group
// owns and the directory's groups when it holds the directory.

const queryView byte = 'v'

// viewWait bounds one view query.
const viewWait = time.Second

// viewMember is one member of a group as its view says.
type viewMember struct {
	raftID, clientAddr, raftAddr string
	leader                       bool
	applied                      uint64
}

// groupView is a group's view as one of its members answered it.
type groupView struct {
	self     string // the Raft id of the member that answered
	shard    engine.ShardRecord
	members  []viewMember
	owned    [][2]int // the slots the group owns, merged ranges
	slotsGen uint64
	dirGen   uint64
	groups   []engine.DirGroup // the directory's groups (a directory's view)
}

// leaderRaft is the inter-node address of the group's leader, "" when
// the answering member knows none.
func (v *groupView) leaderRaft() string {
	for _, m := range v.members {
		if m.leader {
			return m.raftAddr
		}
	}
	return ""
}

// myView is this node's view of its group (engine lock held).
func (s *Server) myView() groupView {
	v := groupView{shard: s.eng.Shard(), owned: s.shownSlots(), slotsGen: s.eng.SlotsGen(), dirGen: s.eng.DirGen()}
	if v.shard.Directory {
		v.groups = s.eng.DirGroups()
	}
	if s.node == nil {
		return v
	}
	st := s.node.Status()
	v.self = st.NodeID
	for _, m := range st.Members {
		vm := viewMember{raftID: m.ID, clientAddr: m.ClientAddr, raftAddr: m.RaftAddr, leader: m.Leader, applied: m.Applied}
		if m.Leader && vm.clientAddr == "" {
			vm.clientAddr = st.LeaderClient
		}
		if m.ID == st.NodeID {
			vm.applied = st.AppliedIndex
		}
		v.members = append(v.members, vm)
	}
	return v
}

// viewCacheFor is how long an answered view is given again to the map's
// refresh asks (viewAny): every node of every other group asks a leader
// each 100 ms, and building the view (the engine lock, the node's
// status) took 13 % of a loaded leader's CPU in a 3 × 3 cluster
// (bench/RESULTS.md, "Shards"). A node's map is then at most this much
// older; CLUSTER MEET and the handover ask for a fresh view.
const viewCacheFor = 50 * time.Millisecond

// viewAny, the byte after the kind: a view at most viewCacheFor old will do.
const viewAny byte = 1

// viewWatch, the byte after the kind, then the shape (viewShape) of the
// view the asker holds: the answer waits until this node's view has
// another shape, or viewHold. The map's watchers (cluster_map.go) ask
// so: a group whose view does not change is asked twice a second, not
// ten times (at ten an idle 3 × 3 cluster spent 5 % of a core on the
// asks, bench/RESULTS.md "Idle groups"), and a change reaches the
// asker within a poll of it (viewPoller: mapPeriod) and a round trip.
const viewWatch byte = 2

// viewHold bounds a held answer: the asker's map shows the answering
// group fresh for mapLinkPeriods periods (1 s) after its last answer,
// and the replication offsets the view carries (not in the shape) are
// refreshed this often.
const viewHold = 500 * time.Millisecond

type cachedView struct {
	at    time.Time
	body  []byte
	shape uint64
}

// answerView answers another node's view query (req: the bytes after
// the kind).
func (s *Server) answerView(req []byte) (byte, []byte) {
	if len(req) == 9 && req[0] == viewWatch {
		return s.answerViewWatch(binary.BigEndian.Uint64(req[1:]))
	}
	c, st := s.viewNow(len(req) == 1 && req[0] == viewAny)
	if c == nil {
		return st, nil
	}
	return cluster.QueryOK, c.body
}

// viewNow is this node's view: the cached one when anyAge and it is
// under viewCacheFor old, else a new one (nil and queryBusy when the lock
// was not had within viewWait).
func (s *Server) viewNow(anyAge bool) (*cachedView, byte) {
	if c := s.viewCache.Load(); anyAge && c != nil && time.Since(c.at) < viewCacheFor {
		return c, cluster.QueryOK
	}
	t := time.NewTimer(viewWait)
	ok := s.door.LockOrTimer(t.C)
	t.Stop()
	if !ok {
		return nil, queryBusy
	}
	v := s.myView()
	s.door.Unlock()
	c := &cachedView{at: time.Now(), body: encodeView(&v), shape: viewShape(&v)}
	s.viewCache.Store(c)
	return c, cluster.QueryOK
}

// answerViewWatch answers the view once its shape is not seen, or after
// viewHold.
func (s *Server) answerViewWatch(seen uint64) (byte, []byte) {
	hold := time.NewTimer(viewHold)
	defer hold.Stop()
	for {
		c, st := s.viewNow(true)
		if c == nil {
			return st, nil
		}
		if c.shape != seen {
			return cluster.QueryOK, c.body
		}
		moved := s.viewWatchers.wait(s)
		select {
		case <-moved:
			s.viewWatchers.leave()
		case <-hold.C:
			s.viewWatchers.leave()
			if c, st = s.viewNow(true); c == nil {
				return st, nil
			}
			return cluster.QueryOK, c.body
		case <-s.stop:
			s.viewWatchers.leave()
			return queryBusy, nil
		}
	}
}

// viewShape is a hash of the view without the replication offsets,
// which move with every write: what a held answer waits to see change.
// Both ends compute it (the asker from the answer it decoded).
func viewShape(v *groupView) uint64 {
	c := *v
	c.members = slices.Clone(v.members)
	for i := range c.members {
		c.members[i].applied = 0
	}
	h := fnv.New64a()
	h.Write(encodeView(&c))
	return h.Sum64() | 1 // never 0: no shape seen yet
}

// viewWatchers are the held answers of this node: one poller builds
// the view every mapPeriod while any is held and wakes them all when its
// shape moves (one wake-up per period for every asker together).
type viewWatchers struct {
	mu      sync.Mutex
	held    int
	polling bool
	shape   uint64
	moved   chan struct{} // closed when the poller saw the shape move
	closed  bool          // the server closes: no poller starts (its wg.Add would race Close's Wait)
}

// wait holds one more answer and returns the channel closed at the next
// move of the shape, starting the poller when none runs.
func (w *viewWatchers) wait(s *Server) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.held++
	if w.moved == nil {
		w.moved = make(chan struct{})
	}
	if !w.polling && !w.closed {
		w.polling = true
		s.wg.Add(1)
		go s.viewPoller()
	}
	return w.moved
}

// close is Close's, before it waits for the server's goroutines: a held
// answer from then on waits for s.stop, which is closed.
func (w *viewWatchers) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}

func (w *viewWatchers) leave() {
	w.mu.Lock()
	w.held--
	w.mu.Unlock()
}

// viewPoller runs while answers are held (it ends a period after the
// last one left).
func (s *Server) viewPoller() {
	defer s.wg.Done()
	w := &s.viewWatchers
	t := time.NewTicker(mapPeriod)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			w.mu.Lock()
			w.polling = false
			w.mu.Unlock()
			return
		case <-t.C:
		}
		w.mu.Lock()
		if w.held == 0 {
			w.polling = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		c, _ := s.viewNow(true)
		if c == nil {
			continue
		}
		w.mu.Lock()
		if c.shape != w.shape {
			w.shape = c.shape
			close(w.moved)
			w.moved = make(chan struct{})
		}
		w.mu.Unlock()
	}
}

var errViewAnswer = errors.New("malformed view answer")

// askView asks the node at the inter-node address addr for its group's
// view as it is now (engine lock not held).
func (s *Server) askView(addr string) (groupView, error) {
	return s.askViewReq(addr, []byte{queryView}, viewWait)
}

// askViewWait is the map refresh's ask: at most wait, and a view up to
// viewCacheFor old will do.
func (s *Server) askViewWait(addr string, wait time.Duration) (groupView, error) {
	return s.askViewReq(addr, []byte{queryView, viewAny}, wait)
}

// watchViewWait is the watchers' ask: held by the other end until its
// view's shape is not shape, or viewHold; wait bounds the rest.
func (s *Server) watchViewWait(addr string, shape uint64, wait time.Duration) (groupView, error) {
	return s.askViewReq(addr, binary.BigEndian.AppendUint64([]byte{queryView, viewWatch}, shape), viewHold+wait)
}

func (s *Server) askViewReq(addr string, req []byte, wait time.Duration) (groupView, error) {
	st, body, err := s.node.QueryAddr(addr, req, wait)
	if err != nil {
		return groupView{}, err
	}
	if st != cluster.QueryOK {
		return groupView{}, errViewAnswer
	}
	v, ok := decodeView(body)
	if !ok {
		return groupView{}, errViewAnswer
	}
	return v, nil
}

func appendQueryString(b []byte, s string) []byte { return appendQueryBytes(b, []byte(s)) }

func appendQueryStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendQueryString(b, s)
	}
	return b
}

func appendQueryRanges(b []byte, rs [][2]int) []byte {
	b = binary.AppendUvarint(b, uint64(len(rs)))
	for _, r := range rs {
		b = binary.AppendUvarint(b, uint64(r[0]))
		b = binary.AppendUvarint(b, uint64(r[1]))
	}
	return b
}

// encodeView: the record (index as a varint, the directory flag, the
// directory's seeds), the members (raft id, client and raft addresses,
// leader flag, applied index), the owned ranges, the two generations,
// the directory's groups (index, seeds), the answering member's id.
func encodeView(v *groupView) []byte {
	b := binary.AppendVarint(nil, int64(v.shard.Index))
	b = append(b, boolByte(v.shard.Directory))
	b = appendQueryStrings(b, v.shard.DirSeeds)
	b = binary.AppendUvarint(b, uint64(len(v.members)))
	for _, m := range v.members {
		b = appendQueryString(b, m.raftID)
		b = appendQueryString(b, m.clientAddr)
		b = appendQueryString(b, m.raftAddr)
		b = append(b, boolByte(m.leader))
		b = binary.AppendUvarint(b, m.applied)
	}
	b = appendQueryRanges(b, v.owned)
	b = binary.AppendUvarint(b, v.slotsGen)
	b = binary.AppendUvarint(b, v.dirGen)
	b = binary.AppendUvarint(b, uint64(len(v.groups)))
	for _, g := range v.groups {
		b = binary.AppendUvarint(b, uint64(g.Index))
		b = appendQueryStrings(b, g.Seeds)
	}
	return appendQueryString(b, v.self)
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// queryReader reads the fields of a request or an answer; the first
// malformed field makes every later read fail (ok).
type queryReader struct {
	b  []byte
	ok bool
}

func (r *queryReader) uvarint() uint64 {
	if !r.ok {
		return 0
	}
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.ok = false
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *queryReader) varint() int64 {
	if !r.ok {
		return 0
	}
	v, k := binary.Varint(r.b)
	if k <= 0 {
		r.ok = false
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *queryReader) byte() byte {
	if !r.ok || len(r.b) == 0 {
		r.ok = false
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *queryReader) str() string {
	if !r.ok {
		return ""
	}
	s, rest, ok := readQueryBytes(r.b)
	if !ok {
		r.ok = false
		return ""
	}
	r.b = rest
	return string(s)
}

// count reads a count of items each at least min bytes long, refusing
// one the rest of the input cannot hold (a hostile length).
func (r *queryReader) count(min int) int {
	n := r.uvarint()
	if !r.ok || n > uint64(len(r.b)/min) {
		r.ok = false
		return 0
	}
	return int(n)
}

func (r *queryReader) strs() []string {
	n := r.count(1)
	var ss []string
	for range n {
		ss = append(ss, r.str())
	}
	return ss
}

func (r *queryReader) ranges() [][2]int {
	n := r.count(2)
	var rs [][2]int
	for range n {
		s, e := r.uvarint(), r.uvarint()
		if s > e || e >= engine.NumSlots {
			r.ok = false
		}
		rs = append(rs, [2]int{int(s), int(e)})
	}
	return rs
}

func decodeView(b []byte) (groupView, bool) {
	r := queryReader{b: b, ok: true}
	var v groupView
	v.shard.Index = int(r.varint())
	v.shard.Directory = r.byte() == 1
	v.shard.DirSeeds = r.strs()
	for range r.count(5) {
		v.members = append(v.members, viewMember{raftID: r.str(), clientAddr: r.str(), raftAddr: r.str(), leader: r.byte() == 1, applied: r.uvarint()})
	}
	v.owned = r.ranges()
	v.slotsGen = r.uvarint()
	v.dirGen = r.uvarint()
	for range r.count(2) {
		v.groups = append(v.groups, engine.DirGroup{Index: int(r.uvarint()), Seeds: r.strs()})
	}
	v.self = r.str()
	return v, r.ok && len(r.b) == 0
}
