package engine

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"limitdb/resp"
)

// TestListDequeModel drives a List with random pushes/pops/sets/trims and
// checks it against a plain slice after every step. Its length wanders
// around the listpack limits (listLPMaxEntries, and long elements for
// listLPMaxBytes), so it converts both ways (linear/replace make a small
// ring a listpack again).
func TestListDequeModel(t *testing.T) {
	var r Rand
	r.Seed(1)
	l := &List{}
	var model []string
	conversions := 0
	for step := 0; step < 40000; step++ {
		v := strconv.Itoa(step)
		switch r.Intn(5) {
		case 0:
			v = "s" + v
		case 1:
			v = "0" + v // not canonical: stored as a string
		case 2:
			v = ""
		case 3:
			if r.Intn(20) == 0 {
				v = strings.Repeat("x", 100+r.Intn(1000))
			}
		}
		wasLP := l.isLP()
		op := r.Intn(12)
		if len(model) > 300 && op < 6 {
			op = 6 + op%4
		}
		switch {
		case op == 10 && len(model) > 0 && r.Intn(8) == 0:
			s, e := r.Intn(len(model)/4+1), len(model)-1-r.Intn(len(model)/4+1)
			if s > e {
				s, e = e, s
			}
			l.trim(s, e)
			model = model[s : e+1]
		case op == 11 && r.Intn(4) == 0:
			l.replace(l.linear())
		}
		switch {
		case op < 3:
			l.PushFront(elemOfString(v))
			model = append([]string{v}, model...)
		case op < 6:
			l.PushBack(elemOfString(v))
			model = append(model, v)
		case op == 6 && len(model) > 0:
			if got := l.PopFront().String(); got != model[0] {
				t.Fatalf("step %d: PopFront %q want %q", step, got, model[0])
			}
			model = model[1:]
		case op == 7 && len(model) > 0:
			if got := l.PopBack().String(); got != model[len(model)-1] {
				t.Fatalf("step %d: PopBack %q want %q", step, got, model[len(model)-1])
			}
			model = model[:len(model)-1]
		case op == 8 && len(model) > 0:
			i := r.Intn(len(model))
			l.set(i, elemOfString(v))
			model[i] = v
		case op == 9 && r.Intn(50) == 0:
			for len(model) > 0 && r.Intn(4) != 0 {
				l.PopFront()
				model = model[1:]
			}
		}
		if l.Len() != len(model) {
			t.Fatalf("step %d: len %d want %d", step, l.Len(), len(model))
		}
		if l.isLP() != wasLP {
			conversions++
		}
		if step%97 == 0 || l.isLP() != wasLP {
			for i := range model {
				if got := l.at(i).String(); got != model[i] {
					t.Fatalf("step %d: at(%d) %q want %q", step, i, got, model[i])
				}
			}
			if len(model) > 0 {
				it, rev := l.iter(0, false), l.iter(len(model)-1, true)
				for i := range model {
					if got := it.next().String(); got != model[i] {
						t.Fatalf("step %d: iter %d %q want %q", step, i, got, model[i])
					}
					if got := rev.next().String(); got != model[len(model)-1-i] {
						t.Fatalf("step %d: reverse iter %d %q want %q", step, i, got, model[len(model)-1-i])
					}
				}
			}
			c := l.clone(0)
			for i, x := range c.linear() {
				if x.String() != model[i] {
					t.Fatalf("step %d: clone differs", step)
				}
			}
		}
	}
	if conversions < 10 {
		t.Fatalf("only %d encoding conversions", conversions)
	}
}

// TestHashModel checks Hash against a map plus an insertion-order slice:
// while small (listpack), order is insertion order with deletions removed.
func TestHashModel(t *testing.T) {
	var r Rand
	r.Seed(2)
	h := &Hash{}
	m := map[string]string{}
	var order []string
	for step := 0; step < 20000; step++ {
		f := "f" + strconv.Itoa(r.Intn(200))
		if r.Intn(3) != 0 {
			v := strconv.Itoa(step)
			if step%3 == 0 {
				v = "x" + v
			}
			isNew := h.Set(f, elemOfString(v))
			if _, had := m[f]; had == isNew {
				t.Fatalf("step %d: Set new=%v", step, isNew)
			}
			if isNew {
				order = append(order, f)
			}
			m[f] = v
		} else {
			_, had := m[f]
			if h.Del(f) != had {
				t.Fatalf("step %d: Del", step)
			}
			if had {
				delete(m, f)
				order = slices.DeleteFunc(order, func(x string) bool { return x == f })
			}
		}
		if h.Len() != len(m) {
			t.Fatalf("step %d: len %d want %d", step, h.Len(), len(m))
		}
		for k, v := range m {
			if got, ok := h.Get(k); !ok || got.String() != v {
				t.Fatalf("step %d: Get(%s)=%q,%v want %q", step, k, got, ok, v)
			}
		}
		if !h.ht() {
			kv := h.pairs(&hashView{})
			for i, k := range order {
				if kv[i].f != k {
					t.Fatalf("step %d: order differs at %d", step, i)
				}
			}
		}
	}
	c := h.clone(0)
	for k, v := range m {
		if got, _ := c.Get(k); got.String() != v {
			t.Fatal("clone differs")
		}
	}
}

