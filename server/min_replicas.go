package server

import (
	"strconv"

	"limitdb/engine"
)

// errNoReplicas is Redis's shared.noreplicaserr.
const errNoReplicas = "NOREPLICAS Not enough good replicas to write."

// applyMinReplicas reads min-replicas-to-write and -max-lag: with both
// above 0, Redis's checkGoodReplicasStatus refuses write commands (and a
// script's writes) with NOREPLICAS while fewer replicas than the first
// acknowledged within the second (noGoodReplicas). Run by applyConfig
// (lock held).
func (s *Server) applyMinReplicas() {
	s.minToWrite, _ = strconv.ParseInt(s.conf.params["min-replicas-to-write"], 10, 64)
	s.minMaxLag, _ = strconv.ParseInt(s.conf.params["min-replicas-max-lag"], 10, 64)
	s.minReplicas = s.minToWrite > 0 && s.minMaxLag > 0
	s.eng.NoReplicas = ""
}

// goodReplicas is INFO's min_slaves_good_slaves: in a cluster, the
// leader's followers that reported within min-replicas-max-lag seconds
// (cluster.Node.GoodReplicas); a SYNC client never counts, as it never
// acknowledges an offset (REPLCONF ACK), so a single node has none.
func (s *Server) goodReplicas() int64 {
	if !s.replicated() {
		return 0
	}
	return int64(s.node.GoodReplicas(s.minMaxLag))
}

// noGoodReplicas is checkGoodReplicasStatus, run per command while
// min-replicas is set (lock held): on the node that executes, whether
// fewer good replicas than min-replicas-to-write are left; it also arms
// or clears the engine's NOREPLICAS for a script's writes. A follower
// does not check: its writes run on the leader, which does, as a Redis
// replica does not check either.
func (s *Server) noGoodReplicas() bool {
	deny := s.executes() && s.goodReplicas() < s.minToWrite
	s.eng.NoReplicas = ""
	if deny {
		s.eng.NoReplicas = errNoReplicas
	}
	return deny
}

// rejectWrites refuses a write command, and an EXEC whose queue holds a
// write (which also discards the transaction), with msg; PING too when
// ping is set (MISCONF). It is processCommand's writeCommandsDeniedByDiskError
// and checkGoodReplicasStatus checks, and reports whether it answered.
func (s *Server) rejectWrites(cl *client, cmd *engine.Command, argv [][]byte, msg string, ping bool) bool {
	if cl.tx.Active && cmd.Name == "exec" && queueHas(&cl.ctx, cl.tx.Queue, engine.FlagWrite) {
		s.statOf(cmd).rejected++
		msg = "EXECABORT Transaction discarded because of: " + msg
		cl.w.Error(msg)
		s.countError([]byte(msg))
		cl.tx.Reset()
		return true
	}
	if cl.ctx.CallFlags(cmd, argv)&engine.FlagWrite == 0 && !(ping && cmd.Name == "ping") {
		return false
	}
	s.reject(cl, cmd, msg)
	return true
}
