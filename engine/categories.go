package engine

import (
	"sort"
	"strings"
)

// ACL command categories, in the order of Redis 7.0's category table (the
// order ACL CAT and COMMAND INFO list them), then limitdb's own
// @ratelimit for the native limiter commands (RL.*, CL.THROTTLE) and
// @rlpolicy for the administration of named policies (RL.POLICY), apart so
// that a user may decide under policies without being able to change them.
const (
	CatKeyspace uint64 = 1 << iota
	CatRead
	CatWrite
	CatSet
	CatSortedSet
	CatList
	CatHash
	CatString
	CatBitmap
	CatHyperLogLog
	CatGeo
	CatStream
	CatPubSub
	CatAdmin
	CatFast
	CatSlow
	CatBlocking
	CatDangerous
	CatConnection
	CatTransaction
	CatScripting
	CatRateLimit
	CatRLPolicy
)

// CategoryNames lists the category names; bit i of a category set is
// CategoryNames[i].
var CategoryNames = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
	"blocking", "dangerous", "connection", "transaction", "scripting", "ratelimit",
	"rlpolicy",
}

// CategoryByName returns the category bit of name (case-insensitive), 0
// when there is none.
func CategoryByName(name string) uint64 {
	for i, n := range CategoryNames {
		if EqualFoldStr(name, n) {
			return 1 << i
		}
	}
	return 0
}

// CategoryList returns the names of the categories of cmd, in table order.
func (cmd *Command) CategoryList() []string {
	var out []string
	for i, n := range CategoryNames {
		if cmd.Cats&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// The Redis tree comes from the environment (a 7.0.15 checkout):
//
//	REDIS_SRC=path/to/redis go generate ./engine
//
//go:generate go run ./internal/gencmdmeta -src $REDIS_SRC -o cmdmeta_gen.go

// cmdMeta is what Redis's command JSON says about a command beyond the
// flags: its explicit ACL categories, the ones its Redis flags imply, and
// its key specs.
type cmdMeta struct {
	cats, implied uint64
	specs         []KeySpec
}

// limitdbMeta covers the commands Redis 7.0 does not have: the native
// limiter commands (@ratelimit; RL.ALLOWALL's keys come every third
// argument after the count; RL.SET is also @dangerous: like RESTORE it
// replaces the key and can set any state; RL.STATS and RL.TOP, which read
// the node's counters, name no key), RL.POLICY's subcommands
// (@rlpolicy only: administration, not decisions), and two CLIENT subcommands of Redis 7.2
// (with 7.2's categories).
var limitdbMeta = map[string]cmdMeta{
	"rl.allow":             {cats: CatRateLimit, specs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, BeginIndex: 1, KeyStep: 1}}},
	"rl.peek":              {cats: CatRateLimit, specs: []KeySpec{{Flags: KeyRO | KeyAccess, BeginIndex: 1, KeyStep: 1}}},
	"rl.refund":            {cats: CatRateLimit, specs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, BeginIndex: 1, KeyStep: 1}}},
	"rl.reset":             {cats: CatRateLimit, specs: []KeySpec{{Flags: KeyRM | KeyDelete, BeginIndex: 1, KeyStep: 1}}},
	"rl.info":              {cats: CatRateLimit, specs: []KeySpec{{Flags: KeyRO | KeyAccess, BeginIndex: 1, KeyStep: 1}}},
	"rl.allowall":          {cats: CatRateLimit, specs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, BeginIndex: 1, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 3}}},
	"cl.throttle":          {cats: CatRateLimit, specs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, BeginIndex: 1, KeyStep: 1}}},
	"rl.set":               {cats: CatRateLimit | CatDangerous, specs: []KeySpec{{Flags: KeyOW | KeyUpdate, BeginIndex: 1, KeyStep: 1}}},
	"rl.stats":             {cats: CatRateLimit},
	"rl.top":               {cats: CatRateLimit},
	"rl.policy|set":        {cats: CatRLPolicy},
	"rl.policy|get":        {cats: CatRLPolicy},
	"rl.policy|del":        {cats: CatRLPolicy},
	"rl.policy|list":       {cats: CatRLPolicy},
	"rl.policy|history":    {cats: CatRLPolicy},
	"rl.policy|apply":      {cats: CatRLPolicy},
	"rl.policy|override":   {cats: CatRLPolicy},
	"rl.policy|unoverride": {cats: CatRLPolicy},
	"rl.policy|overrides":  {cats: CatRLPolicy},
	"rl.policy|dump":       {cats: CatRLPolicy},
	"rl.policy|restore":    {cats: CatRLPolicy},
	"client|no-touch":      {cats: CatConnection},
	"client|setinfo":       {cats: CatConnection},
}

// attachMeta sets cmd.Cats (explicit categories plus the implicit ones
// Redis derives from the flags) and cmd.KeySpecs. A command absent from
// both tables (test-only commands) gets the key range of its table entry,
// read or written as its flags say.
func attachMeta(cmd *Command) {
	m, ok := redisMeta[cmd.Name]
	if !ok {
		m, ok = limitdbMeta[cmd.Name]
	}
	if !ok && cmd.FirstKey > 0 {
		f := KeyRO | KeyAccess
		if cmd.Has(FlagWrite) {
			f = KeyRW | KeyAccess | KeyUpdate
		}
		last := cmd.LastKey
		if last > 0 {
			last -= cmd.FirstKey
		}
		m.specs = []KeySpec{{Flags: f, BeginIndex: cmd.FirstKey, LastKey: last, KeyStep: max(cmd.Step, 1)}}
	}
	c := m.cats
	if cmd.Has(FlagWrite) {
		c |= CatWrite
	}
	if cmd.Has(FlagReadOnly) && c&CatScripting == 0 {
		c |= CatRead
	}
	if cmd.Has(FlagAdmin) {
		c |= CatAdmin | CatDangerous
	}
	if cmd.Has(FlagPubSub) {
		c |= CatPubSub
	}
	if cmd.Has(FlagFast) {
		c |= CatFast
	}
	if cmd.Has(FlagBlocking) {
		c |= CatBlocking
	}
	if c&CatFast == 0 {
		c |= CatSlow
	}
	cmd.Cats = c
	for _, ks := range m.specs {
		if ks.Unsupported && cmd.GetKeys == nil {
			// a keyword/unknown key spec: the ACL check needs its keys
			panic("engine: key spec of " + cmd.Name + " not supported (give the command GetKeys, or add its key search to keyspec.go)")
		}
	}
	cmd.KeySpecs = m.specs
	if movableKeys(m.specs) {
		cmd.F |= FlagMovableKeys
	}
}

// RedisOnly is a command of Redis 7.0 that limitdb does not have: ACL
// rules may name it (a Redis aclfile with "-debug" loads) and describing
// rules weighs categories over Redis's whole command table, so ACL LIST
// reads as Redis's does.
type RedisOnly struct {
	Name string // "name" or "container|sub"
	Cats uint64
}

// RedisOnlyCommands lists them in name order (call it after every
// command has registered, i.e. not from an init function).
func RedisOnlyCommands() []RedisOnly {
	var out []RedisOnly
	for name, m := range redisMeta {
		if lookupFull(name) == nil {
			out = append(out, RedisOnly{name, m.cats | m.implied})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// lookupFull finds "name" or "container|sub" in the table.
func lookupFull(name string) *Command {
	if i := strings.IndexByte(name, '|'); i >= 0 {
		c := table[name[:i]]
		if c == nil {
			return nil
		}
		return c.subs[name[i+1:]]
	}
	return table[name]
}
