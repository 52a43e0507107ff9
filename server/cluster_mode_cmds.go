package server

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"limitdb/engine"
	"limitdb/resp"
)

// CLUSTER's subcommands in cluster mode, with Redis 7.0.15's reply
// shapes and texts (cluster.c's clusterCommand). Each group is one shard:
// this node's (cluster_mode.go's shardView: its master and replicas, and
// the slots the engine says it owns) and the other groups of its cluster
// as the map has them (cluster_map.go). Slot assignment (ADDSLOTS, ADDSLOTSRANGE,
// DELSLOTS, DELSLOTSRANGE) is a replicated write: a follower forwards it
// to the leader (changesShared), which records it as the engine's
// LIMITDB.SLOTS effect, after claiming the slots in the directory when
// the group belongs to a cluster of groups (cluster_meet.go, with MEET).
// What needs Redis's cluster bus or slot migration (FAILOVER, SETSLOT,
// REPLICATE…) answers errClusterUnsupported.

const (
	errInvalidSlot      = "ERR Invalid slot"
	errInvalidSlotCount = "ERR Invalid slot or number of keys"
	errSlotRange        = "ERR Invalid or out of range slot"
	errNoSlotsEffect    = "ERR this build cannot record slot ownership (no LIMITDB.SLOTS)"
)

// errClusterUnsupported answers a subcommand limitdb has no use for (a
// shard is a Raft group, there is no cluster bus): Redis's error form,
// naming the subcommand and what does its work here.
func errClusterUnsupported(sub string) string {
	return "ERR CLUSTER " + strings.ToUpper(sub) + " is not supported by limitdb (a shard is a Raft group: members join with --join and fail over by Raft; slots move with CLUSTER MIGRATION)"
}

var clusterModeCmds = map[string]connHandler{
	"keyslot":               cmdClusterKeyslot,
	"countkeysinslot":       cmdClusterCountKeys,
	"getkeysinslot":         cmdClusterGetKeys,
	"myid":                  func(s *Server, cl *client, argv [][]byte) { cl.w.BulkString(s.myNodeID()) },
	"info":                  cmdClusterInfo,
	"slots":                 cmdClusterSlots,
	"shards":                cmdClusterShards,
	"nodes":                 cmdClusterNodes,
	"addslots":              cmdClusterAddSlots,
	"delslots":              cmdClusterAddSlots,
	"addslotsrange":         cmdClusterAddSlotsRange,
	"delslotsrange":         cmdClusterAddSlotsRange,
	"help":                  cmdClusterHelp,
	"links":                 func(s *Server, cl *client, argv [][]byte) { cl.w.EmptyArray() }, // no cluster bus
	"saveconfig":            func(s *Server, cl *client, argv [][]byte) { cl.w.OK() },         // the Raft log holds it
	"count-failure-reports": cmdClusterFailureReports,
	"replicas":              cmdClusterReplicas,
	"slaves":                cmdClusterReplicas,
	"meet":                  cmdClusterMeet,           // cluster_meet.go
	"set-config-epoch":      cmdClusterSetConfigEpoch, // cluster_meet.go
	"migration":             cmdClusterMigration,      // cluster_migration.go
}

func init() {
	registerConn(&engine.Command{Name: "asking", Arity: 1, Flags: "fast", Group: "cluster", Since: "3.0.0", Summary: "Signals that a cluster client is following an -ASK redirect."}, cmdAsking)
}

// cmdAsking: ASKING — OK in cluster mode (no slot is ever importing in
// this slice, so it changes nothing), Redis's disabled error otherwise.
func cmdAsking(s *Server, cl *client, argv [][]byte) {
	if !s.clusterMode {
		cl.w.Error(errClusterDisabled)
		return
	}
	cl.w.OK()
}

func cmdClusterUnsupported(s *Server, cl *client, argv [][]byte) {
	cl.w.Error(errClusterUnsupported(string(argv[1])))
}

// clusterChangesSlots: the slot-assignment subcommands and MEET change
// the group's replicated state, so a follower forwards them
// (changesShared); SET-CONFIG-EPOCH goes with them, so that its check
// reads the leader's record of the group.
func clusterChangesSlots(name string) bool {
	switch name {
	case "cluster|addslots", "cluster|addslotsrange", "cluster|delslots", "cluster|delslotsrange",
		"cluster|meet", "cluster|set-config-epoch", "cluster|migration":
		return true
	}
	return false
}

