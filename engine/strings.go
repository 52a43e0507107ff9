package engine

import "math"

func init() {
	Register(
		&Command{Name: "get", Arity: 2, Flags: "readonly fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0", Summary: "Returns the string value of a key.", Run: cmdGet},
		&Command{Name: "incr", Arity: 2, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0", Summary: "Increments the integer value of a key by one.", Run: cmdIncr},
		&Command{Name: "decr", Arity: 2, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0", Summary: "Decrements the integer value of a key by one.", Run: cmdDecr},
		&Command{Name: "incrby", Arity: 3, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0", Summary: "Increments the integer value of a key by a number.", Run: cmdIncrBy},
		&Command{Name: "decrby", Arity: 3, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0", Summary: "Decrements a number from the integer value of a key.", Run: cmdDecrBy},
	)
}

// lookupString returns the live string entry of key; WRONGTYPE is written
// and ok is false when the key holds another type.
func (c *Ctx) lookupString(key []byte, read bool) (*entry, bool) {
	return c.lookupKind(key, KindString, read)
}

// cmdGet: GET key — the value, or nil when the key does not exist;
// WRONGTYPE when it holds another type.
func cmdGet(c *Ctx, argv [][]byte) {
	e, ok := c.lookupString(argv[1], true)
	if !ok {
		return
	}
	if e == nil {
		c.W.Null()
		return
	}
	if e.enc == encInt {
		c.W.BulkInt(e.n)
		return
	}
	c.W.BulkString(e.str())
}

// incrBy adds delta to the integer at key (0 when missing), keeping its TTL.
// Errors: WRONGTYPE; ErrNotInt when the value is not an integer;
// ErrOverflow when the result leaves int64.
func (c *Ctx) incrBy(key []byte, delta int64) {
	e, ok := c.lookupString(key, false)
	if !ok {
		return
	}
	var cur int64
	if e != nil {
		if e.enc == encInt {
			cur = e.n
		} else {
			v, ok := ParseInt(e.str())
			if !ok {
				c.W.Error(ErrNotInt)
				return
			}
			cur = v
		}
	}
	if (delta < 0 && cur < 0 && delta < math.MinInt64-cur) ||
		(delta > 0 && cur > 0 && delta > math.MaxInt64-cur) {
		c.W.Error(ErrOverflow)
		return
	}
	cur += delta
	if e == nil {
		e = c.create(key)
	}
	e.setInt(cur)
	c.touched(key)
	c.W.Int(cur)
}

// cmdIncr: INCR key — add 1; see incrBy.
func cmdIncr(c *Ctx, argv [][]byte) { c.incrBy(argv[1], 1) }

// cmdDecr: DECR key — subtract 1; see incrBy.
func cmdDecr(c *Ctx, argv [][]byte) { c.incrBy(argv[1], -1) }

// cmdIncrBy: INCRBY key increment; ErrNotInt for a non-integer increment.
func cmdIncrBy(c *Ctx, argv [][]byte) {
	d, ok := ParseIntB(argv[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	c.incrBy(argv[1], d)
}

// cmdDecrBy: DECRBY key decrement; ErrNotInt for a non-integer decrement,
// and for the one decrement that cannot be negated (LLONG_MIN), as Redis.
func cmdDecrBy(c *Ctx, argv [][]byte) {
	d, ok := ParseIntB(argv[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	if d == math.MinInt64 {
		c.W.Error("ERR decrement would overflow")
		return
	}
	c.incrBy(argv[1], -d)
}
