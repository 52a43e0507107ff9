package luavm

import (
	"strings"
	"testing"

	"limitdb/engine"
)

// TestMapOrderDeterministic: every call of a script gives the same bytes,
// including what depends on object identity (tostring of tables and
// functions, the order of tables keyed by objects), whatever ran before
// it; and nothing a call leaves in KEYS/ARGV reaches the next one.
// (tests/scenarios/scripting/tables.txt compares the orders with Redis.)
func TestMapOrderDeterministic(t *testing.T) {
	e := engine.New()
	for _, src := range []string{
		"local t = {} for i = 1, 40 do t['k' .. i] = i end return cjson.encode(t)",
		"local t = {} for i = 1, 40 do t[i + 0.5] = i end return cmsgpack.pack(t)",
		"redis.setresp(3) local t = {} for i = 1, 40 do t['k' .. i] = i end return {map = t}",
		"return {tostring({}), tostring(function() end), tostring(coroutine.create(function() end)), tostring(tostring)}",
		"local t = {} for i = 1, 20 do t[{}] = i t[function() end] = -i end local r = {} for k, v in pairs(t) do r[#r + 1] = v end return r",
		"local r = {} for k, v in pairs(KEYS) do r[#r + 1] = tostring(k) end KEYS.x = {} setmetatable(KEYS, {}) return r",
	} {
		first := evalOnce(t, e, src)
		for i := 0; i < 20; i++ {
			// other scripts in between must not shift anything
			evalOnce(t, e, "local t = {} for i = 1, 100 do t[i] = {} end return tostring(t)")
			if got := evalOnce(t, e, src); got != first {
				t.Fatalf("%s: run %d differs:\n%q\n%q", src, i, got, first)
			}
		}
	}
	got := evalOnce(t, e, "return tostring({})")
	if !strings.HasPrefix(got, "$21\r\ntable: 0x") {
		t.Fatalf("tostring({}) = %q", got)
	}
}
