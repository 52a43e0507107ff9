package server

import (
	"strconv"

	"limitdb/engine"
)

// Slot routing in cluster mode: Redis 7.0's getNodeByQuery, decided in
// one place (slotRefusal) for every keyed command, after ACL and before
// the memory check, as processCommand does. The group checks its own
// replicated ownership (one bit of the engine's bitmap: all an owned
// slot costs); a slot it does not own is looked up in the map of the
// other groups (cluster_map.go). In order, as Redis:
//   - the first key's slot is owned by no group: CLUSTERDOWN Hash slot
//     not served
//   - another key in another slot: CROSSSLOT (EXEC: across its whole
//     block; EVAL and FCALL: their declared keys)
//   - not every slot assigned (cluster_state:fail, over every group):
//     CLUSTERDOWN The cluster is down
//   - the slot is another group's: MOVED to its leader's client address
//     (a stale map costs an extra MOVED at most: a group executes only
//     the slots its own bitmap has)
//   - this node follows: MOVED to the leader, unless the connection said
//     READONLY and the command (EXEC: every queued one) does not write;
//     while no leader's client address is known (an election, a new
//     leader whose address has not reached it) it waits up to
//     leader-wait-ms with the lock released for one (WaitLeaderClient),
//     then answers MOVED to it, checks the slot again and runs the
//     command if this node leads now (the slot may have frozen or moved
//     while the lock was released), or answers CLUSTERDOWN The cluster
//     is down. The wait is never on
//     an event loop: a follower's connections leave theirs before they
//     are served (evloop.go), and one still on it leaves it here.
//
// A refused EXEC discards its transaction and answers the error alone; a
// refused command inside MULTI is not queued and fails the EXEC, as in
// Redis. Keyless commands are never refused here: keyless writes on a
// follower are forwarded as in the unsharded mode.

const (
	errCrossSlot       = "CROSSSLOT Keys in request don't hash to the same slot"
	errSlotNotServed   = "CLUSTERDOWN Hash slot not served"
	errClusterDownMode = "CLUSTERDOWN The cluster is down"
)

// slotRefusal returns the redirection or error for cmd, or "" when it
// runs on this node. The engine lock is held.
func (s *Server) slotRefusal(cl *client, cmd *engine.Command, argv [][]byte) string {
	slot, write, msg := s.slotCheck(cl, cmd, argv)
	if msg == errSlotFrozen {
		// a handover froze the slot here: wait for its outcome
		// (cluster_handover.go), off the loop (slotRedirected)
		slot, write, msg = s.parkFrozen(cl, cmd, argv)
	}
	if msg != "" || slot < 0 {
		return msg
	}
	if !s.follower() || (cl.readonly && !write) {
		return ""
	}
	if leader := s.node.LeaderClient(); leader != "" {
		return "MOVED " + strconv.Itoa(slot) + " " + leader
	}
	// no leader known (an election, or a new leader not heard from yet):
	// wait for one with the lock released (off the loop: slotRedirected)
	s.door.Unlock()
	leader, serving := s.node.WaitLeaderClient()
	s.door.Lock()
	s.resumeNow(cl)
	switch {
	case serving:
		// this node leads now, but the lock was released for the wait:
		// a handover may have frozen or moved the slot meanwhile (the
		// check above is stale), so it is checked again before cmd runs
		// (without this, a follower that held a write, became leader and
		// ran it executed a slot frozen since: the write was acknowledged
		// and lost with the source's copy, TestFaultsMigrationSmoke)
		return s.slotRefusal(cl, cmd, argv)
	case leader != "":
		return "MOVED " + strconv.Itoa(slot) + " " + leader
	}
	return errClusterDownMode
}

