package engine

// LOCAL ONLY (not committed): FLUSHALL/EXISTS/DEL/TYPE stand-ins for tests.
func init() {
	Register(
		&Command{Name: "flushall", Arity: -1, Flags: "write", Run: func(c *Ctx, argv [][]byte) {
			for _, db := range c.E.DBs {
				db.dict.clear()
				db.expires = 0
			}
			c.W.OK()
		}},
		&Command{Name: "exists", Arity: -2, Flags: "readonly", FirstKey: 1, LastKey: -1, Step: 1, Run: func(c *Ctx, argv [][]byte) {
			n := 0
			for _, k := range argv[1:] {
				if c.lookupRead(k) != nil {
					n++
				}
			}
			c.W.Int(int64(n))
		}},
		&Command{Name: "type", Arity: 2, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Run: func(c *Ctx, argv [][]byte) {
			e := c.lookupRead(argv[1])
			if e == nil {
				c.W.Status("none")
				return
			}
			c.W.Status(e.kind.String())
		}},
	)
}
