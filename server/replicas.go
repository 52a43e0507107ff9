package server

import (
	"strconv"

	"limitdb/engine"
)

// errNoReplicas is Redis's shared.noreplicaserr.
const errNoReplicas = "NOREPLICAS Not enough good replicas to write."

// applyMinReplicas is Redis's checkGoodReplicasStatus for a primary that
// has no good replica: with min-replicas-to-write and min-replicas-max-lag
// both above 0, write commands (and a script's writes) are refused with
// NOREPLICAS. limitdb's replicas never count as good: a SYNC client
// receives a snapshot and never acknowledges an offset (REPLCONF ACK),
// and a cluster's Raft followers are not Redis replicas. Run by
// applyConfig (lock held).
func (s *Server) applyMinReplicas() {
	n, _ := strconv.ParseInt(s.conf.params["min-replicas-to-write"], 10, 64)
	lag, _ := strconv.ParseInt(s.conf.params["min-replicas-max-lag"], 10, 64)
	s.minReplicas = n > 0 && lag > 0
	s.eng.NoReplicas = ""
	if s.minReplicas {
		s.eng.NoReplicas = errNoReplicas
	}
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
