package server

import (
	"encoding/binary"
	"slices"
	"strconv"
	"sync"
	"time"

	"limitdb/cluster"
	"limitdb/engine"
)

// Cluster-wide state over several groups (server/CLUSTER_MODE.md,
// "Cluster-wide state over several groups"; engine/cluster_global.go).
// In a cluster of several groups the directory group holds the policy
// registry, the ACL users, the script cache, the function libraries and
// the cluster-wide CONFIG parameters:
//   - a change received by any node of the cluster (clusterWide) runs on
//     the directory group's leader: the node sends the unit (ACL user,
//     protocol, argv) as a global-unit query ('w'), the directory's
//     leader runs it as that user as it runs a follower's forwarded unit
//     (ACL checks, IFVERSION and errors are the directory's), waits for
//     its commit, pushes, and answers the reply; the query is sent to
//     another member only when it surely did not run (askLeaderOnce);
//   - the push: the directory's leader stamps a new version of its
//     cluster-wide state when its content changed (LIMITDB.GLOBAL STAMP)
//     and sends the version and content ('g') to every other group's
//     leader, which records LIMITDB.GLOBAL LOAD as one unit of its own
//     log and answers once it is committed. The change's reply waits for
//     every group's answer, or leader-wait-ms for one that does not
//     answer;
//   - the catch-up: every second the directory's leader stamps if its
//     content changed unseen (a change inside a script or MULTI of the
//     directory group, a leader that failed between a change and its
//     stamp) and pushes to every group not known to hold its version.
//
// Inside MULTI a cluster-wide change is refused in every group
// (routeGlobal); inside a script it is refused in a group other than the
// directory (it would change that group only), and in the directory
// group it runs there and reaches the others by the next push.
// A group in no cluster, or alone in one, changes nothing of this.

const (
	queryGlobalUnit byte = 'w' // a cluster-wide change for the directory's leader
	queryGlobalPush byte = 'g' // the directory's cluster-wide state for a group's leader
)

const (
	// globalCatchUp is the period of the directory leader's catch-up
	globalCatchUp = time.Second
	// globalUnitWait bounds the wait for the lock of the directory's
	// leader (a long script) before it answers busy
	globalUnitWait = dirAskWait
)

const (
	errGlobalInMulti     = "ERR cluster-wide changes (RL.POLICY, ACL, SCRIPT LOAD/FLUSH, FUNCTION, cluster-wide CONFIG SET) cannot run inside MULTI in a cluster of several groups"
	errGlobalUnreachable = "ERR the cluster's directory did not answer in time (no leader of its group reachable): the change may or may not have been made"
	errGlobalMalformed   = "ERR malformed reply from the directory"
	errGlobalPushedToDir = "ERR this group holds a directory: it takes no other group's cluster-wide state"
)

// clusterWideCmds are the commands that change the cluster-wide state
// (CONFIG SET only for the cluster-wide parameters: clusterWide).
var clusterWideCmds = map[string]bool{
	"rl.policy|set": true, "rl.policy|del": true, "rl.policy|apply": true, "rl.policy|override": true,
	"rl.policy|unoverride": true, "rl.policy|restore": true,
	"acl|setuser": true, "acl|deluser": true, "acl|load": true,
	"script|load": true, "script|flush": true,
	"function|load": true, "function|delete": true, "function|flush": true, "function|restore": true,
}

// clusterWideID is clusterWideCmds by command ID, config|set included
// (what exec and runsOffLoop test for every command of a cluster of
// several groups: an index, not a map lookup), built on first use, once
// every package's init registered its commands (ACL's and CONFIG's are
// this package's).
var clusterWideID = sync.OnceValue(func() []bool {
	ids := make([]bool, engine.NumCommandIDs())
	for _, c := range engine.Commands() {
		for _, sub := range c.Subs {
			if clusterWideCmds[sub.Name] || sub.Name == "config|set" {
				ids[sub.ID] = true
			}
		}
	}
	return ids
})

// mayBeClusterWide: cmd is one of the cluster-wide commands (CONFIG SET
// whatever it sets).
func mayBeClusterWide(cmd *engine.Command) bool {
	ids := clusterWideID()
	return cmd.ID < len(ids) && ids[cmd.ID]
}

