package tests

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestZsetFuzz sends the same random sorted-set commands to Redis and to
// limitdb, in RESP2 and RESP3, and compares every reply byte for byte. The
// sets stay small enough and big enough (members up to 300) to cross
// Redis's listpack limit; ZSCAN is left out (its order is Redis's own).
func TestZsetFuzz(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("resp%d", proto), func(t *testing.T) {
			p := dialPair(t, proto)
			defer p.ref.Close()
			defer p.cand.Close()
			for _, c := range []*Conn{p.ref, p.cand} {
				c.Do("FLUSHALL")
			}
			r := rand.New(rand.NewSource(int64(proto) + fuzzSeed))
			keys := []string{"fa", "fb", "fc"}
			key := func() string { return keys[r.Intn(len(keys))] }
			nm := 10
			member := func() string {
				if r.Intn(3) == 0 {
					return fmt.Sprintf("%c", 'a'+r.Intn(8))
				}
				return fmt.Sprintf("m%03d", r.Intn(nm))
			}
			score := func() string {
				switch r.Intn(12) {
				case 0:
					return "-inf"
				case 1:
					return "+inf"
				case 2:
					return "-0"
				case 3:
					return fmt.Sprintf("%g", r.Float64()*10)
				}
				return fmt.Sprint(r.Intn(20) - 5)
			}
			rng := func() string {
				s := score()
				if r.Intn(3) == 0 {
					s = "(" + s
				}
				return s
			}
			lex := func() string {
				switch r.Intn(6) {
				case 0:
					return "-"
				case 1:
					return "+"
				case 2:
					return "(" + member()
				}
				return "[" + member()
			}
			// Lex ranges over members with different scores walk an
			// unsorted order: Redis's result then depends on its random
			// skiplist levels once a set is big, so after the switch lex
			// commands only use "fl", whose scores are all 0.
			lexKey := func() string {
				if nm > 10 {
					return "fl"
				}
				return key()
			}
			idx := func() string { return fmt.Sprint(r.Intn(30) - 15) }
			opts := func(by string) []string {
				var o []string
				if by != "bylex" && r.Intn(2) == 0 {
					o = append(o, "WITHSCORES")
				}
				if by != "" && r.Intn(2) == 0 {
					o = append(o, "LIMIT", fmt.Sprint(r.Intn(6)-1), fmt.Sprint(r.Intn(8)-2))
				}
				return o
			}
			for i := 0; i < 6000; i++ {
				if i == 3000 {
					nm = 300 // grow past the listpack limit
					for _, c := range []*Conn{p.ref, p.cand} {
						c.Do("ZREMRANGEBYRANK", "fl", "0", "-1")
					}
				}
				var args []string
				switch r.Intn(31) {
				case 30: // whole-set answers are deterministic
					args = []string{"ZRANDMEMBER", key(), "1000"}
					if r.Intn(2) == 0 {
						args = append(args, "WITHSCORES")
					}
				case 24, 25:
					c := []string{"ZUNION", "ZINTER", "ZDIFF", "ZINTERCARD"}[r.Intn(4)]
					n := 1 + r.Intn(3)
					args = []string{c, fmt.Sprint(n)}
					for j := 0; j < n; j++ {
						args = append(args, key())
					}
					if c != "ZDIFF" && c != "ZINTERCARD" && r.Intn(2) == 0 {
						args = append(args, "WEIGHTS")
						for j := 0; j < n; j++ {
							args = append(args, []string{"1", "2", "-1", "0.5", "0"}[r.Intn(5)])
						}
					}
					if c != "ZDIFF" && c != "ZINTERCARD" && r.Intn(2) == 0 {
						args = append(args, "AGGREGATE", []string{"SUM", "MIN", "MAX"}[r.Intn(3)])
					}
					if c != "ZINTERCARD" && r.Intn(2) == 0 {
						args = append(args, "WITHSCORES")
					}
					if c == "ZINTERCARD" && r.Intn(2) == 0 {
						args = append(args, "LIMIT", fmt.Sprint(r.Intn(4)))
					}
				case 26:
					c := []string{"ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"}[r.Intn(3)]
					n := 1 + r.Intn(3)
					args = []string{c, key(), fmt.Sprint(n)}
					for j := 0; j < n; j++ {
						args = append(args, key())
					}
				case 27:
					args = []string{"ZRANGESTORE", key(), key(), idx(), idx()}
				case 28:
					args = []string{"ZRANGESTORE", key(), key(), rng(), rng(), "BYSCORE"}
					if r.Intn(2) == 0 {
						args = append(args, "LIMIT", fmt.Sprint(r.Intn(4)), fmt.Sprint(r.Intn(6)-1))
					}
				case 29:
					args = []string{"ZMPOP", "2", key(), key(), []string{"MIN", "MAX"}[r.Intn(2)], "COUNT", fmt.Sprint(1 + r.Intn(3))}
				case 22, 23: // the lex key: all scores 0 once big
					args = []string{"ZADD", "fl"}
					for j := 0; j < 1+r.Intn(20); j++ {
						args = append(args, "0", member())
					}
				case 0, 1, 2, 3, 4:
					args = []string{"ZADD", key()}
					for _, f := range []string{"NX", "XX", "GT", "LT", "CH", "INCR"} {
						if r.Intn(8) == 0 {
							args = append(args, f)
						}
					}
					n := 1 + r.Intn(4)
					if i >= 3000 {
						n += r.Intn(40)
					}
					for j := 0; j < n; j++ {
						args = append(args, score(), member())
					}
				case 5:
					args = []string{"ZINCRBY", key(), score(), member()}
				case 6:
					args = []string{"ZREM", key(), member(), member()}
				case 7:
					args = []string{"ZCARD", key()}
				case 8:
					args = []string{"ZCOUNT", key(), rng(), rng()}
				case 9:
					args = []string{"ZLEXCOUNT", lexKey(), lex(), lex()}
				case 10:
					args = []string{"ZMSCORE", key(), member(), member()}
				case 11:
					args = []string{[]string{"ZRANK", "ZREVRANK", "ZSCORE"}[r.Intn(3)], key(), member()}
				case 12:
					args = append([]string{"ZRANGE", key(), idx(), idx()}, opts("")...)
					if r.Intn(2) == 0 {
						args = append(args, "REV")
					}
				case 13:
					args = append([]string{"ZRANGE", key(), rng(), rng(), "BYSCORE"}, opts("byscore")...)
					if r.Intn(2) == 0 {
						args = append(args, "REV")
					}
				case 14:
					args = append([]string{"ZRANGE", lexKey(), lex(), lex(), "BYLEX"}, opts("bylex")...)
					if r.Intn(2) == 0 {
						args = append(args, "REV")
					}
				case 15:
					c := []string{"ZRANGEBYSCORE", "ZREVRANGEBYSCORE"}[r.Intn(2)]
					args = append([]string{c, key(), rng(), rng()}, opts("byscore")...)
				case 16:
					c := []string{"ZRANGEBYLEX", "ZREVRANGEBYLEX"}[r.Intn(2)]
					args = append([]string{c, lexKey(), lex(), lex()}, opts("bylex")...)
				case 17:
					args = []string{"ZREMRANGEBYSCORE", key(), rng(), rng()}
				case 18:
					args = []string{"ZREMRANGEBYRANK", key(), idx(), idx()}
				case 19:
					args = []string{"ZREMRANGEBYLEX", lexKey(), lex(), lex()}
				case 20:
					args = []string{[]string{"ZPOPMIN", "ZPOPMAX"}[r.Intn(2)], key()}
					if r.Intn(2) == 0 {
						args = append(args, fmt.Sprint(r.Intn(5)))
					}
				case 21:
					args = []string{"ZREVRANGE", key(), idx(), idx()}
					if r.Intn(2) == 0 {
						args = append(args, "WITHSCORES")
					}
				}
				ref, err := p.ref.Do(args...)
				if err != nil {
					t.Fatal(err)
				}
				cand, err := p.cand.Do(args...)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(ref, cand) {
					t.Fatalf("step %d: %s\n  redis:   %q\n  limitdb: %q", i, strings.Join(args, " "), ref, cand)
				}
			}
		})
	}
}