// cmdClusterKeyslot: CLUSTER KEYSLOT key.
func cmdClusterKeyslot(s *Server, cl *client, argv [][]byte) {
	cl.w.Int(int64(engine.KeySlot(argv[2])))
}

// cmdClusterCountKeys: CLUSTER COUNTKEYSINSLOT slot.
func cmdClusterCountKeys(s *Server, cl *client, argv [][]byte) {
	slot, ok := engine.ParseIntB(argv[2])
	if !ok {
		cl.w.Error(engine.ErrNotInt)
		return
	}
	if slot < 0 || slot >= engine.NumSlots {
		cl.w.Error(errInvalidSlot)
		return
	}
	cl.w.Int(s.eng.CountKeysInSlot(int(slot)))
}

// cmdClusterGetKeys: CLUSTER GETKEYSINSLOT slot count.
func cmdClusterGetKeys(s *Server, cl *client, argv [][]byte) {
	slot, ok := engine.ParseIntB(argv[2])
	if !ok {
		cl.w.Error(engine.ErrNotInt)
		return
	}
	count, ok := engine.ParseIntB(argv[3])
	if !ok {
		cl.w.Error(engine.ErrNotInt)
		return
	}
	if count < 0 || slot < 0 || slot >= engine.NumSlots {
		cl.w.Error(errInvalidSlotCount)
		return
	}
	n := s.eng.CountKeysInSlot(int(slot))
	keys := s.eng.KeysInSlot(int(slot), int(min(count, n)))
	cl.w.Array(len(keys))
	for _, k := range keys {
		cl.w.Bulk(k)
	}
}

// updateClusterState computes Redis's cluster_state ok: every slot is
// served, by this group or by one of the map's (unionSlots). The slot
// routing reads it for every keyed command, so it is kept, with the
// engine's SlotsGen it was computed at: the routing recomputes it when
// the owned set changed since (clusterState), which on a follower is the
// LIMITDB.SLOTS effect it applied, so the first keyed command after the
// leader's ADDSLOTS reached it sees the new state; installing a map
// (installMap), CLUSTER INFO and the cron recompute it too. A slot's own
// ownership is always checked exactly (OwnsSlot).
func (s *Server) updateClusterState() bool {
	s.clusterStateAt = s.eng.SlotsGen()
	s.clusterStateOK = s.unionSlots() == engine.NumSlots
	return s.clusterStateOK
}

// clusterState is clusterStateOK, recomputed first when the owned slots
// changed since (one comparison otherwise). The lock is held.
func (s *Server) clusterState() bool {
	if s.eng.SlotsGen() != s.clusterStateAt {
		return s.updateClusterState()
	}
	return s.clusterStateOK
}

// configEpoch is this group's master's config epoch (cluster_my_epoch):
// its index in the directory + 1, 0 while in no cluster, as a fresh Redis
// node's (engine lock held). Epochs are derived, not bumped: the
// directory arbitrates slots, not the highest epoch.
func (s *Server) configEpoch() uint64 { return uint64(s.eng.Shard().Index + 1) }

// cmdClusterInfo: CLUSTER INFO, Redis 7.0's fields in its order (the
// per-type message counters appear in Redis only once non-zero: limitdb
// has no cluster bus, so they never do), over every group of the map.
func cmdClusterInfo(s *Server, cl *client, argv [][]byte) {
	state := "fail"
	if s.updateClusterState() {
		state = "ok"
	}
	groups := s.clusterGroups()
	known := 1 // (a follower may not know every member's address: count the members)
	if s.node != nil {
		known = len(s.node.Status().Members)
	}
	pfail, fail, size := 0, 0, 0
	epoch := uint64(0)
	for i, g := range groups {
		n := g.slotCount()
		if n > 0 {
			size++
		}
		switch g.state {
		case linkPFail:
			pfail += n
		case linkFailed:
			fail += n
		}
		if i > 0 {
			known += len(g.nodes)
		}
		epoch = max(epoch, g.epoch())
	}
	assigned := s.unionSlots()
	var b []byte
	b = kv(b, "cluster_state", state)
	b = kv(b, "cluster_slots_assigned", assigned)
	b = kv(b, "cluster_slots_ok", assigned-pfail-fail)
	b = kv(b, "cluster_slots_pfail", pfail)
	b = kv(b, "cluster_slots_fail", fail)
	b = kv(b, "cluster_known_nodes", known)
	b = kv(b, "cluster_size", max(size, 1)) // (a fresh Redis node's, before its first state update)
	b = kv(b, "cluster_current_epoch", epoch)
	b = kv(b, "cluster_my_epoch", groups[0].epoch())
	b = kv(b, "cluster_stats_messages_sent", 0)
	b = kv(b, "cluster_stats_messages_received", 0)
	b = kv(b, "total_cluster_links_buffer_limit_exceeded", 0)
	cl.w.Verbatim(string(b))
}

