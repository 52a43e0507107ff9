package engine

import (
	"runtime"
	"strconv"
	"testing"

	"limitdb/resp"
)

// BenchmarkZaddSmallSets is the load generator's zadd workload: ZADD
// z:<r> <random score> m<r 100> over 10k keys, so after warm-up most calls
// move an existing member of a ~100-member set.
func BenchmarkZaddSmallSets(b *testing.B) {
	e := New()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter()}
	argAdd := [][]byte{[]byte("zadd"), nil, nil, nil}
	var r Rand
	run := func() {
		c.W.Reset()
		argAdd[1] = strconv.AppendInt(append(argAdd[1][:0], "z:"...), int64(r.Intn(10000)), 10)
		argAdd[2] = strconv.AppendInt(argAdd[2][:0], int64(r.Intn(1<<30)), 10)
		argAdd[3] = strconv.AppendInt(append(argAdd[3][:0], 'm'), int64(r.Intn(100)), 10)
		cmdZAdd(c, argAdd)
	}
	for i := 0; i < 1_000_000; i++ {
		run()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run()
	}
}

// BenchmarkZsetMemory10 reports the heap bytes per member of 10-member
// sets (10k keys built with ZADD; key names and entries included).
func BenchmarkZsetMemory10(b *testing.B) {
	for i := 0; i < b.N; i++ {
		e := New()
		c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter()}
		argAdd := [][]byte{[]byte("zadd"), nil, nil, nil}
		var ms0, ms1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		const keys, members = 10000, 10
		for k := 0; k < keys; k++ {
			argAdd[1] = strconv.AppendInt(append(argAdd[1][:0], "z:"...), int64(k), 10)
			for m := 0; m < members; m++ {
				c.W.Reset()
				argAdd[2] = strconv.AppendInt(argAdd[2][:0], int64(m*7919%1000), 10)
				argAdd[3] = strconv.AppendInt(append(argAdd[3][:0], 'm'), int64(m), 10)
				cmdZAdd(c, argAdd)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&ms1)
		b.ReportMetric(float64(ms1.HeapAlloc-ms0.HeapAlloc)/(keys*members), "B/member")
		runtime.KeepAlive(e)
	}
}