// fuzzSeed shifts TestZsetFuzz's seeds (set by hand to explore).
var fuzzSeed int64

// TestZscanBig iterates ZSCAN over a big set (skiplist-encoded in Redis) on
// both servers until cursor 0, also with MATCH, and compares the member/
// score pairs collected (the order and the cursors are each server's own).
func TestZscanBig(t *testing.T) {
	for _, proto := range []int{2, 3} {
		p := dialPair(t, proto)
		args := []string{"ZADD", "zsb"}
		for i := 0; i < 1000; i++ {
			args = append(args, fmt.Sprintf("%d.5", i%37), fmt.Sprintf("member:%d", i))
		}
		for _, c := range []*Conn{p.ref, p.cand} {
			c.Do("FLUSHALL")
			if _, err := c.Do(args...); err != nil {
				t.Fatal(err)
			}
		}
		for _, extra := range [][]string{nil, {"COUNT", "3"}, {"MATCH", "member:1*"}, {"MATCH", "*9", "COUNT", "50"}} {
			var got [2]map[string]string
			for k, c := range []*Conn{p.ref, p.cand} {
				got[k] = map[string]string{}
				cursor := "0"
				for n := 0; n < 10000; n++ {
					raw, err := c.Do(append([]string{"ZSCAN", "zsb", cursor}, extra...)...)
					if err != nil {
						t.Fatal(err)
					}
					next, elems := parseScanReply(t, raw)
					for i := 0; i+1 < len(elems); i += 2 {
						got[k][elems[i]] = elems[i+1]
					}
					cursor = next
					if cursor == "0" {
						break
					}
				}
			}
			t.Logf("resp%d %v: %d members", proto, extra, len(got[0]))
			if len(got[0]) != len(got[1]) {
				t.Fatalf("resp%d %v: redis saw %d members, limitdb %d", proto, extra, len(got[0]), len(got[1]))
			}
			for m, s := range got[0] {
				if got[1][m] != s {
					t.Fatalf("resp%d %v: %s: redis %q limitdb %q", proto, extra, m, s, got[1][m])
				}
			}
		}
		p.ref.Close()
		p.cand.Close()
	}
}

// parseScanReply splits a raw SCAN-family reply of bulk strings.
func parseScanReply(t *testing.T, raw []byte) (string, []string) {
	lines := strings.Split(string(raw), "\r\n")
	if len(lines) < 4 || lines[0] != "*2" {
		t.Fatalf("bad scan reply %q", raw)
	}
	cursor := lines[2]
	var elems []string
	for i := 4; i+1 < len(lines); i += 2 {
		elems = append(elems, lines[i+1])
	}
	return cursor, elems
}