// writeSlotNode is one node of a CLUSTER SLOTS range: ip, port, id and
// the networking metadata map (empty: no hostname).
func writeSlotNode(w *resp.Writer, n shardNode) {
	w.Array(4)
	w.BulkString(n.host)
	w.Int(int64(n.port))
	w.BulkString(n.id)
	w.Map(0)
}

// cmdClusterSlots: CLUSTER SLOTS — one entry per owned range of every
// group, by slot: start, end, the master, then the replicas.
func cmdClusterSlots(s *Server, cl *client, argv [][]byte) {
	type slotRange struct {
		r [2]int
		g *mapGroup
	}
	groups := s.clusterGroups()
	var ranges []slotRange
	for i := range groups {
		for _, r := range groups[i].owned {
			ranges = append(ranges, slotRange{r, &groups[i]})
		}
	}
	slices.SortFunc(ranges, func(a, b slotRange) int { return a.r[0] - b.r[0] })
	cl.w.Array(len(ranges))
	for _, sr := range ranges {
		cl.w.Array(2 + len(sr.g.nodes))
		cl.w.Int(int64(sr.r[0]))
		cl.w.Int(int64(sr.r[1]))
		for _, n := range sr.g.nodes {
			writeSlotNode(&cl.w, n)
		}
	}
}

// cmdClusterShards: CLUSTER SHARDS — a shard per group, this node's
// first: its slots as flat start, end pairs and its nodes (7.0.15's
// seven fields; no hostname). Redis lists a master without slots too.
func cmdClusterShards(s *Server, cl *client, argv [][]byte) {
	groups := s.clusterGroups()
	cl.w.Array(len(groups))
	for _, g := range groups {
		cl.w.Map(2)
		cl.w.BulkString("slots")
		cl.w.Array(2 * len(g.owned))
		for _, r := range g.owned {
			cl.w.Int(int64(r[0]))
			cl.w.Int(int64(r[1]))
		}
		cl.w.BulkString("nodes")
		cl.w.Array(len(g.nodes))
		health := "online"
		if g.state == linkFailed {
			health = "failed"
		}
		for _, n := range g.nodes {
			cl.w.Map(7)
			cl.w.BulkString("id")
			cl.w.BulkString(n.id)
			cl.w.BulkString("port")
			cl.w.Int(int64(n.port))
			cl.w.BulkString("ip")
			cl.w.BulkString(n.host)
			cl.w.BulkString("endpoint")
			cl.w.BulkString(n.host)
			cl.w.BulkString("role")
			if n.master {
				cl.w.BulkString("master")
			} else {
				cl.w.BulkString("replica")
			}
			cl.w.BulkString("replication-offset")
			cl.w.Int(n.offset)
			cl.w.BulkString("health")
			cl.w.BulkString(health)
		}
	}
}

// nodesLine is a node's CLUSTER NODES line: id ip:port@cport flags master
// ping-sent pong-recv config-epoch link-state slots… A group of the map
// that has not answered lately is disconnected and its nodes fail? or
// fail (cluster_map.go's linkState).
func nodesLine(b []byte, g *mapGroup, n shardNode) []byte {
	flags := "master"
	master := "-"
	if !n.master {
		flags, master = "slave", g.nodes[0].id
	}
	if n.myself {
		flags = "myself," + flags
	}
	link := "connected"
	switch g.state {
	case linkPFail:
		flags, link = flags+",fail?", "disconnected"
	case linkFailed:
		flags, link = flags+",fail", "disconnected"
	}
	b = fmt.Appendf(b, "%s %s:%d@%d %s %s 0 0 %d %s", n.id, n.host, n.port, n.busPort, flags, master, g.epoch(), link)
	if n.master {
		for _, r := range g.owned {
			if r[0] == r[1] {
				b = fmt.Appendf(b, " %d", r[0])
			} else {
				b = fmt.Appendf(b, " %d-%d", r[0], r[1])
			}
		}
	}
	return append(b, '\n')
}

