package tests

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLuaTableOrderRandom runs scripts that build a table from a random
// constructor and a random sequence of assignments, removals (also during
// a traversal), table.insert/remove, on redis-server and limitdb, and
// compares what depends on the table's layout: the pairs() order with the
// values, #t and next() after the last key. The seed is fixed, so a
// failure names a script that fails every time.
func TestLuaTableOrderRandom(t *testing.T) {
	p := dialPair(t, 2)
	rng := rand.New(rand.NewPCG(9, 2024))
	for n := 0; n < 300; n++ {
		src := randomTableScript(rng)
		ref, err := p.ref.Do("EVAL", src, "0")
		if err != nil {
			t.Fatalf("redis: %v", err)
		}
		cand, err := p.cand.Do("EVAL", src, "0")
		if err != nil {
			t.Fatalf("limitdb: %v", err)
		}
		if !bytes.Equal(ref, cand) {
			t.Fatalf("script %d differs\n%s\nredis:   %.600q\nlimitdb: %.600q", n, src, ref, cand)
		}
	}
}

// tableKeys are the keys the random scripts use: short and long strings
// (Redis hashes every byte of them), integers in and out of the array
// part, negative numbers, -0, fractions, large numbers and booleans.
var tableKeys = func() []string {
	var ks []string
	for i := 1; i <= 30; i++ {
		ks = append(ks, fmt.Sprintf("'k%d'", i))
	}
	for i := 1; i <= 8; i++ {
		ks = append(ks, fmt.Sprintf("'a_rather_long_key_name_for_hashing_%d'", i))
	}
	for i := -3; i <= 40; i++ {
		ks = append(ks, fmt.Sprint(i))
	}
	return append(ks, "-0", "0.5", "2.5", "-1.5", "1e9", "2^31", "2^53", "-2^31", "1e300", "true", "false")
}()

func randomTableScript(rng *rand.Rand) string {
	key := func() string { return tableKeys[rng.IntN(len(tableKeys))] }
	var b strings.Builder
	b.WriteString("local t = {")
	for i, n := 0, rng.IntN(12); i < n; i++ {
		switch rng.IntN(4) {
		case 0:
			fmt.Fprintf(&b, "%d, ", rng.IntN(100))
		case 1:
			fmt.Fprintf(&b, "f%d = %d, ", rng.IntN(20), rng.IntN(100))
		default:
			fmt.Fprintf(&b, "[%s] = %d, ", key(), rng.IntN(100))
		}
	}
	b.WriteString("}\n")
	for i, n := 0, rng.IntN(60); i < n; i++ {
		switch r := rng.IntN(20); {
		case r < 11:
			fmt.Fprintf(&b, "t[%s] = %d\n", key(), rng.IntN(100))
		case r < 16:
			fmt.Fprintf(&b, "t[%s] = nil\n", key())
		case r == 16:
			fmt.Fprintf(&b, "table.insert(t, %d)\n", rng.IntN(100))
		case r == 17:
			fmt.Fprintf(&b, "if #t >= %d then table.insert(t, %d, %d) end\n", 1+rng.IntN(5), 1+rng.IntN(5), rng.IntN(100))
		case r == 18:
			b.WriteString("table.remove(t)\n")
		default:
			fmt.Fprintf(&b, "for k, v in pairs(t) do if v %% %d == 0 then t[k] = nil end end\n", 2+rng.IntN(4))
		}
	}
	b.WriteString(`local r = {} local last
for k, v in pairs(t) do r[#r + 1] = tostring(k) .. '=' .. v last = k end
r[#r + 1] = '#' .. #t
r[#r + 1] = tostring(last ~= nil and next(t, last))
return r`)
	return b.String()
}
