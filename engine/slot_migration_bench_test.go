package engine

import (
	"strconv"
	"testing"

	"limitdb/resp"
)

// BenchmarkCaptureSlots: a capture of one slot holding 100,000 small
// strings (a third with a deadline) in 1 MB chunks: CaptureSlots, all of
// it under the engine lock, and StartSlotCapture's part under the lock
// (their comments; figures in bench/RESULTS.md, "Slot captures").
func BenchmarkCaptureSlots(b *testing.B) {
	e := New()
	e.EnableSlots()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1_700_000_000_000}
	const keys = 100_000
	for i := range keys {
		args := []string{"SET", "{m}key:" + strconv.Itoa(i), "value-" + strconv.Itoa(i*7919)}
		if i%3 == 0 {
			args = append(args, "PX", "3600000")
		}
		c.W.Reset()
		c.Exec(toArgv(args))
	}
	if e.CountKeysInSlot(migSlot) != keys {
		b.Fatal("keys not in one slot")
	}
	// the whole capture under the lock
	b.Run("lock", func(b *testing.B) {
		b.ReportAllocs()
		var bytes int
		for b.Loop() {
			bytes = 0
			for _, ch := range e.CaptureSlots(slotRange(migSlot), 1<<20) {
				bytes += len(ch)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/keys, "ns/key")
		b.ReportMetric(float64(bytes)/keys, "B/key")
	})
	// what StartSlotCapture holds the lock for (the entries' copy); the
	// encoding then runs without it
	b.Run("start", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.StartSlotCapture(slotRange(migSlot)).Release()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/keys, "ns/key")
	})
}

// BenchmarkCaptureSlotsHashes: the same with 1,000 hashes of 1,000
// fields each in one slot, where a DUMP costs O(the value) and the
// entries' copy does not.
func BenchmarkCaptureSlotsHashes(b *testing.B) {
	e := New()
	e.EnableSlots()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1_700_000_000_000}
	for i := range 1000 {
		args := []string{"HSET", "{m}hash:" + strconv.Itoa(i)}
		for f := range 1000 {
			args = append(args, "field"+strconv.Itoa(f), strconv.Itoa(f*i))
		}
		c.W.Reset()
		c.Exec(toArgv(args))
	}
	b.Run("lock", func(b *testing.B) {
		for b.Loop() {
			e.CaptureSlots(slotRange(migSlot), 1<<20)
		}
	})
	b.Run("start", func(b *testing.B) {
		for b.Loop() {
			e.StartSlotCapture(slotRange(migSlot)).Release()
		}
	})
}