// clusterWide reports whether cmd changes the cluster-wide state.
func clusterWide(cmd *engine.Command, argv [][]byte) bool {
	if !mayBeClusterWide(cmd) {
		return false
	}
	if cmd.Name == "config|set" {
		shared, _ := sharedConfig(argv)
		return shared
	}
	return true
}

// globalState is the server's part of the push (its own lock, never
// held with the engine lock's wait).
type globalState struct {
	stampMu sync.Mutex // one stamp at a time (stampGlobal)
	// acked (mu): per group index, the newest version it answered holding
	mu    sync.Mutex
	acked map[int]int64
	kick  chan struct{} // a push is due (a change that did not push itself)
}

// routeGlobal runs a cluster-wide change of a cluster of several groups
// where it belongs (lock held; the caller checked SeveralGroups and
// clusterWide). It returns false when the command is to run here as any
// other: on the directory's leader for a global unit, or in the
// directory group for a follower's forwarded unit (the next push takes
// it to the others).
func (s *Server) routeGlobal(cl *client, cmd *engine.Command, argv [][]byte) bool {
	if cl.globalUnit {
		return false
	}
	if cl.ctx.InMulti {
		cl.w.Error(errGlobalInMulti)
		return true
	}
	if cl.connless() {
		if s.eng.ElsewhereClusterWide() {
			cl.w.Error(engine.ErrClusterWideHere)
			return true
		}
		s.kickGlobal()
		return false
	}
	req := []byte{queryGlobalUnit}
	req = appendQueryString(req, cl.user.Name)
	req = binary.AppendUvarint(req, uint64(cl.w.Proto))
	req = binary.AppendUvarint(req, uint64(cl.db))
	req = binary.AppendUvarint(req, uint64(len(argv)))
	for _, a := range argv {
		req = appendQueryBytes(req, a)
	}
	sh := s.eng.Shard()
	local := sh.Directory && s.node.Serving()
	// the leader the map knows first: a member asked first that answers
	// "not the leader" costs a round trip, and one that died may cost the
	// change (askLeaderOnce: an outcome unknown is not sent again)
	addrs := append(slices.Clone(s.groupAsks(0)), sh.DirSeeds...)
	if sh.Directory {
		v := s.myView()
		addrs = v.leaderFirst()
	}
	bound := 2*s.leaderWait() + globalUnitWait
	s.door.Unlock()
	var st byte
	var body []byte
	if local {
		st, body = s.answerGlobalUnit(req[1:])
	}
	if !local || st == queryNotLeader {
		st, body = s.askLeaderOnce(addrs, req, bound)
	}
	s.door.Lock()
	s.resumeNow(cl)
	switch {
	case st == cluster.QueryOK:
		cl.w.B = append(cl.w.B, body...)
	case st == queryRefused && len(body) > 0:
		cl.w.Error(string(body))
	case st == queryMalformedReq || st == queryUnknownKind:
		cl.w.Error(errGlobalMalformed)
	default:
		cl.w.Error(errGlobalUnreachable)
	}
	return true
}

// answerGlobalUnit runs another node's cluster-wide change on this, the
// directory group's leader (query 'w'): as the unit's ACL user and
// protocol, then, once committed, pushes to the other groups and answers
// the reply. A node that does not lead answers queryNotLeader with the
// leader's address; one whose group is not the directory refuses.
func (s *Server) answerGlobalUnit(b []byte) (byte, []byte) {
	r := queryReader{b: b, ok: true}
	user := r.str()
	proto := r.uvarint()
	db := r.uvarint()
	n := r.count(1)
	argv := make([][]byte, 0, n)
	for range n {
		argv = append(argv, []byte(r.str()))
	}
	if !r.ok || len(r.b) != 0 || n == 0 || db >= engine.NumDBs {
		return queryMalformedReq, nil
	}
	ran, changed := false, false
	st, out := s.onLeader(globalUnitWait, func() (byte, []byte) {
		if !s.eng.Shard().Directory {
			return queryRefused, []byte(engine.ErrDirNone)
		}
		ran = true
		recs := s.door.Records
		out := s.runGlobalUnit(user, int(proto), int(db), argv)
		changed = s.door.Records != recs
		return cluster.QueryOK, out
	})
	switch {
	case st == queryNotLeader && ran:
		// it ran, and the leadership ended before its commit: the
		// outcome is unknown, so the asker must not run it again
		return queryRefused, []byte(errLeadershipLost)
	case st == cluster.QueryOK && changed:
		s.pushGlobal(false)
	}
	return st, out
}

