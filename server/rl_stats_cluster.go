package server

import (
	"encoding/binary"
	"net"
	"strconv"
	"sync"
	"time"

	"limitdb/cluster"
	"limitdb/engine"
)

// RL.STATS CLUSTER in a cluster: the decision counters are node-local
// (engine/rl_stats.go), so the node the client asks sums its own and every
// other member's, asked over the nodes' query stream (cluster/query.go)
// with the engine lock released; in a cluster of several groups, also
// every member of every other group, as the map knows them (its inter-node
// address: the host CLUSTER NODES shows with its bus port), all at once. A member that does not answer within
// rlStatsClusterWait is named in the reply's nodes_missing and left out
// of the sums. RL.STATS and RL.TOP take no read barrier on a follower:
// what they read is the node's own. Inside MULTI (whose block runs under one hold of the lock)
// the command answers this node's counters in the same shape.

// rlStatsClusterWait bounds the wait for the other members' counters.
const rlStatsClusterWait = time.Second

// nodeLocalRead reports whether cmd reads only this node's own state
// (RL.STATS, RL.TOP: the decision counters and sketches): in a cluster it
// runs here without a read barrier, so that a node cut off from the
// leader still says what it counted.
func nodeLocalRead(cmd *engine.Command) bool {
	return cmd.Name == "rl.stats" || cmd.Name == "rl.top"
}

// execNodeLocal runs a nodeLocalRead command in a cluster: RL.STATS
// CLUSTER asks the other nodes, the rest runs here. On a leader the reply
// waits for the ticket as a read's does (the counters may count a
// decision not yet committed).
func (s *Server) execNodeLocal(cl *client, cmd *engine.Command, argv [][]byte) {
	if engine.IsRLStatsCluster(argv) {
		s.rlStatsCluster(cl, argv)
	} else if engine.IsRLTopCluster(argv) && !cl.ctx.InMulti {
		s.rlTopCluster(cl, argv)
	} else {
		cl.ctx.DB = s.eng.DBs[cl.db]
		s.door.Exec(&cl.ctx, cmd, argv)
	}
	if s.gated() {
		cl.ticket = s.node.Ticket()
	}
}

// rlStatsCluster answers RL.STATS CLUSTER [name …] (engine lock held; it
// is released while the other members are asked).
func (s *Server) rlStatsCluster(cl *client, argv [][]byte) {
	names := argv[2:]
	rows, msg := s.eng.RLStatsOf(names)
	if msg != "" {
		cl.w.Error(msg)
		return
	}
	if cl.ctx.InMulti {
		engine.WriteRLStatsCluster(&cl.w, rows, 1, nil)
		return
	}
	req := []byte{queryRLStats}
	req = binary.AppendUvarint(req, uint64(len(names)))
	for _, n := range names {
		req = appendQueryBytes(req, n)
	}
	answers, missing := s.askEveryNode(req)
	nodes := 1
	for _, a := range answers {
		peer, ok := decodeRLStats(a.Body)
		if a.Status != cluster.QueryOK || !ok {
			missing = append(missing, a.Node)
			continue
		}
		rows = engine.AddRLStats(rows, peer)
		nodes++
	}
	engine.WriteRLStatsCluster(&cl.w, rows, nodes, missing)
}

// answerRLStats answers another member's RL.STATS CLUSTER.
func (s *Server) answerRLStats(b []byte) (byte, []byte) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return queryMalformedReq, nil
	}
	b = b[k:]
	names := make([][]byte, 0, n)
	for range n {
		var name []byte
		var ok bool
		if name, b, ok = readQueryBytes(b); !ok {
			return queryMalformedReq, nil
		}
		names = append(names, name)
	}
	// the asker waits rlStatsClusterWait at most: a script holding the
	// lock longer makes this node one of its nodes_missing, not a
	// goroutine waiting here for as long as the script runs
	t := time.NewTimer(rlStatsClusterWait)
	ok := s.door.LockOrTimer(t.C)
	t.Stop()
	if !ok {
		return queryBusy, nil
	}
	rows, msg := s.eng.RLStatsOf(names)
	s.door.Unlock()
	if msg != "" {
		return queryRefused, []byte(msg)
	}
	return cluster.QueryOK, encodeRLStats(rows)
}

// encodeRLStats: uvarint count, then per row the name (uvarint length,
// bytes) and the seven counters and since_ms as varints.
func encodeRLStats(rows []engine.RLStat) []byte {
	b := binary.AppendUvarint(nil, uint64(len(rows)))
	for i := range rows {
		r := &rows[i]
		b = appendQueryBytes(b, []byte(r.Policy))
		for _, v := range [...]int64{r.Requests, r.Units, r.Allowed, r.Denied, r.ShadowDenied, r.NearLimit, r.Errors, r.SinceMs} {
			b = binary.AppendVarint(b, v)
		}
	}
	return b
}

