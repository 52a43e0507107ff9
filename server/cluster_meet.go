package server

import (
	"encoding/binary"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"limitdb/cluster"
	"limitdb/engine"
	"limitdb/resp"
)

// Several Raft groups as one cluster: CLUSTER MEET joins groups, the
// directory (engine/cluster_directory.go: one group's replicated state)
// arbitrates slot assignment, and the directory requests (query kind 'd')
// are how the other groups change it. Everything here runs on a group's
// leader (a follower forwards MEET, SET-CONFIG-EPOCH and the slot
// assignments: changesShared), off the event loop (waitsForCluster),
// and asks other nodes with the engine lock released, as RL.STATS
// CLUSTER does. A directory request is answered by the directory
// group's leader only: it runs the LIMITDB.DIRECTORY effect through the
// door, waits for its commit with the lock released and answers; every
// request is idempotent (a retried ADDGROUP gets the same index, a CLAIM
// of a slot the group has is fine, a RELEASE of a free one too), so the
// asker retries one whose outcome it did not learn.
//
// A command forwarded from a follower runs inside the leader's
// forwarded unit, whose ID is recorded before it runs: releasing the
// lock mid-unit lets that ID commit before the unit's effects, so a
// leader crash in between answers the follower's resend "already
// executed" (UNCERTAIN) rather than running it twice; MEET and ADDSLOTS
// are safe to run again by hand.

const queryDirectory byte = 'd'

// Directory request ops (the byte after the kind).
const (
	dirFound    byte = 'F' // found the directory here if this group is in no cluster (MEET's target)
	dirAddGroup byte = 'A' // seeds, ranges → the group's index (uvarint)
	dirClaim    byte = 'C' // index, ranges
	dirRelease  byte = 'R' // index, ranges
	dirSeeds    byte = 'S' // index, seeds
	dirMeetMe   byte = 'M' // an inter-node address: this group (in no cluster) meets that node's (in one)
)

const (
	// dirAskWait bounds one request to a group's leader, its retries
	// (redirects to the leader, an election, a busy lock) included
	dirAskWait = 2 * time.Second
	// meetMeWait bounds a MEET-ME request: the target group's leader
	// asks the asker's view and its directory in turn
	meetMeWait = 2*dirAskWait + viewWait
	// dirTryWait bounds one try of a directory request, so that a member
	// that accepts and never answers (a paused process) leaves time to
	// try the others; dirLockWait is how long the answerer waits for its
	// engine lock before it answers busy (the asker tries again)
	dirTryWait  = dirAskWait / 2
	dirLockWait = dirAskWait / 4
	// dirRetryPause is the pause before asking again when no member
	// named a leader (an election) or one was busy
	dirRetryPause = 50 * time.Millisecond
)

// Errors of CLUSTER MEET and of the assignments in a cluster of groups
// that Redis does not have (its MEET answers +OK at once and meets in
// the background); commands.md's CLUSTER section lists them.
const (
	errMeetNoAnswer     = "ERR CLUSTER MEET: no limitdb node answered at "
	errMeetOtherCluster = "ERR CLUSTER MEET: the node belongs to another cluster"
	errDirUnreachable   = "ERR the cluster's directory did not answer in time (no leader of its group reachable)"
	errGroupUnanswered  = "ERR CLUSTER MEET: the node's group did not answer in time (no leader reachable)"
	errLeadershipLost   = "TRYAGAIN this node stopped leading its group while the command waited: run it again"
	errNoDirEffect      = "ERR this build cannot record the directory (no LIMITDB.DIRECTORY)"
	errEpochKnowsNodes  = "ERR The user can assign a config epoch only when the node does not know any other node."
	errMeetInMulti      = "ERR CLUSTER MEET and the slot assignments of a group in a cluster cannot run inside MULTI (they wait for other groups)"
	errMeetSlotsMoved   = "ERR CLUSTER MEET: this group's slots changed while it met (an ADDSLOTS meanwhile): run it again"
	errMeetNotCluster   = "ERR CLUSTER MEET: the node runs with cluster-enabled no"
)

// errMeetAddr is Redis's reply to a MEET whose address is not one.
func errMeetAddr(ip, port string) string {
	return "ERR Invalid node address specified: " + ip + ":" + port
}