// runGlobalUnit runs a cluster-wide change as the given ACL user (an
// unknown one: the default, unauthenticated) and protocol (lock held)
// and returns its reply.
func (s *Server) runGlobalUnit(user string, proto, db int, argv [][]byte) (out []byte) {
	cl := s.newFwdClient()
	cl.globalUnit = true
	cl.db, cl.w.Proto = db, proto
	if u := s.auth.acl.User(user); u != nil {
		cl.user, cl.authed = u, true
	} else {
		cl.user, cl.authed = s.auth.defaultUser.Load(), false
	}
	cl.ctx.Now, _ = s.door.Now()
	defer func() {
		// contained as a connection's command would be: this runs in
		// the query's goroutine
		if r := recover(); r != nil {
			if cl.cur == nil {
				cl.cur = &engine.Command{Name: "global"}
			}
			s.containPanic(cl, r, 0)
			out = cl.w.B
		}
	}()
	s.dispatch(cl, argv)
	s.settleAsync()
	return cl.w.B
}

// kickGlobal asks the catch-up loop for a push now (lock held or not).
func (s *Server) kickGlobal() {
	select {
	case s.global.kick <- struct{}{}:
	default:
	}
}

// globalLoop is the directory leader's catch-up: every globalCatchUp, or
// when kicked, pushGlobal (which does nothing on any other node).
func (s *Server) globalLoop() {
	defer s.wg.Done()
	t := time.NewTicker(globalCatchUp)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-s.global.kick:
		}
		if s.node.Serving() {
			s.pushGlobal(true)
		}
	}
}