func decodeRLStats(b []byte) ([]engine.RLStat, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, false
	}
	b = b[k:]
	rows := make([]engine.RLStat, n)
	for i := range rows {
		r := &rows[i]
		name, rest, ok := readQueryBytes(b)
		if !ok {
			return nil, false
		}
		r.Policy, b = string(name), rest
		for _, p := range [...]*int64{&r.Requests, &r.Units, &r.Allowed, &r.Denied, &r.ShadowDenied, &r.NearLimit, &r.Errors, &r.SinceMs} {
			v, k := binary.Varint(b)
			if k <= 0 {
				return nil, false
			}
			*p, b = v, b[k:]
		}
	}
	return rows, len(b) == 0
}

// askEveryNode sends req to every other member of this group and every
// node of the map's other groups, within rlStatsClusterWait (the lock is
// held, and released meanwhile).
func (s *Server) askEveryNode(req []byte) (answers []cluster.PeerAnswer, missing []string) {
	others := s.otherGroupsNodes()
	s.door.Unlock()
	answers, missing = s.node.QueryPeers(req, rlStatsClusterWait)
	more, gone := s.queryNodes(others, req, rlStatsClusterWait)
	s.door.Lock()
	return append(answers, more...), append(missing, gone...)
}

// peerNode is a member of another group to ask: its CLUSTER NODES id and
// inter-node address.
type peerNode struct{ id, addr string }

// otherGroupsNodes is every member of every other group of the map (lock
// held; none in no cluster).
func (s *Server) otherGroupsNodes() []peerNode {
	var out []peerNode
	for _, g := range s.cmap.groups {
		for _, n := range g.nodes {
			out = append(out, peerNode{id: n.id, addr: net.JoinHostPort(n.host, strconv.Itoa(n.busPort))})
		}
	}
	return out
}

// queryNodes asks each node req concurrently, within timeout (the lock
// is not held); those that do not answer are missing, by id.
func (s *Server) queryNodes(nodes []peerNode, req []byte, timeout time.Duration) (answers []cluster.PeerAnswer, missing []string) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, body, err := s.node.QueryAddr(n.addr, req, timeout)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				missing = append(missing, n.id)
				return
			}
			answers = append(answers, cluster.PeerAnswer{Node: n.id, Status: st, Body: body})
		}()
	}
	wg.Wait()
	return answers, missing
}

// rlTopCluster answers RL.TOP name … CLUSTER (engine lock held; it is
// released while the others are asked, as for RL.STATS CLUSTER): every
// node's sketch of the policy, summed by key. Each node answers all the
// keys its sketch holds for the window, so the sum's first COUNT are
// those of the union (each within the sum of the nodes' error bounds).
func (s *Server) rlTopCluster(cl *client, argv [][]byte) {
	a, msg := engine.ParseRLTop(argv)
	if msg == "" && s.eng.Policies.Get(argv[1]) == nil {
		msg = engine.ErrNoSuchPolicy(argv[1])
	}
	if msg != "" {
		cl.w.Error(msg)
		return
	}
	own := s.eng.RLTop(a.Policy, rlTopAll, a.WindowMs, a.Requested, cl.ctx.Now)
	req := appendQueryString([]byte{queryRLTop}, a.Policy)
	req = binary.AppendVarint(req, a.WindowMs)
	req = append(req, boolByte(a.Requested))
	answers, missing := s.askEveryNode(req)
	lists := [][]engine.RLTopEntry{own}
	for _, ans := range answers {
		top, ok := decodeRLTop(ans.Body)
		if ans.Status != cluster.QueryOK || !ok {
			missing = append(missing, ans.Node)
			continue
		}
		lists = append(lists, top)
	}
	engine.WriteRLTopCluster(&cl.w, engine.AddRLTop(a.N, lists...), len(lists), missing)
}

// rlTopAll: every key a node's sketch holds (its 64 counters per bucket
// and their kin: far fewer).
const rlTopAll = 1 << 20

// answerRLTop answers another node's RL.TOP CLUSTER: its sketch's keys
// of the policy (none when it has no such policy: its registry may lag).
func (s *Server) answerRLTop(b []byte) (byte, []byte) {
	r := queryReader{b: b, ok: true}
	name := r.str()
	window := r.varint()
	requested := r.byte() == 1
	if !r.ok || len(r.b) != 0 {
		return queryMalformedReq, nil
	}
	t := time.NewTimer(rlStatsClusterWait)
	ok := s.door.LockOrTimer(t.C)
	t.Stop()
	if !ok {
		return queryBusy, nil
	}
	now, _ := s.door.Now()
	top := s.eng.RLTop(name, rlTopAll, window, requested, now)
	s.door.Unlock()
	out := binary.AppendUvarint(nil, uint64(len(top)))
	for _, e := range top {
		out = appendQueryString(out, e.Key)
		out = binary.AppendVarint(out, e.Count)
		out = binary.AppendVarint(out, e.Err)
	}
	return cluster.QueryOK, out
}

func decodeRLTop(b []byte) ([]engine.RLTopEntry, bool) {
	r := queryReader{b: b, ok: true}
	n := r.count(3)
	top := make([]engine.RLTopEntry, 0, n)
	for range n {
		top = append(top, engine.RLTopEntry{Key: r.str(), Count: r.varint(), Err: r.varint()})
	}
	return top, r.ok && len(r.b) == 0
}
