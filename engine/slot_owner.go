package engine

import (
	"errors"
	"strconv"
	"strings"
)

// The slots this Raft group owns (issue 22) are replicated state: the
// set changes only through the LIMITDB.SLOTS effect, which every member
// applies from the log, and travels in snapshots as the aux field
// limitdb-slots. Redis keeps slot ownership in nodes.conf, never in
// dump.rdb; limitdb's snapshot is its group's whole replicated state, so
// the field is there, and redis-server skips it (an unknown aux field).

// auxSlots is the owned slots in a snapshot: the ranges of
// encodeSlotRanges, absent when the group owns none.
const auxSlots = "limitdb-slots"

var errSlotRange = errors.New("bad slot range")

// Redis's error texts (cluster.c) for a slot that is given and cannot
// be; the server's CLUSTER ADDSLOTS, ADDSLOTSRANGE and DELSLOTS share them.
const (
	ErrSlotInvalid = "ERR Invalid or out of range slot"
)

// ErrSelectCluster is Redis's SELECT of a database other than 0 in
// cluster mode (selectCommand), for a client's SELECT (the server) and a
// script's (luavm).
const ErrSelectCluster = "ERR SELECT is not allowed in cluster mode"

// ErrSlotBusy is Redis's reply to ADDSLOTS of a slot that is assigned.
func ErrSlotBusy(slot int) string { return "ERR Slot " + strconv.Itoa(slot) + " is already busy" }

// ErrSlotUnassigned is Redis's reply to DELSLOTS of a slot nobody owns.
func ErrSlotUnassigned(slot int) string {
	return "ERR Slot " + strconv.Itoa(slot) + " is already unassigned"
}

// ErrSlotOrder is Redis's ADDSLOTSRANGE reply to a range whose start is
// past its end.
func ErrSlotOrder(start, end int) string {
	return "ERR start slot number " + strconv.Itoa(start) + " is greater than end slot number " + strconv.Itoa(end)
}

func init() {
	Register(&Command{Name: "limitdb.slots", Arity: -2, Group: "server", Since: "1.0.0", Summary: "The effect form of hash-slot ownership changes (cluster mode).", Subs: []*Command{
		{Name: "add", Arity: -4, Flags: "write admin noscript loading stale", Group: "server", Since: "1.0.0", Summary: "Makes this group own slot ranges (an effect: how CLUSTER ADDSLOTS replicates).", Run: cmdLimitdbSlotsAdd},
		{Name: "del", Arity: -4, Flags: "write admin noscript loading stale", Group: "server", Since: "1.0.0", Summary: "Gives up slot ranges (an effect: how CLUSTER DELSLOTS replicates).", Run: cmdLimitdbSlotsDel},
		// a slot handover (slot_migration.go)
		{Name: "migrate", Arity: -6, Flags: "write admin noscript loading stale", Group: "server", Since: "1.0.0", Summary: "Starts moving owned slot ranges to another group (an effect of a handover's source).", Run: cmdSlotsMigrate},
		{Name: "freeze", Arity: -3, Flags: "write admin noscript loading stale", Group: "server", Since: "1.0.0", Summary: "Stops executing a migration's slots (an effect of a handover's source).", Run: cmdSlotsFreeze},
		{Name: "done", Arity: 3, Flags: "write admin noscript loading stale", Group: "server", Since: "1.0.0", Summary: "Drops a frozen migration's slots and keys once the target owns them (an effect of a handover's source).", Run: cmdSlotsDone},
		{Name: "cancel", Arity: -3, Flags: "write admin noscript loading stale", Group: "server", Since: "1.0.0", Summary: "Takes a migration's slots back (an effect of a handover's source).", Run: cmdSlotsCancel},
		{Name: "import", Arity: -6, Flags: "write admin noscript loading stale", Group: "server", Since: "1.0.0", Summary: "Starts holding free slot ranges coming from another group (an effect of a handover's target).", Run: cmdSlotsImport},
		{Name: "load", Arity: 4, Flags: "write admin noscript loading stale", Group: "server", Since: "1.0.0", Summary: "Installs a chunk of the source's capture of importing slots (an effect of a handover's target).", Run: cmdSlotsLoad},
		{Name: "apply", Arity: 5, Flags: "write admin noscript loading stale", Group: "server", Since: "1.0.0", Summary: "Applies one committed record of the source to importing slots (an effect of a handover's target).", Run: cmdSlotsApply},
		{Name: "own", Arity: 5, Flags: "write admin noscript loading stale", Group: "server", Since: "1.0.0", Summary: "Owns importing slots whose digest is the source's: a handover's commit point (an effect of its target).", Run: cmdSlotsOwn},
		{Name: "abort", Arity: 3, Flags: "write admin noscript loading stale", Group: "server", Since: "1.0.0", Summary: "Gives an import up, dropping its keys (an effect of a handover's target).", Run: cmdSlotsAbort},
	}})
}

// ParseSlot parses a slot number as Redis's getSlotOrReply: a decimal
// integer 0..NumSlots-1.
func ParseSlot(b []byte) (int, bool) {
	n, ok := ParseIntB(b)
	if !ok || n < 0 || n >= NumSlots {
		return 0, false
	}
	return int(n), true
}

