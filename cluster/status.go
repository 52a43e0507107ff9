package cluster

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/raft"
)

// Member is one server of the configuration, as RAFT INFO and INFO show it.
type Member struct {
	ID, RaftAddr, ClientAddr string
	Voter                    bool
	Leader                   bool
	Applied                  uint64 // last reported (followers, on the leader)
	// Reported is when (zero: never; followers report once a second)
	Reported time.Time
}

// Status is the node's view of the cluster.
type Status struct {
	NodeID, State        string
	Term                 uint64
	LeaderID, LeaderRaft string
	LeaderClient         string
	CommitIndex          uint64
	AppliedIndex         uint64
	LastIndex            uint64
	FirstIndex           uint64
	LastContactMs        int64 // -1: never (or this is the leader)
	SnapshotIndex        uint64
	SnapshotsInstalled   int64
	Members              []Member
	ClockOffsetMs        int64
	// the leader's clock agreement (clock.go): ClockQuorum is ClockOK,
	// ClockLost, ClockExempt or ClockFollower; ClockAgreeing counts the
	// voters (the leader included) whose clocks agree with the leader's,
	// of ClockVoters; ClockErrorMs is the largest measuring error (half
	// a round trip) among those counted
	ClockQuorum                string
	ClockAgreeing, ClockVoters int
	ClockErrorMs               int64
	AppendFsync                string
	LogFsyncs                  int64
	LogFsyncNs                 int64 // time spent in those fsyncs
	LeaderChanges              int64 // leaders seen taking over since start, after the first
	// PubsubDropped counts the Pub/Sub batches (messages, keyspace
	// events) this node dropped for a peer that was unreachable or too
	// slow (fanout.go): subscribers there missed them
	PubsubDropped int64
	Serving       bool
	Joining       bool // started with --join on an empty dir, not added yet
}

// status does Status (api.go).
func (n *Node) status() Status {
	s := Status{
		NodeID:        n.cfg.NodeID,
		State:         n.raft.State().String(),
		Term:          n.raft.CurrentTerm(),
		CommitIndex:   n.raft.CommitIndex(),
		AppliedIndex:  n.appliedIndex(),
		LastIndex:     n.raft.LastIndex(),
		FirstIndex:    firstIndex(n.logs),
		ClockOffsetMs: n.skewMs.Load(),
		AppendFsync:   n.cfg.AppendFsync,
		LogFsyncs:     n.fsyncs.Load(),
		LeaderChanges: n.leaderChanges.Load(),
		PubsubDropped: n.fan.dropped.Load(),
		Serving:       n.Serving(),
		Joining:       n.Joining(),
	}
	if n.logFS != nil {
		s.LogFsyncNs = n.logFS.syncNs.Load()
	}
	cv := n.clk.view()
	s.ClockQuorum, s.ClockAgreeing, s.ClockVoters, s.ClockErrorMs = cv.state, cv.agreeing, cv.voters, cv.maxErr/1e6
	addr, id := n.raft.LeaderWithID()
	s.LeaderID, s.LeaderRaft = nodeName(id), string(addr)
	s.LeaderClient = n.leaderClient.Load().(string)
	if n.raft.State() == raft.Leader {
		s.LeaderClient = n.cfg.ClientAddr
		s.LastContactMs = 0
	} else if t := n.raft.LastContact(); t.IsZero() {
		s.LastContactMs = -1
	} else {
		s.LastContactMs = time.Since(t).Milliseconds()
	}
	if metas, err := n.snaps.List(); err == nil && len(metas) > 0 {
		s.SnapshotIndex = metas[0].Index
	}
	s.SnapshotsInstalled = n.fsm.installed.Load()
	if cf := n.raft.GetConfiguration(); cf.Error() == nil {
		var peers map[string]peerInfo
		if n.fsrv != nil {
			n.fsrv.mu.Lock()
			peers = make(map[string]peerInfo, len(n.fsrv.peers))
			for k, v := range n.fsrv.peers {
				peers[k] = v
			}
			n.fsrv.mu.Unlock()
		}
		clients := n.otherClients.Load().(map[string]string)
		for _, srv := range cf.Configuration().Servers {
			m := Member{ID: nodeName(srv.ID), RaftAddr: string(srv.Address), Voter: srv.Suffrage == raft.Voter, Leader: srv.ID == id}
			if p, ok := peers[string(srv.ID)]; ok {
				m.Applied, m.ClientAddr, m.Reported = p.applied, p.client, p.seen
			} else if c := clients[string(srv.ID)]; c != "" {
				m.ClientAddr = c // a follower's, from the leader's pong
			}
			if srv.ID == n.rid {
				m.ClientAddr, m.Applied = n.cfg.ClientAddr, s.AppliedIndex
			}
			s.Members = append(s.Members, m)
		}
		sort.Slice(s.Members, func(i, j int) bool { return s.Members[i].ID < s.Members[j].ID })
	}
	return s
}