// TestSetModel checks Set in both encodings against a map, and that an
// intset stays sorted and converts past 512 members or on a non-integer.
func TestSetModel(t *testing.T) {
	var r Rand
	r.Seed(3)
	s := &Set{}
	m := map[string]bool{}
	for step := 0; step < 20000; step++ {
		var x string
		if step > 10000 && r.Intn(5) == 0 {
			x = "m" + strconv.Itoa(r.Intn(100))
		} else {
			x = strconv.Itoa(r.Intn(700) - 100)
		}
		if r.Intn(3) != 0 {
			if s.Add(x) == m[x] {
				t.Fatalf("step %d: Add", step)
			}
			m[x] = true
		} else {
			if s.Rem(x) != m[x] {
				t.Fatalf("step %d: Rem", step)
			}
			delete(m, x)
		}
		if s.Len() != len(m) {
			t.Fatalf("step %d: len", step)
		}
		if !s.ht {
			if !slices.IsSorted(s.ints) || len(s.ints) > int(defaultLimits.SetMaxIntsetEntries) {
				t.Fatalf("step %d: bad intset", step)
			}
		}
		if step%101 == 0 {
			for k := range m {
				if !s.Has(k) {
					t.Fatalf("step %d: Has(%s)", step, k)
				}
			}
		}
	}
	if !s.ht {
		t.Fatal("expected hashtable encoding")
	}
	p, _ := kindOps[KindSet].Clone(unsafe.Pointer(s), 0)
	if c := (*Set)(p); c.Len() != s.Len() {
		t.Fatal("clone differs")
	}
}

// TestLongDoubleFormat checks the %.17Lf emulation on values whose 80-bit
// results were taken from Redis 7.0.15 (HINCRBYFLOAT).
func TestLongDoubleFormat(t *testing.T) {
	cases := []struct{ a, b, want string }{
		{"1.1", "2.2", "3.3"},
		{"1e20", "3.0e-7", "100000000000000000000"},
		{"0", "-0.00000000000000000001", "0"},
		{"123456789.123456789", "987654321.987654321", "1111111111.11111110995989293"},
		{"9007199254740993", "1", "9007199254740994"},
		{"3.14159265358979323846264338327950288", "2.718281828459045235360287", "5.85987448204883847"},
	}
	for _, tc := range cases {
		a, ok1 := parseLongDouble(tc.a)
		b, ok2 := parseLongDouble(tc.b)
		if !ok1 || !ok2 {
			t.Fatalf("parse %s %s", tc.a, tc.b)
		}
		a.Add(a, b)
		if got := formatLongDouble(a); got != tc.want {
			t.Errorf("%s + %s = %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
	for _, bad := range []string{"", " 1", "1 ", "nan", "1e5000", "1e-5000", "abc", "1_0", "--1", "0x"} {
		if _, ok := parseLongDouble(bad); ok {
			t.Errorf("parseLongDouble(%q) accepted", bad)
		}
	}
}

// TestScanCompleteness walks HSCAN and SSCAN over hashtable-sized values
// with various COUNTs and checks every element comes back exactly once.
func TestScanCompleteness(t *testing.T) {
	e := New()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1}
	hset := []string{"hset", "h"}
	sadd := []string{"sadd", "s"}
	for i := 0; i < 1000; i++ {
		hset = append(hset, "f"+strconv.Itoa(i), "v")
		sadd = append(sadd, "m"+strconv.Itoa(i))
	}
	c.Exec(toArgv(hset))
	c.Exec(toArgv(sadd))
	for _, cmd := range []string{"hscan", "sscan"} {
		for _, count := range []string{"1", "7", "10", "1000", "5000"} {
			seen := map[string]int{}
			cur := "0"
			for steps := 0; ; steps++ {
				if steps > 2000 {
					t.Fatal("scan does not terminate")
				}
				c.W.Reset()
				key := "h"
				if cmd == "sscan" {
					key = "s"
				}
				c.Exec(toArgv([]string{cmd, key, cur, "COUNT", count}))
				var items []string
				cur, items = parseScanReply(t, c.W.B)
				step := 1
				if cmd == "hscan" {
					step = 2
				}
				for i := 0; i < len(items); i += step {
					seen[items[i]]++
				}
				if cur == "0" {
					break
				}
			}
			if len(seen) != 1000 {
				t.Fatalf("%s COUNT %s: %d distinct elements", cmd, count, len(seen))
			}
			for k, n := range seen {
				if n != 1 {
					t.Fatalf("%s COUNT %s: %s returned %d times", cmd, count, k, n)
				}
			}
		}
	}
}

// parseScanReply decodes *2 $cursor *n $item… as the scan commands write it.
func parseScanReply(t *testing.T, b []byte) (string, []string) {
	t.Helper()
	line := func() string {
		i := bytes.Index(b, []byte("\r\n"))
		if i < 0 {
			t.Fatalf("bad reply %q", b)
		}
		l := string(b[:i])
		b = b[i+2:]
		return l
	}
	bulk := func() string {
		n, _ := strconv.Atoi(line()[1:])
		s := string(b[:n])
		b = b[n+2:]
		return s
	}
	if line() != "*2" {
		t.Fatal("not a scan reply")
	}
	cur := bulk()
	n, _ := strconv.Atoi(line()[1:])
	items := make([]string, n)
	for i := range items {
		items[i] = bulk()
	}
	return cur, items
}

// TestScanUnderChange deletes and adds elements between SSCAN/HSCAN calls:
// every element present for the whole scan must still be returned.
func TestScanUnderChange(t *testing.T) {
	for _, cmd := range []string{"sscan", "hscan"} {
		var r Rand
		r.Seed(9)
		e := New()
		c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1}
		const n = 2000
		add := func(m string) {
			if cmd == "sscan" {
				c.Exec(toArgv([]string{"sadd", "k", m}))
			} else {
				c.Exec(toArgv([]string{"hset", "k", m, "v"}))
			}
		}
		del := func(m string) {
			if cmd == "sscan" {
				c.Exec(toArgv([]string{"srem", "k", m}))
			} else {
				c.Exec(toArgv([]string{"hdel", "k", m}))
			}
		}
		for i := 0; i < n; i++ {
			add("m" + strconv.Itoa(i))
		}
		// even members stay; odd ones may be deleted; new ones are added
		seen := map[string]bool{}
		cur := "0"
		for steps := 0; ; steps++ {
			if steps > 10000 {
				t.Fatal("scan does not terminate")
			}
			c.W.Reset()
			c.Exec(toArgv([]string{cmd, "k", cur, "COUNT", "13"}))
			var items []string
			cur, items = parseScanReply(t, c.W.B)
			step := 1
			if cmd == "hscan" {
				step = 2
			}
			for i := 0; i < len(items); i += step {
				seen[items[i]] = true
			}
			if cur == "0" {
				break
			}
			for k := 0; k < 5; k++ {
				del("m" + strconv.Itoa(2*r.Intn(n/2)+1))
				add("new" + strconv.Itoa(steps*5+k))
			}
		}
		for i := 0; i < n; i += 2 {
			if !seen["m"+strconv.Itoa(i)] {
				t.Fatalf("%s: m%d was present throughout but not returned", cmd, i)
			}
		}
	}
}

func TestCollEncoding(t *testing.T) {
	e := New()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1}
	c.Exec(toArgv([]string{"rpush", "l", "a"}))
	c.Exec(toArgv([]string{"hset", "h", "a", "1"}))
	c.Exec(toArgv([]string{"hset", "h2", "a", "01234567890123456789012345678901234567890123456789012345678901234"}))
	c.Exec(toArgv([]string{"sadd", "s", "1"}))
	c.Exec(toArgv([]string{"sadd", "s2", "x"}))
	for key, want := range map[string]string{"l": "quicklist", "h": "listpack", "h2": "hashtable", "s": "intset", "s2": "hashtable"} {
		if got, _ := c.DB.dict.find(key).collEncoding(); got != want {
			t.Errorf("%s: %s, want %s", key, got, want)
		}
	}
}

