package engine

// DUMP and RESTORE (Redis 7.0 cluster.c): a value in RDB form, as the
// snapshot writes it (rdb.go), followed by the RDB version (2 bytes LE)
// and the CRC64 of everything before (8 bytes LE). DUMP gives Redis's
// bytes for the same value in the same encoding; see commands.md for the
// cases where limitdb cannot know Redis's layout.

const (
	errDumpPayload   = "ERR DUMP payload version or checksum are wrong"
	errBadDataFormat = "ERR Bad data format"
	errBusyKey       = "BUSYKEY Target key name already exists."
	errRestoreTTL    = "ERR Invalid TTL value, must be >= 0"
	errRestoreIdle   = "ERR Invalid IDLETIME value, must be >= 0"
	errRestoreFreq   = "ERR Invalid FREQ value, must be >= 0 and <= 255"
)

func init() {
	Register(
		&Command{Name: "dump", Arity: 2, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "2.6.0", Summary: "Return a serialized version of the value stored at the specified key.", Run: cmdDump},
		&Command{Name: "restore", Arity: -4, Flags: "write denyoom", FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "2.6.0", Summary: "Create a key using the provided serialized value, previously obtained using DUMP.", Run: cmdRestore},
	)
}

// cmdDump: DUMP key — the serialized value (nil when the key does not
// exist). Native limiters dump as limitdb's module type, which Redis
// cannot RESTORE.
func cmdDump(c *Ctx, argv [][]byte) {
	e := c.lookupRead(argv[1])
	if e == nil {
		c.W.Null()
		return
	}
	p := c.E.dumpPayload(e)
	c.W.Bulk(p)
	if cap(p) > 1<<20 {
		c.E.dumpW.buf = nil // do not keep a big value's buffer
	}
}

// cmdRestore: RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s]
// [FREQ f] — create key from a DUMP payload, with a TTL in ms (0: none;
// ABSTTL: an absolute unix time in ms). Errors, checked in Redis's
// order: syntax, the IDLETIME/FREQ range errors, BUSYKEY (the key exists
// and no REPLACE), the TTL error, "DUMP payload version or checksum are
// wrong", "Bad data format" (including payloads of types limitdb cannot
// hold). A TTL already in the past creates nothing (and deletes the old
// key under REPLACE). Propagated with an absolute TTL and ABSTTL.
// IDLETIME sets the idle time under a non-LFU policy (limitdb keeps 255 s
// at most), FREQ the counter under an LFU policy.
func cmdRestore(c *Ctx, argv [][]byte) {
	replace, absTTL := false, false
	idle, freq := int64(-1), int64(-1)
	for j := 4; j < len(argv); j++ {
		more := j+1 < len(argv)
		switch {
		case isOpt(argv[j], "replace"):
			replace = true
		case isOpt(argv[j], "absttl"):
			absTTL = true
		case isOpt(argv[j], "idletime") && more && freq == -1:
			v, ok := ParseIntB(argv[j+1])
			if !ok {
				c.W.Error(ErrNotInt)
				return
			}
			if v < 0 {
				c.W.Error(errRestoreIdle)
				return
			}
			idle = v
			j++
		case isOpt(argv[j], "freq") && more && idle == -1:
			v, ok := ParseIntB(argv[j+1])
			if !ok {
				c.W.Error(ErrNotInt)
				return
			}
			if v < 0 || v > 255 {
				c.W.Error(errRestoreFreq)
				return
			}
			freq = v
			j++
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}
	key := argv[1]
	if !replace && c.lookupWrite(key) != nil {
		c.W.Error(errBusyKey)
		return
	}
	ttl, ok := ParseIntB(argv[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	if ttl < 0 {
		c.W.Error(errRestoreTTL)
		return
	}
	if !verifyDumpPayload(argv[3]) {
		c.W.Error(errDumpPayload)
		return
	}
	v, err := loadDumpPayload(argv[3], &c.E.Enc)
	if err != nil {
		c.W.Error(errBadDataFormat)
		return
	}
	deleted := false
	if replace {
		// Redis's dbDelete: whatever is there, past its deadline or not
		if old := c.DB.dict.find(bstr(key)); old != nil {
			c.DB.removeEntry(old)
			deleted = true
		}
	}
	if ttl != 0 && !absTTL {
		ttl += c.Now
	}
	if ttl != 0 && ttl <= c.Now {
		if deleted {
			c.Rewrite(Args("DEL").B(key))
			c.touched(key)
			c.notify(NotifyGeneric, "del", key)
		}
		c.W.OK()
		return
	}
	e := c.create(key)
	v.install(e)
	if ttl != 0 {
		c.DB.setExpire(e, ttl)
		if !absTTL {
			c.Rewrite(Args(string(argv[0])).B(key).I(ttl).B(argv[3:]...).S("ABSTTL"))
		}
	}
	if c.E.ev.lfu {
		if freq >= 0 {
			e.lru = uint8(freq)
		}
	} else if idle >= 0 {
		e.lru = uint8(c.accessNow()/1000 - min(idle, 255))
	}
	c.touched(key)
	c.notify(NotifyGeneric, "restore", key)
	c.W.OK()
}
