package tests

import (
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// parseResp2 decodes a RESP2 reply into string / int64 / nil / []any;
// an error reply becomes an error value.
func parseResp2(b []byte) (any, []byte) {
	i := strings.Index(string(b), "\r\n")
	head, rest := string(b[1:i]), b[i+2:]
	switch b[0] {
	case '+':
		return head, rest
	case '-':
		return fmt.Errorf("%s", head), rest
	case ':':
		n, _ := strconv.ParseInt(head, 10, 64)
		return n, rest
	case '$':
		n, _ := strconv.Atoi(head)
		if n < 0 {
			return nil, rest
		}
		return string(rest[:n]), rest[n+2:]
	case '*':
		n, _ := strconv.Atoi(head)
		if n < 0 {
			return nil, rest
		}
		out := make([]any, n)
		for j := range out {
			out[j], rest = parseResp2(rest)
		}
		return out, rest
	}
	panic("bad reply " + string(b))
}

func mustDoValue(t *testing.T, c *Conn, args ...string) any {
	t.Helper()
	b, err := c.Do(args...)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := parseResp2(b)
	if e, ok := v.(error); ok {
		t.Fatalf("%v: %v", args, e)
	}
	return v
}

// scanAll runs a full SCAN, calling between(i) after each call.
func scanAll(t *testing.T, c *Conn, extra []string, between func(i int)) map[string]int {
	t.Helper()
	seen := map[string]int{}
	cursor := "0"
	for i := 0; ; i++ {
		if i > 100000 {
			t.Fatal("scan does not terminate")
		}
		r := mustDoValue(t, c, append([]string{"SCAN", cursor}, extra...)...).([]any)
		cursor = r[0].(string)
		for _, k := range r[1].([]any) {
			seen[k.(string)]++
		}
		if cursor == "0" {
			return seen
		}
		if between != nil {
			between(i)
		}
	}
}

func dialDB(t *testing.T, addr string, db int) *Conn {
	t.Helper()
	c := mustDial(t, addr)
	mustDoValue(t, c, "SELECT", strconv.Itoa(db))
	mustDoValue(t, c, "FLUSHDB")
	return c
}

func fill(t *testing.T, c *Conn, prefix string, from, to int) {
	t.Helper()
	for i := from; i < to; i += 100 {
		args := []string{"MSET"}
		for j := i; j < min(i+100, to); j++ {
			args = append(args, prefix+strconv.Itoa(j), "v")
		}
		mustDoValue(t, c, args...)
	}
}

// TestScanFullIteration: a SCAN to cursor 0 returns every key that exists
// for the whole scan, also while the table grows and shrinks under it.
func TestScanFullIteration(t *testing.T) {
	for _, addr := range []string{limitAddr, redisAddr} {
		c := dialDB(t, addr, 9)
		defer c.Close()
		for _, count := range []string{"1", "7", "10", "1000"} {
			mustDoValue(t, c, "FLUSHDB")
			fill(t, c, "k:", 0, 1000)
			seen := scanAll(t, c, []string{"COUNT", count}, nil)
			if len(seen) != 1000 {
				t.Fatalf("%s COUNT %s: %d distinct keys, want 1000", addr, count, len(seen))
			}
		}

		// grow during the scan
		mustDoValue(t, c, "FLUSHDB")
		fill(t, c, "stable:", 0, 200)
		n := 0
		seen := scanAll(t, c, []string{"COUNT", "5"}, func(i int) {
			if i < 40 {
				fill(t, c, "new:", n, n+50)
				n += 50
			}
		})
		checkStable(t, addr+" grow", seen, 200)

		// shrink during the scan
		mustDoValue(t, c, "FLUSHDB")
		fill(t, c, "stable:", 0, 100)
		fill(t, c, "tmp:", 0, 5000)
		d := 0
		seen = scanAll(t, c, []string{"COUNT", "20"}, func(i int) {
			args := []string{"DEL"}
			for j := d; j < min(d+300, 5000); j++ {
				args = append(args, "tmp:"+strconv.Itoa(j))
			}
			d += 300
			if len(args) > 1 {
				mustDoValue(t, c, args...)
			}
		})
		checkStable(t, addr+" shrink", seen, 100)

		// MATCH and TYPE
		mustDoValue(t, c, "FLUSHDB")
		fill(t, c, "m:", 0, 300)
		fill(t, c, "x:", 0, 300)
		seen = scanAll(t, c, []string{"MATCH", "m:1*", "TYPE", "string", "COUNT", "3"}, nil)
		want := 0
		for i := 0; i < 300; i++ {
			if strings.HasPrefix(strconv.Itoa(i), "1") {
				want++
				if seen["m:"+strconv.Itoa(i)] == 0 {
					t.Fatalf("%s: MATCH missed m:%d", addr, i)
				}
			}
		}
		if len(seen) != want {
			t.Fatalf("%s: MATCH returned %d keys, want %d", addr, len(seen), want)
		}
		if s := scanAll(t, c, []string{"TYPE", "list"}, nil); len(s) != 0 {
			t.Fatalf("%s: TYPE list returned %v", addr, s)
		}
		mustDoValue(t, c, "FLUSHDB")
	}
}

func checkStable(t *testing.T, what string, seen map[string]int, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if seen["stable:"+strconv.Itoa(i)] == 0 {
			t.Fatalf("%s: scan missed stable:%d", what, i)
		}
	}
}

