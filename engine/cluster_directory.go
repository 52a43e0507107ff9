package engine

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

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
// Both change only through the effect LIMITDB.DIRECTORY, which every
// member applies from the log. Each subcommand reads nothing but its
// arguments and the state (ADDGROUP's index is the index of a group that
// shares a seed, else the largest plus one), so a follower that applies
// the command reaches the leader's state and reply: the command is its
// own effect. Each is all or nothing: a refusal changes nothing and
// records nothing. The state travels in snapshots as the aux field
// limitdb-directory.

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

// directory is Engine.dir: the record of a group in a cluster and, when
// it holds the directory, the directory itself.
type directory struct {
	rec ShardRecord // Index >= 0
	// groups, in the directory group only: group i at position i (FOUND
	// makes group 0, ADDGROUP appends the next index; none is removed)
	groups []DirGroup
	// owner, in the directory group only: per slot the owning group's
	// index plus one, 0 for a free slot (32 KiB)
	owner []uint16
}

// maxDirGroups bounds a directory's groups: an index plus one fits the
// owner table's uint16, and a cluster of more groups than slots would
// leave some with none.
const maxDirGroups = NumSlots

// auxDirectory is the directory and the group's record in a snapshot
// (encodeDirectory), absent while the group is in no cluster.
const auxDirectory = "limitdb-directory"

// limitdb's own errors of LIMITDB.DIRECTORY (Redis has no directory); a
// slot another group owns gets Redis's ErrSlotBusy / ErrSlotUnassigned
// (slot_owner.go), which CLUSTER ADDSLOTS and DELSLOTS pass on.
const (
	// ErrDirInCluster: FOUND in a group that has an index, JOINED in one
	// that holds the directory or has another index.
	ErrDirInCluster = "ERR this group already belongs to a cluster"
	// ErrDirNone: ADDGROUP, CLAIM, RELEASE or SEEDS in a group that
	// holds no directory.
	ErrDirNone = "ERR this group holds no directory"
	// ErrDirSeeds: seeds that are not comma-separated non-empty
	// addresses without spaces.
	ErrDirSeeds = "ERR invalid seeds"
	// ErrDirIndex: a group index that is not an integer in range (JOINED:
	// 1.., index 0 being the directory group's).
	ErrDirIndex = "ERR invalid group index"
	// ErrDirFull: ADDGROUP of a new group when maxDirGroups exist.
	ErrDirFull = "ERR the directory is full"
)

// ErrDirNoGroup is limitdb's reply to CLAIM, RELEASE or SEEDS of an index
// the directory has no group at.
func ErrDirNoGroup(index int) string {
	return "ERR no group " + strconv.Itoa(index) + " in the directory"
}

var errDirectory = errors.New("bad directory")

func init() {
	const flags = "write admin noscript loading stale"
	Register(&Command{Name: "limitdb.directory", Arity: -2, Group: "server", Since: "1.0.0", Summary: "The effect form of the directory of a cluster of Raft groups (cluster mode).", Subs: []*Command{
		{Name: "found", Arity: 3, Flags: flags, Group: "server", Since: "1.0.0", Summary: "Makes this group the directory, group 0, owning its own slots (an effect).", Run: cmdDirFound},
		{Name: "addgroup", Arity: -3, Flags: flags, Group: "server", Since: "1.0.0", Summary: "Adds a group to the directory, or finds it by a shared seed, and assigns it slot ranges (an effect).", Run: cmdDirAddGroup},
		{Name: "claim", Arity: -5, Flags: flags, Group: "server", Since: "1.0.0", Summary: "Assigns slot ranges to a group of the directory (an effect).", Run: cmdDirClaim},
		{Name: "release", Arity: -5, Flags: flags, Group: "server", Since: "1.0.0", Summary: "Frees a group's slot ranges in the directory (an effect).", Run: cmdDirRelease},
		{Name: "seeds", Arity: 4, Flags: flags, Group: "server", Since: "1.0.0", Summary: "Replaces a directory group's seeds (an effect).", Run: cmdDirSeeds},
		{Name: "joined", Arity: 4, Flags: flags, Group: "server", Since: "1.0.0", Summary: "Records this group's index in a cluster and the directory's seeds (an effect).", Run: cmdDirJoined},
	}})
}

