package engine

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"unsafe"
)

func init() {
	Register(
		&Command{Name: "get", Arity: 2, Flags: "readonly fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0", Summary: "Returns the string value of a key.", Run: cmdGet},
		&Command{Name: "incr", Arity: 2, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0", Summary: "Increments the integer value of a key by one.", Run: cmdIncr},
		&Command{Name: "decr", Arity: 2, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0", Summary: "Decrements the integer value of a key by one.", Run: cmdDecr},
		&Command{Name: "incrby", Arity: 3, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0", Summary: "Increments the integer value of a key by a number.", Run: cmdIncrBy},
		&Command{Name: "decrby", Arity: 3, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0", Summary: "Decrements a number from the integer value of a key.", Run: cmdDecrBy},
		&Command{Name: "set", Arity: -3, Flags: "write denyoom", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0", Summary: "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", Run: cmdSet},
		&Command{Name: "setex", Arity: 4, Flags: "write denyoom noeffect", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "2.0.0", Summary: "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.", Run: cmdSetEx},
		&Command{Name: "psetex", Arity: 4, Flags: "write denyoom noeffect", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "2.6.0", Summary: "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.", Run: cmdPSetEx},
		&Command{Name: "setnx", Arity: 3, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0", Summary: "Set the string value of a key only when the key doesn't exist.", Run: cmdSetNX},
		&Command{Name: "getset", Arity: 3, Flags: "write denyoom fast noeffect", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0", Summary: "Returns the previous string value of a key after setting it to a new value.", Run: cmdGetSet},
		&Command{Name: "getdel", Arity: 2, Flags: "write fast noeffect", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "6.2.0", Summary: "Returns the string value of a key after deleting the key.", Run: cmdGetDel},
		&Command{Name: "getex", Arity: -2, Flags: "write fast noeffect", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "6.2.0", Summary: "Returns the string value of a key after setting its expiration time.", Run: cmdGetEx},
		&Command{Name: "mget", Arity: -2, Flags: "readonly fast", FirstKey: 1, LastKey: -1, Step: 1, Group: "string", Since: "1.0.0", Summary: "Atomically returns the string values of one or more keys.", Run: cmdMGet},
		&Command{Name: "mset", Arity: -3, Flags: "write denyoom", FirstKey: 1, LastKey: -1, Step: 2, Group: "string", Since: "1.0.1", Summary: "Atomically creates or modifies the string values of one or more keys.", Run: cmdMSet},
		&Command{Name: "msetnx", Arity: -3, Flags: "write denyoom", FirstKey: 1, LastKey: -1, Step: 2, Group: "string", Since: "1.0.1", Summary: "Atomically modifies the string values of one or more keys only when all keys don't exist.", Run: cmdMSetNX},
		&Command{Name: "incrbyfloat", Arity: 3, Flags: "write denyoom fast noeffect", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "2.6.0", Summary: "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.", Run: cmdIncrByFloat},
		&Command{Name: "append", Arity: 3, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "2.0.0", Summary: "Appends a string to the value of a key. Creates the key if it doesn't exist.", Run: cmdAppend},
		&Command{Name: "strlen", Arity: 2, Flags: "readonly fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "2.2.0", Summary: "Returns the length of a string value.", Run: cmdStrlen},
		&Command{Name: "getrange", Arity: 4, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "2.4.0", Summary: "Returns a substring of the string stored at a key.", Run: cmdGetRange},
		&Command{Name: "substr", Arity: 4, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0", Summary: "Returns a substring from a string value.", Run: cmdGetRange},
		&Command{Name: "setrange", Arity: 4, Flags: "write denyoom", FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "2.2.0", Summary: "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.", Run: cmdSetRange},
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
	c.writeStr(e)
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
	c.notify(NotifyString, "incrby", key)
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

// setBytes stores a copy of b as the string value of e, with the integer
// encoding when b is a canonical integer (no allocation then).
func (e *entry) setBytes(b []byte) {
	if len(b) <= 20 {
		if n, ok := ParseIntB(b); ok {
			e.setInt(n)
			return
		}
	}
	e.setRaw(string(b))
}

// setRaw stores s (owned by the entry) with the raw encoding.
func (e *entry) setRaw(s string) {
	e.kind = KindString
	e.enc = encRaw
	e.p = unsafe.Pointer(unsafe.StringData(s))
	e.n = int64(len(s))
}

// setKey is Redis's setKey for strings: key gets value val (copied); the
// TTL is cleared unless keepTTL. e is the key's live entry or nil.
func (c *Ctx) setKey(e *entry, key, val []byte, keepTTL bool) {
	if e == nil {
		e = c.create(key)
	} else if !keepTTL {
		c.DB.setExpire(e, 0)
	}
	e.setBytes(val)
	c.touched(key)
	c.notify(NotifyString, "set", key)
}

// writeStr replies with e's string value as a bulk string.
func (c *Ctx) writeStr(e *entry) {
	if e.enc == encInt {
		// resp.Writer.BulkInt (redcon) allocates; format on the stack
		var buf [20]byte
		c.W.Bulk(strconv.AppendInt(buf[:0], e.n, 10))
		return
	}
	c.W.BulkString(e.str())
}

// SET/GETEX option flags.
const (
	setNX = 1 << iota
	setXX
	setGet
	setKeepTTL
	setPersist
	setEX
	setPX
	setEXAT
	setPXAT
)

// isOpt reports whether arg is the option word w (lower case), any case.
func isOpt(arg []byte, w string) bool { return EqualFold(arg, w) }

// parseSetArgs parses SET's (forGet false) or GETEX's (forGet true)
// options from argv[from:], with Redis's conflict rules: a conflicting or
// unknown option, or a time option without a value, is a syntax error.
// It returns the flags and the time argument (nil when none).
func parseSetArgs(argv [][]byte, from int, forGet bool) (flags int, expire []byte, ok bool) {
	const timeFlags = setEX | setPX | setEXAT | setPXAT
	for j := from; j < len(argv); j++ {
		opt := argv[j]
		hasNext := j+1 < len(argv)
		switch {
		case !forGet && isOpt(opt, "nx") && flags&setXX == 0:
			flags |= setNX
		case !forGet && isOpt(opt, "xx") && flags&setNX == 0:
			flags |= setXX
		case !forGet && isOpt(opt, "get"):
			flags |= setGet
		case !forGet && isOpt(opt, "keepttl") && flags&(setPersist|timeFlags) == 0:
			flags |= setKeepTTL
		case forGet && isOpt(opt, "persist") && flags&(setKeepTTL|timeFlags) == 0:
			flags |= setPersist
		case isOpt(opt, "ex") && flags&(setKeepTTL|setPersist|timeFlags&^setEX) == 0 && hasNext:
			flags |= setEX
			expire = argv[j+1]
			j++
		case isOpt(opt, "px") && flags&(setKeepTTL|setPersist|timeFlags&^setPX) == 0 && hasNext:
			flags |= setPX
			expire = argv[j+1]
			j++
		case isOpt(opt, "exat") && flags&(setKeepTTL|setPersist|timeFlags&^setEXAT) == 0 && hasNext:
			flags |= setEXAT
			expire = argv[j+1]
			j++
		case isOpt(opt, "pxat") && flags&(setKeepTTL|setPersist|timeFlags&^setPXAT) == 0 && hasNext:
			flags |= setPXAT
			expire = argv[j+1]
			j++
		default:
			return 0, nil, false
		}
	}
	return flags, expire, true
}

// expireMillis converts a SET/GETEX time argument to an absolute unix ms
// deadline (Redis's getExpireMillisecondsOrReply). It writes the error and
// returns ok=false when the value is not an integer, not positive, or
// would overflow.
func (c *Ctx) expireMillis(arg []byte, flags int) (int64, bool) {
	ms, ok := ParseIntB(arg)
	if !ok {
		c.W.Error(ErrNotInt)
		return 0, false
	}
	secs := flags&(setEX|setEXAT) != 0
	if ms <= 0 || (secs && ms > math.MaxInt64/1000) {
		c.W.Error(ErrInvalidExpire(c.Cmd.Name))
		return 0, false
	}
	if secs {
		ms *= 1000
	}
	if flags&(setEX|setPX) != 0 {
		if ms > math.MaxInt64-c.Now {
			c.W.Error(ErrInvalidExpire(c.Cmd.Name))
			return 0, false
		}
		ms += c.Now
	}
	return ms, true
}

// setGeneric is SET's core (also SETEX, PSETEX): flags and the time
// argument as parseSetArgs returns them. With setGet the reply is the old
// value (nil when none; WRONGTYPE and nothing set when not a string);
// otherwise +OK, or nil when NX/XX prevented the write. It reports whether
// the key was set. With a time, the effect is SET key value PXAT
// <deadline> (Redis 7.0's setGenericCommand rewrite, also for SETEX and
// PSETEX); a deadline already past is stored all the same, as Redis 7.0
// does (the key is reclaimed, with its DEL, when next found).
func (c *Ctx) setGeneric(flags int, key, val, expire []byte) bool {
	var when int64
	if expire != nil {
		var ok bool
		if when, ok = c.expireMillis(expire, flags); !ok {
			return false
		}
	}
	e := c.lookupWrite(key)
	if flags&setGet != 0 {
		if e == nil {
			c.E.Stats.KeyspaceMisses++ // GET's read lookup
			c.notify(NotifyKeyMiss, "keymiss", key)
			c.W.Null()
		} else if e.kind != KindString {
			c.W.Error(ErrWrongType)
			return false
		} else {
			c.E.Stats.KeyspaceHits++
			c.writeStr(e)
		}
	}
	if (flags&setNX != 0 && e != nil) || (flags&setXX != 0 && e == nil) {
		if flags&setGet == 0 {
			c.W.Null()
		}
		return false
	}
	if e == nil {
		e = c.create(key)
	} else if flags&setKeepTTL == 0 {
		c.DB.setExpire(e, 0)
	}
	e.setBytes(val)
	if expire != nil {
		c.DB.setExpire(e, when)
	}
	c.touched(key)
	c.notify(NotifyString, "set", key)
	if expire != nil {
		c.notify(NotifyGeneric, "expire", key)
	}
	if flags&setGet == 0 {
		c.W.OK()
	}
	if expire != nil {
		if f := c.own(5); f != nil {
			f.argStr("SET")
			f.arg(key)
			f.arg(val)
			f.argStr("PXAT")
			f.argInt(when)
		}
	}
	return true
}

// cmdSet: SET key value [NX|XX] [GET] [EX s|PX ms|EXAT ts|PXAT ms-ts|KEEPTTL].
// Reply +OK; nil when NX/XX blocked the write; with GET the old value
// (or nil). Errors: syntax error for conflicting options, ErrNotInt /
// "invalid expire time in 'set' command" for bad times, WRONGTYPE with GET.
// A SET without KEEPTTL clears the key's TTL.
func cmdSet(c *Ctx, argv [][]byte) {
	if len(argv) == 3 {
		// fast path: plain SET
		c.setKey(c.lookupWrite(argv[1]), argv[1], argv[2], false)
		c.W.OK()
		return
	}
	flags, expire, ok := parseSetArgs(argv, 3, false)
	if !ok {
		c.W.Error(ErrSyntax)
		return
	}
	if c.setGeneric(flags, argv[1], argv[2], expire) && flags&setGet != 0 && expire == nil {
		// the effect leaves GET out (every GET: it may be repeated)
		n := 0
		for j := 3; j < len(argv); j++ {
			if !isOpt(argv[j], "get") {
				n++
			}
		}
		if f := c.own(3 + n); f != nil {
			for j, a := range argv {
				if j < 3 || !isOpt(a, "get") {
					f.arg(a)
				}
			}
		}
	}
}

// cmdSetEx: SETEX key seconds value — SET key value EX seconds.
func cmdSetEx(c *Ctx, argv [][]byte) { c.setGeneric(setEX, argv[1], argv[3], argv[2]) }

// cmdPSetEx: PSETEX key milliseconds value — SET key value PX milliseconds.
func cmdPSetEx(c *Ctx, argv [][]byte) { c.setGeneric(setPX, argv[1], argv[3], argv[2]) }

// cmdSetNX: SETNX key value — set when absent; :1 if set, :0 otherwise.
func cmdSetNX(c *Ctx, argv [][]byte) {
	e := c.lookupWrite(argv[1])
	if e != nil {
		c.W.Int(0)
		return
	}
	c.setKey(nil, argv[1], argv[2], false)
	c.W.Int(1)
}

// cmdGetSet: GETSET key value — set the value (clearing the TTL) and reply
// with the old one (nil when absent). WRONGTYPE when not a string. Effect:
// SET key value.
func cmdGetSet(c *Ctx, argv [][]byte) {
	e, ok := c.lookupString(argv[1], true)
	if !ok {
		return
	}
	if e == nil {
		c.W.Null()
	} else {
		c.writeStr(e)
	}
	c.setKey(e, argv[1], argv[2], false)
	if f := c.own(3); f != nil {
		f.argStr("SET")
		f.arg(argv[1])
		f.arg(argv[2])
	}
}

// cmdGetDel: GETDEL key — reply with the value (nil when absent) and
// delete the key. WRONGTYPE when not a string. Effect: DEL key.
func cmdGetDel(c *Ctx, argv [][]byte) {
	e, ok := c.lookupString(argv[1], true)
	if !ok {
		return
	}
	if e == nil {
		c.W.Null()
		return
	}
	c.writeStr(e)
	c.delete(c.DB, bstr(argv[1]))
	c.notify(NotifyGeneric, "del", argv[1])
	c.ownDel(argv[1])
}

// cmdGetEx: GETEX key [EX s|PX ms|EXAT ts|PXAT ms-ts|PERSIST] — the value
// (nil when absent), then the TTL is changed as asked; a deadline in the
// past deletes the key. Effect: PEXPIREAT key <deadline>, DEL key or
// PERSIST key (nothing without an option). Errors: syntax error, WRONGTYPE, ErrNotInt,
// "invalid expire time in 'getex' command" (checked after the lookup, as
// Redis does).
func cmdGetEx(c *Ctx, argv [][]byte) {
	flags, expire, ok := parseSetArgs(argv, 2, true)
	if !ok {
		c.W.Error(ErrSyntax)
		return
	}
	e, ok := c.lookupString(argv[1], true)
	if !ok {
		return
	}
	if e == nil {
		c.W.Null()
		return
	}
	var when int64
	if expire != nil {
		if when, ok = c.expireMillis(expire, flags); !ok {
			return
		}
	}
	c.writeStr(e)
	switch {
	case expire != nil && when <= c.Now:
		c.delete(c.DB, bstr(argv[1]))
		c.notify(NotifyGeneric, "del", argv[1])
		c.ownDel(argv[1])
	case expire != nil:
		c.DB.setExpire(e, when)
		c.touched(argv[1])
		c.notify(NotifyGeneric, "expire", argv[1])
		if f := c.own(3); f != nil {
			f.argStr("PEXPIREAT")
			f.arg(argv[1])
			f.argInt(when)
		}
	case flags&setPersist != 0 && e.exp != 0:
		c.DB.setExpire(e, 0)
		c.touched(argv[1])
		c.notify(NotifyGeneric, "persist", argv[1])
		if f := c.own(2); f != nil {
			f.argStr("PERSIST")
			f.arg(argv[1])
		}
	}
}

// cmdMGet: MGET key [key ...] — an array with each key's value, nil for a
// missing key or one that holds another type.
func cmdMGet(c *Ctx, argv [][]byte) {
	c.W.Array(len(argv) - 1)
	for _, k := range argv[1:] {
		e := c.lookupRead(k)
		if e == nil || e.kind != KindString {
			c.W.Null()
			continue
		}
		c.writeStr(e)
	}
}

// cmdMSet: MSET key value [key value ...] — set every pair (clearing
// TTLs); +OK. An odd number of arguments is the arity error.
func cmdMSet(c *Ctx, argv [][]byte) {
	if len(argv)%2 != 1 {
		c.W.Error(ErrWrongArgs(c.Cmd.Name))
		return
	}
	for i := 1; i < len(argv); i += 2 {
		c.setKey(c.lookupWrite(argv[i]), argv[i], argv[i+1], false)
	}
	c.W.OK()
}

// cmdMSetNX: MSETNX key value [key value ...] — set every pair only when
// none of the keys exists; :1 if set, :0 otherwise.
func cmdMSetNX(c *Ctx, argv [][]byte) {
	if len(argv)%2 != 1 {
		c.W.Error(ErrWrongArgs(c.Cmd.Name))
		return
	}
	for i := 1; i < len(argv); i += 2 {
		if c.lookupWrite(argv[i]) != nil {
			c.W.Int(0)
			return
		}
	}
	for i := 1; i < len(argv); i += 2 {
		c.setKey(c.lookupWrite(argv[i]), argv[i], argv[i+1], false)
	}
	c.W.Int(1)
}

// cmdIncrByFloat: INCRBYFLOAT key increment — add a float (0 when the key
// is missing), computed in x87 long double precision and formatted as
// Redis 7.0 does ("%.17Lf", trailing zeros stripped); the TTL is kept.
// Reply: the new value as a bulk string. Errors: WRONGTYPE; "value is not
// a valid float" for the stored value or the increment; "increment would
// produce NaN or Infinity". Effect: SET key <new value> KEEPTTL, so that
// no replica computes the sum again.
func cmdIncrByFloat(c *Ctx, argv [][]byte) {
	e, ok := c.lookupString(argv[1], false)
	if !ok {
		return
	}
	cur := new(big.Float).SetPrec(64)
	if e != nil {
		v, ok := parseLongDouble(e.str())
		if !ok {
			c.W.Error(ErrNotFloat)
			return
		}
		cur = v
	}
	incr, ok := parseLongDouble(bstr(argv[2]))
	if !ok {
		c.W.Error(ErrNotFloat)
		return
	}
	if cur.IsInf() || incr.IsInf() {
		c.W.Error(ErrIncrNaN)
		return
	}
	sum := new(big.Float).SetPrec(64).SetMode(big.ToNearestEven).Add(cur, incr)
	if !ldInRange(sum) {
		c.W.Error(ErrIncrNaN)
		return
	}
	s := formatLongDouble(sum)
	if e == nil {
		e = c.create(argv[1])
	}
	e.setRaw(s) // not integer-encoded: Redis stores the result as is
	c.touched(argv[1])
	c.notify(NotifyString, "incrbyfloat", argv[1])
	c.W.BulkString(s)
	if f := c.own(4); f != nil {
		f.argStr("SET")
		f.arg(argv[1])
		f.argStr(s)
		f.argStr("KEEPTTL")
	}
}

// checkStringLength writes Redis's error and returns false when a string
// of size+add bytes would exceed proto-max-bulk-len.
func (c *Ctx) checkStringLength(size, add int64) bool {
	if size+add > c.E.Enc.ProtoMaxBulkLen || size+add < 0 {
		c.W.Error(ErrStringTooLong)
		return false
	}
	return true
}

// cmdAppend: APPEND key value — append to the string (created when
// missing), keeping the TTL; reply: the new length. Errors: WRONGTYPE,
// the proto-max-bulk-len error.
func cmdAppend(c *Ctx, argv [][]byte) {
	e, ok := c.lookupString(argv[1], false)
	if !ok {
		return
	}
	if e == nil {
		e = c.create(argv[1])
		e.setBytes(argv[2])
		c.touched(argv[1])
		c.notify(NotifyString, "append", argv[1])
		c.W.Int(int64(len(argv[2])))
		return
	}
	olen := int64(e.strLen())
	if !c.checkStringLength(olen, int64(len(argv[2]))) {
		return
	}
	n := int(olen) + len(argv[2])
	if e.enc == encBuf && n <= bufCap(int(olen)) {
		// in place: only bytes past the old length change, so any view
		// of the old value stays valid
		buf := unsafe.Slice((*byte)(e.p), bufCap(int(olen)))
		copy(buf[olen:], argv[2])
		e.n = int64(n)
	} else if n > 0 {
		buf := make([]byte, 0, bufCap(n))
		buf = e.appendStr(buf)
		buf = append(buf, argv[2]...)
		e.kind, e.enc, e.p, e.n = KindString, encBuf, unsafe.Pointer(&buf[0]), int64(n)
	}
	c.touched(argv[1])
	c.notify(NotifyString, "append", argv[1])
	c.W.Int(int64(n))
}

// encBuf is a raw string whose bytes sit at the start of an append buffer
// of bufCap(n) bytes owned by this entry alone (APPEND's greedy growth, as
// Redis's sds). The bytes below n never change while the entry keeps them,
// so it reads exactly like encRaw; a copy of the value (COPY) must not be
// encBuf.
const encBuf uint8 = encInt + 1

// bufCap is the capacity of an append buffer holding n bytes: the next
// power of two up to 1MB, then whole megabytes. It is a function of n, so
// a buffer grown in place (n <= bufCap(old)) keeps bufCap(n) == its size.
func bufCap(n int) int {
	const mb = 1 << 20
	if n <= mb {
		return max(16, 1<<bits.Len(uint(n-1)))
	}
	return (n + mb - 1) / mb * mb
}

// cmdStrlen: STRLEN key — the length of the string, 0 when missing;
// WRONGTYPE for other types.
func cmdStrlen(c *Ctx, argv [][]byte) {
	e, ok := c.lookupString(argv[1], true)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(e.strLen()))
}

// cmdGetRange: GETRANGE key start end (also SUBSTR) — the substring
// between the inclusive offsets, negative ones counting from the end;
// an empty bulk string when out of range or missing. Errors: ErrNotInt
// (checked before the key), WRONGTYPE.
func cmdGetRange(c *Ctx, argv [][]byte) {
	start, ok1 := ParseIntB(argv[2])
	if !ok1 {
		c.W.Error(ErrNotInt)
		return
	}
	end, ok2 := ParseIntB(argv[3])
	if !ok2 {
		c.W.Error(ErrNotInt)
		return
	}
	e, ok := c.lookupString(argv[1], true)
	if !ok {
		return
	}
	if e == nil {
		c.W.BulkString("")
		return
	}
	s := e.str()
	n := int64(len(s))
	if start < 0 && end < 0 && start > end {
		c.W.BulkString("")
		return
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if start < 0 {
		start = 0
	}
	if end < 0 {
		end = 0
	}
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		c.W.BulkString("")
		return
	}
	c.W.BulkString(s[start : end+1])
}

// cmdSetRange: SETRANGE key offset value — overwrite from offset, padding
// with zero bytes; the key is created when missing (unless value is
// empty). Reply: the new length. Errors: ErrNotInt, "offset is out of
// range" for a negative offset, WRONGTYPE, the proto-max-bulk-len error.
func cmdSetRange(c *Ctx, argv [][]byte) {
	off, ok := ParseIntB(argv[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	if off < 0 {
		c.W.Error(ErrOffsetOutOfRange)
		return
	}
	val := argv[3]
	e, ok := c.lookupString(argv[1], false)
	if !ok {
		return
	}
	var olen int64
	if e != nil {
		olen = int64(e.strLen())
	}
	if len(val) == 0 {
		c.W.Int(olen)
		return
	}
	if !c.checkStringLength(off, int64(len(val))) {
		return
	}
	n := max(olen, off+int64(len(val)))
	buf := make([]byte, n)
	if e != nil {
		e.appendStr(buf[:0])
	} else {
		e = c.create(argv[1])
	}
	copy(buf[off:], val)
	e.setRaw(unsafe.String(&buf[0], len(buf)))
	e.enc = encRawObj // Redis's SETRANGE result is always "raw"
	c.touched(argv[1])
	c.notify(NotifyString, "setrange", argv[1])
	c.W.Int(n)
}
