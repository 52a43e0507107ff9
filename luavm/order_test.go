package luavm

import (
	"testing"

	"limitdb/engine"
)

// TestMapOrderDeterministic: tables with more hash keys than the small
// representation holds are encoded in one order, run after run (Go map
// order used to reach cjson.encode and {map=} replies).
func TestMapOrderDeterministic(t *testing.T) {
	e := engine.New()
	for _, src := range []string{
		"local t = {} for i = 1, 40 do t['k' .. i] = i end return cjson.encode(t)",
		"local t = {} for i = 1, 40 do t[i + 0.5] = i end return cmsgpack.pack(t)",
		"redis.setresp(3) local t = {} for i = 1, 40 do t['k' .. i] = i end return {map = t}",
	} {
		first := evalOnce(t, e, src)
		for i := 0; i < 20; i++ {
			if got := evalOnce(t, e, src); got != first {
				t.Fatalf("%s: run %d differs:\n%q\n%q", src, i, got, first)
			}
		}
	}
}
