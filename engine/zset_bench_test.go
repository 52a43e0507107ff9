package engine

import (
	"strconv"
	"testing"

	"limitdb/resp"
)

// BenchmarkZsetSlidingWindow is the sliding-window limiter's request:
// ZREMRANGEBYSCORE key -inf now-window, ZADD key now member, ZCARD key,
// with a window of about 1000 members.
func BenchmarkZsetSlidingWindow(b *testing.B) {
	e := New()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter()}
	key := []byte("rl:user:42")
	argRem := [][]byte{[]byte("zremrangebyscore"), key, []byte("-inf"), nil}
	argAdd := [][]byte{[]byte("zadd"), key, nil, nil}
	argCard := [][]byte{[]byte("zcard"), key}
	var b1, b2, b3 []byte
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		now := int64(1_700_000_000_000 + i)
		c.Now = now
		c.W.Reset()
		b1 = strconv.AppendInt(b1[:0], now-1000, 10)
		b2 = strconv.AppendInt(b2[:0], now, 10)
		b3 = strconv.AppendInt(append(b3[:0], "req-"...), int64(i), 10)
		argRem[3] = b1
		cmdZRemRangeByScore(c, argRem)
		argAdd[2], argAdd[3] = b2, b3
		cmdZAdd(c, argAdd)
		cmdZCard(c, argCard)
	}
}

// BenchmarkZaddRandom inserts into a growing set at random positions.
func BenchmarkZaddRandom(b *testing.B) {
	e := New()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter()}
	argAdd := [][]byte{[]byte("zadd"), []byte("z"), nil, nil}
	var r Rand
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.W.Reset()
		argAdd[2] = strconv.AppendInt(argAdd[2][:0], int64(r.Intn(1<<30)), 10)
		argAdd[3] = strconv.AppendInt(argAdd[3][:0], int64(i), 10)
		cmdZAdd(c, argAdd)
	}
}