// Shard is this group's record (caller holds the engine lock).
func (e *Engine) Shard() ShardRecord {
	if e.dir == nil {
		return ShardRecord{Index: -1}
	}
	r := e.dir.rec
	r.DirSeeds = slices.Clone(r.DirSeeds)
	return r
}

// DirGroups lists the directory's groups by index (nil unless this group
// holds the directory).
func (e *Engine) DirGroups() []DirGroup {
	if e.dir == nil || e.dir.groups == nil {
		return nil
	}
	out := make([]DirGroup, len(e.dir.groups))
	for i, g := range e.dir.groups {
		out[i] = DirGroup{Index: g.Index, Seeds: slices.Clone(g.Seeds)}
	}
	return out
}

// DirOwner is the index of the group the directory assigns slot to, -1
// when free (and when this group holds no directory).
func (e *Engine) DirOwner(slot int) int {
	if e.dir == nil || e.dir.owner == nil || uint(slot) >= NumSlots {
		return -1
	}
	return int(e.dir.owner[slot]) - 1
}

// DirGen counts the changes of the directory and of the group's record
// (each effect executed or applied, a snapshot load, a reset).
func (e *Engine) DirGen() uint64 { return e.dirGen }

// SeedsArg is seeds as LIMITDB.DIRECTORY's one seeds argument.
func SeedsArg(seeds []string) string { return strings.Join(seeds, ",") }

// parseSeeds reads a seeds argument: comma-separated addresses, none
// empty or holding a space or control byte (the aux form separates by
// them).
func parseSeeds(b []byte) ([]string, bool) {
	if len(b) == 0 {
		return nil, false
	}
	seeds := strings.Split(string(b), ",")
	for _, s := range seeds {
		if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return nil, false
		}
	}
	return seeds, true
}

// dirChanged ends a subcommand that changed the state: the command is its
// own effect (Dirty moved) and DirGen moves.
func (c *Ctx) dirChanged() {
	c.E.Stats.Dirty++
	c.E.dirGen++
}

// dirHolder is the directory when this group holds it, else it writes
// ErrDirNone and returns nil.
func (c *Ctx) dirHolder() *directory {
	if d := c.E.dir; d != nil && d.rec.Directory {
		return d
	}
	c.W.Error(ErrDirNone)
	return nil
}

// dirGroupArg reads a group index of the directory this group holds
// (else ErrDirNone).
func (c *Ctx) dirGroupArg(b []byte) (*directory, int, bool) {
	d := c.dirHolder()
	if d == nil {
		return nil, 0, false
	}
	n, ok := ParseIntB(b)
	if !ok || n < 0 || n >= maxDirGroups {
		c.W.Error(ErrDirIndex)
		return nil, 0, false
	}
	if int(n) >= len(d.groups) {
		c.W.Error(ErrDirNoGroup(int(n)))
		return nil, 0, false
	}
	return d, int(n), true
}

// cmdDirFound: LIMITDB.DIRECTORY FOUND seeds — this group becomes the
// directory: Index 0, group 0 with seeds, every slot it owns (its
// LIMITDB.SLOTS set) assigned to 0. ErrDirInCluster when the group has an
// index already. +OK.
func cmdDirFound(c *Ctx, argv [][]byte) {
	seeds, ok := parseSeeds(argv[2])
	if !ok {
		c.W.Error(ErrDirSeeds)
		return
	}
	if c.E.dir != nil {
		c.W.Error(ErrDirInCluster)
		return
	}
	d := &directory{rec: ShardRecord{Index: 0, Directory: true}, groups: []DirGroup{{Index: 0, Seeds: seeds}}, owner: make([]uint16, NumSlots)}
	for _, r := range c.E.owned.ranges() {
		d.assign(r[0], r[1], 0)
	}
	c.E.dir = d
	c.dirChanged()
	c.W.OK()
}

