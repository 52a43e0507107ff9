package tests

import (
	"strings"
	"testing"
)

// TestLuaMemoryLimitConfig checks limitdb's lua-memory-limit (no Redis
// counterpart): its default, that CONFIG SET changes what a script may hold
// at once (a 40 MB string passes at the default, fails at 16mb, passes
// again at 0 = no limit), the error text, and that the server and the
// interpreter go on after the error.
func TestLuaMemoryLimitConfig(t *testing.T) {
	_, c := mustLimitdbConn(t)
	do := func(args ...string) string {
		r, err := c.Do(args...)
		if err != nil {
			t.Fatal(err)
		}
		return string(r)
	}
	if r := do("CONFIG", "GET", "lua-memory-limit"); r != "*2\r\n$16\r\nlua-memory-limit\r\n$9\r\n268435456\r\n" {
		t.Fatalf("default: %q", r)
	}
	const script = "local s = string.rep('x', 40 * 1024 * 1024) return #s"
	if r := do("EVAL", script, "0"); r != ":41943040\r\n" {
		t.Fatalf("40 MB at the default limit: %q", r)
	}
	if r := do("CONFIG", "SET", "lua-memory-limit", "16mb"); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", r)
	}
	if r := do("CONFIG", "GET", "lua-memory-limit"); !strings.HasSuffix(r, "$8\r\n16777216\r\n") {
		t.Fatalf("CONFIG GET after SET: %q", r)
	}
	if r := do("EVAL", script, "0"); r != "-ERR Error running script "+sha1hex(script)+", not enough memory\r\n" {
		t.Fatalf("40 MB at 16mb: %q", r)
	}
	if r := do("EVAL", "return #string.rep('x', 1024 * 1024)", "0"); r != ":1048576\r\n" {
		t.Fatalf("1 MB after the error: %q", r)
	}
	if r := do("CONFIG", "SET", "lua-memory-limit", "0"); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET 0: %q", r)
	}
	if r := do("EVAL", script, "0"); r != ":41943040\r\n" {
		t.Fatalf("40 MB without a limit: %q", r)
	}
	if r := do("CONFIG", "SET", "lua-memory-limit", "lots"); r != "-ERR CONFIG SET failed (possibly related to argument 'lua-memory-limit') - argument must be a memory value\r\n" {
		t.Fatalf("bad value: %q", r)
	}
}

// TestLuaMemoryLimitCompile: a script body whose compilation would take
// more than lua-memory-limit (~64 bytes per source byte) is refused, by
// EVAL and SCRIPT LOAD alike, before the compiler runs.
func TestLuaMemoryLimitCompile(t *testing.T) {
	_, c := mustLimitdbConn(t)
	body := "return 1 " + strings.Repeat("-- padding\n", 100000) // 1.1 MB
	if r, _ := c.Do("EVAL", body, "0"); string(r) != ":1\r\n" {
		t.Fatalf("at the default limit: %q", r)
	}
	c.Do("CONFIG", "SET", "lua-memory-limit", "32mb")
	body += " "
	const want = "-ERR Error compiling script (new function): not enough memory\r\n"
	if r, _ := c.Do("EVAL", body, "0"); string(r) != want {
		t.Fatalf("EVAL at 32mb: %q", r)
	}
	if r, _ := c.Do("SCRIPT", "LOAD", body); string(r) != want {
		t.Fatalf("SCRIPT LOAD at 32mb: %q", r)
	}
	if r, _ := c.Do("EVAL", "return 2", "0"); string(r) != ":2\r\n" {
		t.Fatalf("after: %q", r)
	}
}
