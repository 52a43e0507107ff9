package engine

// The directory (issue 22, several groups): a cluster of several Raft
// groups has one arbiter of slot assignment, the directory, which is the
// replicated state of one of the groups (the first a MEET reached). It
// holds the groups of the cluster (a small index each, and the
// inter-node addresses of their members: seeds to reach them) and, per
// slot, the group that owns it. ADDSLOTS in any group claims the slots in
// the directory first (the commit point: CLAIM is refused for a slot
// another group owns), then records LIMITDB.SLOTS ADD in its own log;
// DELSLOTS records LIMITDB.SLOTS DEL first, then releases. Every group
// also holds its own record (ShardRecord): its index and how to reach the
// directory.
//
// STUB: the API below is fixed; the engine helper implements it (state,
// the LIMITDB.DIRECTORY effects, the snapshot aux field, the digest).

// ShardRecord is this group's place in a cluster of groups.
type ShardRecord struct {
	// Index is this group's index in the directory, -1 while the group
	// belongs to no cluster (it arbitrates its own slots alone).
	Index int
	// Directory: this group holds the directory (its Index is 0).
	Directory bool
	// DirSeeds are the inter-node addresses of the directory group's
	// members when this group is not the directory.
	DirSeeds []string
}

// DirGroup is one group of the directory.
type DirGroup struct {
	Index int
	Seeds []string // inter-node (Raft) addresses of its members
}

// Shard is this group's record (caller holds the engine lock).
func (e *Engine) Shard() ShardRecord { return ShardRecord{Index: -1} }

// DirGroups lists the directory's groups by index (nil unless this group
// holds the directory).
func (e *Engine) DirGroups() []DirGroup { return nil }

// DirOwner is the index of the group the directory assigns slot to, -1
// when free (and when this group holds no directory).
func (e *Engine) DirOwner(slot int) int { return -1 }

// DirGen counts the changes of the directory and of the group's record
// (each effect executed or applied, a snapshot load, a reset).
func (e *Engine) DirGen() uint64 { return 0 }