// cmdClusterNodes: CLUSTER NODES — this node's group first, then the
// map's, each master first (Redis lists itself where its dict puts it:
// clients find "myself" by flag).
func cmdClusterNodes(s *Server, cl *client, argv [][]byte) {
	var b []byte
	groups := s.clusterGroups()
	for i := range groups {
		for _, n := range groups[i].nodes {
			b = nodesLine(b, &groups[i], n)
		}
	}
	cl.w.Verbatim(string(b))
}

// findNode is the group of the node with id, and its position in it.
func findNode(groups []mapGroup, id string) (*mapGroup, int) {
	for i := range groups {
		for j, n := range groups[i].nodes {
			if n.id == id {
				return &groups[i], j
			}
		}
	}
	return nil, -1
}

// cmdClusterReplicas: CLUSTER REPLICAS|SLAVES node-id — the master's
// replicas as NODES lines.
func cmdClusterReplicas(s *Server, cl *client, argv [][]byte) {
	id := string(argv[2])
	g, i := findNode(s.clusterGroups(), id)
	if g == nil {
		cl.w.Error("ERR Unknown node " + id)
		return
	}
	if !g.nodes[i].master {
		cl.w.Error("ERR The specified node is not a master")
		return
	}
	reps := g.nodes[1:]
	cl.w.Array(len(reps))
	for _, r := range reps {
		cl.w.BulkString(strings.TrimSuffix(string(nodesLine(nil, g, r)), "\n"))
	}
}

// cmdClusterFailureReports: CLUSTER COUNT-FAILURE-REPORTS node-id — 0
// for a known node: Raft decides failures, nodes file no reports.
func cmdClusterFailureReports(s *Server, cl *client, argv [][]byte) {
	if g, _ := findNode(s.clusterGroups(), string(argv[2])); g == nil {
		cl.w.Error("ERR Unknown node " + string(argv[2]))
		return
	}
	cl.w.Int(0)
}

// parseSlot is Redis's getSlotOrReply.
func parseSlot(a []byte) (int, bool) {
	n, ok := engine.ParseIntB(a)
	if !ok || n < 0 || n >= engine.NumSlots {
		return 0, false
	}
	return int(n), true
}

// slotClaims is Redis's checkSlotAssignmentsOrReply over the slots of
// one command: each slot free (ADD) or assigned (DEL), and named once.
type slotClaims struct {
	del  bool
	seen map[int]bool
}

func (c *slotClaims) check(s *Server, start, end int) string {
	for slot := start; slot <= end; slot++ {
		owned := s.eng.OwnsSlot(slot)
		if c.del && !owned {
			return "ERR Slot " + strconv.Itoa(slot) + " is already unassigned"
		}
		if !c.del && owned {
			return "ERR Slot " + strconv.Itoa(slot) + " is already busy"
		}
		if c.seen[slot] {
			return "ERR Slot " + strconv.Itoa(slot) + " specified multiple times"
		}
		c.seen[slot] = true
	}
	return ""
}

// cmdClusterAddSlots: CLUSTER ADDSLOTS|DELSLOTS slot [slot …] — every
// argument parsed first, then each slot checked, as Redis.
func cmdClusterAddSlots(s *Server, cl *client, argv [][]byte) {
	slots := make([]int, 0, len(argv)-2)
	for _, a := range argv[2:] {
		slot, ok := parseSlot(a)
		if !ok {
			cl.w.Error(errSlotRange)
			return
		}
		slots = append(slots, slot)
	}
	c := slotClaims{del: strings.EqualFold(string(argv[1]), "delslots"), seen: map[int]bool{}}
	ranges := make([][2]int, 0, len(slots))
	for _, slot := range slots {
		if msg := c.check(s, slot, slot); msg != "" {
			cl.w.Error(msg)
			return
		}
		ranges = append(ranges, [2]int{slot, slot})
	}
	s.changeSlots(cl, c.del, ranges)
}

