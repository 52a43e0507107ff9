package luavm

import (
	"strings"
	"testing"

	"limitdb/engine"
	"limitdb/resp"
)

// run executes argv on e and returns the reply.
func run(e *engine.Engine, applying bool, args ...string) string {
	w := resp.NewWriter()
	c := &engine.Ctx{E: e, DB: e.DBs[0], W: w, Now: 1700000000000, Applying: applying}
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	c.Exec(argv)
	return string(w.B)
}

// TestFunctionLoadBounds: a client's FUNCTION LOAD stops registration
// code at 500 ms (Redis's LOAD_TIMEOUT_MS) and at lua-memory-limit; the
// same library applied from the executing node's record (Ctx.Applying)
// runs to the end, as a Redis replica loads what its master loaded.
func TestFunctionLoadBounds(t *testing.T) {
	slow := "#!lua name=slow\nlocal t = 0 for i = 1, 3e7 do t = t + i end\nredis.register_function('s', function() return t end)"
	e := engine.New()
	if got := run(e, false, "FUNCTION", "LOAD", slow); got != "-ERR Error registering functions: ERR FUNCTION LOAD timeout\r\n" {
		if strings.HasPrefix(got, "$4\r\nslow") {
			t.Skip("the loop ran in under 500 ms on this machine")
		}
		t.Fatalf("client load: %q", got)
	}
	if got := run(e, true, "FUNCTION", "LOAD", slow); got != "$4\r\nslow\r\n" {
		t.Fatalf("applied load: %q", got)
	}
	if got := run(e, false, "FCALL", "s", "0"); got != ":450000015000000\r\n" {
		t.Fatalf("FCALL: %q", got)
	}
	e.Guard.MemLimit.Store(1 << 20)
	big := "#!lua name=big\nlocal s = ('x'):rep(1024) local t = {} for i = 1, 4096 do t[i] = s .. i end\nredis.register_function('b', function() return #t end)"
	if got := run(e, false, "FUNCTION", "LOAD", big); !strings.HasPrefix(got, "-ERR Error registering functions: ERR ") || !strings.Contains(got, "not enough memory") {
		t.Fatalf("load over lua-memory-limit: %q", got)
	}
	if got := run(e, true, "FUNCTION", "LOAD", big); got != "$3\r\nbig\r\n" {
		t.Fatalf("applied load over lua-memory-limit: %q", got)
	}
}

// TestFunctionVMRebuilt: after a panic drops the functions' interpreter,
// the next FCALL gets a new one with every library loaded again (and the
// library's state started afresh, as after a restart).
func TestFunctionVMRebuilt(t *testing.T) {
	e := engine.New()
	lib := "#!lua name=counter\nlocal n = 0\nredis.register_function('tick', function() n = n + 1 return n end)\nredis.register_function('other', function() return 'o' end)"
	if got := run(e, false, "FUNCTION", "LOAD", lib); got != "$7\r\ncounter\r\n" {
		t.Fatal(got)
	}
	run(e, false, "FCALL", "tick", "0")
	if got := run(e, false, "FCALL", "tick", "0"); got != ":2\r\n" {
		t.Fatalf("second call: %q", got)
	}
	st := StateOf(e)
	v := st.fvm
	c := &engine.Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter()}
	func() {
		defer st.finish(c, v, 0)
		panic("injected")
	}()
	if st.fvm != nil {
		t.Fatal("the functions' interpreter was kept after a panic")
	}
	if got := run(e, false, "FCALL", "tick", "0"); got != ":1\r\n" {
		t.Fatalf("after the rebuild: %q", got)
	}
	if got := run(e, false, "FCALL", "OTHER", "0"); got != "$1\r\no\r\n" {
		t.Fatalf("the other function: %q", got)
	}
}

