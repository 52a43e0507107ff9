package luavm

import (
	"bytes"
	"os"
	"strconv"
	"testing"

	"limitdb/engine"
	"limitdb/resp"
)

// counterScript is a fixed-window counter (INCR, EXPIRE on first hit)
// using only commands every branch has.
const counterScript = `local c = redis.call('incr', KEYS[1])
if c > tonumber(ARGV[1]) then return -1 end
return c`

func benchEval(b *testing.B, src string, args func(i int) [][]byte) {
	e := engine.New()
	w := resp.NewWriter()
	c := &engine.Ctx{E: e, DB: e.DBs[0], W: w, Now: 1700000000000}
	c.Exec([][]byte{[]byte("script"), []byte("load"), []byte(src)})
	sha := string(w.B[len(w.B)-42 : len(w.B)-2])
	w.Reset()
	argv := make([][]byte, 0, 8)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		argv = append(argv[:0], []byte("evalsha"), []byte(sha))
		argv = append(argv, args(i)...)
		c.Exec(argv)
		if len(w.B) > 0 && w.B[0] == '-' {
			b.Fatalf("error: %s", w.B)
		}
		w.Reset()
	}
}

func BenchmarkEvalShaCounter(b *testing.B) {
	a := [][]byte{[]byte("1"), []byte("k"), []byte("1000000000")}
	benchEval(b, counterScript, func(int) [][]byte { return a })
}

// BenchmarkEvalShaTokenBucket runs the document's token bucket
// (001-token-bucket.lua, needs GET and SET … EX). It is skipped when the
// seed scripts are not reachable or SET is not in this build.
func BenchmarkEvalShaTokenBucket(b *testing.B) {
	dir := os.Getenv("LIMITDB_SEED_DIR")
	if dir == "" {
		dir = "../../shared/seed-scripts" // from the repository root, ../shared
	}
	src, err := os.ReadFile(dir + "/001-token-bucket.lua")
	if err != nil {
		b.Skipf("seed scripts not found (../shared/seed-scripts from the repository root, or LIMITDB_SEED_DIR): %v", err)
	}
	if engine.Lookup([]byte("set")) == nil {
		b.Skip("SET not in this build")
	}
	a := [][]byte{[]byte("1"), []byte("tb"), []byte("1000000"), []byte("1"), []byte("1"), nil}
	benchEval(b, string(src), func(i int) [][]byte {
		a[5] = strconv.AppendInt(a[5][:0], 1700000000+int64(i/1000), 10)
		return a
	})
}

// BenchmarkFcallCounter runs the fixed-window counter as a function
// (FCALL), the library wrapping the same body as scripting.tcl's
// run_script does; to compare with BenchmarkEvalShaCounter.
func BenchmarkFcallCounter(b *testing.B) {
	e := engine.New()
	w := resp.NewWriter()
	c := &engine.Ctx{E: e, DB: e.DBs[0], W: w, Now: 1700000000000}
	c.Exec([][]byte{[]byte("function"), []byte("load"), []byte("#!lua name=bench\nredis.register_function('counter', function(KEYS, ARGV)\n" + counterScript + "\nend)")})
	if len(w.B) == 0 || w.B[0] == '-' {
		b.Fatalf("FUNCTION LOAD: %s", w.B)
	}
	w.Reset()
	argv := [][]byte{[]byte("fcall"), []byte("counter"), []byte("1"), []byte("k"), []byte("1000000000")}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Exec(argv)
		if len(w.B) > 0 && w.B[0] == '-' {
			b.Fatalf("error: %s", w.B)
		}
		w.Reset()
	}
}

// BenchmarkEvalStackOverflow: a runaway recursion up to Lua's call-stack
// limit and its "stack overflow" error, which holds the engine for its
// whole run (gopher-lua's traceback was quadratic in the depth: 1.1 s per
// call; Redis takes about 10 ms).
func BenchmarkEvalStackOverflow(b *testing.B) {
	e := engine.New()
	w := resp.NewWriter()
	c := &engine.Ctx{E: e, DB: e.DBs[0], W: w, Now: 1700000000000}
	argv := [][]byte{[]byte("eval"), []byte("local function f() return f() + 1 end return f()"), []byte("0")}
	for i := 0; i < b.N; i++ {
		c.Exec(argv)
		if !bytes.Contains(w.B, []byte("stack overflow")) {
			b.Fatalf("reply: %.200s", w.B)
		}
		w.Reset()
	}
}