// parseSlotRanges reads start end pairs, writing Redis's ADDSLOTSRANGE
// errors: a slot that is not one, then a start past its end.
func (c *Ctx) parseSlotRanges(argv [][]byte) ([][2]int, bool) {
	if len(argv)%2 != 0 {
		c.W.Error(ErrSyntax)
		return nil, false
	}
	ranges := make([][2]int, 0, len(argv)/2)
	for i := 0; i < len(argv); i += 2 {
		s, ok1 := ParseSlot(argv[i])
		e, ok2 := ParseSlot(argv[i+1])
		if !ok1 || !ok2 {
			c.W.Error(ErrSlotInvalid)
			return nil, false
		}
		if s > e {
			c.W.Error(ErrSlotOrder(s, e))
			return nil, false
		}
		ranges = append(ranges, [2]int{s, e})
	}
	return ranges, true
}

// cmdLimitdbSlotsAdd: LIMITDB.SLOTS ADD start end [start end ...] — this
// group now owns every slot of the ranges (which may overlap). +OK, or
// Redis's "ERR Slot N is already busy" for the first slot (in argument
// order) it owns already, and nothing changes.
func cmdLimitdbSlotsAdd(c *Ctx, argv [][]byte) {
	ranges, ok := c.parseSlotRanges(argv[2:])
	if !ok {
		return
	}
	if busy, ok := c.AddSlots(ranges); !ok {
		c.W.Error(ErrSlotBusy(busy))
		return
	}
	c.W.OK()
}

// cmdLimitdbSlotsDel: LIMITDB.SLOTS DEL start end [start end ...] — the
// group gives up the ranges' slots. +OK, or "ERR Slot N is already
// unassigned" for the first one it does not own, and nothing changes.
func cmdLimitdbSlotsDel(c *Ctx, argv [][]byte) {
	ranges, ok := c.parseSlotRanges(argv[2:])
	if !ok {
		return
	}
	if free, ok := c.DelSlots(ranges); !ok {
		if c.E.migr.has(free) {
			c.W.Error(ErrSlotMigrating(free))
		} else {
			c.W.Error(ErrSlotUnassigned(free))
		}
		return
	}
	c.W.OK()
}

// AddSlots makes this group own every slot of ranges (each [start, end]
// inclusive, 0 <= start <= end < NumSlots, checked by the caller; ranges
// may overlap), all or nothing. When a slot is owned already or in a
// handover (slot_migration.go) it changes nothing and returns that slot
// (the first in argument order) and false.
// On success it records the effect LIMITDB.SLOTS ADD of the merged
// ranges as the running command's own (Rewrite): the server's CLUSTER
// ADDSLOTS and ADDSLOTSRANGE call it as their one write. It writes no
// reply. Caller holds the engine lock.
func (c *Ctx) AddSlots(ranges [][2]int) (busy int, ok bool) {
	return c.changeSlots(ranges, true)
}

// DelSlots gives up every slot of ranges, as AddSlots: all or nothing,
// returning the first slot the group does not own or that is in a
// handover (ErrSlotMigrating's case: SlotState tells it) and false, else
// recording LIMITDB.SLOTS DEL of the merged ranges.
func (c *Ctx) DelSlots(ranges [][2]int) (unassigned int, ok bool) {
	return c.changeSlots(ranges, false)
}

func (c *Ctx) changeSlots(ranges [][2]int, add bool) (int, bool) {
	o := &c.E.owned
	for _, r := range ranges {
		// a slot in a handover is neither added (importing: Redis's busy)
		// nor given up (the handover decides it)
		s := o.first(r[0], r[1], add)
		if m := c.E.migr.first(r[0], r[1], true); m >= 0 && (s < 0 || m < s) {
			s = m
		}
		if s >= 0 {
			return s, false
		}
	}
	var ch slotBits
	for _, r := range ranges {
		ch.setRange(r[0], r[1], true)
		o.setRange(r[0], r[1], add)
	}
	c.E.Stats.Dirty++
	c.E.slotsGen++
	sub := "DEL"
	if add {
		sub = "ADD"
	}
	a := Args("LIMITDB.SLOTS").S(sub)
	for _, r := range ch.ranges() {
		a = a.I(int64(r[0])).I(int64(r[1]))
	}
	c.Rewrite(a)
	return 0, true
}

// encodeSlotRanges is the aux value of a set of slots: its ranges as
// "start-end" separated by spaces ("" for none).
func encodeSlotRanges(b *slotBits) string {
	var sb strings.Builder
	for i, r := range b.ranges() {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(strconv.Itoa(r[0]))
		sb.WriteByte('-')
		sb.WriteString(strconv.Itoa(r[1]))
	}
	return sb.String()
}

// decodeSlotRanges reads encodeSlotRanges' form.
func decodeSlotRanges(v string) (slotBits, error) {
	var b slotBits
	for _, f := range strings.Fields(v) {
		lo, hi, ok := strings.Cut(f, "-")
		s, err1 := strconv.Atoi(lo)
		e, err2 := strconv.Atoi(hi)
		if !ok || err1 != nil || err2 != nil || s < 0 || s > e || e >= NumSlots {
			return slotBits{}, errSlotRange
		}
		b.setRange(s, e, true)
	}
	return b, nil
}
