package engine

import (
	"bytes"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"limitdb/resp"
)

// TestZsetSmallVsSkiplist runs the same random sorted-set commands on an
// engine whose small sets are listpacks and on one where every set is a
// skiplist, and requires byte-identical replies (RESP2 and RESP3).
func TestZsetSmallVsSkiplist(t *testing.T) {
	defer func() { zsetForceSkiplist = false }()
	for seed := int64(1); seed <= 30; seed++ {
		r := rand.New(rand.NewSource(seed))
		var ctx [2]*Ctx
		for i := range ctx {
			e := New()
			ctx[i] = &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1}
			ctx[i].W.Proto = 2 + int(seed%2)
		}
		nmem := 5 + r.Intn(200)
		if seed%3 == 0 {
			entries := int64(1 + r.Intn(20))
			for _, c := range ctx { // small thresholds: conversions happen early
				c.E.SetEncodingLimit("zset-max-listpack-entries", entries)
				c.E.SetEncodingLimit("zset-max-listpack-value", 4)
			}
		}
		if seed%5 == 0 {
			// limits above zsetLPMax: the listpack gives way to the
			// skiplist while Redis would still use a listpack
			nmem = 300 + r.Intn(200)
			for _, c := range ctx {
				c.E.SetEncodingLimit("zset-max-listpack-entries", 1000)
				for i := 0; i < 300; i++ {
					c.Exec(toArgv([]string{"zadd", "z0", fmt.Sprint(i % 17), fmt.Sprintf("p%d", i)}))
				}
			}
		}
		key := func() string { return fmt.Sprintf("z%d", r.Intn(3)) }
		mem := func() string {
			if r.Intn(30) == 0 {
				return fmt.Sprintf("long-member-%d", r.Intn(nmem))
			}
			return fmt.Sprintf("m%d", r.Intn(nmem))
		}
		score := func() string {
			switch r.Intn(12) {
			case 0:
				return "-0"
			case 1:
				return "+inf"
			case 2:
				return "-inf"
			}
			return fmt.Sprint(r.Intn(40) - 20)
		}
		sbound := func() string {
			if r.Intn(3) == 0 {
				return "(" + score()
			}
			return score()
		}
		lbound := func() string {
			switch r.Intn(6) {
			case 0:
				return "-"
			case 1:
				return "+"
			case 2:
				return "(" + mem()
			}
			return "[" + mem()
		}
		idx := func() string { return fmt.Sprint(r.Intn(30) - 15) }
		opt := func(args []string, o ...string) []string {
			for _, x := range o {
				if r.Intn(2) == 0 {
					args = append(args, x)
				}
			}
			return args
		}
		limit := func(args []string) []string {
			if r.Intn(3) == 0 {
				args = append(args, "LIMIT", fmt.Sprint(r.Intn(5)), fmt.Sprint(r.Intn(8)-1))
			}
			return args
		}
		for step := 0; step < 4000; step++ {
			var cmd []string
			switch r.Intn(24) {
			case 0:
				// lex ranges are only meaningful (encoding-independent) on a
				// set whose scores are equal: "zl" only ever has score 0
				cmd = []string{"zadd", "zl", "0", mem(), "0", mem()}
			case 1, 2, 3, 4:
				cmd = opt([]string{"zadd", key()}, "CH")
				if r.Intn(8) == 0 {
					cmd = append(cmd, []string{"NX", "XX", "GT", "LT"}[r.Intn(4)])
				}
				for n := 1 + r.Intn(4); n > 0; n-- {
					cmd = append(cmd, score(), mem())
				}
			case 5:
				cmd = []string{"zincrby", key(), score(), mem()}
			case 6, 7:
				k := key()
				if r.Intn(4) == 0 {
					k = "zl"
				}
				cmd = []string{"zrem", k, mem(), mem()}
			case 8:
				cmd = opt([]string{"zrange", key(), idx(), idx()}, "REV", "WITHSCORES")
			case 9:
				cmd = limit(opt([]string{"zrange", key(), sbound(), sbound(), "BYSCORE"}, "REV", "WITHSCORES"))
			case 10:
				cmd = limit(opt([]string{"zrange", "zl", lbound(), lbound(), "BYLEX"}, "REV"))
			case 11:
				cmd = []string{[]string{"zrank", "zrevrank", "zscore"}[r.Intn(3)], key(), mem()}
			case 12:
				cmd = []string{"zmscore", key(), mem(), mem(), mem()}
			case 13:
				cmd = []string{[]string{"zcount", "zremrangebyscore"}[r.Intn(2)], key(), sbound(), sbound()}
			case 14:
				cmd = []string{[]string{"zlexcount", "zremrangebylex"}[r.Intn(2)], "zl", lbound(), lbound()}
			case 15:
				cmd = []string{"zremrangebyrank", key(), idx(), idx()}
			case 16:
				cmd = []string{[]string{"zpopmin", "zpopmax"}[r.Intn(2)], key(), fmt.Sprint(r.Intn(4))}
			case 17:
				cmd = []string{"zrandmember", key(), fmt.Sprint(r.Intn(20) - 10), "WITHSCORES"}
			case 18:
				cmd = []string{"zscan", key(), "0", "COUNT", "1000"}
			case 19:
				cmd = opt([]string{[]string{"zunion", "zinter", "zdiff"}[r.Intn(3)], "2", key(), key()}, "WITHSCORES")
			case 20:
				cmd = []string{[]string{"zunionstore", "zinterstore", "zdiffstore"}[r.Intn(3)], key(), "2", key(), key()}
			case 21:
				cmd = []string{"zrangestore", key(), key(), idx(), idx()}
			case 22:
				cmd = []string{"copy", key(), key(), "REPLACE"}
			case 23:
				cmd = []string{"zcard", key()}
			}
			var out [2][]byte
			for i, c := range ctx {
				zsetForceSkiplist = i == 1
				c.W.Reset()
				c.Exec(toArgv(cmd))
				out[i] = append([]byte(nil), c.W.B...)
			}
			zsetForceSkiplist = false
			for _, k := range []string{"z0", "z1", "z2", "zl"} {
				var st [2]string
				for i, c := range ctx {
					c.W.Reset()
					c.Exec(toArgv([]string{"zrange", k, "0", "-1", "withscores"}))
					st[i] = string(c.W.B)
					if e := c.DB.dict.find(k); e != nil {
						z := e.zset()
						st[i] += fmt.Sprint(z.big(), z.len())
					}
				}
				if st[0] != st[1] {
					t.Fatalf("seed %d step %d %q: state of %s differs:\n%q\n%q", seed, step, cmd, k, st[0], st[1])
				}
			}
			if cmd[0] == "zscan" {
				// a big set is scanned in member-table chain order, which
				// depends on the insertion history: compare as sets
				out[0], out[1] = sortScanPairs(out[0]), sortScanPairs(out[1])
			}
			if !bytes.Equal(out[0], out[1]) {
				t.Fatalf("seed %d step %d %q:\nlistpack: %q\nskiplist: %q", seed, step, cmd, out[0], out[1])
			}
		}
	}
}

// sortScanPairs sorts the member/score pairs of a ZSCAN reply.
func sortScanPairs(b []byte) []byte {
	lines := strings.Split(string(b), "\r\n")
	if len(lines) < 4 {
		return b
	}
	head, rest := lines[:4], lines[4:len(lines)-1]
	var pairs []string
	for i := 0; i+3 < len(rest); i += 4 {
		pairs = append(pairs, strings.Join(rest[i:i+4], "\r\n"))
	}
	sort.Strings(pairs)
	return []byte(strings.Join(head, "\r\n") + "|" + strings.Join(pairs, "|"))
}
