package engine

import "limitdb/resp"

// OBJECT: the introspection container over a key's value (Redis 7.0
// object.c). Each key has one access byte (entry.lru): under an LFU
// maxmemory-policy it is the logarithmic access counter (FREQ), otherwise
// the access clock in seconds mod 256 (IDLETIME), taken from the command's
// time so it is deterministic (evict.go).

const (
	errObjectNoLFU = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
	errObjectLFU   = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
)

// encRawObj is a string value that Redis would hold with the "raw"
// encoding whatever its length (SETRANGE's result, a copy of an APPEND
// buffer); it reads exactly like encRaw.
const encRawObj uint8 = encBuf + 1

// embstrMax is the longest string Redis stores as "embstr".
const embstrMax = 44

// sharedRefcount is OBJECT REFCOUNT of a shared object (Redis's
// OBJ_SHARED_REFCOUNT): the integers 0..9999.
const sharedRefcount = 2147483647

func init() {
	sub := func(name string, arity int, flags, summary string, fn func(*Ctx, [][]byte)) *Command {
		c := &Command{Name: name, Arity: arity, Flags: flags, Group: "generic", Since: "2.2.3", Summary: summary, Run: fn}
		if arity == 3 {
			c.FirstKey, c.LastKey, c.Step = 2, 2, 1
		}
		return c
	}
	Register(&Command{
		Name: "object", Arity: -2, Group: "generic", Since: "2.2.3",
		Summary: "A container for object introspection commands.",
		Subs: []*Command{
			sub("encoding", 3, "readonly notouch", "Returns the internal encoding of a Redis object.", cmdObjectEncoding),
			sub("freq", 3, "readonly notouch", "Returns the logarithmic access frequency counter of a Redis object.", cmdObjectFreq),
			sub("idletime", 3, "readonly notouch", "Returns the time since the last access to a Redis object.", cmdObjectIdletime),
			sub("refcount", 3, "readonly notouch", "Returns the reference count of a value of a key.", cmdObjectRefcount),
			sub("help", 2, "loading stale", "Returns helpful text about the different subcommands.", cmdObjectHelp),
		},
	})
}

// encoding is OBJECT ENCODING of a live entry, with Redis 7.0's names.
func (e *entry) encoding() string {
	switch e.kind {
	case KindString:
		switch {
		case e.enc == encInt:
			return "int"
		case e.enc == encBuf || e.enc == encRawObj || e.n > embstrMax:
			return "raw"
		}
		return "embstr"
	case KindLimiter:
		return "raw"
	}
	enc, _ := e.collEncoding()
	return enc
}

// objectLookup finds key for an OBJECT subcommand; a missing key gets a
// null reply and nil.
func objectLookup(c *Ctx, key []byte) *entry {
	// lookupRead without the keymiss event (Redis's LOOKUP_NONOTIFY)
	e := c.find(c.DB, bstr(key))
	if e == nil {
		c.E.Stats.KeyspaceMisses++
		c.W.Null()
		return nil
	}
	c.E.Stats.KeyspaceHits++
	c.touchLRU(e)
	return e
}

// cmdObjectEncoding: OBJECT ENCODING key — reply: the value's internal
// encoding as Redis 7.0 names it (strings "int", "embstr" up to 44 bytes,
// "raw"; lists "quicklist"; hashes "listpack"/"hashtable"; sets
// "intset"/"hashtable"; sorted sets "listpack"/"skiplist"), or null when
// the key does not exist.
func cmdObjectEncoding(c *Ctx, argv [][]byte) {
	if e := objectLookup(c, argv[2]); e != nil {
		c.W.BulkString(e.encoding())
	}
}

// cmdObjectRefcount: OBJECT REFCOUNT key — reply: 2147483647 for the
// shared integers 0..9999, else 1; null when the key does not exist.
func cmdObjectRefcount(c *Ctx, argv [][]byte) {
	e := objectLookup(c, argv[2])
	if e == nil {
		return
	}
	if e.kind == KindString && e.enc == encInt && e.n >= 0 && e.n < 10000 {
		c.W.Int(sharedRefcount)
		return
	}
	c.W.Int(1)
}

// cmdObjectIdletime: OBJECT IDLETIME key — reply: whole seconds since the
// key was last read or written (TYPE, TTL, EXISTS and OBJECT do not count
// as accesses). The clock is kept mod 256 seconds to keep a key at 40
// bytes, so an idle time wraps after 4 min 16 s (Redis: 194 days). Null
// when the key does not exist; Redis's error under an LFU policy.
func cmdObjectIdletime(c *Ctx, argv [][]byte) {
	if e := objectLookup(c, argv[2]); e != nil {
		if c.E.ev.policy.lfu() {
			c.W.Error(errObjectLFU)
			return
		}
		c.W.Int(int64(uint8(c.Now/1000) - e.lru))
	}
}

// cmdObjectFreq: OBJECT FREQ key — under an LFU maxmemory-policy the key's
// logarithmic access counter (0..255, decayed by one per minute, see
// DecayLFU); Redis's error when no LFU policy is selected; null when the
// key does not exist.
func cmdObjectFreq(c *Ctx, argv [][]byte) {
	if e := objectLookup(c, argv[2]); e != nil {
		if !c.E.ev.policy.lfu() {
			c.W.Error(errObjectNoLFU)
			return
		}
		c.W.Int(int64(e.lru))
	}
}

var objectHelp = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Prints this help.",
}

// cmdObjectHelp: OBJECT HELP — reply: the help lines as status strings.
func cmdObjectHelp(c *Ctx, argv [][]byte) { writeHelp(c.W, objectHelp) }

func writeHelp(w *resp.Writer, lines []string) {
	w.Array(len(lines))
	for _, l := range lines {
		w.Status(l)
	}
}
