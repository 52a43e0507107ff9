package luavm

import (
	"strings"
	"testing"

	"limitdb/engine"
)

// SELECT is the server's command (a connection command); the script's
// SELECT only needs it in the table, with the server's flags.
func init() {
	engine.Register(&engine.Command{Name: "select", Arity: 2, Flags: "loading stale fast conn", Group: "connection", Since: "1.0.0", Summary: "Changes the selected database."})
}

// TestScriptSelectClusterMode: in cluster mode (EnableSlots) a script's
// SELECT of a database other than 0 fails as Redis 7.0.15's (checked on
// redis-server --cluster-enabled yes): the integer check first, then the
// cluster rule, which wins over the range check; SELECT 0 still works.
func TestScriptSelectClusterMode(t *testing.T) {
	e := engine.New()
	e.EnableSlots()
	for _, c := range []struct{ src, want string }{
		{"return redis.pcall('SELECT', 1)", "-ERR SELECT is not allowed in cluster mode\r\n"},
		{"return redis.pcall('SELECT', 99)", "-ERR SELECT is not allowed in cluster mode\r\n"},
		{"return redis.pcall('SELECT', 'x')", "-ERR value is not an integer or out of range\r\n"},
		{"return redis.call('SELECT', 0)", "+OK\r\n"},
	} {
		if got := evalOnce(t, e, c.src); got != c.want {
			t.Errorf("%s: %q, want %q", c.src, got, c.want)
		}
	}
	got := evalOnce(t, e, "return redis.call('SELECT', 1)")
	if !strings.HasPrefix(got, "-ERR SELECT is not allowed in cluster mode script: ") {
		t.Errorf("redis.call SELECT 1: %q", got)
	}
	if got := evalOnce(t, engine.New(), "return redis.call('SELECT', 1)"); got != "+OK\r\n" {
		t.Errorf("outside cluster mode: %q", got)
	}
}
