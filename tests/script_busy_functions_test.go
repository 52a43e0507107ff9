package tests

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestBusyFunctionsAndMulti runs the busy-script cases of Redis 7.0.15's
// functions.tcl ("test function kill", "test script kill not working on
// function", "test function kill not working on eval") and multi.tcl
// ("MULTI and script timeout", "EXEC and script timeout", "MULTI-EXEC body
// and script timeout", "just EXEC and script timeout"), plus DISCARD and
// UNWATCH while busy, on a fresh redis-server and a fresh limitdb, and
// compares every reply (FUNCTION STATS's duration_ms masked).
func TestBusyFunctionsAndMulti(t *testing.T) {
	r := mustRedis(t)
	l := mustLimitdb(t)
	ref := busySequence(t, r.Addr)
	got := busySequence(t, l.Addr().String())
	if len(ref) != len(got) {
		t.Fatalf("%d replies from redis, %d from limitdb", len(ref), len(got))
	}
	for i := range ref {
		if ref[i] != got[i] {
			t.Errorf("step %d differs\n  redis:   %q\n  limitdb: %q", i, ref[i], got[i])
		}
	}
}

var durationMs = regexp.MustCompile(`duration_ms\r\n:\d+`)

// busySequence plays the cases on the server at addr and returns the
// replies, labelled.
func busySequence(t *testing.T, addr string) []string {
	var out []string
	dial := func() *Conn {
		c := mustDial(t, addr)
		return c
	}
	ctl, runner, other, tx, watcher, killer, body := dial(), dial(), dial(), dial(), dial(), dial(), dial()
	do := func(label string, c *Conn, args ...string) {
		rep, err := c.Do(args...)
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		out = append(out, label+": "+durationMs.ReplaceAllString(string(rep), "duration_ms\r\n:N"))
	}
	start := func(args ...string) {
		if err := runner.Send(Encode(args...)); err != nil {
			t.Fatal(err)
		}
		// past busy-reply-threshold (100 ms)
		time.Sleep(300 * time.Millisecond)
	}
	result := func(label string) {
		rep, err := runner.ReadReply()
		if err != nil {
			t.Fatalf("%s: %v after %q", label, err, out)
		}
		out = append(out, label+": "+string(rep))
	}
	do("flush", ctl, "FLUSHALL")
	do("function flush", ctl, "FUNCTION", "FLUSH")
	do("threshold", ctl, "CONFIG", "SET", "busy-reply-threshold", "100")
	do("load", ctl, "FUNCTION", "LOAD", "#!lua name=test\nredis.register_function('test', function(KEYS, ARGV)\n local a = 1 while true do a = a + 1 end \nend)")
	do("set xx", ctl, "SET", "xx", "1")
	do("watch", watcher, "WATCH", "wk")
	do("watcher multi", watcher, "MULTI")
	do("tx multi", tx, "MULTI")
	do("tx incr queued", tx, "INCR", "xx")
	do("body multi", body, "MULTI")
	do("body incr queued", body, "INCR", "xx")

	// a function runs away
	start("FCALL", "test", "0")
	do("ping while function", other, "PING")
	do("function stats", other, "FUNCTION", "STATS")
	do("script kill on function", other, "SCRIPT", "KILL")
	do("multi while busy", other, "MULTI")
	do("incr in multi while busy", other, "INCR", "xx")
	do("watcher discard while busy", watcher, "DISCARD")
	do("body incr while busy", body, "INCR", "xx")
	do("tx exec while busy", tx, "EXEC")
	do("function stats queued in multi", other, "FUNCTION", "STATS")
	do("function kill", killer, "FUNCTION", "KILL")
	result("killed function")
	do("body exec after kill", body, "EXEC")
	do("body not in multi", body, "PING", "asdf")
	do("incr after kill", other, "INCR", "xx")
	do("exec after kill", other, "EXEC")
	do("not in multi", other, "PING", "asdf")
	do("tx not in multi", tx, "PING", "asdf")
	do("xx", ctl, "GET", "xx")
	// the DISCARD dropped the WATCH: a change of wk no longer aborts
	do("set wk", ctl, "SET", "wk", "1")
	do("watcher multi again", watcher, "MULTI")
	do("watcher incr", watcher, "INCR", "wk")
	do("watcher exec", watcher, "EXEC")

	// an EVAL script runs away
	do("tx multi 2", tx, "MULTI")
	do("tx incr 2", tx, "INCR", "xx")
	do("unwatch prep", watcher, "WATCH", "wk")
	start("EVAL", "local a = 1 while true do a = a + 1 end", "0")
	do("function kill on eval", other, "FUNCTION", "KILL")
	do("function stats on eval", other, "FUNCTION", "STATS")
	do("tx incr while busy", tx, "INCR", "xx")
	do("shutdown in multi while busy", tx, "SHUTDOWN", "NOSAVE")
	do("tx exec while busy", tx, "EXEC")
	do("exec without multi while busy", other, "EXEC")
	do("discard without multi while busy", other, "DISCARD")
	do("unwatch while busy", watcher, "UNWATCH")
	do("get while busy", other, "GET", "xx")
	do("script kill", killer, "SCRIPT", "KILL")
	result("killed eval")
	do("xx after", ctl, "GET", "xx")
	do("tx ping", tx, "PING", "asdf")
	do("set wk 2", ctl, "SET", "wk", "2")
	do("watcher multi 3", watcher, "MULTI")
	do("watcher incr 3", watcher, "INCR", "wk")
	do("watcher exec 3", watcher, "EXEC")
	do("threshold back", ctl, "CONFIG", "SET", "busy-reply-threshold", "5000")
	do("function flush end", ctl, "FUNCTION", "FLUSH")
	return out
}

