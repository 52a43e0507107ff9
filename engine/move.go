package engine

import "math"

func init() {
	Register(&Command{Name: "move", Arity: 3, Flags: "write fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "1.0.0",
		Summary: "Moves a key to another database.", Run: cmdMove})
}

// cmdMove: MOVE key db — moves key, with its TTL, from the current
// database to db. Reply: :1 when moved, :0 when key is missing or already
// exists in db. Errors: not an integer (ErrNotInt / the int range error)
// for db, "DB index is out of range", "source and destination objects are
// the same" when db is the current one.
func cmdMove(c *Ctx, argv [][]byte) {
	id, ok := ParseIntB(argv[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	if id < math.MinInt32 || id > math.MaxInt32 {
		c.W.Error(errIntRange)
		return
	}
	if id < 0 || id >= NumDBs {
		c.W.Error(ErrDBIndex)
		return
	}
	dst := c.E.DBs[id]
	if dst == c.DB {
		c.W.Error(ErrSameObject)
		return
	}
	e := c.lookupWrite(argv[1])
	if e == nil || c.find(dst, bstr(argv[1])) != nil {
		c.W.Int(0)
		return
	}
	p, n, exp, kind, enc := e.p, e.n, e.exp, e.kind, e.enc
	c.DB.removeEntry(e)
	ne := c.createIn(dst, string(argv[1]))
	ne.p, ne.n, ne.kind, ne.enc = p, n, kind, enc
	dst.setExpire(ne, exp)
	c.touched(argv[1])
	c.signal(dst, bstr(argv[1]))
	c.notify(NotifyGeneric, "move_from", argv[1])
	c.notifyKey(dst, NotifyGeneric, "move_to", bstr(argv[1]))
	c.W.Int(1)
}
