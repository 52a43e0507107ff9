package cluster

import (
	"bytes"
	"testing"
)

// TestEntryRoundTrip: an entry's header and records decode as written;
// a truncated entry or a newer version is an error, never a panic.
func TestEntryRoundTrip(t *testing.T) {
	h := entryHeader{epoch: 0xdeadbeef12345678, firstSeq: 42, now: 1_700_000_000_123, ids: []unitID{{7, 1, 1}, {9, 2, 300}}, forget: []unitID{{9, 3, 0}}, nrec: 2}
	b := appendEntryHeader(nil, &h)
	b = appendEntryRecord(b, []byte("*1\r\n$4\r\nPING\r\n"))
	b = appendEntryRecord(b, nil)
	got, recs, err := decodeEntry(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.epoch != h.epoch || got.firstSeq != 42 || got.now != h.now || len(got.ids) != 2 || got.ids[1] != (unitID{9, 2, 300}) || len(got.forget) != 1 || got.nrec != 2 {
		t.Fatalf("header %+v", got)
	}
	if len(recs) != 2 || !bytes.Equal(recs[0], []byte("*1\r\n$4\r\nPING\r\n")) || len(recs[1]) != 0 {
		t.Fatalf("records %q", recs)
	}
	for i := 0; i < len(b); i++ {
		if _, _, err := decodeEntry(b[:i]); err == nil {
			t.Fatalf("truncated at %d: no error", i)
		}
	}
	b[0] = entryVersion + 1
	if _, _, err := decodeEntry(b); err == nil {
		t.Fatal("a newer format version was accepted")
	}
}

// FuzzDecodeEntry: any bytes decode to an error or a consistent entry.
func FuzzDecodeEntry(f *testing.F) {
	h := entryHeader{epoch: 1, firstSeq: 1, now: 5, ids: []unitID{{1, 2, 3}}, nrec: 1}
	f.Add(appendEntryRecord(appendEntryHeader(nil, &h), []byte("x")))
	f.Add([]byte{entryVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, recs, err := decodeEntry(b)
		if err == nil && len(recs) != h.nrec {
			t.Fatalf("%d records, header says %d", len(recs), h.nrec)
		}
	})
}
