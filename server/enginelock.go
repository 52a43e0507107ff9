// The engine lock as the request path takes it: a batch's hold
// (lockEngine), its wait that a script past busy-reply-threshold cuts
// short (lockOrBusy, answered by script_busy.go), a follower's unit's
// (LockForwarded), and an event-loop turn's records proposed before a wait
// (endTurn).

package server

import (
	"time"

	"limitdb/cluster"
)

// lockEngine takes the engine lock for argv. While a script that has run
// holds it, this client waits only until the script passes lua-time-limit
// (busy-reply-threshold) and then gets BUSY, or has its SCRIPT KILL served,
// like in Redis. Without a script running it waits for the lock, but stops
// waiting if a script starts meanwhile (engine.ScriptGuard.Started): that
// script may never end, and a client blocked behind it would never get its
// BUSY (a client that arrived within 2 ms of a runaway script's start did
// wait for ever). It returns false when it answered without the lock.
func (s *Server) lockEngine(cl *client, argv [][]byte) bool {
	if s.door.TryLock() {
		return true
	}
	if cl.onLoop {
		s.endTurn()
	}
	return s.lockOrBusy(func() bool { return s.scriptBusy(cl, argv) })
}

// lockOrBusy is lockEngine's wait: busy answers without the lock once a
// script has run past busy-reply-threshold, and reports whether it did.
func (s *Server) lockOrBusy(busy func() bool) bool {
	g := &s.eng.Guard
	for {
		start := g.StartMs.Load()
		if start == 0 {
			started := g.Started()
			if g.StartMs.Load() != 0 {
				continue // one started meanwhile
			}
			if s.door.LockOr(started) {
				return true
			}
			continue
		}
		if busy() {
			return false
		}
		wait := time.Duration(start+g.Limit()-time.Now().UnixMilli()) * time.Millisecond
		t := time.NewTimer(max(wait, time.Millisecond))
		ok := s.door.LockOrTimer(t.C)
		t.Stop()
		if ok {
			return true
		}
	}
}

// lockDoor takes the engine lock, ending a loop turn's hold on its
// records first when it has to wait (endTurn).
func (s *Server) lockDoor() {
	if !s.door.TryLock() {
		s.endTurn()
		s.door.Lock()
	}
}

// endTurn proposes the running event-loop turn's records before a wait
// for the engine lock (a script or a snapshot's pause holds it): they are
// proposed when the turn ends (cluster.Node.TurnStart), and a turn that
// waits would hold them back meanwhile, or forever for a pause that waits
// for them.
func (s *Server) endTurn() {
	if s.replicated() {
		s.node.TurnEnd()
	}
}

// LockForwarded implements cluster.Executor: it takes the engine lock for
// a follower's unit as lockEngine does for a client's command, or, once a
// script has run past busy-reply-threshold, answers the unit without the
// lock and without running it (the leader records nothing of it, so the
// follower's client gets a refusal, not an unknown outcome). The answer is
// ExecForwarded's (the database, then the reply of the unit's last
// command): BUSY, EXECABORT … BUSY for a MULTI block, or SCRIPT KILL /
// FUNCTION KILL served on the running script. The follower checked the
// command, AUTH and ACL before forwarding it: those of Redis's checks
// that come before BUSY (scriptBusy) are done. It returns nil with the
// lock held.
func (s *Server) LockForwarded(u *cluster.Unit) []byte {
	if s.door.TryLock() {
		return nil
	}
	var out []byte
	if s.lockOrBusy(func() bool { out = s.busyForwarded(u); return out != nil }) {
		return nil
	}
	return out
}
