package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"

	"limitdb/engine"
)

// A log entry carries a batch of unit records: everything the leader
// executed while the previous batch was being committed (group commit).
//
//	byte     format version (entryVersion)
//	uvarint  leader epoch: which stint of which leader executed the batch
//	uvarint  sequence of the batch's first record (records are numbered
//	         in execution order within an epoch)
//	varint   now: the leader's time floor (Engine.ClockMs) when it cut
//	         the batch; followers raise theirs to it
//	uvarint  number of forwarded unit IDs, then each as three uvarints
//	         (session, client, sequence): the units of followers' clients
//	         the batch holds, so that none is executed twice
//	uvarint  number of IDs to forget, then each as (session, client;
//	         client 0: the whole session): clients that went away
//	uvarint  number of records, then each as uvarint length + bytes
//	         (a record is one unit's effects, door.appendRecord)
//
// A node that meets a newer format version refuses the entry: it stops
// rather than apply what it cannot read.
const entryVersion = 1

// unitID names a forwarded unit: the follower process's forwarding
// session, its client, and the unit's number among that client's (a
// client's units are sequential, so a higher number means a later unit).
type unitID struct{ session, client, seq uint64 }

type entryHeader struct {
	epoch    uint64
	firstSeq uint64
	now      int64
	ids      []unitID
	forget   []unitID
	nrec     int
}

var errEntryShort = errors.New("cluster: truncated log entry")

// appendEntryHeader writes the header; the records follow (appendRecord).
func appendEntryHeader(b []byte, h *entryHeader) []byte {
	b = append(b, entryVersion)
	b = binary.AppendUvarint(b, h.epoch)
	b = binary.AppendUvarint(b, h.firstSeq)
	b = binary.AppendVarint(b, h.now)
	b = binary.AppendUvarint(b, uint64(len(h.ids)))
	for _, id := range h.ids {
		b = binary.AppendUvarint(b, id.session)
		b = binary.AppendUvarint(b, id.client)
		b = binary.AppendUvarint(b, id.seq)
	}
	b = binary.AppendUvarint(b, uint64(len(h.forget)))
	for _, id := range h.forget {
		b = binary.AppendUvarint(b, id.session)
		b = binary.AppendUvarint(b, id.client)
	}
	return binary.AppendUvarint(b, uint64(h.nrec))
}

// appendEntryRecord appends a record as an entry carries it: its length,
// then the record.
func appendEntryRecord(b, rec []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(rec)))
	return append(b, rec...)
}

// appendEntryEffects is appendEntryRecord of engine.AppendRecord(f,
// clockMs), encoded in place: the length is computed first
// (engine.RecordLen), so the record is not built elsewhere and copied.
func appendEntryEffects(b []byte, f *engine.Effects, clockMs int64) []byte {
	b = binary.AppendUvarint(b, uint64(engine.RecordLen(f, clockMs)))
	return engine.AppendRecord(b, f, clockMs)
}

// decodeEntry parses data's header and returns it with the records
// (slices of data).
func decodeEntry(data []byte) (h entryHeader, recs [][]byte, err error) {
	h, p, err := decodeEntryHeader(data)
	for i := 0; i < h.nrec && err == nil; i++ {
		l, n := binary.Uvarint(p)
		if n <= 0 || l > uint64(len(p)-n) {
			return h, recs, errEntryShort
		}
		recs = append(recs, p[n:n+int(l)])
		p = p[n+int(l):]
	}
	return h, recs, err
}

// decodeEntryHeader parses data's header and returns the records' bytes
// after it: the leader counts its own entries from the header alone (a
// slice per record cost 3 % of its CPU at SET P=16).
func decodeEntryHeader(data []byte) (h entryHeader, recs []byte, err error) {
	if len(data) == 0 {
		return h, nil, errEntryShort
	}
	if data[0] != entryVersion {
		return h, nil, fmt.Errorf("cluster: log entry format version %d, this binary reads %d: upgrade it", data[0], entryVersion)
	}
	p := data[1:]
	u := func() uint64 {
		if err != nil {
			return 0
		}
		v, n := binary.Uvarint(p)
		if n <= 0 {
			err = errEntryShort
			return 0
		}
		p = p[n:]
		return v
	}
	h.epoch = u()
	h.firstSeq = u()
	if err == nil {
		v, n := binary.Varint(p)
		if n <= 0 {
			return h, nil, errEntryShort
		}
		h.now, p = v, p[n:]
	}
	nid := u()
	if err == nil && nid > uint64(len(p)) {
		return h, nil, errEntryShort
	}
	for i := uint64(0); i < nid && err == nil; i++ {
		h.ids = append(h.ids, unitID{u(), u(), u()})
	}
	nf := u()
	if err == nil && nf > uint64(len(p)) {
		return h, nil, errEntryShort
	}
	for i := uint64(0); i < nf && err == nil; i++ {
		h.forget = append(h.forget, unitID{session: u(), client: u()})
	}
	nrec := u()
	if err == nil && nrec > uint64(len(p)) {
		return h, nil, errEntryShort
	}
	h.nrec = int(nrec)
	return h, p, err
}
