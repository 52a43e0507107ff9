package server

import (
	"encoding/binary"
	"encoding/hex"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"limitdb/cluster"
	"limitdb/engine"
)

// A slot handover between two groups (server/CLUSTER_MODE.md, "Slot handover"):
// the queries the two groups' leaders exchange (kind 'm'), the source's
// side of them, the parking of requests for frozen slots, and the
// directory's move of the slots' owner. The target's leader drives the
// handover (cluster_migration.go); the source's leader answers it, and
// on its own finishes a frozen migration that the target's leader left
// (handoverLoop: it asks the target whether it owns the slots).

const queryHandover byte = 'm'

// Handover request ops (the byte after the kind).
const (
	hoFreeze  byte = 'F' // id, target index, ranges → floor (varint), digest (bytes): the source logs MIGRATE and FREEZE
	hoCapture byte = 'G' // id, first chunk → total (uvarint), chunks: the frozen slots' capture
	hoDone    byte = 'D' // id, the target leader's client address: the source logs DONE
	hoCancel  byte = 'X' // id: the source logs CANCEL (after the target's ABORT committed)
	hoProbe   byte = 'Q' // id, ranges → probe*: what the target holds of a migration
	hoDirMove byte = 'O' // from, to, ranges: the directory gives the slots to the target
)

// hoProbe's answers: the target owns every slot, imports the migration,
// or neither (it aborted the import, committed).
const (
	probeNeither   byte = 0
	probeOwns      byte = 1
	probeImporting byte = 2
)

const (
	// hoAskWait bounds one handover request to a group (its redirects
	// and retries included)
	hoAskWait = 3 * time.Second
	// captureAnswerMax bounds the chunks of one capture answer (under
	// the query stream's 16 MiB body bound); the target asks again from
	// the next chunk
	captureAnswerMax = 8 << 20
	// captureChunk bounds one LOAD chunk (a key bigger than that is a
	// chunk alone)
	captureChunk = 1 << 20
	// parkPoll is how often a parked request looks at its slot again
	// when nothing woke it (a follower applies the source's DONE from
	// its log, which wakes nobody)
	parkPoll = 5 * time.Millisecond
	// doneDelay is how long the source waits between learning that the
	// target owns the slots and dropping them: two map periods, so that
	// every member's map shows the new owner first (a period, a view's
	// cache of viewCacheFor and a round trip are less)
	doneDelay = 2 * mapPeriod
)

// errSlotFrozen is slotCheck's answer for a slot this group froze for a
// handover: never a reply, slotRefusal parks the request (parkFrozen).
const errSlotFrozen = "\x00frozen"

// errTryAgainSlot is Redis's reply to a request for a slot being moved
// (getNodeByQuery's TRYAGAIN): go-redis and redis-py retry it.
const errTryAgainSlot = "TRYAGAIN Multiple keys request during rehashing of slot"

// handoverState is the server's side of the handovers (engine lock).
type handoverState struct {
	gen    uint64 // SlotsGen when anyFrozen was computed
	frozen bool   // this group holds a frozen migration
	// wake is closed (and replaced) when this node executes a DONE or a
	// CANCEL: the requests parked on frozen slots look again
	wake chan struct{}
	// moved: per slot moved out by a DONE here, the target leader's
	// client address, for MOVED until the map shows the new owner
	moved map[int]string
	// capture is the source's capture of a frozen migration, kept for
	// the target's next chunk requests (a frozen slot never changes)
	capture struct {
		id     string
		chunks [][]byte
	}
	tasks []*migTask // the target's import tasks (cluster_migration.go)
	// the source's side as this leader saw it: when it froze a batch and
	// when the target's word made it MOVED (write_pause_ms), and the
	// tasks whose batches it dropped (STATUS's migrate rows)
	frozenAt, movedAt map[string]int64
	outDone           []*migTask
	// DEBUG HANDOVER-PAUSE and -PAUSE-OWN: ms the driver waits after a
	// FREEZE, after an OWN
	pause, pauseOwn atomic.Int64
	driving         map[string]bool
	started         bool
}