// TestListQueueAllocatesNothing: a small list used as a queue of
// timestamps (RPUSH one, LPOP one) is updated inside its listpack.
func TestListQueueAllocatesNothing(t *testing.T) {
	c := newTestCtx()
	for i := 0; i < 10; i++ {
		run(c, "RPUSH", "q", strconv.Itoa(1_700_000_000_000+i))
	}
	push := toArgv([]string{"rpush", "q", ""})
	pop := toArgv([]string{"lpop", "q"})
	ts := int64(1_700_000_000_100)
	step := func() {
		ts++
		push[2] = strconv.AppendInt(push[2][:0], ts, 10)
		c.W.Reset()
		c.Exec(push)
		c.Exec(pop)
	}
	step()
	if !c.DB.dict.find("q").list().isLP() {
		t.Fatal("not a listpack")
	}
	if n := testing.AllocsPerRun(1000, step); n != 0 {
		t.Errorf("%v allocations per push+pop", n)
	}
}

// TestListStaysListpack: LREM and LINSERT that change nothing leave a
// small list a listpack (they read it through a ring).
func TestListStaysListpack(t *testing.T) {
	c := newTestCtx()
	run(c, "RPUSH", "l", "a", "b", "1")
	for _, cmd := range [][]string{{"LREM", "l", "0", "x"}, {"LINSERT", "l", "BEFORE", "x", "y"}, {"LREM", "l", "1", "a"}, {"LINSERT", "l", "AFTER", "b", "c"}} {
		run(c, cmd...)
		if !c.DB.dict.find("l").list().isLP() {
			t.Fatalf("%v: the list is a ring", cmd)
		}
	}
	if got := run(c, "LRANGE", "l", "0", "-1"); got != "*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\n1\r\n" {
		t.Fatalf("LRANGE: %q", got)
	}
}