// cmdClusterMeet: CLUSTER MEET ip port [bus-port] — the bus port is the
// node's inter-node (Raft) port, port + 10000 by default as in Redis.
func cmdClusterMeet(s *Server, cl *client, argv [][]byte) {
	if len(argv) > 5 {
		cl.w.Error(engine.ErrSubcommandSyntax(argv))
		return
	}
	ip, portS := string(argv[2]), string(argv[3])
	port, err := strconv.ParseInt(portS, 10, 64)
	if err != nil {
		cl.w.Error("ERR Invalid TCP base port specified: " + portS)
		return
	}
	bus := port + 10000
	if len(argv) == 5 {
		if bus, err = strconv.ParseInt(string(argv[4]), 10, 64); err != nil {
			cl.w.Error("ERR Invalid TCP bus port specified: " + string(argv[4]))
			return
		}
	}
	if net.ParseIP(ip) == nil || port <= 0 || port > 65535 || bus <= 0 || bus > 65535 {
		cl.w.Error(errMeetAddr(ip, portS))
		return
	}
	if !s.replicated() {
		cl.w.Error(errNoCluster)
		return
	}
	if cl.ctx.InMulti {
		cl.w.Error(errMeetInMulti)
		return
	}
	s.door.Unlock()
	msg := s.meet(net.JoinHostPort(ip, strconv.FormatInt(bus, 10)), false)
	if msg == "" {
		t := time.NewTimer(meetMapWait)
		select {
		case <-s.refreshMap():
		case <-t.C:
		}
		t.Stop()
	}
	s.door.Lock()
	cl.ctx.Now, _ = s.door.Now()
	if msg != "" {
		cl.w.Error(msg)
		return
	}
	cl.w.OK()
}

// cmdClusterSetConfigEpoch: CLUSTER SET-CONFIG-EPOCH epoch — +OK after
// Redis's checks: a group's config epoch is derived (its index + 1), so
// there is nothing to set; redis-cli --cluster create sends it to each
// node before meeting them.
func cmdClusterSetConfigEpoch(s *Server, cl *client, argv [][]byte) {
	epoch, ok := engine.ParseIntB(argv[2])
	switch {
	case !ok:
		cl.w.Error(engine.ErrNotInt)
	case epoch < 0:
		cl.w.Error("ERR Invalid config epoch specified: " + strconv.FormatInt(epoch, 10))
	case s.eng.Shard().Index >= 0:
		cl.w.Error(errEpochKnowsNodes)
	default:
		cl.w.OK()
	}
}

// meetMapWait bounds MEET's wait for this node's map of the cluster to
// include what the MEET changed, so that CLUSTER NODES right after it
// lists the other group (redis-cli --cluster create reads it next).
const meetMapWait = time.Second

// seeds are the inter-node addresses of the members of the view's group.
func (v *groupView) seeds() []string {
	out := make([]string, 0, len(v.members))
	for _, m := range v.members {
		out = append(out, m.raftAddr)
	}
	return out
}

// leaderFirst is seeds with the leader's first, where a request to the
// group's leader goes first.
func (v *groupView) leaderFirst() []string {
	out := v.seeds()
	if l := v.leaderRaft(); l != "" {
		out = append([]string{l}, out...)
	}
	return out
}

// dirAddrs are the directory group's inter-node addresses as the view
// says (nil for a group in no cluster).
func (v *groupView) dirAddrs() []string {
	switch {
	case v.shard.Directory:
		return v.seeds()
	case v.shard.Index >= 0:
		return v.shard.DirSeeds
	}
	return nil
}