// TestKeysRandomKeyCover: KEYS returns the same set as Redis and
// RANDOMKEY only returns existing keys.
func TestKeysRandomKeyCover(t *testing.T) {
	r, l := dialDB(t, redisAddr, 9), dialDB(t, limitAddr, 9)
	defer r.Close()
	defer l.Close()
	for _, c := range []*Conn{r, l} {
		fill(t, c, "k:", 0, 500)
	}
	for _, pat := range []string{"*", "k:1?", "k:[0-3]*", "k:*9", "nomatch"} {
		a := mustDoValue(t, r, "KEYS", pat).([]any)
		b := mustDoValue(t, l, "KEYS", pat).([]any)
		as, bs := fmt.Sprint(sortAny(a)), fmt.Sprint(sortAny(b))
		if as != bs {
			t.Fatalf("KEYS %s differs", pat)
		}
	}
	seen := map[string]bool{}
	for i := 0; i < 300; i++ {
		k := mustDoValue(t, l, "RANDOMKEY").(string)
		if !strings.HasPrefix(k, "k:") {
			t.Fatalf("RANDOMKEY gave %q", k)
		}
		seen[k] = true
	}
	if len(seen) < 100 {
		t.Fatalf("RANDOMKEY is not random: %d distinct keys in 300 draws", len(seen))
	}
	// only expired keys left: RANDOMKEY reclaims them and returns nil
	mustDoValue(t, l, "FLUSHDB")
	for i := 0; i < 50; i++ {
		mustDoValue(t, l, "SET", "e:"+strconv.Itoa(i), "v", "PX", "1")
	}
	mustDoValue(t, l, "SET", "live", "v")
	for i := 0; i < 20; i++ {
		if k := mustDoValue(t, l, "RANDOMKEY"); k != "live" && !strings.HasPrefix(k.(string), "e:") {
			t.Fatalf("RANDOMKEY gave %v", k)
		}
	}
	mustDoValue(t, l, "DEL", "live")
	mustDoValue(t, l, "PEXPIRE", "e:0", "1")
	b, _ := l.Do("PING")
	_ = b
	mustDoValue(t, l, "FLUSHDB")
}

func sortAny(a []any) []string {
	s := make([]string, len(a))
	for i, x := range a {
		s[i] = x.(string)
	}
	sort.Strings(s)
	return s
}

// TestIncrByFloatValues compares INCRBYFLOAT's replies with Redis over
// many generated values (long double arithmetic and "%.17Lf" formatting).
func TestIncrByFloatValues(t *testing.T) {
	r, l := dialDB(t, redisAddr, 9), dialDB(t, limitAddr, 9)
	defer r.Close()
	defer l.Close()
	rng := rand.New(rand.NewSource(7))
	gen := func() string {
		switch rng.Intn(8) {
		case 0:
			return strconv.FormatFloat(rng.Float64(), 'f', rng.Intn(20), 64)
		case 1:
			return strconv.FormatFloat((rng.Float64()-0.5)*1e6, 'f', rng.Intn(10), 64)
		case 2:
			return strconv.FormatFloat(rng.NormFloat64()*math10(rng.Intn(40)-20), 'g', -1, 64)
		case 3:
			return strconv.FormatFloat(rng.NormFloat64()*math10(rng.Intn(600)-300), 'e', rng.Intn(18), 64)
		case 4:
			return strconv.Itoa(rng.Intn(2000) - 1000)
		case 5:
			return "0." + strings.Repeat("0", rng.Intn(20)) + strconv.Itoa(rng.Intn(1000))
		case 6:
			return strconv.FormatInt(rng.Int63(), 10) + "." + strconv.Itoa(rng.Intn(100))
		default:
			return []string{"0.1", "0.2", "0.3", "-0.1", "1.1", "2.675", "1e-17", "5e-18", "0.5", "3.3"}[rng.Intn(10)]
		}
	}
	for i := 0; i < 3000; i++ {
		key := "f" + strconv.Itoa(rng.Intn(20))
		args := []string{"INCRBYFLOAT", key, gen()}
		if rng.Intn(50) == 0 {
			args = []string{"SET", key, gen()}
		}
		a, err := r.Do(args...)
		if err != nil {
			t.Fatal(err)
		}
		b, err := l.Do(args...)
		if err != nil {
			t.Fatal(err)
		}
		if string(a) != string(b) {
			t.Errorf("%v: redis %q limitdb %q", args, a, b)
			mustDoValue(t, r, "SET", key, "0")
			mustDoValue(t, l, "SET", key, "0")
		}
	}
}

func math10(e int) float64 {
	f := 1.0
	for ; e > 0; e-- {
		f *= 10
	}
	for ; e < 0; e++ {
		f /= 10
	}
	return f
}
