package server

// Whether this server is alone, a leader or a follower is asked here and
// nowhere else: the other files ask one of these questions, never whether
// s.node is nil. A server without a node (appendonly no, tests,
// embedding) executes everything and replicates nothing; with one, the
// node's role is read per command (Serving: the engine lock is held, so
// the answer holds until the lock is released). Where a command runs is
// decided in cluster_route.go (place).
//
// Why predicates over the concrete *cluster.Node rather than a
// standalone node of the same shape behind an interface: the role is
// asked several times per command (route, the ticket after the door,
// loopable), and through an interface each question is a dynamic call
// the compiler cannot inline, where the direct form is a nil test and an
// atomic load, inlined. The three questions of a GET took 3.4 ns (median
// of 10) direct and 12.2 ns through an interface, about 5 % of a
// pipelined GET's 170 ns in BenchmarkBatchGet; the whole-command
// benchmarks (BenchmarkBatch*, BenchmarkServeLoopback) could not tell
// the two apart on the loaded 2-core machine (±30 %). A standalone node
// would also need a role question of its own (BGSAVE, INFO's raft
// section and the RAFT commands differ without a log), so the nil test
// would come back as a method.

// replicated reports whether this server is a Raft node (a durable
// cluster of one included): its state goes through the log, and the
// cluster's commands, sections and settings apply.
func (s *Server) replicated() bool { return s.node != nil }

// executes reports whether this node changes state on its own (active
// expiry, eviction) and runs every command here: a server without a
// node, or a serving leader. Followers only apply what the leader
// decided. The lock is held.
func (s *Server) executes() bool { return s.node == nil || s.node.Serving() }

// gated reports whether this node's replies wait for the commit of what
// they changed or read (a ticket): a serving leader. The lock is held.
func (s *Server) gated() bool { return s.node != nil && s.node.Serving() }

// follower reports whether this node is a member that does not serve: it
// forwards what may write to the leader (route) and serves reads from
// what it applied. The lock is held.
func (s *Server) follower() bool { return s.node != nil && !s.node.Serving() }
