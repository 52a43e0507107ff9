package engine

import (
	"math"
	"math/rand"
	"slices"
	"strconv"
	"testing"
)

// TestSortRanges: both sorts put every element of the wanted range where
// a full stable sort puts it, under an order with no ties between
// different elements (numeric with the bytes as tie-break), for random
// vectors and ranges; with ties, mergeSort is stable.
func TestSortRanges(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for iter := 0; iter < 2000; iter++ {
		n := rng.Intn(120)
		items := make([]sortItem, n)
		for i := range items {
			v := int64(rng.Intn(40))
			items[i] = sortItem{obj: lelem{n: int64(i)}, score: float64(v)}
		}
		o := &sortOrder{sign: 1}
		if rng.Intn(2) == 0 {
			o.sign = -1
		}
		want := slices.Clone(items)
		slices.SortStableFunc(want, func(a, b sortItem) int { return o.cmp(&a, &b) })
		got := slices.Clone(items)
		mergeSort(got, nil, o)
		if !slices.Equal(got, want) {
			t.Fatalf("mergeSort n=%d differs from a stable sort", n)
		}
		if n == 0 {
			continue
		}
		lo := rng.Intn(n)
		hi := lo + rng.Intn(n-lo)
		got = slices.Clone(items)
		pqsort(got, o, lo, hi)
		if !slices.Equal(got[lo:hi+1], want[lo:hi+1]) {
			t.Fatalf("pqsort n=%d [%d,%d] differs", n, lo, hi)
		}
	}
}

// TestSortAllocs: SORT reuses its vectors, so a sort of a list allocates
// nothing once warm (numeric, ALPHA, BY with LIMIT).
func TestSortAllocs(t *testing.T) {
	c := newTestCtx()
	push := []string{"RPUSH", "l"}
	for i := 0; i < 1000; i++ {
		push = append(push, strconv.Itoa(i*7919%1009)+".5")
		run(c, "SET", "w_"+strconv.Itoa(i*7919%1009)+".5", strconv.Itoa(i))
	}
	run(c, push...)
	for _, cmd := range [][]string{{"SORT", "l"}, {"SORT", "l", "ALPHA", "DESC"}, {"SORT", "l", "BY", "w_*", "LIMIT", "0", "10"}, {"SORT_RO", "l", "BY", "nosort", "GET", "#"}} {
		argv := toArgv(cmd)
		c.Exec(argv)
		if n := testing.AllocsPerRun(20, func() { c.W.Reset(); c.Exec(argv) }); n > 0 {
			t.Errorf("%v: %.1f allocations a call", cmd, n)
		}
	}
}

// TestSortZsetUnderCapture: the conversion of a listpack sorted set to a
// skiplist, which even SORT_RO does, copies a set a capture shares.
func TestSortZsetUnderCapture(t *testing.T) {
	c := newTestCtx()
	run(c, "ZADD", "z", "1", "a", "2", "b")
	e0 := *c.DB.dict.find("z")
	s := c.E.Capture()
	defer s.Release()
	if out := run(c, "SORT_RO", "z", "BY", "nosort"); out != "*2\r\n$1\r\na\r\n$1\r\nb\r\n" {
		t.Fatalf("SORT_RO: %q", out)
	}
	if e1 := c.DB.dict.find("z"); e1.p == e0.p || e0.zset().big() || !e0.zset().isLP() || !e1.zset().big() {
		t.Fatalf("the shared set was converted in place")
	}
	if out := run(c, "OBJECT", "ENCODING", "z"); out != "$8\r\nskiplist\r\n" {
		t.Fatalf("OBJECT ENCODING: %q", out)
	}
}

// TestSortStrtod: SORT's score parsing against what redis-server 7.0.15
// (glibc strtod, errno checked) accepts.
func TestSortStrtod(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
		f  float64
	}{
		{"", true, 0}, {" 3", true, 3}, {"0x10", true, 16}, {"inf", true, inf}, {"-Infinity", true, -inf},
		{"1e308", true, 1e308}, {"1e309", false, 0}, {"1e-310", false, 0}, {"1e-400", false, 0},
		{"0e-5000", true, 0}, {"0x1p-1074", true, 5e-324}, {"0x1.8p-1073", true, 1.5 * 0x1p-1073},
		{"2.2250738585072014e-308", true, 2.2250738585072014e-308}, {"2.2250738585072011e-308", false, 0},
		{"3 ", false, 0}, {"nan", false, 0}, {"1_0", false, 0}, {"0x", false, 0}, {"1\x00abc", true, 1},
		{"\x003", true, 0}, {"0x.8", true, 0.5}, {"-0", true, 0}, {"+.5", true, 0.5},
	} {
		f, ok := sortStrtod(c.in)
		if ok != c.ok || ok && f != c.f {
			t.Errorf("sortStrtod(%q) = %v, %v; want %v, %v", c.in, f, ok, c.f, c.ok)
		}
	}
}

var inf = math.Inf(1)
