package engine

import "strings"

// Redis Cluster's hash slots (issue 22; engine/CLUSTER_MODE.md): a key's
// slot, the keys of db 0 by slot (CLUSTER COUNTKEYSINSLOT, GETKEYSINSLOT,
// a slot's handover), and the slots this Raft group owns, which is
// replicated state. This file is the API the server's cluster mode calls; the index
// is slot_index.go, the owned set slot_bits.go and slot_owner.go (which
// also holds Ctx.AddSlots and Ctx.DelSlots, LIMITDB.SLOTS and Redis's
// slot error texts).

// NumSlots is Redis Cluster's number of hash slots.
const NumSlots = 16384

// KeySlot is the hash slot of key: CRC16 (XMODEM) of the key, or of its
// hash tag (the bytes between the first '{' and the next '}' when that is
// not empty), modulo NumSlots, as Redis's keyHashSlot.
func KeySlot(key []byte) int { return keySlot(bstr(key)) }

// keySlot is KeySlot of a string key (the dict's keys are strings).
func keySlot(key string) int {
	if s := strings.IndexByte(key, '{'); s >= 0 {
		// only the first '{' opens a tag, and the first '}' after it
		// closes it: "foo{{bar}}zap" hashes "{bar"; an empty tag ("{}")
		// hashes the whole key, as does an unclosed one
		if e := strings.IndexByte(key[s+1:], '}'); e > 0 {
			key = key[s+1 : s+1+e]
		}
	}
	return int(crc16(key) & (NumSlots - 1))
}

// EnableSlots turns cluster mode's bookkeeping on for this engine (at
// start-up, before any key exists: cluster-enabled is not a runtime
// setting): the per-slot index of db 0 and the owned-slot set.
func (e *Engine) EnableSlots() {
	if e.slots == nil {
		e.slots = &slotIndex{}
		e.attachSlots() // also correct, O(keys), if keys exist already
	}
}

// SlotsEnabled reports whether EnableSlots was called.
func (e *Engine) SlotsEnabled() bool { return e.slots != nil }

// CountKeysInSlot is the number of keys of db 0 in slot (expired keys not
// yet removed included, as Redis). Caller holds the engine lock.
func (e *Engine) CountKeysInSlot(slot int) int64 {
	if e.slots == nil || slot < 0 || slot >= NumSlots {
		return 0
	}
	return int64(e.slots.slot[slot].count)
}

// KeysInSlot returns at most count keys of db 0 in slot. Caller holds the
// engine lock.
func (e *Engine) KeysInSlot(slot int, count int) [][]byte {
	if e.slots == nil || slot < 0 || slot >= NumSlots || count <= 0 {
		return nil
	}
	return e.slots.keys(&e.DBs[0].dict, slot, count)
}

// OwnsSlot reports whether this group owns slot and executes it
// (replicated state, changed by the LIMITDB.SLOTS effects): a slot
// frozen or importing in a handover is not, and SlotState tells which.
// Caller holds the engine lock.
func (e *Engine) OwnsSlot(slot int) bool { return e.owned.has(slot) }

// OwnedSlots returns the owned slots as sorted, disjoint [start, end]
// ranges (CLUSTER SLOTS' shape), frozen ones of a handover included: the
// group answers for them (parking their requests) until DONE, so the
// map shows no hole meanwhile. Caller holds the engine lock.
func (e *Engine) OwnedSlots() [][2]int {
	b := e.claimedSlots()
	return b.ranges()
}

// SlotsGen changes whenever the owned set or a slot's SlotState may have
// changed (a LIMITDB.SLOTS effect executed or applied, except a
// handover's LOAD and APPLY; a snapshot loaded, a reset):
// a caller keeping something derived from it (the server's cluster_state)
// compares it instead of recounting. Caller holds the engine lock.
func (e *Engine) SlotsGen() uint64 { return e.slotsGen }

// OwnedSlotCount is the number of slots this group owns, frozen ones
// included as in OwnedSlots (CLUSTER INFO's cluster_slots_assigned for
// one group). Caller holds the engine lock.
func (e *Engine) OwnedSlotCount() int {
	b := e.claimedSlots()
	return b.count()
}
