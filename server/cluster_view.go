package server

import (
	"encoding/binary"
	"errors"
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

type cachedView struct {
	at   time.Time
	body []byte
}

// answerView answers another node's view query (req: the bytes after
// the kind).
func (s *Server) answerView(req []byte) (byte, []byte) {
	anyAge := len(req) == 1 && req[0] == viewAny
	if c := s.viewCache.Load(); anyAge && c != nil && time.Since(c.at) < viewCacheFor {
		return cluster.QueryOK, c.body
	}
	t := time.NewTimer(viewWait)
	ok := s.door.LockOrTimer(t.C)
	t.Stop()
	if !ok {
		return queryBusy, nil
	}
	v := s.myView()
	s.door.Unlock()
	body := encodeView(&v)
	s.viewCache.Store(&cachedView{at: time.Now(), body: body})
	return cluster.QueryOK, body
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