// frozenHere reports whether a migration of this group is frozen (the
// lock is held): one comparison while the owned set did not change.
func (s *Server) frozenHere() bool {
	h := &s.hand
	if g := s.eng.SlotsGen(); g != h.gen {
		h.gen = g
		h.frozen = false
		for _, m := range s.eng.Migrations() {
			if m.State == engine.SlotFrozen {
				h.frozen = true
			}
		}
	}
	return h.frozen
}

// slotFrozen reports whether slot is frozen here (lock held).
func (s *Server) slotFrozen(slot int) bool {
	if !s.frozenHere() {
		return false
	}
	st, _ := s.eng.SlotState(slot)
	return st == engine.SlotFrozen
}

// handoverMoved is the MOVED address of a slot that left this group by
// a DONE here, "" for another.
func (s *Server) handoverMoved(slot int) string { return s.hand.moved[slot] }

// wakeParked wakes the requests parked on frozen slots (lock held).
func (s *Server) wakeParked() {
	if s.hand.wake != nil {
		close(s.hand.wake)
	}
	s.hand.wake = make(chan struct{})
}

// parksOnLoop: cmd's slot is frozen here, so it waits, and must not on
// the event loop (lock held).
func (s *Server) parksOnLoop(cl *client, cmd *engine.Command, argv [][]byte) bool {
	if !s.frozenHere() {
		return false
	}
	_, _, msg := s.slotCheck(cl, cmd, argv)
	return msg == errSlotFrozen
}

// parkFrozen waits, with the lock released, while cmd's slot is frozen
// here, up to leader-wait-ms: then slotCheck's answer once it is not
// (the slot's owner runs it, or MOVED to the target once DONE moved it);
// still frozen at the deadline, MOVED to the group the map says owns it
// (the target, whose OWN committed: this group never executes a frozen
// slot, so MOVED still means not executed) or TRYAGAIN.
func (s *Server) parkFrozen(cl *client, cmd *engine.Command, argv [][]byte) (int, bool, string) {
	deadline := time.Now().Add(s.leaderWait())
	for {
		if s.hand.wake == nil {
			s.hand.wake = make(chan struct{})
		}
		wake := s.hand.wake
		s.door.Unlock()
		t := time.NewTimer(min(parkPoll, max(time.Until(deadline), 0)))
		select {
		case <-wake:
		case <-t.C:
		}
		t.Stop()
		s.door.Lock()
		s.resumeNow(cl)
		slot, write, msg := s.slotCheck(cl, cmd, argv)
		if msg != errSlotFrozen {
			return slot, write, msg
		}
		if time.Now().After(deadline) {
			if to := s.movedTo(slot); to != "" {
				return slot, write, "MOVED " + strconv.Itoa(slot) + " " + to
			}
			return slot, write, errTryAgainSlot
		}
	}
}

// answerHandover answers a handover request (query kind 'm').
func (s *Server) answerHandover(b []byte) (byte, []byte) {
	if s.node == nil || !s.clusterMode {
		return queryUnknownKind, nil
	}
	r := queryReader{b: b, ok: true}
	switch r.byte() {
	case hoFreeze:
		id, to, ranges := r.str(), r.uvarint(), r.ranges()
		if !r.ok || len(r.b) != 0 || id == "" || len(ranges) == 0 {
			return queryMalformedReq, nil
		}
		return s.onLeader(hoAskWait, func() (byte, []byte) { return s.freezeHere(id, int(to), ranges) })
	case hoCapture:
		id, from := r.str(), r.uvarint()
		if !r.ok || len(r.b) != 0 {
			return queryMalformedReq, nil
		}
		return s.answerCapture(id, int(from))
	case hoDone:
		id, addr := r.str(), r.str()
		if !r.ok || len(r.b) != 0 {
			return queryMalformedReq, nil
		}
		// answered once the slots are MOVED; DONE follows doneDelay
		// later, while the target moves its next batch
		st, body := s.markMoved(id, addr)
		if st == cluster.QueryOK {
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.dropMoved(id)
			}()
		}
		return st, body
	case hoCancel:
		id := r.str()
		if !r.ok || len(r.b) != 0 {
			return queryMalformedReq, nil
		}
		return s.onLeader(hoAskWait, func() (byte, []byte) { return s.cancelHere(id) })
	case hoProbe:
		id, ranges := r.str(), r.ranges()
		if !r.ok || len(r.b) != 0 {
			return queryMalformedReq, nil
		}
		return s.answerProbe(id, ranges)
	case hoDirMove:
		from, to, ranges := r.uvarint(), r.uvarint(), r.ranges()
		if !r.ok || len(r.b) != 0 {
			return queryMalformedReq, nil
		}
		return s.onLeader(hoAskWait, func() (byte, []byte) { return s.dirMoveHere(int(from), int(to), ranges) })
	}
	return queryUnknownKind, nil
}

