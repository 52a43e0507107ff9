// Command gen writes the random differential scenarios
// tests/scenarios/{hashes,lists,sets}/generated.txt. The files are
// committed so that a test run needs no generator; regenerate them with
//
//	go run ./tests/scenarios/gen -dir tests/scenarios
//
// The seed is fixed, so the output is the same on every machine. Every
// reply is compared with redis-server by TestScenarios, so a new seed or a
// new operation needs no expected values, only a run of the suite.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ops is the number of random operations per file.
const ops = 1500

type gen struct {
	r *rand.Rand
	w *bufio.Writer
}

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

// between returns an integer in [lo, hi] as a string.
func (g *gen) between(lo, hi int) string { return strconv.Itoa(lo + g.r.IntN(hi-lo+1)) }

func (g *gen) line(words ...string) { fmt.Fprintln(g.w, strings.Join(words, " ")) }

// several returns 1..n words made by f.
func (g *gen) several(n int, f func() string) []string {
	out := make([]string, 1+g.r.IntN(n))
	for i := range out {
		out[i] = f()
	}
	return out
}

// value is a list element or hash value: small integers (some the int
// encoding keeps, "007" one it does not), letters and the empty string.
func (g *gen) value() string {
	if g.r.IntN(2) == 0 {
		return g.between(-50, 50)
	}
	return g.pick(`""`, "a", "b", "c", "007", "1", "2", "10")
}

func hashes(g *gen) {
	g.line("# generated: random hash operations (small hashes: exact listpack order)")
	key := func() string { return g.pick("h1", "h2") }
	field := func() string { return g.pick("f"+g.between(0, 11), "n", `""`, "1") }
	for i := 0; i < ops; i++ {
		switch g.r.IntN(10) {
		case 0, 1, 2:
			args := []string{"HSET", key()}
			for range 1 + g.r.IntN(3) {
				args = append(args, field(), g.value())
			}
			g.line(args...)
		case 3:
			g.line(append([]string{"HMGET", key()}, g.several(3, field)...)...)
		case 4:
			g.line("HINCRBYFLOAT", key(), field(), g.pick("0.1", "3", "-1.5", "1e3", "-0.25"))
		case 5:
			g.line("HGETALL", key())
		case 6:
			g.line("HSETNX", key(), field(), g.value())
		case 7:
			g.line("HSTRLEN", key(), field())
		case 8:
			g.line(append([]string{"HDEL", key()}, g.several(2, field)...)...)
		case 9:
			if g.r.IntN(2) == 0 {
				g.line("HINCRBY", key(), field(), g.between(-5, 5))
			} else {
				g.line("HSCAN", key(), "0", "COUNT", "100")
			}
		}
	}
}

func lists(g *gen) {
	g.line("# generated: random list operations on a few keys, every reply compared")
	key := func() string { return g.pick("l1", "l2", "l3") }
	index := func() string { return g.between(-6, 12) }
	side := func() string { return g.pick("LEFT", "RIGHT") }
	for i := 0; i < ops; i++ {
		switch g.r.IntN(12) {
		case 0, 1:
			g.line(append([]string{"RPUSH", key()}, g.several(3, g.value)...)...)
		case 2, 3:
			g.line(append([]string{"LPUSH", key()}, g.several(3, g.value)...)...)
		case 4:
			g.line("LRANGE", key(), index(), index())
		case 5:
			g.line("LSET", key(), index(), g.value())
		case 6:
			cmd := g.pick("LPOP", "RPOP")
			if g.r.IntN(2) == 0 {
				g.line(cmd, key())
			} else {
				g.line(cmd, key(), g.between(0, 3))
			}
		case 7:
			g.line("LTRIM", key(), index(), g.between(-6, 30))
		case 8:
			g.line("LMOVE", key(), key(), side(), side())
		case 9:
			g.line("LREM", key(), g.between(-2, 2), g.value())
		case 10:
			args := []string{"LPOS", key(), g.value()}
			if g.r.IntN(2) == 0 {
				args = append(args, "RANK", g.pick("1", "2", "-1"))
			}
			if g.r.IntN(3) == 0 {
				args = append(args, "COUNT", g.between(0, 3))
			}
			g.line(args...)
		case 11:
			if g.r.IntN(2) == 0 {
				g.line("LINDEX", key(), index())
			} else {
				g.line("LINSERT", key(), g.pick("BEFORE", "AFTER"), g.value(), g.value())
			}
		}
	}
}

func sets(g *gen) {
	g.line("# generated: random set operations (intsets exact, others compared as multisets)")
	key := func() string { return g.pick("s1", "s2", "s3") }
	member := func() string { return g.between(-5, 30) }
	for i := 0; i < ops; i++ {
		k := key()
		switch g.r.IntN(8) {
		case 0, 1, 2:
			g.line(append([]string{"SADD", k}, g.several(2, member)...)...)
		case 3:
			g.line(append([]string{"SREM", k}, g.several(3, member)...)...)
		case 4:
			g.line(append([]string{"SMISMEMBER", k}, g.several(3, member)...)...)
		case 5:
			g.line("@sort", "SMEMBERS", k)
		case 6:
			g.line("@sort", g.pick("SINTER", "SUNION", "SDIFF"), k, key())
		case 7:
			g.line(g.pick("SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"), k, key(), key())
		}
		g.line("SCARD", k)
	}
}

func main() {
	dir := flag.String("dir", "tests/scenarios", "the scenarios directory")
	flag.Parse()
	for i, f := range []struct {
		sub string
		fn  func(*gen)
	}{{"hashes", hashes}, {"lists", lists}, {"sets", sets}} {
		path := filepath.Join(*dir, f.sub, "generated.txt")
		fh, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		g := &gen{r: rand.New(rand.NewPCG(0x6c696d6974, uint64(i))), w: bufio.NewWriter(fh)}
		f.fn(g)
		if err := g.w.Flush(); err == nil {
			err = fh.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