// slotCheck is getNodeByQuery up to this group's redirection: the slot
// of cmd's keys (-1: it has none), whether it (EXEC: its block) writes,
// and the error for keys in a slot not served, in several slots, or a
// cluster that is down, or the MOVED to the group that owns the slot.
func (s *Server) slotCheck(cl *client, cmd *engine.Command, argv [][]byte) (int, bool, string) {
	slot, first := -1, []byte(nil)
	moved := "" // the slot is another group's: its leader's address
	write := cmd.IsWrite()
	check := func(c *engine.Command, a [][]byte) string {
		it := c.Keys(a)
		for {
			pos, _, ok := it.Next()
			if !ok {
				return ""
			}
			key := a[pos]
			if first == nil {
				first, slot = key, engine.KeySlot(key)
				if !s.eng.OwnsSlot(slot) {
					if s.slotFrozen(slot) {
						// a handover froze it here: parked (slotRefusal)
						// until the target owns it (cluster_handover.go)
						if moved = s.handoverMoved(slot); moved == "" {
							return errSlotFrozen
						}
						if m := s.movedTo(slot); m != "" {
							moved = m // the map's master of the target: fresher
						}
					} else if moved = s.movedTo(slot); moved == "" {
						if moved = s.handoverMoved(slot); moved == "" {
							return errSlotNotServed
						}
					}
				}
				continue
			}
			if engine.KeySlot(key) != slot && string(key) != string(first) {
				return errCrossSlot
			}
		}
	}
	if cmd.Name == "exec" {
		if !cl.tx.Active {
			return -1, false, "" // EXEC without MULTI answers its own error
		}
		write = false
		for _, q := range cl.tx.Queue {
			c := engine.Lookup(q[0])
			if c != nil && len(c.Subs) > 0 && len(q) > 1 {
				c = c.Sub(q[1])
			}
			if c == nil {
				continue
			}
			write = write || c.IsWrite()
			if msg := check(c, q); msg != "" {
				return slot, write, msg
			}
		}
	} else if msg := check(cmd, argv); msg != "" {
		return slot, write, msg
	}
	if first == nil {
		return -1, write, "" // no key at all
	}
	if !s.clusterState() {
		return slot, write, errClusterDownMode
	}
	if moved != "" {
		return slot, write, "MOVED " + strconv.Itoa(slot) + " " + moved
	}
	return slot, write, ""
}

// Redis's scriptVerifyClusterState: what a script's command is refused
// with when its keys are not all in one slot this node serves, or the
// cluster is down (scripts run where their caller's keys are served, so
// there is no redirection to give).
const (
	errScriptNonLocal    = "ERR Script attempted to access a non local key in a cluster node"
	errScriptClusterDown = "ERR Script attempted to execute a command while the cluster is down"
)

// scriptSlotRefusal is ScriptCheck's cluster-mode check.
func (s *Server) scriptSlotRefusal(cl *client, cmd *engine.Command, argv [][]byte) string {
	if len(cmd.KeySpecs) == 0 && cmd.GetKeys == nil {
		return ""
	}
	switch _, _, msg := s.slotCheck(cl, cmd, argv); msg {
	case "":
		return ""
	case errClusterDownMode:
		return errScriptClusterDown
	}
	return errScriptNonLocal
}

// slotRedirected applies slotRefusal in dispatch: it reports whether cmd
// was answered (and counted as rejected, as Redis's
// clusterRedirectClient).
func (s *Server) slotRedirected(cl *client, cmd *engine.Command, argv [][]byte) bool {
	if cmd.Name != "exec" && len(cmd.KeySpecs) == 0 && cmd.GetKeys == nil {
		return false
	}
	if cl.onLoop && (s.follower() || s.parksOnLoop(cl, cmd, argv)) {
		// (a leader that stopped leading during the batch) the command
		// may wait for a leader: in the connection's goroutine, so that
		// the loop serves its other clients meanwhile (runsOffLoop)
		cl.offArgv = argv
		return true
	}
	msg := s.slotRefusal(cl, cmd, argv)
	if msg == "" {
		return false
	}
	if cmd.Name == "exec" {
		s.endTx(cl, true)
	} else if cl.tx.Active {
		cl.tx.Failed = true
	}
	cl.w.Error(msg)
	s.statOf(cmd).rejected++
	s.countError([]byte(msg))
	return true
}
