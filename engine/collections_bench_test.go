package engine

import (
	"runtime"
	"strconv"
	"testing"

	"limitdb/resp"
)

func benchCmd(b *testing.B, setup [][]string, argv []string) {
	e := New()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1}
	for _, s := range setup {
		c.Exec(toArgv(s))
	}
	a := toArgv(argv)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.W.Reset()
		c.Exec(a)
	}
}

func toArgv(s []string) [][]byte {
	out := make([][]byte, len(s))
	for i, x := range s {
		out[i] = []byte(x)
	}
	return out
}

func BenchmarkRPushLPopTimestamp(b *testing.B) {
	e := New()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1}
	push := toArgv([]string{"rpush", "l", "1700000000123"})
	pop := toArgv([]string{"lpop", "l"})
	c.Exec(push)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.W.Reset()
		c.Exec(push)
		c.Exec(pop)
	}
}

func BenchmarkLRange10(b *testing.B) {
	benchCmd(b, [][]string{{"rpush", "l", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}}, []string{"lrange", "l", "0", "-1"})
}

func BenchmarkHIncrBy(b *testing.B) {
	benchCmd(b, [][]string{{"hset", "h", "a", "1", "b", "2"}}, []string{"hincrby", "h", "b", "1"})
}

func BenchmarkHSetExisting(b *testing.B) {
	benchCmd(b, [][]string{{"hset", "h", "a", "1", "b", "2"}}, []string{"hset", "h", "b", "x"})
}

func BenchmarkHGet(b *testing.B) {
	benchCmd(b, [][]string{{"hset", "h", "a", "1", "b", "2"}}, []string{"hget", "h", "b"})
}

func BenchmarkSAddExisting(b *testing.B) {
	benchCmd(b, [][]string{{"sadd", "s", "a", "b"}}, []string{"sadd", "s", "b"})
}

func BenchmarkSIsMemberInt(b *testing.B) {
	benchCmd(b, [][]string{{"sadd", "s", "1", "2", "3"}}, []string{"sismember", "s", "2"})
}

// BenchmarkListMemory10 reports the heap bytes per key of 10-element
// lists of millisecond timestamps (10k keys, one RPUSH each; key names
// and entries included).
func BenchmarkListMemory10(b *testing.B) {
	for i := 0; i < b.N; i++ {
		e := New()
		c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter()}
		argv := make([][]byte, 12)
		argv[0] = []byte("rpush")
		var ms0, ms1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		const keys = 10000
		for k := 0; k < keys; k++ {
			argv[1] = strconv.AppendInt(append(argv[1][:0], "l:"...), int64(k), 10)
			for j := 0; j < 10; j++ {
				argv[2+j] = strconv.AppendInt(argv[2+j][:0], 1_700_000_000_000+int64(k*10+j), 10)
			}
			c.W.Reset()
			cmdRPush(c, argv)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms1)
		b.ReportMetric(float64(ms1.HeapAlloc-ms0.HeapAlloc)/keys, "B/key")
		runtime.KeepAlive(e)
	}
}