// migrationByID is this group's handover id, either role (lock held).
func (s *Server) migrationByID(id string) (engine.Migration, bool) {
	for _, m := range s.eng.Migrations() {
		if m.ID == id {
			return m, true
		}
	}
	return engine.Migration{}, false
}

// freezeHere is the source's step: MIGRATE (unless logged already) and
// FREEZE, then the time floor and the slots' digest, which the target's
// OWN checks (the lock is held, on the leader; onLeader waits for the
// commit before the answer goes).
func (s *Server) freezeHere(id string, to int, ranges [][2]int) (byte, []byte) {
	m, ok := s.migrationByID(id)
	if ok && m.Role != engine.MigrationOut {
		return queryRefused, []byte("ERR migration '" + id + "' imports into this group")
	}
	if !ok {
		argv := appendRangeArgs(effectArgv("LIMITDB.SLOTS", "MIGRATE", id, strconv.Itoa(to)), ranges)
		if msg := replyError(s.execEffect(argv)); msg != "" {
			return queryRefused, []byte(msg)
		}
		m, _ = s.migrationByID(id)
	}
	for _, r := range m.Ranges {
		for slot := r[0]; slot <= r[1]; slot++ {
			delete(s.hand.moved, slot) // an earlier handover's: parked until this one's OWN
		}
	}
	if s.hand.frozenAt == nil {
		s.hand.frozenAt, s.hand.movedAt = map[string]int64{}, map[string]int64{}
	}
	if _, ok := s.hand.frozenAt[id]; !ok {
		s.hand.frozenAt[id] = time.Now().UnixMilli()
	}
	if m.State != engine.SlotFrozen {
		if msg := replyError(s.execEffect(effectArgv("LIMITDB.SLOTS", "FREEZE", id))); msg != "" {
			return queryRefused, []byte(msg)
		}
		m, _ = s.migrationByID(id)
		s.updateClusterState()
		s.redirectBlocked(m.Ranges)
	}
	d, _ := s.eng.MigrationDigest(id)
	b := binary.AppendVarint(nil, m.Floor)
	return cluster.QueryOK, appendQueryBytes(b, d[:])
}

// lockLeader takes the lock within hoAskWait on the serving leader;
// else the answer to give (busy, or not the leader with its address).
func (s *Server) lockLeader() (byte, []byte, bool) {
	t := time.NewTimer(hoAskWait)
	ok := s.door.LockOrTimer(t.C)
	t.Stop()
	if !ok {
		return queryBusy, nil, false
	}
	if !s.node.Serving() {
		leader := s.node.Status().LeaderRaft
		s.door.Unlock()
		return queryNotLeader, []byte(leader), false
	}
	return 0, nil, true
}