// TestScriptingInfo compares INFO's scripting counts after Redis's
// "SCRIPTING FLUSH ASYNC" sequence and after loading functions: the
// number_of_* fields exactly, the memory ones present on both.
func TestScriptingInfo(t *testing.T) {
	for _, addr := range []string{redisAddr, limitAddr} {
		mustDial(t, addr)
	}
	field := func(addr, name string) string {
		c, _ := Dial(addr)
		defer c.Close()
		rep, _ := c.Do("INFO", "memory")
		for _, l := range strings.Split(string(rep), "\r\n") {
			if v, ok := strings.CutPrefix(l, name+":"); ok {
				return v
			}
		}
		return "<none>"
	}
	both := func(args ...string) {
		for _, addr := range []string{redisAddr, limitAddr} {
			c, _ := Dial(addr)
			if _, err := c.Do(args...); err != nil {
				t.Fatal(err)
			}
			c.Close()
		}
	}
	both("SCRIPT", "FLUSH")
	both("FUNCTION", "FLUSH")
	for j := 0; j < 100; j++ {
		both("SCRIPT", "LOAD", fmt.Sprintf("return %d", j))
	}
	both("FUNCTION", "LOAD", "#!lua name=a\nredis.register_function('a1', function() return 1 end)\nredis.register_function('a2', function() return 1 end)")
	both("FUNCTION", "LOAD", "#!lua name=b\nredis.register_function('b1', function() return 1 end)")
	check := func(name, want string) {
		for _, addr := range []string{redisAddr, limitAddr} {
			if got := field(addr, name); got != want {
				t.Errorf("%s at %s: %s, want %s", name, addr, got, want)
			}
		}
	}
	check("number_of_cached_scripts", "100")
	check("number_of_functions", "3")
	check("number_of_libraries", "2")
	for _, name := range []string{"used_memory_lua", "used_memory_vm_eval", "used_memory_lua_human", "used_memory_scripts_eval",
		"used_memory_vm_functions", "used_memory_vm_total", "used_memory_vm_total_human", "used_memory_functions",
		"used_memory_scripts", "used_memory_scripts_human"} {
		if got := field(limitAddr, name); got == "<none>" {
			t.Errorf("limitdb's INFO lacks %s", name)
		}
	}
	both("SCRIPT", "FLUSH", "ASYNC")
	both("FUNCTION", "FLUSH", "ASYNC")
	check("number_of_cached_scripts", "0")
	check("number_of_functions", "0")
	check("number_of_libraries", "0")
}

