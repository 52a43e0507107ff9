package engine

import (
	"strings"
	"testing"

	"limitdb/resp"
)

// TestEffectsCore: the propagation rule itself (a changed state records
// argv, no change records nothing, a lazy expiry's DEL comes first, SELECT
// appears when the database changes). Per-command forms are compared with
// redis-server's AOF in the tests package.
func TestEffectsCore(t *testing.T) {
	e := New()
	eff := NewEffects()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1000, Eff: eff}
	run := func(args ...string) {
		argv := make([][]byte, len(args))
		for i, a := range args {
			argv[i] = []byte(a)
		}
		c.Exec(argv)
	}
	run("SET", "a", "1")
	run("GET", "a")
	run("SET", "b", "1", "NX")
	run("SET", "b", "2", "NX")
	run("PEXPIREAT", "b", "1500")
	c.Now = 2000
	run("INCR", "b")
	c.DB = e.DBs[3]
	run("INCR", "b")
	var got []string
	for _, cmd := range eff.Commands() {
		var parts []string
		for _, a := range cmd {
			parts = append(parts, string(a))
		}
		got = append(got, strings.Join(parts, " "))
	}
	want := []string{"SET a 1", "SET b 1 NX", "PEXPIREAT b 1500", "DEL b", "INCR b", "SELECT 3", "INCR b"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("effects\n got %q\nwant %q", got, want)
	}
	if eff.N != 6 || eff.DB != 0 {
		t.Fatalf("N=%d DB=%d", eff.N, eff.DB)
	}
}
