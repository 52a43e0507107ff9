package server

import "encoding/binary"

// Queries between nodes (cluster/query.go carries them: a request, a
// status-coded answer). The first byte of a request is its kind; each
// kind's handler is beside the feature it serves and takes the engine
// lock itself.

// Query kinds.
const (
	queryRLStats byte = 's' // a member's decision counters (rl_stats_cluster.go)
	queryRLTop   byte = 't' // a node's RL.TOP sketch of a policy (rl_stats_cluster.go)
	// queryView ('v'): a group's view (cluster_view.go)
	// queryDirectory ('d'): a directory request (cluster_meet.go)
	// queryGlobalUnit ('w'), queryGlobalPush ('g'): the cluster-wide
	// state of several groups (cluster_global.go)
	// queryHandover ('m'): a slot handover's request (cluster_handover.go)
)

// Answer statuses beyond cluster.QueryOK.
const (
	queryRefused      byte = 2 // the body is the error text (an unknown policy)
	queryUnknownKind  byte = 3
	queryMalformedReq byte = 4
	queryBusy         byte = 5 // the engine lock was not free in time (a long script)
	// queryNotLeader: a directory request (cluster_meet.go) reached a
	// member that does not lead; the body is the leader's inter-node
	// address ("": none known), where the asker tries again
	queryNotLeader byte = 6
)

// answerQuery answers another node's query (cluster.Node.OnQuery).
func (s *Server) answerQuery(req []byte) (byte, []byte) {
	if len(req) == 0 {
		return queryUnknownKind, nil
	}
	switch req[0] {
	case queryRLStats:
		return s.answerRLStats(req[1:])
	case queryRLTop:
		return s.answerRLTop(req[1:])
	case queryView:
		return s.answerView(req[1:])
	case queryDirectory:
		return s.answerDirectory(req[1:])
	case queryGlobalUnit:
		return s.answerGlobalUnit(req[1:])
	case queryGlobalPush:
		return s.answerGlobalPush(req[1:])
	case queryHandover:
		return s.answerHandover(req[1:])
	}
	return queryUnknownKind, nil
}

func appendQueryBytes(b, s []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func readQueryBytes(b []byte) (s, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}
