package engine

import (
	"math"
	"strconv"
)

const (
	errUnsupportedOption = "ERR Unsupported option "
	errIntRange          = "ERR value is out of range, value must between -2147483648 and 2147483647"
	errCopyUnsupported   = "ERR COPY is not supported for values of type "
)

func init() {
	Register(
		&Command{Name: "del", Arity: -2, Flags: "write", FirstKey: 1, LastKey: -1, Step: 1, Group: "generic", Since: "1.0.0", Summary: "Deletes one or more keys.", Run: cmdDel},
		&Command{Name: "unlink", Arity: -2, Flags: "write fast", FirstKey: 1, LastKey: -1, Step: 1, Group: "generic", Since: "4.0.0", Summary: "Asynchronously deletes one or more keys.", Run: cmdDel},
		&Command{Name: "exists", Arity: -2, Flags: "readonly fast notouch", FirstKey: 1, LastKey: -1, Step: 1, Group: "generic", Since: "1.0.0", Summary: "Determines whether one or more keys exist.", Run: cmdExists},
		&Command{Name: "touch", Arity: -2, Flags: "readonly fast", FirstKey: 1, LastKey: -1, Step: 1, Group: "generic", Since: "3.2.1", Summary: "Returns the number of existing keys out of those specified after updating the time they were last accessed.", Run: cmdExists},
		&Command{Name: "type", Arity: 2, Flags: "readonly fast notouch", FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "1.0.0", Summary: "Determines the type of value stored at a key.", Run: cmdType},
		&Command{Name: "rename", Arity: 3, Flags: "write", FirstKey: 1, LastKey: 2, Step: 1, Group: "generic", Since: "1.0.0", Summary: "Renames a key and overwrites the destination.", Run: cmdRename},
		&Command{Name: "renamenx", Arity: 3, Flags: "write fast", FirstKey: 1, LastKey: 2, Step: 1, Group: "generic", Since: "1.0.0", Summary: "Renames a key only when the target key name doesn't exist.", Run: cmdRenameNX},
		&Command{Name: "keys", Arity: 2, Flags: "readonly", Group: "generic", Since: "1.0.0", Summary: "Returns all key names that match a pattern.", Run: cmdKeys},
		&Command{Name: "scan", Arity: -2, Flags: "readonly arbitrarykeys", Group: "generic", Since: "2.8.0", Summary: "Iterates over the key names in the database.", Run: cmdScan},
		&Command{Name: "randomkey", Arity: 1, Flags: "readonly arbitrarykeys", Group: "generic", Since: "1.0.0", Summary: "Returns a random key name from the database.", Run: cmdRandomKey},
		&Command{Name: "expire", Arity: -3, Flags: "write fast noeffect", FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "1.0.0", Summary: "Sets the expiration time of a key in seconds.", Run: cmdExpire},
		&Command{Name: "pexpire", Arity: -3, Flags: "write fast noeffect", FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "2.6.0", Summary: "Sets the expiration time of a key in milliseconds.", Run: cmdPExpire},
		&Command{Name: "expireat", Arity: -3, Flags: "write fast noeffect", FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "1.2.0", Summary: "Sets the expiration time of a key to a Unix timestamp.", Run: cmdExpireAt},
		&Command{Name: "pexpireat", Arity: -3, Flags: "write fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "2.6.0", Summary: "Sets the expiration time of a key to a Unix milliseconds timestamp.", Run: cmdPExpireAt},
		&Command{Name: "ttl", Arity: 2, Flags: "readonly fast notouch", FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "1.0.0", Summary: "Returns the expiration time in seconds of a key.", Run: cmdTTL},
		&Command{Name: "pttl", Arity: 2, Flags: "readonly fast notouch", FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "2.6.0", Summary: "Returns the expiration time in milliseconds of a key.", Run: cmdPTTL},
		&Command{Name: "expiretime", Arity: 2, Flags: "readonly fast notouch", FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "7.0.0", Summary: "Returns the expiration time of a key as a Unix timestamp.", Run: cmdExpireTime},
		&Command{Name: "pexpiretime", Arity: 2, Flags: "readonly fast notouch", FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "7.0.0", Summary: "Returns the expiration time of a key as a Unix milliseconds timestamp.", Run: cmdPExpireTime},
		&Command{Name: "persist", Arity: 2, Flags: "write fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "2.2.0", Summary: "Removes the expiration time of a key.", Run: cmdPersist},
		&Command{Name: "copy", Arity: -3, Flags: "write denyoom", FirstKey: 1, LastKey: 2, Step: 1, Group: "generic", Since: "6.2.0", Summary: "Copies the value of a key to a new key.", Run: cmdCopy},
	)
}

// cmdDel: DEL key [key ...] (also UNLINK) — delete the keys; reply: the
// number of keys that existed.
func cmdDel(c *Ctx, argv [][]byte) {
	n := int64(0)
	for _, k := range argv[1:] {
		if c.delete(c.DB, bstr(k)) {
			c.notify(NotifyGeneric, "del", k)
			n++
		}
	}
	c.W.Int(n)
}

// cmdExists: EXISTS key [key ...] (also TOUCH) — the number of the given
// keys that exist, a key named twice counting twice.
func cmdExists(c *Ctx, argv [][]byte) {
	n := int64(0)
	for _, k := range argv[1:] {
		if c.lookupRead(k) != nil {
			n++
		}
	}
	c.W.Int(n)
}

// cmdType: TYPE key — status reply with the type name, "none" when missing.
func cmdType(c *Ctx, argv [][]byte) {
	e := c.lookupRead(argv[1])
	if e == nil {
		c.W.Status("none")
		return
	}
	c.W.Status(e.kind.String())
}

// rename is RENAME (nx false) and RENAMENX: move src's value and TTL to
// dst. Errors: "no such key" when src is missing (also when src == dst).
// Same key: +OK / :0 without change.
func (c *Ctx) rename(argv [][]byte, nx bool) {
	src, dst := argv[1], argv[2]
	e := c.lookupWrite(src)
	if e == nil {
		c.W.Error(ErrNoSuchKey)
		return
	}
	if bstr(src) == bstr(dst) {
		if nx {
			c.W.Int(0)
		} else {
			c.W.OK()
		}
		return
	}
	if d := c.lookupWrite(dst); d != nil {
		if nx {
			c.W.Int(0)
			return
		}
		c.DB.removeEntry(d)
	}
	p, n, exp, kind, enc := e.p, e.n, e.exp, e.kind, e.enc
	c.DB.removeEntry(e)
	ne := c.create(dst)
	ne.p, ne.n, ne.kind, ne.enc = p, n, kind, enc
	c.DB.setExpire(ne, exp)
	c.touched(src)
	c.touched(dst)
	c.notify(NotifyGeneric, "rename_from", src)
	c.notify(NotifyGeneric, "rename_to", dst)
	if nx {
		c.W.Int(1)
	} else {
		c.W.OK()
	}
}

// cmdRename: RENAME key newkey — +OK; the TTL moves with the value and an
// existing newkey is overwritten. Error: "no such key".
func cmdRename(c *Ctx, argv [][]byte) { c.rename(argv, false) }

// cmdRenameNX: RENAMENX key newkey — :1 when renamed, :0 when newkey
// exists (or is key). Error: "no such key".
func cmdRenameNX(c *Ctx, argv [][]byte) { c.rename(argv, true) }

// cmdKeys: KEYS pattern — every live key matching the glob pattern, in
// table order (expired keys are skipped, not deleted).
func cmdKeys(c *Ctx, argv [][]byte) {
	pat := bstr(argv[1])
	all := pat == "*"
	var keys []string
	c.DB.dict.each(func(e *entry) bool {
		if e.expired(c.Now) {
			return true
		}
		if all || Match(pat, e.keyStr(), false) {
			keys = append(keys, e.keyStr())
		}
		return true
	})
	c.W.Array(len(keys))
	for _, k := range keys {
		c.W.BulkString(k)
	}
}

// cmdScan: SCAN cursor [MATCH pattern] [COUNT count] [TYPE type] — walk
// the table from cursor (Redis's reverse-binary cursor: every key present
// for the whole scan is returned at least once). Reply: [next cursor as a
// bulk string, [keys]]. Expired keys met are deleted and not returned.
// Errors: "invalid cursor", ErrNotInt / syntax error for COUNT (< 1), syntax
// error for unknown options.
func cmdScan(c *Ctx, argv [][]byte) {
	cursor, ok := parseScanCursor(argv[1])
	if !ok {
		c.W.Error(ErrInvalidCursor)
		return
	}
	o, ok := c.parseScanOpts(argv, 2, true)
	if !ok {
		return
	}
	count, typ := o.count, o.typ

	db := c.DB
	var found []*entry
	maxIter := count * 10
	for {
		cursor = db.dict.scanBucket(cursor, func(e *entry) { found = append(found, e) })
		if cursor == 0 || maxIter == 0 || int64(len(found)) >= count {
			break
		}
		maxIter--
	}
	// Filter after the walk (fn must not delete inside scanBucket when it
	// may shrink the table); collect names first since deleting an entry
	// zeroes it.
	keys := make([]string, 0, len(found))
	var expired []string
	for _, e := range found {
		if o.usePat && !Match(o.pat, e.keyStr(), false) {
			continue
		}
		if typ != nil && !EqualFoldStr(bstr(typ), e.kind.String()) {
			continue
		}
		if e.expired(c.Now) {
			expired = append(expired, e.keyStr())
			continue
		}
		keys = append(keys, e.keyStr())
	}
	for _, k := range expired {
		c.find(db, k)
	}
	c.W.Array(2)
	var buf [20]byte
	c.W.Bulk(strconv.AppendUint(buf[:0], cursor, 10))
	c.W.Array(len(keys))
	for _, k := range keys {
		c.W.BulkString(k)
	}
}

// EqualFoldStr reports whether a and b are equal ignoring ASCII case.
func EqualFoldStr(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

// cmdRandomKey: RANDOMKEY — a random live key (c.rng()), nil when the
// database is empty. Expired keys picked are deleted and the draw repeats;
// a follower (no lazy delete) falls back to a walk after 100 draws.
func cmdRandomKey(c *Ctx, argv [][]byte) {
	db := c.DB
	for tries := 0; ; tries++ {
		e := db.dict.random(c.rng())
		if e == nil {
			c.W.Null()
			return
		}
		if !e.expired(c.Now) {
			c.W.BulkString(e.keyStr())
			return
		}
		if !c.E.NoLazyDelete && !c.E.heldForMigration(db, e) {
			c.expireKey(db, e)
			continue
		}
		if tries >= 100 {
			var live *entry
			db.dict.each(func(x *entry) bool {
				if !x.expired(c.Now) {
					live = x
					return false
				}
				return true
			})
			if live == nil {
				c.W.Null()
			} else {
				c.W.BulkString(live.keyStr())
			}
			return
		}
	}
}

// expire flags
const (
	expNX = 1 << iota
	expXX
	expGT
	expLT
)

// expireGeneric is EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT: argv[2] in seconds
// (secs) or ms, relative to now (rel) or absolute, then NX|XX|GT|LT.
// Reply :1 when the deadline was set (a deadline not in the future deletes
// the key), :0 when the key is missing or a condition failed. Errors:
// "Unsupported option X", the NX/XX/GT/LT conflict errors, ErrNotInt,
// "invalid expire time in '<cmd>' command" on overflow. Effect: PEXPIREAT
// key <deadline> with the options as given, or DEL key when the deadline
// has passed (always in the future while applying: Now is MinInt64).
func (c *Ctx) expireGeneric(argv [][]byte, secs, rel bool) {
	flag := 0
	for _, o := range argv[3:] {
		switch {
		case isOpt(o, "nx"):
			flag |= expNX
		case isOpt(o, "xx"):
			flag |= expXX
		case isOpt(o, "gt"):
			flag |= expGT
		case isOpt(o, "lt"):
			flag |= expLT
		default:
			c.W.Error(errUnsupportedOption + string(o))
			return
		}
	}
	if flag&expNX != 0 && flag&(expXX|expGT|expLT) != 0 {
		c.W.Error(ErrExpireNXXXGTLT)
		return
	}
	if flag&expGT != 0 && flag&expLT != 0 {
		c.W.Error(ErrExpireGTLT)
		return
	}
	when, ok := ParseIntB(argv[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	if secs {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			c.W.Error(ErrInvalidExpire(c.Cmd.Name))
			return
		}
		when *= 1000
	}
	if rel {
		if when > math.MaxInt64-c.Now {
			c.W.Error(ErrInvalidExpire(c.Cmd.Name))
			return
		}
		when += c.Now
	}
	e := c.lookupWrite(argv[1])
	if e == nil {
		c.W.Int(0)
		return
	}
	if flag != 0 {
		cur := e.exp
		if (flag&expNX != 0 && cur != 0) ||
			(flag&expXX != 0 && cur == 0) ||
			(flag&expGT != 0 && (cur == 0 || when <= cur)) ||
			(flag&expLT != 0 && cur != 0 && when >= cur) {
			c.W.Int(0)
			return
		}
	}
	if when <= c.Now {
		c.delete(c.DB, bstr(argv[1]))
		c.notify(NotifyGeneric, "del", argv[1])
		c.W.Int(1)
		c.ownDel(argv[1])
		return
	}
	c.DB.setExpire(e, when)
	c.touched(argv[1])
	c.W.Int(1) // before the event, as in Redis
	c.notify(NotifyGeneric, "expire", argv[1])
	if rel || secs {
		// PEXPIREAT key <deadline> [options], as Redis 7.0 rewrites it;
		// PEXPIREAT itself goes out as sent
		if f := c.own(len(argv)); f != nil {
			f.argStr("PEXPIREAT")
			f.arg(argv[1])
			f.argInt(when)
			for _, o := range argv[3:] {
				f.arg(o)
			}
		}
	}
}

// cmdExpire: EXPIRE key seconds [NX|XX|GT|LT]; see expireGeneric.
func cmdExpire(c *Ctx, argv [][]byte) { c.expireGeneric(argv, true, true) }

// cmdPExpire: PEXPIRE key milliseconds [NX|XX|GT|LT]; see expireGeneric.
func cmdPExpire(c *Ctx, argv [][]byte) { c.expireGeneric(argv, false, true) }

// cmdExpireAt: EXPIREAT key unix-seconds [NX|XX|GT|LT]; see expireGeneric.
func cmdExpireAt(c *Ctx, argv [][]byte) { c.expireGeneric(argv, true, false) }

// cmdPExpireAt: PEXPIREAT key unix-ms [NX|XX|GT|LT]; see expireGeneric.
func cmdPExpireAt(c *Ctx, argv [][]byte) { c.expireGeneric(argv, false, false) }

// ttlGeneric replies -2 for a missing key, -1 for one without deadline,
// else the remaining time (abs false) or the deadline (abs true), in ms or
// rounded to seconds ((t+500)/1000), never negative.
func (c *Ctx) ttlGeneric(argv [][]byte, ms, abs bool) {
	e := c.lookupRead(argv[1])
	if e == nil {
		c.W.Int(-2)
		return
	}
	if e.exp == 0 {
		c.W.Int(-1)
		return
	}
	t := e.exp
	if !abs {
		t -= c.Now
	}
	if t < 0 {
		t = 0
	}
	if !ms {
		t = (t + 500) / 1000
	}
	c.W.Int(t)
}

// cmdTTL: TTL key — remaining seconds (rounded), -1 no TTL, -2 missing.
func cmdTTL(c *Ctx, argv [][]byte) { c.ttlGeneric(argv, false, false) }

// cmdPTTL: PTTL key — remaining milliseconds, -1 no TTL, -2 missing.
func cmdPTTL(c *Ctx, argv [][]byte) { c.ttlGeneric(argv, true, false) }

// cmdExpireTime: EXPIRETIME key — the deadline in unix seconds (rounded),
// -1 no TTL, -2 missing.
func cmdExpireTime(c *Ctx, argv [][]byte) { c.ttlGeneric(argv, false, true) }

// cmdPExpireTime: PEXPIRETIME key — the deadline in unix ms, -1 / -2.
func cmdPExpireTime(c *Ctx, argv [][]byte) { c.ttlGeneric(argv, true, true) }

// cmdPersist: PERSIST key — remove the TTL; :1 when one was removed, :0
// when the key is missing or has none.
func cmdPersist(c *Ctx, argv [][]byte) {
	e := c.lookupWrite(argv[1])
	if e == nil || e.exp == 0 {
		c.W.Int(0)
		return
	}
	c.DB.setExpire(e, 0)
	c.touched(argv[1])
	c.notify(NotifyGeneric, "persist", argv[1])
	c.W.Int(1)
}

// cmdCopy: COPY source destination [DB n] [REPLACE] — copy the value and
// TTL; :1 when copied, :0 when source is missing or destination exists
// (without REPLACE). Errors: syntax error, ErrNotInt for DB, "DB index is
// out of range", "source and destination objects are the same",
// errCopyCluster for DB other than 0 in cluster mode. Values of a type that
// registered no Clone give an error.
// errCopyCluster is Redis's COPY … DB n (n not 0) in cluster mode.
const errCopyCluster = "ERR Copying to another database is not allowed in cluster mode"

func cmdCopy(c *Ctx, argv [][]byte) {
	dst := c.DB
	replace := false
	for j := 3; j < len(argv); j++ {
		additional := len(argv) - j - 1
		switch {
		case isOpt(argv[j], "replace"):
			replace = true
		case isOpt(argv[j], "db") && additional > 0:
			id, ok := ParseIntB(argv[j+1])
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
			dst = c.E.DBs[id]
			j++
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}
	if c.E.SlotsEnabled() && (c.DB.ID != 0 || dst.ID != 0) {
		// after the options are parsed, as Redis's copyCommand
		c.W.Error(errCopyCluster)
		return
	}
	if dst == c.DB && bstr(argv[1]) == bstr(argv[2]) {
		c.W.Error(ErrSameObject)
		return
	}
	e := c.lookupRead(argv[1])
	if e == nil {
		c.W.Int(0)
		return
	}
	d := c.find(dst, bstr(argv[2]))
	if d != nil && !replace {
		c.W.Int(0)
		return
	}
	p, n := e.p, e.n
	if e.kind != KindString {
		clone := kindOps[e.kind].Clone
		if clone == nil {
			c.W.Error(errCopyUnsupported + e.kind.String())
			return
		}
		p, n = clone(e.p, e.n)
	}
	kind, enc, exp := e.kind, e.enc, e.exp
	if enc == encBuf {
		enc = encRawObj // the buffer stays owned by the source alone
	}
	if d != nil {
		dst.removeEntry(d)
	}
	ne := c.createIn(dst, string(argv[2]))
	ne.p, ne.n, ne.kind, ne.enc = p, n, kind, enc
	dst.setExpire(ne, exp)
	c.signal(dst, bstr(argv[2]))
	c.notifyKey(dst, NotifyGeneric, "copy_to", bstr(argv[2]))
	c.W.Int(1)
}