// TestFunctionKeysNotShared: each FCALL gets new KEYS and ARGV tables, so
// a library that keeps them sees the call it kept them from.
func TestFunctionKeysNotShared(t *testing.T) {
	e := engine.New()
	lib := "#!lua name=keep\nlocal kept\nredis.register_function('k', function(keys) if not kept then kept = keys end return kept[1] end)"
	run(e, false, "FUNCTION", "LOAD", lib)
	run(e, false, "FCALL", "k", "1", "first")
	if got := run(e, false, "FCALL", "k", "1", "second"); got != "$5\r\nfirst\r\n" {
		t.Fatalf("kept KEYS: %q", got)
	}
}

// TestStrictDigestCoversFunctions: DEBUG DIGEST-STRICT changes with the
// libraries and equals for the same libraries loaded in another order.
func TestStrictDigestCoversFunctions(t *testing.T) {
	a, b := engine.New(), engine.New()
	l1 := "#!lua name=l1\nredis.register_function('f1', function() return 1 end)"
	l2 := "#!lua name=l2\nredis.register_function('f2', function() return 2 end)"
	before := a.StrictDigest()
	run(a, false, "FUNCTION", "LOAD", l1)
	if a.StrictDigest() == before {
		t.Fatal("loading a library left the strict digest unchanged")
	}
	run(a, false, "FUNCTION", "LOAD", l2)
	run(b, false, "FUNCTION", "LOAD", l2)
	run(b, false, "FUNCTION", "LOAD", l1)
	if a.StrictDigest() != b.StrictDigest() {
		t.Fatal("same libraries, different strict digests")
	}
	if a.DatasetDigest() != engine.New().DatasetDigest() {
		// DEBUG DIGEST (Redis's) covers keys only
		t.Fatal("libraries changed DEBUG DIGEST")
	}
}

// TestMayKeepArgs: callbacks that only index KEYS/ARGV (or take their
// length, or compare them) reuse one pair of tables; any other use of the
// parameters gives each call new ones.
func TestMayKeepArgs(t *testing.T) {
	for _, tc := range []struct {
		body string
		keep bool
	}{
		{"return redis.call('incr', KEYS[1])", false},
		{"local n = redis.call('incr', KEYS[1]) if n > tonumber(ARGV[1]) then return -1 end return n", false},
		{"for i = 1, #KEYS do redis.call('set', KEYS[i], ARGV[i]) end return #ARGV", false},
		{"if KEYS == ARGV then return 1 end return KEYS[1] .. ARGV[1]", false},
		{"return 1", false},
		{"for _, k in ipairs(KEYS) do redis.call('del', k) end", true},
		{"return KEYS", true},
		{"local t = KEYS return t[1], #t", false},
		{"local t = KEYS return t", true},
		{"local t for i = 1, 2 do if i == 2 then return {t} end t = KEYS end", true},
		{"local t = ARGV local u = t return {u}", true},
		{"kept = ARGV", true},
		{"local f = function() return KEYS[1] end return f()", true},
		{"local t = {} t[KEYS] = 1 return 1", true},
		{"local t = {} return t[ARGV]", true},
		{"return redis.call('get', unpack(KEYS))", true},
		{"KEYS = {} return KEYS[1]", true},
		{"return KEYS:foo()", true},
	} {
		e := engine.New()
		lib := "#!lua name=k\nredis.register_function('f', function(KEYS, ARGV)\n" + tc.body + "\nend)"
		if got := run(e, false, "FUNCTION", "LOAD", lib); got != "$1\r\nk\r\n" {
			t.Fatalf("%s: %q", tc.body, got)
		}
		f := StateOf(e).fn.funcs["f"]
		if f.reuse == tc.keep {
			t.Errorf("%q: reuse %v, want %v", tc.body, f.reuse, !tc.keep)
		}
	}
	e := engine.New()
	run(e, false, "FUNCTION", "LOAD", "#!lua name=v\nredis.register_function('f', function(...) return 1 end)\nredis.register_function('g', redis.log)")
	if StateOf(e).fn.funcs["f"].reuse || StateOf(e).fn.funcs["g"] != nil && StateOf(e).fn.funcs["g"].reuse {
		t.Error("a vararg or Go callback reuses the tables")
	}
}