// selfRaft is the inter-node address of the member that answered.
func (v *groupView) selfRaft() string {
	for _, m := range v.members {
		if m.raftID == v.self {
			return m.raftAddr
		}
	}
	return ""
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// sameGroup: the two views are of one group (a member in both).
func sameGroup(a, b *groupView) bool {
	for _, m := range b.members {
		if m.raftID == a.self {
			return true
		}
	}
	return overlaps(a.seeds(), b.seeds())
}

// sameCluster: the two groups' directories are one (their addresses
// overlap, or a directory lists the other group).
func sameCluster(a, b *groupView) bool {
	if overlaps(a.dirAddrs(), b.dirAddrs()) {
		return true
	}
	for _, g := range a.groups {
		if overlaps(g.Seeds, b.seeds()) {
			return true
		}
	}
	for _, g := range b.groups {
		if overlaps(g.Seeds, a.seeds()) {
			return true
		}
	}
	return false
}

// meet makes this group and the group of the node at the inter-node
// address target one cluster; "" when they are, else the error reply.
// The lock is not held. nested: a MEET-ME request runs it, which must
// not ask the other group back.
func (s *Server) meet(target string, nested bool) string {
	tv, err := s.askView(target)
	if err != nil {
		return errMeetNoAnswer + target
	}
	s.door.Lock()
	mine := s.myView()
	s.door.Unlock()
	switch {
	case sameGroup(&mine, &tv):
		return s.refreshSeeds(&mine, nil)
	case mine.shard.Index < 0:
		dir := tv.dirAddrs()
		if dir == nil {
			// the target's group is in no cluster either: it founds
			// the directory, and this group joins it
			if msg := s.askGroup(tv.leaderFirst(), []byte{queryDirectory, dirFound}, dirAskWait, dirTryWait, errGroupUnanswered); msg != "" {
				return msg
			}
			dir = tv.seeds()
		}
		return s.joinDirectory(&mine, dir)
	case tv.shard.Index < 0:
		if nested {
			return errMeetOtherCluster // (both moved meanwhile)
		}
		req := appendQueryString([]byte{queryDirectory, dirMeetMe}, mine.selfRaft())
		return s.askGroup(tv.leaderFirst(), req, meetMeWait, 0, errGroupUnanswered)
	case sameCluster(&mine, &tv):
		return s.refreshSeeds(&mine, &tv)
	}
	return errMeetOtherCluster
}

// refreshSeeds brings the addresses the cluster knows this group by up
// to date (members joined or left it since it joined): a MEET within
// the cluster records this group's members as its seeds in the
// directory, and, when tv is the view of the directory's group, that
// group's members as this group's DirSeeds. The lock is not held.
func (s *Server) refreshSeeds(mine, tv *groupView) string {
	sh := mine.shard
	if sh.Index < 0 {
		return ""
	}
	seeds := mine.seeds()
	if sh.Directory {
		for _, g := range mine.groups {
			if g.Index == sh.Index && sameAddrs(g.Seeds, seeds) {
				return ""
			}
		}
		return s.recordHere(effectArgv("LIMITDB.DIRECTORY", "SEEDS", strconv.Itoa(sh.Index), strings.Join(seeds, ",")))
	}
	req := binary.AppendUvarint([]byte{queryDirectory, dirSeeds}, uint64(sh.Index))
	req = appendQueryStrings(req, seeds)
	if msg := s.askGroup(sh.DirSeeds, req, dirAskWait, dirTryWait, errDirUnreachable); msg != "" {
		return msg
	}
	if tv == nil || !tv.shard.Directory || sameAddrs(tv.seeds(), sh.DirSeeds) {
		return ""
	}
	return s.recordHere(effectArgv("LIMITDB.DIRECTORY", "JOINED", strconv.Itoa(sh.Index), strings.Join(tv.seeds(), ",")))
}

// recordHere records an effect in this group's own log (this node
// leading) and waits for its commit: "" or the error reply. The lock is
// not held.
func (s *Server) recordHere(argv [][]byte) string {
	st, body := s.onLeader(0, func() (byte, []byte) { return effectAnswer(s.execEffect(argv)) })
	return answerError(st, body, errLeadershipLost)
}

// sameAddrs: a and b hold the same addresses, in any order.
func sameAddrs(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// answerError is "" for QueryOK, else refusal's text.
func answerError(st byte, body []byte, orElse string) string {
	if st == cluster.QueryOK {
		return ""
	}
	return refusal(st, body, orElse)
}

// joinDirectory adds this group (in no cluster) to the directory at dir
// (its group's addresses) and records its index here.
func (s *Server) joinDirectory(mine *groupView, dir []string) string {
	req := []byte{queryDirectory, dirAddGroup}
	req = appendQueryStrings(req, mine.seeds())
	req = appendQueryRanges(req, mine.owned)
	st, body := s.askLeader(dir, req, dirAskWait, dirTryWait)
	if st != cluster.QueryOK {
		return refusal(st, body, errDirUnreachable)
	}
	r := queryReader{b: body, ok: true}
	index := r.uvarint()
	if !r.ok {
		return errDirUnreachable
	}
	argv := effectArgv("LIMITDB.DIRECTORY", "JOINED", strconv.FormatUint(index, 10), strings.Join(dir, ","))
	st, body = s.onLeader(0, func() (byte, []byte) {
		// an ADDSLOTS here while the directory was asked assigned slots
		// the directory does not know are this group's: recorded as
		// joined, the group would own them beside another
		if !coveredBy(s.eng.OwnedSlots(), mine.owned) {
			return queryRefused, []byte(errMeetSlotsMoved)
		}
		return effectAnswer(s.execEffect(argv))
	})
	return answerError(st, body, errLeadershipLost)
}

// coveredBy: every slot of ranges is in one of within.
func coveredBy(ranges, within [][2]int) bool {
	var in [engine.NumSlots]bool
	for _, r := range within {
		for slot := r[0]; slot <= r[1]; slot++ {
			in[slot] = true
		}
	}
	for _, r := range ranges {
		for slot := r[0]; slot <= r[1]; slot++ {
			if !in[slot] {
				return false
			}
		}
	}
	return true
}

// refusal is the error text of a failed request: the refusal's own, or
// orElse.
func refusal(st byte, body []byte, orElse string) string {
	if st == queryRefused && len(body) > 0 {
		return string(body)
	}
	return orElse
}

// askGroup is askLeader for a request whose answer has no body: "" on
// QueryOK, else the error reply.
func (s *Server) askGroup(addrs []string, req []byte, bound, try time.Duration, orElse string) string {
	st, body := s.askLeader(addrs, req, bound, try)
	return answerError(st, body, orElse)
}

// askLeader sends req to the leader of a group, starting at addrs (its
// members' inter-node addresses): a member that does not lead names the
// leader, asked next; an unreachable one, the next address; a busy one,
// again after a pause; all within bound, each try within try (0: the
// rest of bound, for a request whose answer waits on others, as a
// MEET-ME's on its nested MEET or a cluster-wide change's on its push).
// The status is queryBusy when no leader answered in time. The lock is
// not held.
func (s *Server) askLeader(addrs []string, req []byte, bound, try time.Duration) (byte, []byte) {
	return s.askLeaderMode(addrs, req, bound, try, false)
}

// askLeaderOnce is askLeader for a request that is not idempotent (a
// cluster-wide change: FUNCTION LOAD, RL.POLICY SET … IFVERSION): it is
// sent to another address only after an answer that says it did not run
// (not the leader, busy) or a failure before it was sent whole
// (cluster.ErrNotSent); any other failure answers queryBusy at once, the
// outcome unknown. Resending it there ran a change twice: the directory's
// leader killed after its commit, the new leader ran it again
// (TestClusterGlobalFollowers).
func (s *Server) askLeaderOnce(addrs []string, req []byte, bound time.Duration) (byte, []byte) {
	return s.askLeaderMode(addrs, req, bound, 0, true)
}

func (s *Server) askLeaderMode(addrs []string, req []byte, bound, try time.Duration, once bool) (byte, []byte) {
	deadline := time.Now().Add(bound)
	var queue []string
	for {
		if len(queue) == 0 {
			if len(addrs) == 0 {
				return queryBusy, nil
			}
			queue = append(queue, addrs...)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return queryBusy, nil
		}
		a := queue[0]
		queue = queue[1:]
		if try > 0 {
			left = min(left, try)
		}
		st, body, err := s.node.QueryAddr(a, req, left)
		switch {
		case err != nil && once && !errors.Is(err, cluster.ErrNotSent):
			return queryBusy, nil
		case err != nil:
		case st == queryNotLeader && len(body) > 0 && string(body) != a:
			queue = append([]string{string(body)}, queue...)
		case st == queryNotLeader || st == queryBusy:
			time.Sleep(min(dirRetryPause, time.Until(deadline)))
		default:
			return st, body
		}
		if err != nil && len(queue) == 0 {
			time.Sleep(min(dirRetryPause, time.Until(deadline)))
		}
	}
}

// onLeader runs f with the engine lock on this group's serving leader,
// then waits for the commit of what f executed (lock released). wait
// bounds the wait for the lock (0: none); a lock not taken in time
// answers queryBusy, a node that does not lead queryNotLeader with the
// leader's inter-node address, a leadership lost before the commit
// queryNotLeader with no address (the outcome is unknown: the asker
// tries again, every request being idempotent).
func (s *Server) onLeader(wait time.Duration, f func() (byte, []byte)) (byte, []byte) {
	if wait > 0 {
		t := time.NewTimer(wait)
		ok := s.door.LockOrTimer(t.C)
		t.Stop()
		if !ok {
			return queryBusy, nil
		}
	} else {
		s.door.Lock()
	}
	if !s.node.Serving() {
		leader := s.node.Status().LeaderRaft
		s.door.Unlock()
		return queryNotLeader, []byte(leader)
	}
	recs := s.door.Records
	st, body := f()
	changed := s.door.Records != recs
	ticket := s.node.Ticket()
	s.door.Unlock()
	if changed {
		if err := s.node.Wait(ticket); err != nil {
			return queryNotLeader, nil
		}
	}
	return st, body
}

func effectArgv(args ...string) [][]byte {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	return argv
}

// appendRangeArgs appends start end pairs to an effect's argv.
func appendRangeArgs(argv [][]byte, ranges [][2]int) [][]byte {
	for _, r := range ranges {
		argv = append(argv, strconv.AppendInt(nil, int64(r[0]), 10), strconv.AppendInt(nil, int64(r[1]), 10))
	}
	return argv
}

// execEffect runs an engine effect (LIMITDB.SLOTS, LIMITDB.DIRECTORY)
// through the door as the server's own unit and returns its reply (the
// lock is held; on a Raft leader it is recorded for the log).
func (s *Server) execEffect(argv [][]byte) []byte {
	if engine.Lookup(argv[0]) == nil {
		msg := errNoSlotsEffect
		if strings.EqualFold(string(argv[0]), "limitdb.directory") {
			msg = errNoDirEffect
		}
		return []byte("-" + msg + "\r\n")
	}
	now, _ := s.door.Now()
	c := engine.Ctx{E: s.eng, DB: s.eng.DBs[0], W: resp.NewWriter(), Now: now}
	if cmd := c.Resolve(argv); cmd != nil {
		s.door.Exec(&c, cmd, argv)
	}
	return c.W.B
}

// replyError is the error text of a reply ("" when it is not one).
func replyError(b []byte) string {
	if len(b) == 0 || b[0] != '-' {
		return ""
	}
	return strings.TrimSuffix(string(b[1:]), "\r\n")
}

// effectAnswer is a directory request's answer to an effect's reply:
// refused with the error text, or QueryOK with the integer (ADDGROUP's
// index) as a uvarint.
func effectAnswer(b []byte) (byte, []byte) {
	if msg := replyError(b); msg != "" {
		return queryRefused, []byte(msg)
	}
	if len(b) > 1 && b[0] == ':' {
		n, err := strconv.ParseUint(strings.TrimSuffix(string(b[1:]), "\r\n"), 10, 64)
		if err == nil {
			return cluster.QueryOK, binary.AppendUvarint(nil, n)
		}
	}
	return cluster.QueryOK, nil
}

// answerDirectory answers a directory request (query kind 'd'): the op
// byte, then its fields.
func (s *Server) answerDirectory(b []byte) (byte, []byte) {
	if !s.clusterMode {
		return queryRefused, []byte(errMeetNotCluster)
	}
	r := queryReader{b: b, ok: true}
	op := r.byte()
	var argv [][]byte
	switch op {
	case dirFound:
		if !r.ok || len(r.b) != 0 {
			return queryMalformedReq, nil
		}
		return s.onLeader(dirLockWait, s.foundHere)
	case dirMeetMe:
		addr := r.str()
		if !r.ok || len(r.b) != 0 || addr == "" {
			return queryMalformedReq, nil
		}
		return s.answerMeetMe(addr)
	case dirAddGroup:
		seeds := r.strs()
		argv = appendRangeArgs(effectArgv("LIMITDB.DIRECTORY", "ADDGROUP", strings.Join(seeds, ",")), r.ranges())
	case dirClaim, dirRelease:
		sub := "CLAIM"
		if op == dirRelease {
			sub = "RELEASE"
		}
		index := r.uvarint()
		argv = appendRangeArgs(effectArgv("LIMITDB.DIRECTORY", sub, strconv.FormatUint(index, 10)), r.ranges())
	case dirSeeds:
		index := r.uvarint()
		argv = effectArgv("LIMITDB.DIRECTORY", "SEEDS", strconv.FormatUint(index, 10), strings.Join(r.strs(), ","))
	default:
		return queryUnknownKind, nil
	}
	if !r.ok || len(r.b) != 0 {
		return queryMalformedReq, nil
	}
	return s.onLeader(dirLockWait, func() (byte, []byte) { return effectAnswer(s.execEffect(argv)) })
}

// foundHere makes this group the directory unless it is already (a
// retried or concurrent MEET): FOUND with its members' addresses. The
// lock is held, on the leader.
func (s *Server) foundHere() (byte, []byte) {
	sh := s.eng.Shard()
	switch {
	case sh.Directory:
		return cluster.QueryOK, nil
	case sh.Index >= 0:
		return queryRefused, []byte(errMeetOtherCluster)
	}
	v := s.myView()
	return effectAnswer(s.execEffect(effectArgv("LIMITDB.DIRECTORY", "FOUND", strings.Join(v.seeds(), ","))))
}

// answerMeetMe: a group in a cluster asks this one (in none) to meet it
// (its CLUSTER MEET named a node of this group). Only the leader meets.
func (s *Server) answerMeetMe(addr string) (byte, []byte) {
	t := time.NewTimer(dirLockWait)
	ok := s.door.LockOrTimer(t.C)
	t.Stop()
	if !ok {
		return queryBusy, nil
	}
	if !s.node.Serving() {
		leader := s.node.Status().LeaderRaft
		s.door.Unlock()
		return queryNotLeader, []byte(leader)
	}
	s.door.Unlock()
	if msg := s.meet(addr, true); msg != "" {
		return queryRefused, []byte(msg)
	}
	s.refreshMap()
	return cluster.QueryOK, nil
}

// changeSlotsInCluster is CLUSTER ADDSLOTS and DELSLOTS (and their
// RANGE forms) in a group that belongs to a cluster, after the local
// checks (the lock is held, on the leader; it is released while the
// directory is asked). ADD claims the slots in the directory first, the
// commit point that makes two owners impossible, then records them
// here; DEL records them here, waits for that commit, then releases
// them. A group that holds the directory records both in its own log
// under one hold of the lock. A retried ADD of slots the directory gave
// this group before the group recorded them completes the add (the claim
// of slots the group has is fine).
func (s *Server) changeSlotsInCluster(cl *client, del bool, ranges [][2]int) {
	sh := s.eng.Shard()
	local := effectArgv("LIMITDB.SLOTS", "ADD")
	dir := effectArgv("LIMITDB.DIRECTORY", "CLAIM", strconv.Itoa(sh.Index))
	if del {
		local[1], dir[1] = []byte("DEL"), []byte("RELEASE")
	}
	local, dir = appendRangeArgs(local, ranges), appendRangeArgs(dir, ranges)
	if sh.Directory {
		first, second := dir, local
		if del {
			first, second = local, dir
		}
		if msg := replyError(s.execEffect(first)); msg != "" {
			cl.w.Error(msg)
			return
		}
		if del {
			s.cmap.forgetClaims(ranges)
		}
		s.finishSlots(cl, s.execEffect(second))
		return
	}
	if cl.ctx.InMulti {
		cl.w.Error(errMeetInMulti)
		return
	}
	op := dirClaim
	if del {
		op = dirRelease
		// the slots leave this group's log first: released before, a
		// slot another group claimed could still be executed here
		if msg := replyError(s.execEffect(local)); msg != "" {
			cl.w.Error(msg)
			return
		}
		s.cmap.forgetClaims(ranges)
		s.updateClusterState()
		ticket := s.node.Ticket()
		s.door.Unlock()
		err := s.node.Wait(ticket)
		s.door.Lock()
		if err != nil {
			cl.w.Error(errText(err))
			return
		}
	}
	req := binary.AppendUvarint([]byte{queryDirectory, op}, uint64(sh.Index))
	req = appendQueryRanges(req, ranges)
	s.door.Unlock()
	st, body := s.askLeader(sh.DirSeeds, req, dirAskWait, dirTryWait)
	s.door.Lock()
	cl.ctx.Now, _ = s.door.Now()
	if st != cluster.QueryOK {
		cl.w.Error(refusal(st, body, errDirUnreachable))
		return
	}
	if del {
		s.refreshMap()
		cl.w.OK()
		return
	}
	if !s.node.Serving() {
		// claimed, not recorded: ADDSLOTS again on the new leader completes it
		cl.w.Error(errLeadershipLost)
		return
	}
	s.finishSlots(cl, s.execEffect(local))
}

// finishSlots answers an assignment whose last effect replied b.
func (s *Server) finishSlots(cl *client, b []byte) {
	s.updateClusterState()
	if msg := replyError(b); msg != "" {
		cl.w.Error(msg)
		return
	}
	s.refreshMap()
	cl.w.OK()
}