// answerCapture answers chunks of a frozen migration's capture from
// first on, as many as captureAnswerMax holds (the leader only: a
// follower may not have applied the FREEZE yet). The capture holds the
// lock only to copy the slots' entries (StartSlotCapture); they are
// encoded with it released, and kept for the next requests (a frozen
// slot never changes).
func (s *Server) answerCapture(id string, first int) (byte, []byte) {
	if st, body, ok := s.lockLeader(); !ok {
		return st, body
	}
	m, ok := s.migrationByID(id)
	if !ok || m.Role != engine.MigrationOut || m.State != engine.SlotFrozen {
		s.door.Unlock()
		return queryRefused, []byte("ERR migration '" + id + "' is not frozen here")
	}
	chunks := s.hand.capture.chunks
	if s.hand.capture.id != id {
		c := s.eng.StartSlotCapture(m.Ranges)
		s.door.Unlock()
		chunks = c.Chunks(captureChunk)
		c.Release()
		s.door.Lock()
		if m, ok := s.migrationByID(id); ok && m.State == engine.SlotFrozen {
			s.hand.capture.id, s.hand.capture.chunks = id, chunks
		}
	}
	s.door.Unlock()
	b := binary.AppendUvarint(nil, uint64(len(chunks)))
	n, size := 0, 0
	for i := first; i < len(chunks) && (n == 0 || size+len(chunks[i]) <= captureAnswerMax); i++ {
		n++
		size += len(chunks[i])
	}
	b = binary.AppendUvarint(b, uint64(n))
	for i := first; i < first+n; i++ {
		b = appendQueryBytes(b, chunks[i])
	}
	return cluster.QueryOK, b
}

// finishHere is the source's last step, once the target's OWN is
// committed: the requests for the slots get MOVED to the target (addr,
// its leader's client address; the map's when ""), at once, parked ones
// woken; DONE waits doneDelay, so that this group's followers' maps
// (refreshed every mapPeriod) show the target owning the slots before
// their own group stops claiming them (else they, and a client whose
// slot map they gave, would find no owner); then DONE (the keys go, the
// slots are not this group's any more) and the directory's move. A
// migration this group has no more (a retried DONE) is done.
func (s *Server) finishHere(id, addr string) (byte, []byte) {
	if st, body := s.markMoved(id, addr); st != cluster.QueryOK {
		return st, body
	}
	return s.dropMoved(id)
}

// markMoved is finishHere's first half: MOVED to addr from now on.
func (s *Server) markMoved(id, addr string) (byte, []byte) {
	return s.onLeader(hoAskWait, func() (byte, []byte) {
		m, ok := s.migrationByID(id)
		if !ok {
			return cluster.QueryOK, nil
		}
		if m.Role != engine.MigrationOut || m.State != engine.SlotFrozen {
			return queryRefused, []byte("ERR migration '" + id + "' is not frozen here")
		}
		if addr == "" {
			addr = s.groupMoved(m.Peer)
		}
		if s.hand.movedAt != nil {
			if _, ok := s.hand.movedAt[id]; !ok {
				s.hand.movedAt[id] = time.Now().UnixMilli()
			}
		}
		if addr != "" {
			if s.hand.moved == nil {
				s.hand.moved = map[int]string{}
			}
			for _, r := range m.Ranges {
				for slot := r[0]; slot <= r[1]; slot++ {
					s.hand.moved[slot] = addr
				}
			}
			s.wakeParked()
		}
		return cluster.QueryOK, nil
	})
}

// dropMoved is finishHere's second half (the lock not held): the
// directory gives the slots to the target first (the target's OWN is
// committed), so that once DONE leaves them unowned here an ADDSLOTS of
// them in this group is busy, not a second owner; then, doneDelay after
// the MOVEDs began, DONE.
func (s *Server) dropMoved(id string) (byte, []byte) {
	t := time.NewTimer(doneDelay)
	defer t.Stop()
	s.door.Lock()
	m, ok := s.migrationByID(id)
	sh := s.eng.Shard()
	s.door.Unlock()
	if !ok || m.Role != engine.MigrationOut {
		return cluster.QueryOK, nil
	}
	for i := 0; i < 3; i++ {
		if s.moveInDirectory(sh, sh.Index, m.Peer, m.Ranges) == "" {
			break
		}
	}
	select {
	case <-s.refreshMap():
		<-t.C
	case <-t.C:
	}
	return s.onLeader(hoAskWait, func() (byte, []byte) {
		m, ok := s.migrationByID(id)
		if !ok || m.Role != engine.MigrationOut || m.State != engine.SlotFrozen {
			return cluster.QueryOK, nil // done meanwhile
		}
		if msg := replyError(s.execEffect(effectArgv("LIMITDB.SLOTS", "DONE", id))); msg != "" {
			return queryRefused, []byte(msg)
		}
		s.recordOutDone(m, id)
		s.forgetCapture(id)
		s.updateClusterState()
		s.wakeParked()
		return cluster.QueryOK, nil
	})
}

