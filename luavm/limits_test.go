package luavm

import (
	"testing"

	"limitdb/engine"
)

// TestLimitsLeaveNoTrace: after each way a script can hit one of Lua's
// limits (call depth, C call depth, gettable loop, memory, a killed-like
// error in the handler), the nested-call count is back where it was: a
// pcall chain 198 deep (Lua 5.1's most) still works.
func TestLimitsLeaveNoTrace(t *testing.T) {
	e := engine.New()
	e.Guard.MemLimit.Store(32 << 20)
	probe := "local function f(n) if n == 0 then return 0 end local ok, v = pcall(f, n - 1) if not ok then return 'E' .. n .. v end return v + 1 end return f(198)"
	for _, src := range []string{
		"local function f() return 1 + f() end return f()",
		"local function f() return pcall(f) end return tostring(f())",
		"local t = setmetatable({}, {__index = function(t, k) return t[k + 1] end}) return t[1]",
		"local t = setmetatable({}, {}) getmetatable(t).__tostring = function(x) return tostring(x) end return tostring(t)",
		"local t = setmetatable({}, {}) getmetatable(t).__index = t return t.x",
		"return #string.rep('x', 2^30)",
		"local function f() return string.rep('x', 2^30) .. f() end return pcall(f)",
		"local co = coroutine.create(function() local function f() return 1 + f() end return f() end) return {coroutine.resume(co)}",
	} {
		evalOnce(t, e, src)
		if got := evalOnce(t, e, probe); got != ":198\r\n" {
			t.Fatalf("after %s: %.80q", src, got)
		}
	}
}
