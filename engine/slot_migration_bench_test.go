package engine

import (
	"strconv"
	"testing"

	"limitdb/resp"
)

// BenchmarkCaptureSlots: CaptureSlots of one slot holding 100,000 small
// strings (a third with a deadline) in 1 MB chunks, the cost the source
// pays under the engine lock (CaptureSlots' comment, engine/DESIGN.md).
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
}
