package engine

import "strconv"

// slotIndex is the per-slot index of db 0 in cluster mode (Redis 7.0's
// slots_to_keys): for every hash slot the number of keys and a doubly
// linked list through them, so CLUSTER COUNTKEYSINSLOT is O(1) and
// GETKEYSINSLOT (and a slot's handover) lists a slot's keys without
// scanning the keyspace. The links live beside the entries, not in them:
// links is parallel to the dict's chunks (entry slot i has link i), so the
// entry stays 40 bytes and a dict without the index (every database when
// cluster mode is off, db 1–15 always) pays one nil check per insert and
// delete. An entry slot that was ever used costs 8 bytes of links; the
// slots' heads and counts are a fixed 256 KiB (one 16-byte record a slot,
// so an insert or delete touches one cache line of them).
//
// The dict keeps it up to date itself (dict.insert, dict.remove,
// dict.clear), since every key db 0 gains or loses goes through those;
// the one whole-keyspace replacement, a snapshot load, rebuilds it
// (Engine.attachSlots). SWAPDB, which would move db 0's dict, is refused
// in cluster mode, as in Redis.
type slotIndex struct {
	slot  [NumSlots]slotHead
	links [][]slotLink // links[c][j] belongs to dict.chunks[c][j]
}

// slotHead is one slot's list: its length and its newest entry.
type slotHead struct {
	count int
	head  int32 // index+1 of the slot's newest entry; 0 = empty
}

// slotLink is an entry's place in its slot's list: index+1 of the
// neighbouring entries, 0 at either end.
type slotLink struct{ prev, next int32 }

func (s *slotIndex) link(i int32) *slotLink { return &s.links[i>>chunkBits][i&(chunkSize-1)] }

// add puts entry slot i, holding key, at the head of key's slot list (the
// newest key first, as Redis's slotToKeyAddEntry).
func (s *slotIndex) add(i int32, key string) {
	for int(i>>chunkBits) >= len(s.links) {
		s.links = append(s.links, make([]slotLink, chunkSize))
	}
	h := &s.slot[keySlot(key)]
	l := s.link(i)
	*l = slotLink{next: h.head}
	if l.next != 0 {
		s.link(l.next - 1).prev = i + 1
	}
	h.head = i + 1
	h.count++
}

// del unlinks entry slot i, holding key.
func (s *slotIndex) del(i int32, key string) {
	h := &s.slot[keySlot(key)]
	l := s.link(i)
	if l.prev != 0 {
		s.link(l.prev - 1).next = l.next
	} else {
		h.head = l.next
	}
	if l.next != 0 {
		s.link(l.next - 1).prev = l.prev
	}
	*l = slotLink{}
	h.count--
}

// reset empties the index (the dict was cleared).
func (s *slotIndex) reset() { *s = slotIndex{} }

// rebuild indexes every key of d (after d replaced the keyspace).
func (s *slotIndex) rebuild(d *dict) {
	s.reset()
	for _, b := range d.buckets {
		for i := b; i != 0; i = d.at(i - 1).next {
			s.add(i-1, d.at(i-1).keyStr())
		}
	}
}

// keys returns at most n keys of slot, newest first. d is the dict the
// index belongs to.
func (s *slotIndex) keys(d *dict, slot, n int) [][]byte {
	var out [][]byte
	for i := s.slot[slot].head; i != 0 && len(out) < n; i = s.link(i - 1).next {
		out = append(out, []byte(d.at(i-1).keyStr()))
	}
	return out
}

// attachSlots hands the index to db 0's dict, takes it from the others
// and rebuilds it: called by EnableSlots and after a snapshot load, which
// replaces every database's dict wholesale.
func (e *Engine) attachSlots() {
	if e.slots == nil {
		return
	}
	for _, db := range e.DBs[1:] {
		db.dict.slots = nil
	}
	d := &e.DBs[0].dict
	d.slots = e.slots
	e.slots.rebuild(d)
}

// SlotDigest is the digest of slot's keys in db 0, for comparing one slot
// across groups (a handover's check): per key, as DEBUG DIGEST, the key
// mixed and its value's digest, then its absolute deadline (as
// StrictDigest), XORed together, so it does not depend on the keys'
// order; all zeros for an empty slot or without EnableSlots. O(keys in
// the slot). Caller holds the engine lock.
func (e *Engine) SlotDigest(slot int) Digest {
	var final Digest
	if e.slots == nil || slot < 0 || slot >= NumSlots {
		return final
	}
	d := &e.DBs[0].dict
	var buf []byte
	for i := e.slots.slot[slot].head; i != 0; i = e.slots.link(i - 1).next {
		en := d.at(i - 1)
		var k Digest
		k.mixString(en.keyStr())
		en.digest(&k)
		buf = strconv.AppendInt(buf[:0], en.exp, 10)
		k.mix(buf)
		final.xor(k[:])
	}
	return final
}