// Text is the status as "field:value" lines (RAFT INFO, INFO's # Raft).
func (s Status) Text() string {
	var b strings.Builder
	kv := func(k string, v any) { fmt.Fprintf(&b, "%s:%v\r\n", k, v) }
	kv("raft_node_id", s.NodeID)
	kv("raft_state", strings.ToLower(s.State))
	kv("raft_serving", boolInt(s.Serving))
	kv("raft_joining", boolInt(s.Joining))
	kv("raft_term", s.Term)
	kv("raft_leader_id", s.LeaderID)
	kv("raft_leader_addr", s.LeaderRaft)
	kv("raft_leader_client_addr", s.LeaderClient)
	kv("raft_commit_index", s.CommitIndex)
	kv("raft_applied_index", s.AppliedIndex)
	kv("raft_first_index", s.FirstIndex)
	kv("raft_last_index", s.LastIndex)
	kv("raft_last_contact_ms", s.LastContactMs)
	kv("raft_snapshot_index", s.SnapshotIndex)
	kv("raft_snapshots_installed", s.SnapshotsInstalled)
	kv("raft_appendfsync", s.AppendFsync)
	kv("raft_log_fsyncs", s.LogFsyncs)
	kv("raft_log_fsync_usec", s.LogFsyncNs/1000)
	kv("raft_leader_changes", s.LeaderChanges)
	kv("raft_pubsub_batches_dropped", s.PubsubDropped)
	kv("raft_clock_offset_ms", s.ClockOffsetMs)
	kv("raft_clock_quorum", s.ClockQuorum)
	kv("raft_clock_agreeing", s.ClockAgreeing)
	kv("raft_clock_voters", s.ClockVoters)
	kv("raft_clock_error_ms", s.ClockErrorMs)
	kv("raft_members", len(s.Members))
	for i, m := range s.Members {
		kv("raft_member"+strconv.Itoa(i), fmt.Sprintf("id=%s,raft_addr=%s,client_addr=%s,voter=%d,leader=%d,applied=%d",
			m.ID, m.RaftAddr, m.ClientAddr, boolInt(m.Voter), boolInt(m.Leader), m.Applied))
	}
	return b.String()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// SplitHostPort splits a client address for ROLE and INFO replication
// (host "" and port 0 when unknown).
func SplitHostPort(addr string) (string, int) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0
	}
	port, _ := strconv.Atoi(p)
	return h, port
}

// firstIndex is the oldest entry the log still holds (compaction moves it).
func firstIndex(l raft.LogStore) uint64 {
	i, _ := l.FirstIndex()
	return i
}

// goodReplicas does GoodReplicas (api.go).
func (n *Node) goodReplicas(maxLag int64) int {
	if !n.Serving() || n.fsrv == nil {
		return 0
	}
	cf := n.raft.GetConfiguration()
	if cf.Error() != nil {
		return 0
	}
	now := time.Now().Unix()
	good := 0
	n.fsrv.mu.Lock()
	for _, srv := range cf.Configuration().Servers {
		if srv.ID == n.rid {
			continue
		}
		if p, ok := n.fsrv.peers[string(srv.ID)]; ok && now-p.seen.Unix() <= maxLag {
			good++
		}
	}
	n.fsrv.mu.Unlock()
	return good
}
