package luavm

import (
	"strings"
	"testing"
	"time"

	"limitdb/engine"
	"limitdb/resp"
)

// evalOnce runs one EVAL on a fresh engine and returns the raw reply.
func evalOnce(t testing.TB, e *engine.Engine, src string) string {
	w := resp.NewWriter()
	c := &engine.Ctx{E: e, DB: e.DBs[0], W: w, Now: 1700000000000}
	c.Exec([][]byte{[]byte("eval"), []byte(src), []byte("0")})
	return string(w.B)
}

// TestMemBudget: a script whose live data passes lua-memory-limit gets
// "not enough memory" in Redis's wrapping for a bare error, the interpreter
// is usable afterwards, and a script that builds and drops more than the
// limit in total (but never holds it) runs to the end.
func TestMemBudget(t *testing.T) {
	e := engine.New()
	e.Guard.MemLimit.Store(32 << 20)
	for _, src := range []string{
		"local t = {} for i = 1, 1e9 do t[i] = i end return #t",
		"local t = {} for i = 1, 1e9 do t['k' .. i] = i end return #t",
		"local s = string.rep('x', 1024 * 1024) for i = 1, 20 do s = s .. s end return #s",
		"local t = {} for i = 1, 1e9 do t[i] = {} end return #t",
		"local t = {} for i = 1, 1e9 do t[i] = function() return i end end return #t",
		"return #string.rep('x', 2^31 - 1)",
	} {
		start := time.Now()
		got := evalOnce(t, e, src)
		if !strings.HasPrefix(got, "-ERR Error running script ") || !strings.HasSuffix(got, ", not enough memory\r\n") {
			t.Errorf("%s: %q", src, got)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", src, d)
		}
		if got := evalOnce(t, e, "return 1 + 1"); got != ":2\r\n" {
			t.Fatalf("after %s: %q", src, got)
		}
	}
	// 64 MB built and dropped 1 MB at a time, never more than 2 MB live
	if got := evalOnce(t, e, "local n = 0 for i = 1, 64 do local s = string.rep('x', 1024 * 1024) n = n + #s end return n"); got != ":67108864\r\n" {
		t.Errorf("churn: %q", got)
	}
	// pcall catches it, as Lua 5.1's pcall catches LUA_ERRMEM
	if got := evalOnce(t, e, "local ok, err = pcall(string.rep, 'x', 2^30) return {tostring(ok), err}"); got != "*2\r\n$5\r\nfalse\r\n$17\r\nnot enough memory\r\n" {
		t.Errorf("pcall: %q", got)
	}
	e.Guard.MemLimit.Store(0) // no limit
	if got := evalOnce(t, e, "return #string.rep('x', 64 * 1024 * 1024)"); got != ":67108864\r\n" {
		t.Errorf("unlimited: %q", got)
	}
}