// TestEvalNoLeak is "EVAL does not leak in the Lua stack" (EVAL and FCALL):
// 10,000 pipelined scripts, then used_memory_lua stays under 100 KB, as
// Redis's test asks, and the functions' interpreter grew by less than that.
func TestEvalNoLeak(t *testing.T) {
	c := mustDial(t, limitAddr)
	field := func(name string) int {
		rep, _ := c.Do("INFO", "memory")
		for _, l := range strings.Split(string(rep), "\r\n") {
			if v, ok := strings.CutPrefix(l, name+":"); ok {
				var n int
				fmt.Sscan(v, &n)
				return n
			}
		}
		t.Fatalf("INFO has no %s", name)
		return 0
	}
	c.Do("SCRIPT", "FLUSH")
	c.Do("SET", "leak:x", "0")
	c.Do("FUNCTION", "LOAD", "REPLACE", "#!lua name=test\nredis.register_function('test', function(KEYS, ARGV)\n return redis.call(\"incr\",KEYS[1]) \nend)")
	c.Do("FCALL", "test", "1", "leak:y")
	fnBefore := field("used_memory_vm_functions")
	for _, cmd := range [][]string{{"EVAL", `return redis.call("incr",KEYS[1])`, "1", "leak:x"}, {"FCALL", "test", "1", "leak:x"}} {
		var buf []byte
		for j := 0; j < 10000; j++ {
			buf = append(buf, Encode(cmd...)...)
		}
		if err := c.Send(buf); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 10000; j++ {
			if _, err := c.ReadReply(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if rep, _ := c.Do("GET", "leak:x"); string(rep) != "$5\r\n20000\r\n" {
		t.Fatalf("GET: %q", rep)
	}
	if n := field("used_memory_lua"); n >= 100*1024 {
		t.Errorf("used_memory_lua:%d after 10,000 scripts", n)
	}
	if n := field("used_memory_vm_functions"); n-fnBefore >= 100*1024 {
		t.Errorf("used_memory_vm_functions grew from %d to %d over 10,000 calls", fnBefore, n)
	}
	c.Do("FUNCTION", "FLUSH")
	c.Do("DEL", "leak:x", "leak:y")
}

// TestBusyKillVariants runs scripting.tcl's timed-out script tests in
// both of its variants (EVAL, and FUNCTION LOAD + FCALL): a read-only
// script killed even while it pcalls in a loop, a script pipelined with a
// PING (the PING answered after the kill: no false dead client), a script
// that wrote is UNKILLABLE, SHUTDOWN without NOSAVE refused with the
// variant's BUSY text, SHUTDOWN NOSAVE ending the server. Every reply is
// compared with redis-server's.
func TestBusyKillVariants(t *testing.T) {
	for _, variant := range []string{"eval", "fcall"} {
		t.Run(variant, func(t *testing.T) {
			r := mustRedis(t)
			l := mustLimitdb(t)
			ref := killSequence(t, r.Addr, variant)
			got := killSequence(t, l.Addr().String(), variant)
			if len(ref) != len(got) {
				t.Fatalf("%d replies from redis, %d from limitdb\n  redis:   %q\n  limitdb: %q", len(ref), len(got), ref, got)
			}
			for i := range ref {
				if ref[i] != got[i] {
					t.Errorf("step %d differs\n  redis:   %q\n  limitdb: %q", i, ref[i], got[i])
				}
			}
		})
	}
}

func killSequence(t *testing.T, addr, variant string) []string {
	var out []string
	dial := func() *Conn {
		c := mustDial(t, addr)
		return c
	}
	ctl, runner := dial(), dial()
	do := func(label string, c *Conn, args ...string) {
		rep, err := c.Do(args...)
		if err != nil {
			out = append(out, label+": "+err.Error())
			return
		}
		out = append(out, label+": "+string(rep))
	}
	read := func(label string) {
		rep, err := runner.ReadReply()
		if err != nil {
			t.Fatalf("%s: %v after %q", label, err, out)
		}
		out = append(out, label+": "+string(rep))
	}
	// script sends body as EVAL, or loads it as function test and sends
	// FCALL test (run_script_on_connection), followed by more commands
	script := func(body string, nkeys string, keys []string, more ...[]string) {
		var b []byte
		if variant == "eval" {
			b = Encode(append([]string{"EVAL", body, nkeys}, keys...)...)
		} else {
			do("load", ctl, "FUNCTION", "LOAD", "REPLACE", "#!lua name=test\nredis.register_function('test', function(KEYS, ARGV)\n "+body+" \nend)")
			b = Encode(append([]string{"FCALL", "test", nkeys}, keys...)...)
		}
		for _, m := range more {
			b = append(b, Encode(m...)...)
		}
		if err := runner.Send(b); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	kill := "SCRIPT"
	if variant == "fcall" {
		kill = "FUNCTION"
	}
	do("threshold", ctl, "CONFIG", "SET", "busy-reply-threshold", "10")
	do("flush", ctl, "FLUSHALL")

	// Timedout read-only scripts can be killed by SCRIPT KILL even when use pcall
	script("local f = function() while 1 do redis.call('ping') end end while 1 do pcall(f) end", "0", nil)
	do("ping while busy", ctl, "PING")
	do("kill", ctl, kill, "KILL")
	read("killed")
	do("ping after", ctl, "PING")

	// Timedout script does not cause a false dead client
	script("while 1 do redis.call('ping') end", "0", nil, []string{"PING"})
	do("ping while busy 2", ctl, "PING")
	do("kill 2", ctl, kill, "KILL")
	read("killed 2")
	read("pipelined ping")

	// Timedout scripts that modified data can't be killed by SCRIPT KILL
	script("redis.call('set',KEYS[1],'y'); while true do end", "1", []string{"x"})
	do("ping while busy 3", ctl, "PING")
	do("kill 3", ctl, kill, "KILL")
	do("ping still busy", ctl, "PING")
	do("shutdown without nosave", ctl, "SHUTDOWN")
	// SHUTDOWN NOSAVE can kill a timedout script anyway
	do("shutdown nosave", ctl, "SHUTDOWN", "NOSAVE")
	if _, err := runner.ReadReply(); err == nil {
		out = append(out, "the runner got a reply after SHUTDOWN NOSAVE")
	}
	return out
}

// TestScriptErrorStats is the statistics half of scripting.tcl's
// "Consistent eval error reporting" and "LUA redis.error_reply API" (the
// replies are in redis_suite_scripting.txt): after each script, INFO
// errorstats, total_error_replies and the calls / rejected_calls /
// failed_calls of the commands involved must be Redis's — the commands a
// script calls are counted, and a script's error that a command it called
// already counted is not counted again.
func TestScriptErrorStats(t *testing.T) {
	steps := [][]string{
		{"CONFIG", "SET", "maxmemory", "1"},
		{"EVAL", "return redis.call('set','x','y')", "1", "x"},
		{"EVAL", "local t = redis.pcall('set','x','y') if t['err'] == \"OOM command not allowed when used memory > 'maxmemory'.\" then return 1 else return 0 end", "1", "x"},
		{"EVAL", " return redis.pcall('set','x','y') ", "1", "x"},
		{"CONFIG", "SET", "maxmemory", "0"},
		{"EVAL", "return redis.call('select',99)", "0"},
		{"EVAL", "local t = redis.pcall('select',99) if t['err'] == \"ERR DB index is out of range\" then return 1 else return 0 end", "0"},
		{"EVAL_RO", "return redis.call('set','x','y')", "1", "x"},
		{"EVAL_RO", "local t = redis.pcall('set','x','y') if t['err'] == \"ERR Write commands are not allowed from read-only scripts.\" then return 1 else return 0 end", "1", "x"},
		{"EVAL", "return redis.error_reply(\"MY_ERR_CODE custom msg\")", "0"},
		{"EVAL", "return redis.error_reply(\"\")", "0"},
		{"EVAL", "return redis.status_reply(\"MY_OK_CODE custom msg\")", "0"},
		{"EVAL", "redis.pcall('nosuchcommand') redis.pcall('get') return redis.call('incr', 'x')", "0"},
		{"EVAL", "return {redis.call('ping'), redis.call('echo', 'e'), redis.call('time')[1] ~= nil}", "0"},
		{"EVAL", "return nosuchglobal", "0"},
	}
	stats := func(c *Conn) string {
		var out []string
		for _, sec := range []string{"errorstats", "stats", "commandstats"} {
			rep, _ := c.Do("INFO", sec)
			for _, l := range strings.Split(string(rep), "\r\n") {
				switch {
				case strings.HasPrefix(l, "errorstat_"), strings.HasPrefix(l, "total_error_replies:"):
					out = append(out, l)
				case strings.HasPrefix(l, "cmdstat_") && !strings.HasPrefix(l, "cmdstat_config") && !strings.HasPrefix(l, "cmdstat_info"):
					name, rest, _ := strings.Cut(l, ":")
					var calls, rejected, failed string
					for _, kv := range strings.Split(rest, ",") {
						k, v, _ := strings.Cut(kv, "=")
						switch k {
						case "calls":
							calls = v
						case "rejected_calls":
							rejected = v
						case "failed_calls":
							failed = v
						}
					}
					out = append(out, name+" calls="+calls+" rejected="+rejected+" failed="+failed)
				}
			}
		}
		sort.Strings(out) // commandstats come in each server's table order
		return strings.Join(out, "\n")
	}
	r := mustDial(t, redisAddr)
	l := mustDial(t, limitAddr)
	for _, step := range steps {
		for _, c := range []*Conn{r, l} {
			c.Do("CONFIG", "RESETSTAT")
			c.Do(step...)
		}
		if a, b := stats(r), stats(l); a != b {
			t.Errorf("after %q:\n  redis:\n%s\n  limitdb:\n%s", step, a, b)
		}
	}
	for _, c := range []*Conn{r, l} {
		c.Do("CONFIG", "SET", "maxmemory", "0")
		c.Do("DEL", "x")
	}
}
