package luavm

import (
	"bytes"
	"strings"
	"testing"

	"limitdb/engine"
	"limitdb/resp"
)

// TestSnapshotScripts: the script cache and the math.random state go
// through a snapshot: after a reload EVALSHA finds the scripts and the
// next random numbers are the ones the original engine would draw.
func TestSnapshotScripts(t *testing.T) {
	e := engine.New()
	c := &engine.Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1_700_000_000_000}
	exec := func(c *engine.Ctx, args ...string) string {
		argv := make([][]byte, len(args))
		for i, a := range args {
			argv[i] = []byte(a)
		}
		c.W.Reset()
		c.Exec(argv)
		return string(c.W.B)
	}
	sha := strings.TrimSpace(strings.Split(exec(c, "SCRIPT", "LOAD", "return redis.call('INCR', KEYS[1])"), "\r\n")[1])
	exec(c, "EVAL", "return math.random(1000)", "0")
	exec(c, "SCRIPT", "LOAD", "return 'second'")
	var buf bytes.Buffer
	if err := e.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	f := engine.New()
	if err := f.LoadSnapshot(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if n := len(StateOf(f).Scripts); n != 3 {
		t.Errorf("%d scripts after reload, want 3", n)
	}
	d := &engine.Ctx{E: f, DB: f.DBs[0], W: resp.NewWriter(), Now: c.Now}
	for _, cmd := range [][]string{
		{"EVALSHA", sha, "1", "k"}, {"SCRIPT", "EXISTS", sha, SHA1Hex([]byte("return 'second'")), "0000"},
		{"EVAL", "return math.random(1000000)", "0"},
	} {
		if a, b := exec(c, cmd...), exec(d, cmd...); a != b {
			t.Errorf("%v: %q != %q", cmd, a, b)
		}
	}
}
