package engine

import (
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