// cmdDirAddGroup: LIMITDB.DIRECTORY ADDGROUP seeds [start end ...] — the
// group of seeds joins the directory: when an existing group shares a
// seed (a retried MEET) it is that group (the lowest such index), whose
// seeds become these, else the next index. Its ranges are claimed as
// CLAIM's. Reply: the index. ErrDirNone outside the directory group;
// Redis's ErrSlotBusy for the first slot (in argument order) another
// group owns.
func cmdDirAddGroup(c *Ctx, argv [][]byte) {
	d := c.dirHolder()
	if d == nil {
		return
	}
	seeds, ok := parseSeeds(argv[2])
	if !ok {
		c.W.Error(ErrDirSeeds)
		return
	}
	ranges, ok := c.parseSlotRanges(argv[3:])
	if !ok {
		return
	}
	idx := d.bySeed(seeds)
	if idx < 0 {
		if len(d.groups) >= maxDirGroups {
			c.W.Error(ErrDirFull)
			return
		}
		idx = len(d.groups)
	}
	if busy := d.busy(ranges, idx); busy >= 0 {
		c.W.Error(ErrSlotBusy(busy))
		return
	}
	ch := false
	if idx == len(d.groups) {
		d.groups = append(d.groups, DirGroup{Index: idx, Seeds: seeds})
		ch = true
	} else if !slices.Equal(d.groups[idx].Seeds, seeds) {
		d.groups[idx].Seeds = seeds
		ch = true
	}
	c.dirAssign(d, ranges, idx, ch)
	c.W.Int(int64(idx))
}

// cmdDirClaim: LIMITDB.DIRECTORY CLAIM index start end [start end ...] —
// every slot of the ranges becomes index's; a slot free or index's
// already is fine, the first (in argument order) another group owns gets
// Redis's ErrSlotBusy and nothing changes. +OK.
func cmdDirClaim(c *Ctx, argv [][]byte) { c.dirClaimRelease(argv, true) }

// cmdDirRelease: LIMITDB.DIRECTORY RELEASE index start end [start end
// ...] — index's slots of the ranges become free; a free slot is fine,
// the first (in argument order) another group owns gets Redis's
// ErrSlotUnassigned (for index it is not assigned) and nothing changes.
// +OK.
func cmdDirRelease(c *Ctx, argv [][]byte) { c.dirClaimRelease(argv, false) }

// dirClaimRelease is CLAIM (claim) or RELEASE.
func (c *Ctx) dirClaimRelease(argv [][]byte, claim bool) {
	d, idx, ok := c.dirGroupArg(argv[2])
	if !ok {
		return
	}
	ranges, ok := c.parseSlotRanges(argv[3:])
	if !ok {
		return
	}
	if other := d.busy(ranges, idx); other >= 0 {
		if claim {
			c.W.Error(ErrSlotBusy(other))
		} else {
			c.W.Error(ErrSlotUnassigned(other))
		}
		return
	}
	to := idx
	if !claim {
		to = -1
	}
	c.dirAssign(d, ranges, to, false)
	c.W.OK()
}

// cmdDirSeeds: LIMITDB.DIRECTORY SEEDS index seeds — replaces the seeds
// of group index. +OK.
func cmdDirSeeds(c *Ctx, argv [][]byte) {
	d, idx, ok := c.dirGroupArg(argv[2])
	if !ok {
		return
	}
	seeds, ok := parseSeeds(argv[3])
	if !ok {
		c.W.Error(ErrDirSeeds)
		return
	}
	if !slices.Equal(d.groups[idx].Seeds, seeds) {
		d.groups[idx].Seeds = seeds
		c.dirChanged()
	}
	c.W.OK()
}

// cmdDirJoined: LIMITDB.DIRECTORY JOINED index dirseeds — this group is
// group index (1..) of a cluster whose directory group's members are
// dirseeds (again: the seeds are replaced). ErrDirInCluster when the
// group holds a directory or has another index. +OK.
func cmdDirJoined(c *Ctx, argv [][]byte) {
	n, ok := ParseIntB(argv[2])
	if !ok || n < 1 || n >= maxDirGroups {
		c.W.Error(ErrDirIndex)
		return
	}
	seeds, ok := parseSeeds(argv[3])
	if !ok {
		c.W.Error(ErrDirSeeds)
		return
	}
	idx := int(n)
	if d := c.E.dir; d != nil {
		if d.rec.Directory || d.rec.Index != idx {
			c.W.Error(ErrDirInCluster)
			return
		}
		if slices.Equal(d.rec.DirSeeds, seeds) {
			c.W.OK()
			return
		}
	}
	c.E.dir = &directory{rec: ShardRecord{Index: idx, DirSeeds: seeds}}
	c.dirChanged()
	c.W.OK()
}

// dirAssign gives ranges to group idx (-1: frees them) and ends the
// subcommand as changed when a slot changed or ch says something else did.
func (c *Ctx) dirAssign(d *directory, ranges [][2]int, idx int, ch bool) {
	for _, r := range ranges {
		ch = d.assign(r[0], r[1], idx) || ch
	}
	if ch {
		c.dirChanged()
	}
}

