package engine

import (
	"strconv"
	"testing"

	"limitdb/resp"
)

// slidingLog is the sliding-window limiter's request on one key as the
// documents' script sends it (002-sliding-window-zset.lua): drop the
// entries older than the window, count what is left (ZCARD and ZCOUNT),
// log this request (member: its millisecond time and a request number),
// and renew the TTL. Each call advances the clock by 1 ms, so with a
// window of w ms the set holds w members in steady state.
type slidingLog struct {
	c                            *Ctx
	now, i                       int64
	rem, add, card, count, pexp  [][]byte
	bMin, bNow, bMember, bWindow []byte
	window                       int64
}

func newSlidingLog(window int64) *slidingLog {
	e := New()
	key := []byte("rl:sliding:user:42")
	s := &slidingLog{
		c:      &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter()},
		now:    1_700_000_000_000,
		window: window,
		rem:    [][]byte{[]byte("zremrangebyscore"), key, []byte("-inf"), nil},
		add:    [][]byte{[]byte("zadd"), key, nil, nil},
		card:   [][]byte{[]byte("zcard"), key},
		count:  [][]byte{[]byte("zcount"), key, nil, []byte("+inf")},
		pexp:   [][]byte{[]byte("pexpire"), key, nil},
	}
	s.bWindow = strconv.AppendInt(nil, window, 10)
	s.pexp[2] = s.bWindow
	return s
}

func (s *slidingLog) request() {
	c := s.c
	s.now++
	s.i++
	c.Now = s.now
	c.W.Reset()
	s.bMin = strconv.AppendInt(append(s.bMin[:0], '('), s.now-s.window, 10)
	s.bNow = strconv.AppendInt(s.bNow[:0], s.now, 10)
	s.bMember = strconv.AppendInt(strconv.AppendInt(s.bMember[:0], s.now, 10), 1000+s.i%9000, 10)
	s.rem[3] = s.bMin[1:]
	c.Exec(s.rem)
	c.Exec(s.card)
	s.count[2] = s.bMin
	c.Exec(s.count)
	s.add[2], s.add[3] = s.bNow, s.bMember
	c.Exec(s.add)
	c.Exec(s.pexp)
}

// TestSlidingLogAllocatesNothing: once a sliding log's listpack reached
// its steady size (up to Redis's 128 listpack entries), a request
// allocates nothing — its listpack is updated in place (lpVal.splice).
func TestSlidingLogAllocatesNothing(t *testing.T) {
	for _, window := range []int64{10, 100, 128} {
		s := newSlidingLog(window)
		for i := 0; i < 3*int(window); i++ {
			s.request()
		}
		if enc := s.c.DB.dict.find("rl:sliding:user:42").encoding(); enc != "listpack" {
			t.Fatalf("window %d: encoding %s", window, enc)
		}
		if n := testing.AllocsPerRun(1000, s.request); n != 0 {
			t.Errorf("window %d: %v allocations per request", window, n)
		}
	}
}

// BenchmarkSlidingLog is TestSlidingLogAllocatesNothing's request
// (ZREMRANGEBYSCORE + ZCARD + ZCOUNT + ZADD + PEXPIRE) through the
// command table, at windows of 10 and 100 members: 0 allocs/op.
func BenchmarkSlidingLog(b *testing.B) {
	for _, window := range []int64{10, 100} {
		b.Run("members="+strconv.FormatInt(window, 10), func(b *testing.B) {
			s := newSlidingLog(window)
			for i := 0; i < 3*int(window); i++ {
				s.request()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.request()
			}
		})
	}
}

// TestMultiAddAllocatesOnce: a ZADD of 10 new members, or an HSET of two
// new fields, into a new key allocates its listpack once
// (lpVal.reserve), not once per size class it passes through.
func TestMultiAddAllocatesOnce(t *testing.T) {
	c := newTestCtx()
	zadd := toArgv([]string{"zadd", "k"})
	for j := int64(0); j < 10; j++ {
		ms := 1_700_000_000_000 + j*37
		zadd = append(zadd, strconv.AppendInt(nil, ms, 10), strconv.AppendInt(nil, ms*10000+1234, 10))
	}
	hset := toArgv([]string{"hset", "k", "tokens", "9", "ts", "1700000000123"})
	del := toArgv([]string{"del", "k"})
	for _, argv := range [][][]byte{zadd, hset} {
		run := func() { c.W.Reset(); c.Exec(del); c.Exec(argv) }
		run()
		if n := testing.AllocsPerRun(100, run); n != 1 {
			t.Errorf("%s: %v allocations, want 1", argv[0], n)
		}
	}
}
