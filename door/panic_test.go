package door

import (
	"testing"

	"limitdb/engine"
	"limitdb/resp"
)

// panicSet is a test-only command that changes its key without recording
// it, then panics: a handler that failed half-way.
func init() {
	engine.Register(&engine.Command{Name: "test.panicset", Arity: 3, Flags: "write", FirstKey: 1, LastKey: 1, Step: 1, Group: "string",
		Run: func(c *engine.Ctx, argv [][]byte) {
			eff := c.Eff
			c.Eff = nil
			c.Call(engine.Lookup([]byte("set")), [][]byte{[]byte("set"), argv[1], argv[2]})
			c.Eff = eff
			panic("test.panicset")
		}})
}

// replica applies every record to a second engine.
type replica struct{ e *engine.Engine }

func (r *replica) add(rec []byte) {
	if err := r.e.Apply(rec); err != nil {
		panic(err)
	}
}

// TestPanicKeepsReplicaInStep: a command that panics after changing its
// key, alone, inside a MULTI block and inside a script, leaves executor
// and replica with the same strict digest (the key is resynchronised).
func TestPanicKeepsReplicaInStep(t *testing.T) {
	a, b := engine.New(), engine.New()
	d := New(a, Records((&replica{b}).add))
	c := &engine.Ctx{E: a, DB: a.DBs[0], W: resp.NewWriter(), Now: 1_000_000}
	d.Lock()
	defer d.Unlock()
	contained := func(f func()) {
		depth := d.Depth()
		defer func() {
			if recover() == nil {
				t.Fatal("no panic")
			}
			d.Unwind(depth)
		}()
		f()
	}
	exec := func(args ...string) string {
		argv := make([][]byte, len(args))
		for i, s := range args {
			argv[i] = []byte(s)
		}
		c.W.B = c.W.B[:0]
		d.Exec(c, c.Resolve(argv), argv)
		return string(c.W.B)
	}
	check := func(what string) {
		t.Helper()
		if a.StrictDigest() != b.StrictDigest() {
			t.Fatalf("%s: executor and replica differ", what)
		}
	}
	exec("SET", "k", "before")
	exec("PEXPIREAT", "k", "9000000")
	contained(func() { exec("TEST.PANICSET", "k", "after") })
	check("a command alone")

	var tx Tx
	tx.Active = true
	tx.Enqueue([][]byte{[]byte("INCR"), []byte("n")})
	tx.Enqueue([][]byte{[]byte("TEST.PANICSET"), []byte("m"), []byte("x")})
	tx.Enqueue([][]byte{[]byte("INCR"), []byte("n")})
	d.ExecTx(c, &tx, 0, func(q [][]byte) {
		if string(q[0]) == "TEST.PANICSET" {
			contained(func() { d.Exec(c, c.Resolve(q), q) })
			return
		}
		d.Exec(c, c.Resolve(q), q)
	})
	check("a MULTI block")

	exec("EVAL", "redis.pcall('test.panicset', KEYS[1], 'v') return redis.call('incr', KEYS[2])", "2", "s", "n")
	check("a script")
	if got := exec("GET", "s"); got != "$1\r\nv\r\n" {
		t.Fatalf("the script's key is %q on the executor", got)
	}
}