// bySeed is the lowest index of a group sharing one of seeds, or -1.
func (d *directory) bySeed(seeds []string) int {
	for _, g := range d.groups {
		for _, s := range seeds {
			if slices.Contains(g.Seeds, s) {
				return g.Index
			}
		}
	}
	return -1
}

// busy is the first slot of ranges (in argument order) a group other
// than idx owns, or -1.
func (d *directory) busy(ranges [][2]int, idx int) int {
	for _, r := range ranges {
		for s := r[0]; s <= r[1]; s++ {
			if o := d.owner[s]; o != 0 && int(o) != idx+1 {
				return s
			}
		}
	}
	return -1
}

// assign gives [s, e] to group idx (-1: frees it) and reports whether a
// slot changed.
func (d *directory) assign(s, e, idx int) bool {
	v := uint16(idx + 1)
	ch := false
	for i := s; i <= e; i++ {
		if d.owner[i] != v {
			d.owner[i] = v
			ch = true
		}
	}
	return ch
}

// encodeDirectory is the aux value of limitdb-directory, lines separated
// by '\n': a member group's record "member index dirseeds", or, in the
// directory group, "directory" then per group "group index seeds
// [start-end ...]" (its slots as encodeSlotRanges' ranges). "" for nil.
func encodeDirectory(d *directory) string {
	if d == nil {
		return ""
	}
	var sb strings.Builder
	if !d.rec.Directory {
		sb.WriteString("member ")
		sb.WriteString(strconv.Itoa(d.rec.Index))
		sb.WriteByte(' ')
		sb.WriteString(SeedsArg(d.rec.DirSeeds))
		return sb.String()
	}
	// each group's ranges, in one pass over the owner table
	rs := make([][][2]int, len(d.groups))
	for s := 0; s < NumSlots; {
		o, e := d.owner[s], s
		for e+1 < NumSlots && d.owner[e+1] == o {
			e++
		}
		if o != 0 {
			rs[o-1] = append(rs[o-1], [2]int{s, e})
		}
		s = e + 1
	}
	sb.WriteString("directory")
	for i, g := range d.groups {
		sb.WriteString("\ngroup ")
		sb.WriteString(strconv.Itoa(g.Index))
		sb.WriteByte(' ')
		sb.WriteString(SeedsArg(g.Seeds))
		for _, r := range rs[i] {
			sb.WriteByte(' ')
			sb.WriteString(strconv.Itoa(r[0]))
			sb.WriteByte('-')
			sb.WriteString(strconv.Itoa(r[1]))
		}
	}
	return sb.String()
}

// decodeDirectory reads encodeDirectory's form, refusing what no writer
// produces (groups out of order, a slot of two groups, bad seeds).
func decodeDirectory(v string) (*directory, error) {
	lines := strings.Split(v, "\n")
	f := strings.Split(lines[0], " ")
	if f[0] == "member" {
		if len(lines) != 1 || len(f) != 3 {
			return nil, errDirectory
		}
		n, err := strconv.Atoi(f[1])
		seeds, ok := parseSeeds([]byte(f[2]))
		if err != nil || n < 1 || n >= maxDirGroups || !ok {
			return nil, errDirectory
		}
		return &directory{rec: ShardRecord{Index: n, DirSeeds: seeds}}, nil
	}
	if lines[0] != "directory" || len(lines) < 2 || len(lines)-1 > maxDirGroups {
		return nil, errDirectory
	}
	d := &directory{rec: ShardRecord{Index: 0, Directory: true}, owner: make([]uint16, NumSlots)}
	for i, l := range lines[1:] {
		f := strings.Split(l, " ")
		if len(f) < 3 || f[0] != "group" || f[1] != strconv.Itoa(i) {
			return nil, errDirectory
		}
		seeds, ok := parseSeeds([]byte(f[2]))
		if !ok {
			return nil, errDirectory
		}
		b, err := decodeSlotRanges(strings.Join(f[3:], " "))
		if err != nil {
			return nil, errDirectory
		}
		for _, r := range b.ranges() {
			if d.busy([][2]int{r}, -2) >= 0 { // -2: any owner is another group
				return nil, errDirectory
			}
			d.assign(r[0], r[1], i)
		}
		d.groups = append(d.groups, DirGroup{Index: i, Seeds: seeds})
	}
	return d, nil
}