// cmdClusterAddSlotsRange: CLUSTER ADDSLOTSRANGE|DELSLOTSRANGE start end
// [start end …] — each pair parsed and checked in turn, as Redis.
func cmdClusterAddSlotsRange(s *Server, cl *client, argv [][]byte) {
	if len(argv)%2 != 0 {
		cl.w.Error(engine.ErrWrongArgs("cluster|" + strings.ToLower(string(argv[1]))))
		return
	}
	c := slotClaims{del: strings.EqualFold(string(argv[1]), "delslotsrange"), seen: map[int]bool{}}
	var ranges [][2]int
	for i := 2; i < len(argv); i += 2 {
		start, ok1 := parseSlot(argv[i])
		end, ok2 := parseSlot(argv[i+1])
		if !ok1 || !ok2 {
			cl.w.Error(errSlotRange)
			return
		}
		if start > end {
			cl.w.Error(fmt.Sprintf("ERR start slot number %d is greater than end slot number %d", start, end))
			return
		}
		if msg := c.check(s, start, end); msg != "" {
			cl.w.Error(msg)
			return
		}
		ranges = append(ranges, [2]int{start, end})
	}
	s.changeSlots(cl, c.del, ranges)
}

// changeSlots records the assignment through the door, as the engine's
// LIMITDB.SLOTS ADD|DEL start end [start end …] effect (replicated: on a
// Raft leader it is committed before the reply goes, exec's ticket). In
// a group that belongs to a cluster of groups the directory takes part
// (changeSlotsInCluster, cluster_meet.go).
func (s *Server) changeSlots(cl *client, del bool, ranges [][2]int) {
	if s.node != nil && s.eng.Shard().Index >= 0 {
		s.changeSlotsInCluster(cl, del, ranges)
		return
	}
	op := "ADD"
	if del {
		op = "DEL"
	}
	s.finishSlots(cl, s.execEffect(appendRangeArgs(effectArgv("LIMITDB.SLOTS", op), ranges)))
}

// cmdClusterHelp: CLUSTER HELP, Redis 7.0's text.
func cmdClusterHelp(s *Server, cl *client, argv [][]byte) {
	help(cl,
		"CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"ADDSLOTS <slot> [<slot> ...]",
		"    Assign slots to current node.",
		"ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
		"    Assign slots which are between <start-slot> and <end-slot> to current node.",
		"BUMPEPOCH",
		"    Advance the cluster config epoch.",
		"COUNT-FAILURE-REPORTS <node-id>",
		"    Return number of failure reports for <node-id>.",
		"COUNTKEYSINSLOT <slot>",
		"    Return the number of keys in <slot>.",
		"DELSLOTS <slot> [<slot> ...]",
		"    Delete slots information from current node.",
		"DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
		"    Delete slots information which are between <start-slot> and <end-slot> from current node.",
		"FAILOVER [FORCE|TAKEOVER]",
		"    Promote current replica node to being a master.",
		"FORGET <node-id>",
		"    Remove a node from the cluster.",
		"GETKEYSINSLOT <slot> <count>",
		"    Return key names stored by current node in a slot.",
		"FLUSHSLOTS",
		"    Delete current node own slots information.",
		"INFO",
		"    Return information about the cluster.",
		"KEYSLOT <key>",
		"    Return the hash slot for <key>.",
		"MEET <ip> <port> [<bus-port>]",
		"    Connect nodes into a working cluster.",
		"MYID",
		"    Return the node id.",
		"NODES",
		"    Return cluster configuration seen by node. Output format:",
		"    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
		"REPLICATE <node-id>",
		"    Configure current node as replica to <node-id>.",
		"RESET [HARD|SOFT]",
		"    Reset current node (default: soft).",
		"SET-CONFIG-EPOCH <epoch>",
		"    Set config epoch of current node.",
		"SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
		"    Set slot state.",
		"REPLICAS <node-id>",
		"    Return <node-id> replicas.",
		"SAVECONFIG",
		"    Force saving cluster configuration on disk.",
		"SLOTS",
		"    Return information about slots range mappings. Each range is made of:",
		"    start, end, master and replicas IP addresses, ports and ids",
		"SHARDS",
		"    Return information about slot range mappings and the nodes associated with them.",
		"LINKS",
		"    Return information about all network links between this node and its peers.",
		"    Output format is an array where each array element is a map containing attributes of a link",
		"HELP",
		"    Prints this help.",
	)
}