// groupMoved is the MOVED address of group index as the map shows it
// (lock held).
func (s *Server) groupMoved(index int) string {
	for _, g := range s.cmap.groups {
		if g.index == index {
			return g.moved
		}
	}
	return ""
}

// cancelHere: the target aborted the import (committed), so the source
// takes the slots back: CANCEL, with ABORTED once frozen. A migration
// this group has no more is cancelled (or done: the target then owns the
// slots, and never asks).
func (s *Server) cancelHere(id string) (byte, []byte) {
	m, ok := s.migrationByID(id)
	if !ok {
		return cluster.QueryOK, nil
	}
	if m.Role != engine.MigrationOut {
		return queryRefused, []byte("ERR migration '" + id + "' imports into this group")
	}
	argv := effectArgv("LIMITDB.SLOTS", "CANCEL", id)
	if m.State == engine.SlotFrozen {
		argv = append(argv, []byte("ABORTED"))
	}
	if msg := replyError(s.execEffect(argv)); msg != "" {
		return queryRefused, []byte(msg)
	}
	s.forgetCapture(id)
	s.updateClusterState()
	s.wakeParked()
	return cluster.QueryOK, nil
}

func (s *Server) forgetCapture(id string) {
	if s.hand.capture.id == id {
		s.hand.capture.id, s.hand.capture.chunks = "", nil
	}
}

// answerProbe is the target's answer to the source's question about a
// migration: it imports it, or owns every slot of ranges, or neither.
// Neither is answered only once committed (what this leader executed is
// waited for): an ABORT not committed could still be lost with this
// leader, and the source must not take the slots back while the import
// may resume.
func (s *Server) answerProbe(id string, ranges [][2]int) (byte, []byte) {
	if st, body, ok := s.lockLeader(); !ok {
		return st, body
	}
	if m, ok := s.migrationByID(id); ok && m.Role == engine.MigrationIn {
		s.door.Unlock()
		return cluster.QueryOK, []byte{probeImporting}
	}
	owns := true
	for _, r := range ranges {
		for slot := r[0]; slot <= r[1] && owns; slot++ {
			owns = s.eng.OwnsSlot(slot)
		}
	}
	ticket := s.node.Ticket()
	s.door.Unlock()
	if err := s.node.Wait(ticket); err != nil {
		return queryNotLeader, nil
	}
	if owns {
		return cluster.QueryOK, []byte{probeOwns}
	}
	return cluster.QueryOK, []byte{probeNeither}
}

// dirMoveHere gives the slots of ranges that group from owns (or none
// does) to group to in the directory this group holds: RELEASE and CLAIM
// as one record (door.Together), so that no crash leaves them free for a
// third group's ADDSLOTS. Slots to owns already are fine (a retry); a
// slot a third group owns is refused (Redis's busy text).
func (s *Server) dirMoveHere(from, to int, ranges [][2]int) (byte, []byte) {
	sh := s.eng.Shard()
	if !sh.Directory {
		return queryRefused, []byte(engine.ErrDirNone)
	}
	var rel, claim [][2]int
	for _, r := range ranges {
		for slot := r[0]; slot <= r[1]; slot++ {
			switch o := s.eng.DirOwner(slot); o {
			case to:
				continue
			case from:
				rel = addSlotRange(rel, slot)
			case -1:
			default:
				return queryRefused, []byte(engine.ErrSlotBusy(slot))
			}
			claim = addSlotRange(claim, slot)
		}
	}
	if len(claim) == 0 {
		return cluster.QueryOK, nil
	}
	var msg string
	s.door.Together(func() {
		if len(rel) > 0 {
			msg = replyError(s.execEffect(appendRangeArgs(effectArgv("LIMITDB.DIRECTORY", "RELEASE", strconv.Itoa(from)), rel)))
		}
		if msg == "" {
			msg = replyError(s.execEffect(appendRangeArgs(effectArgv("LIMITDB.DIRECTORY", "CLAIM", strconv.Itoa(to)), claim)))
		}
	})
	if msg != "" {
		return queryRefused, []byte(msg)
	}
	return cluster.QueryOK, nil
}