// pushGlobal brings every other group to this directory's cluster-wide
// state (the lock is not held): it stamps a new version when the content
// is not the stamped one, waits for that commit, then pushes the version
// and content to the leader of every group not known to hold it, in
// parallel, each for at most leader-wait-ms; with probe (the catch-up),
// it first asks a group known to hold it for its version (a push
// without content), and pushes when the group has less (its state
// lost). Only the stamp is one at a time (a push waits for no other: a
// group's leader ignores an older version). It does nothing unless this
// node leads the directory group of a cluster of several groups.
func (s *Server) pushGlobal(probe bool) {
	ver, content, groups, own, ok := s.stampGlobal()
	if !ok {
		return
	}
	ask := binary.AppendVarint([]byte{queryGlobalPush}, ver)
	push := append(ask[:len(ask):len(ask)], content...)
	wait := s.leaderWait()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var live []engine.PolicyLive // the groups' reported deadlines
	for _, g := range groups {
		known := s.ackedGlobal(g.Index) >= ver
		if g.Index == own || known && !probe {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var have int64
			var l []engine.PolicyLive
			ok := false
			if known {
				have, l, ok = s.askGlobal(g, ask, wait) // the probe
			}
			if !known || ok && have < ver {
				_, l, _ = s.askGlobal(g, push, wait)
			}
			mu.Lock()
			live = append(live, l...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	s.raiseLive(live)
}

// raiseLive records the other groups' live deadlines that are later than
// the directory's (LIMITDB.GLOBAL LIVE), so that its live-keys refusals
// count their keys, as of their last answer.
func (s *Server) raiseLive(live []engine.PolicyLive) {
	if len(live) == 0 || !s.door.LockOr(s.stop) {
		return
	}
	defer s.door.Unlock()
	if !s.node.Serving() || !s.eng.Shard().Directory {
		return
	}
	if args := s.eng.LiveRaises(live); len(args) > 0 {
		if msg := replyError(s.execEffect(append([][]byte{[]byte("LIMITDB.GLOBAL"), []byte("LIVE")}, args...))); msg != "" {
			s.log.Error("recording the groups' live deadlines failed", "err", msg)
		}
	}
}

// askGlobal sends a push (or, without content, a probe) to group g's
// leader and records the version it answered holding; it returns that and
// the group's live deadlines.
func (s *Server) askGlobal(g engine.DirGroup, req []byte, wait time.Duration) (int64, []engine.PolicyLive, bool) {
	st, body := s.askLeader(g.Seeds, req, wait, dirTryWait)
	if st != cluster.QueryOK {
		return 0, nil, false
	}
	r := queryReader{b: body, ok: true}
	have := r.varint()
	n := r.count(2)
	live := make([]engine.PolicyLive, 0, n)
	for range n {
		live = append(live, engine.PolicyLive{Name: r.str(), Until: r.varint()})
	}
	if !r.ok {
		return 0, nil, false
	}
	s.global.mu.Lock()
	s.global.acked[g.Index] = have
	s.global.mu.Unlock()
	return have, live, true
}

// stampGlobal is pushGlobal's first step, one at a time (stampMu): the
// version to push (stamped first if the content changed), the content,
// the directory's groups and this group's index; ok false on any node
// but the directory group's serving leader of several groups, or when
// the stamp did not commit.
func (s *Server) stampGlobal() (ver int64, content string, groups []engine.DirGroup, own int, ok bool) {
	s.global.stampMu.Lock()
	defer s.global.stampMu.Unlock()
	if !s.door.LockOr(s.stop) {
		return 0, "", nil, 0, false // (closing)
	}
	if !s.node.Serving() || !s.eng.Shard().Directory || !s.eng.SeveralGroups() {
		s.door.Unlock()
		return 0, "", nil, 0, false
	}
	content, digest := s.eng.GlobalContent()
	if g := s.eng.GlobalOf(); g.Digest != digest || g.Ver == 0 {
		if msg := replyError(s.execEffect(effectArgv("LIMITDB.GLOBAL", "STAMP", strconv.FormatUint(digest, 10)))); msg != "" {
			s.door.Unlock()
			s.log.Error("stamping the cluster-wide state failed", "err", msg)
			return 0, "", nil, 0, false
		}
	}
	ver, own, groups = s.eng.GlobalOf().Ver, s.eng.Shard().Index, s.eng.DirGroups()
	// what is pushed must be committed, the stamp included (this one, or
	// another change's still waiting for its commit): a version a new
	// leader could lose would be stamped again over other content, which
	// a group holding it would ignore
	ticket := s.node.Ticket()
	s.door.Unlock()
	if s.node.Wait(ticket) != nil {
		return 0, "", nil, 0, false
	}
	return ver, content, groups, own, true
}

// ackedGlobal is the newest version group index answered holding.
func (s *Server) ackedGlobal(index int) int64 {
	s.global.mu.Lock()
	defer s.global.mu.Unlock()
	if s.global.acked == nil {
		s.global.acked = map[int]int64{}
	}
	return s.global.acked[index]
}

// answerGlobalPush answers the directory leader's push (query 'g': the
// version, then the content) on a group's leader: LIMITDB.GLOBAL LOAD
// when the version is newer than the group's, committed before the
// answer, which is the version the group holds (varint) and its
// policies' live deadlines (a count, then name and deadline each).
// Without content (a probe) it only answers.
func (s *Server) answerGlobalPush(b []byte) (byte, []byte) {
	ver, k := binary.Varint(b)
	if k <= 0 || ver <= 0 {
		return queryMalformedReq, nil
	}
	content := b[k:]
	return s.onLeader(dirAskWait, func() (byte, []byte) {
		if s.eng.Shard().Directory {
			return queryRefused, []byte(errGlobalPushedToDir)
		}
		if ver > s.eng.GlobalOf().Ver && len(content) > 0 {
			argv := [][]byte{[]byte("LIMITDB.GLOBAL"), []byte("LOAD"), strconv.AppendInt(nil, ver, 10), content}
			if msg := replyError(s.execEffect(argv)); msg != "" {
				return queryRefused, []byte(msg)
			}
		}
		out := binary.AppendVarint(nil, s.eng.GlobalOf().Ver)
		live := s.eng.LiveDeadlines()
		out = binary.AppendUvarint(out, uint64(len(live)))
		for _, l := range live {
			out = appendQueryString(out, l.Name)
			out = binary.AppendVarint(out, l.Until)
		}
		return cluster.QueryOK, out
	})
}