// addSlotRange appends slot to ranges, extending the last range when it
// is the next slot.
func addSlotRange(ranges [][2]int, slot int) [][2]int {
	if n := len(ranges); n > 0 && ranges[n-1][1] == slot-1 {
		ranges[n-1][1] = slot
		return ranges
	}
	return append(ranges, [2]int{slot, slot})
}

// moveInDirectory asks the directory (this group's own when it holds it)
// to give ranges from group from to group to; "" or the error text.
// The lock is not held.
func (s *Server) moveInDirectory(sh engine.ShardRecord, from, to int, ranges [][2]int) string {
	req := binary.AppendUvarint([]byte{queryHandover, hoDirMove}, uint64(from))
	req = binary.AppendUvarint(req, uint64(to))
	req = appendQueryRanges(req, ranges)
	var st byte
	var body []byte
	if sh.Directory {
		st, body = s.onLeader(hoAskWait, func() (byte, []byte) { return s.dirMoveHere(from, to, ranges) })
	} else {
		st, body = s.askLeader(sh.DirSeeds, req, hoAskWait, dirTryWait)
	}
	if st != cluster.QueryOK {
		return refusal(st, body, errDirUnreachable)
	}
	return ""
}

// groupAddrs are the inter-node addresses of group index's members as
// the map shows them, its master's first (lock held).
func (s *Server) groupAddrs(index int) []string {
	for _, g := range s.cmap.groups {
		if g.index != index {
			continue
		}
		var out []string
		for _, n := range g.nodes {
			if n.busPort > 0 {
				out = append(out, net.JoinHostPort(n.host, strconv.Itoa(n.busPort)))
			}
		}
		return out
	}
	return nil
}

// groupMaster is the node id of group index's master as the map shows
// it ("" when unknown; lock held).
func (s *Server) groupMaster(index int) string {
	for _, g := range s.cmap.groups {
		if g.index == index && len(g.nodes) > 0 {
			return g.nodes[0].id
		}
	}
	return ""
}

// settleOutgoing is the source leader's own care of its migrations
// (handoverLoop, the lock not held): each one out is asked about at the
// target; the target owns the slots (its leader died after OWN, before
// it told this group) → DONE; the target neither imports it nor owns
// them (it aborted, and its CANCEL did not arrive) → CANCEL.
func (s *Server) settleOutgoing() {
	s.door.Lock()
	if !s.node.Serving() {
		s.door.Unlock()
		return
	}
	type ask struct {
		m     engine.Migration
		addrs []string
	}
	var asks []ask
	for _, m := range s.eng.Migrations() {
		if m.Role == engine.MigrationOut {
			asks = append(asks, ask{m, s.groupAddrs(m.Peer)})
		}
	}
	s.door.Unlock()
	for _, a := range asks {
		req := appendQueryString([]byte{queryHandover, hoProbe}, a.m.ID)
		req = appendQueryRanges(req, a.m.Ranges)
		st, body := s.askLeader(a.addrs, req, hoAskWait, dirTryWait)
		if st != cluster.QueryOK || len(body) != 1 {
			continue
		}
		switch body[0] {
		case probeOwns:
			if a.m.State == engine.SlotFrozen {
				s.finishHere(a.m.ID, "")
			}
		case probeNeither:
			s.onLeader(hoAskWait, func() (byte, []byte) {
				if s.ownedElsewhere(a.m.Ranges) {
					// (the target owned them and moved them on: DONE
					// is what is missing, never a CANCEL)
					return cluster.QueryOK, nil
				}
				return s.cancelHere(a.m.ID)
			})
		}
	}
}

// digestHex is a digest as OWN takes it.
func digestHex(d []byte) string { return hex.EncodeToString(d) }

// ownedElsewhere: the map shows another group owning a slot of ranges
// (lock held).
func (s *Server) ownedElsewhere(ranges [][2]int) bool {
	for _, r := range ranges {
		for slot := r[0]; slot <= r[1]; slot++ {
			if s.movedTo(slot) != "" {
				return true
			}
		}
	}
	return false
}

// shownSlots is the slots this group answers for in its view (the
// others' maps): the engine's, frozen ones included, less those the
// target owns already (this leader was told, finishHere): between the
// target's OWN and this group's DONE the maps would otherwise show the
// slots twice (lock held).
func (s *Server) shownSlots() [][2]int {
	owned := s.eng.OwnedSlots()
	if len(s.hand.moved) == 0 || !s.frozenHere() {
		return owned
	}
	var out [][2]int
	for _, r := range owned {
		for slot := r[0]; slot <= r[1]; slot++ {
			if s.hand.moved[slot] == "" || s.eng.OwnsSlot(slot) {
				out = addSlotRange(out, slot)
			}
		}
	}
	return out
}

// recordOutDone notes a batch this leader dropped in its task's migrate
// row (lock held): its slots, its pause (FREEZE to the MOVEDs, when this
// leader saw both) and the end time.
func (s *Server) recordOutDone(m engine.Migration, id string) {
	tid := taskOf(id)
	var t *migTask
	for _, x := range s.hand.outDone {
		if x.id == tid {
			t = x
		}
	}
	now := time.Now().UnixMilli()
	if t == nil {
		t = &migTask{id: tid, state: taskCompleted, created: -1, started: -1,
			sourceID: s.myNodeID(), destID: s.groupMaster(m.Peer)}
		s.hand.outDone = append(s.hand.outDone, t)
		if len(s.hand.outDone) > tasksKept {
			s.hand.outDone = s.hand.outDone[1:]
		}
	}
	if f, ok := s.hand.frozenAt[id]; ok {
		if t.started < 0 || f < t.started {
			t.started, t.created = f, f
		}
		if mv, ok := s.hand.movedAt[id]; ok {
			t.pauseMs = max(t.pauseMs, mv-f)
		}
	}
	delete(s.hand.frozenAt, id)
	delete(s.hand.movedAt, id)
	t.ended = now
	for _, r := range m.Ranges {
		for slot := r[0]; slot <= r[1]; slot++ {
			t.ranges = addSlotRange(t.ranges, slot)
		}
	}
}

// redirectBlocked makes the clients blocked here on a key of ranges (a
// batch just frozen) run their command again (with what is left of its
// timeout), as a leader that stops leading does (StopServing): the
// command then waits for the handover's outcome like any other request
// for the slots, and gets MOVED to the target, as Redis's
// clusterRedirectBlockedClientIfNeeded answers a client blocked on a
// slot that moved. Nothing was popped for them. The lock is held.
func (s *Server) redirectBlocked(ranges [][2]int) {
	var set slotSet
	for _, r := range ranges {
		set.addRange(r[0], r[1])
	}
	for _, c := range s.blockedConns() {
		bs := c.blk
		if bs == nil || bs.done.Load() || bs.cmd == nil {
			continue
		}
		it := bs.cmd.Keys(bs.argv)
		if pos, _, ok := it.Next(); ok && pos < len(bs.argv) {
			if slot := engine.KeySlot(bs.argv[pos]); set[slot>>6]&(1<<(slot&63)) != 0 {
				bs.reroute = true
				s.endBlock(c, bs)
			}
		}
	}
}
