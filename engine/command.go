package engine

import (
	"sort"
	"strings"
)

// Flag is a command property, as Redis's command table has them.
type Flag uint32

const (
	FlagWrite Flag = 1 << iota
	FlagReadOnly
	FlagDenyOOM
	FlagAdmin
	FlagPubSub
	FlagNoScript
	FlagBlocking
	FlagLoading
	FlagStale
	FlagSkipMonitor
	FlagSkipSlowlog
	FlagFast
	FlagNoAuth
	FlagMayReplicate
	FlagNoMulti
	FlagAllowBusy
	FlagNoMandatoryKeys
	// FlagNoTouch: the command's lookups leave the key's access time
	// alone (Redis's LOOKUP_NOTOUCH: TYPE, TTL, EXISTS, OBJECT…).
	FlagNoTouch
	// FlagConn marks a command served by the connection layer (server/):
	// it touches connection state (SELECT, MULTI, CLIENT…) and has no Run.
	FlagConn
	// FlagScript marks EVAL-family commands: they go to the applier as one
	// unit and may write even though they are not flagged write.
	FlagScript
	// FlagNoEffect marks a write that never appears in an effect stream:
	// it is always recorded in another form (EXPIRE as PEXPIREAT, SPOP as
	// SREM, RL.ALLOW as RL.SET …) because what it does depends on the
	// clock, on chance or on Lua. Engine.Apply refuses it.
	FlagNoEffect
	// FlagArbitraryKeys: the command may reclaim any number of expired
	// keys it was not given (SCAN, RANDOMKEY: Redis's
	// touches_arbitrary_keys); run on its own, its DELs go out bare.
	FlagArbitraryKeys
	// FlagNoAsyncLoading is Redis's no_async_loading (SAVE, BGSAVE): shown
	// by COMMAND; limitdb never loads asynchronously.
	FlagNoAsyncLoading
	// FlagMovableKeys is Redis's movablekeys: the legacy first/last/step
	// range does not cover every key. Never written in a table entry:
	// attachMeta derives it from the key specs as Redis does.
	FlagMovableKeys
)

var flagNames = []struct {
	f    Flag
	name string
}{
	{FlagWrite, "write"}, {FlagReadOnly, "readonly"}, {FlagDenyOOM, "denyoom"},
	{FlagAdmin, "admin"}, {FlagPubSub, "pubsub"}, {FlagNoScript, "noscript"},
	{FlagBlocking, "blocking"}, {FlagLoading, "loading"}, {FlagStale, "stale"},
	{FlagSkipMonitor, "skip_monitor"}, {FlagSkipSlowlog, "skip_slowlog"},
	{FlagFast, "fast"}, {FlagNoAuth, "no_auth"},
	// Redis's reply order (addReplyFlagsForCommand): no_mandatory_keys,
	// no_async_loading, no_multi, movablekeys, allow_busy
	{FlagNoMandatoryKeys, "no_mandatory_keys"}, {FlagNoAsyncLoading, "no_async_loading"},
	{FlagNoMulti, "no_multi"}, {FlagMovableKeys, "movablekeys"}, {FlagAllowBusy, "allow_busy"},
}

// internal flags that are not Redis flags and never reach COMMAND replies
// (may_replicate is Redis's, but COMMAND hides it there too)
var internalFlags = map[string]Flag{"conn": FlagConn, "script": FlagScript, "notouch": FlagNoTouch, "noeffect": FlagNoEffect, "arbitrarykeys": FlagArbitraryKeys, "may_replicate": FlagMayReplicate}

// ParseFlags turns "write denyoom fast" into a Flag set. It panics on an
// unknown word: the table is static, a typo is a programming error.
func ParseFlags(s string) Flag {
	var f Flag
outer:
	for _, w := range strings.Fields(s) {
		for _, fn := range flagNames {
			if fn.name == w {
				f |= fn.f
				continue outer
			}
		}
		if x, ok := internalFlags[w]; ok {
			f |= x
			continue
		}
		panic("engine: unknown command flag " + w)
	}
	return f
}

// FlagNames lists the Redis flag names of f in table order.
func FlagNames(f Flag) []string {
	var out []string
	for _, fn := range flagNames {
		if f&fn.f != 0 {
			out = append(out, fn.name)
		}
	}
	return out
}

// Command describes one command once; everything else (COMMAND replies,
// routing of writes to the applier, what MULTI queues, what scripts may
// call, what a follower forwards) is derived from it.
type Command struct {
	Name  string // lower case; "container|sub" for subcommands
	Arity int    // Redis convention: n = exactly n, -n = at least n (name included)
	Flags string // Redis flag words, e.g. "write denyoom fast"
	// Key positions: first, last (negative counts from the end), step.
	FirstKey, LastKey, Step int
	Group                   string // "string", "list", "generic", "server", …
	Since                   string
	Summary                 string
	// Run executes the command; nil for FlagConn commands.
	Run func(c *Ctx, argv [][]byte)
	// Subcommands, for containers like CONFIG, CLIENT, SCRIPT.
	Subs []*Command
	// FlagsFor, when set, gives the flags of one call (Redis's
	// getCommandFlags): a script that declares flags (a shebang line, a
	// function's flags) replaces write, deny-oom and stale by what it
	// declares. The server asks it where the flags decide a refusal (OOM,
	// MISCONF), with the engine lock held; nil means F.
	FlagsFor func(c *Ctx, argv [][]byte) Flag
	// GetKeys finds the keys of a command whose key specs cannot say
	// where they are (Redis's getkeys_proc, used when a spec is
	// "unknown": SORT's STORE may be anywhere). It fills dst and returns
	// how many it found; nil for every other command.
	GetKeys func(argv [][]byte, dst *[2]KeyRef) int

	F    Flag
	subs map[string]*Command
	// Cats is the command's ACL category set (bits of CategoryNames) and
	// KeySpecs where its keys are and how it uses them (categories.go).
	Cats     uint64
	KeySpecs []KeySpec
	// ID is a small dense index (0, 1, 2 … in registration order,
	// subcommands included) so per-command data such as the server's
	// statistics can live in a slice instead of a map keyed by name.
	ID int
}

var nextCommandID int

// NumCommandIDs is the number of command IDs handed out so far.
func NumCommandIDs() int { return nextCommandID }

// Has reports whether the command has flag f.
func (cmd *Command) Has(f Flag) bool { return cmd.F&f != 0 }

// CallFlags returns the flags of cmd called with argv (FlagsFor, else F).
func (c *Ctx) CallFlags(cmd *Command, argv [][]byte) Flag {
	if cmd.FlagsFor != nil {
		return cmd.FlagsFor(c, argv)
	}
	return cmd.F
}

// IsWrite reports whether the command may change the keyspace or other
// replicated state (it goes through the applier).
func (cmd *Command) IsWrite() bool { return cmd.F&(FlagWrite|FlagScript|FlagMayReplicate) != 0 }

var table = map[string]*Command{}

// Register adds commands to the table. Each data-type file registers its
// commands from init; the server and the scripting package register theirs.
func Register(cmds ...*Command) {
	for _, cmd := range cmds {
		prepare(cmd)
		if _, dup := table[cmd.Name]; dup {
			panic("engine: command registered twice: " + cmd.Name)
		}
		table[cmd.Name] = cmd
		if h := fastHash([]byte(cmd.Name)); fastTable[h] == nil {
			fastTable[h] = cmd
		}
	}
}

func prepare(cmd *Command) {
	cmd.F = ParseFlags(cmd.Flags)
	attachMeta(cmd)
	cmd.ID = nextCommandID
	nextCommandID++
	if len(cmd.Subs) > 0 {
		cmd.subs = make(map[string]*Command, len(cmd.Subs))
		for _, s := range cmd.Subs {
			if !strings.Contains(s.Name, "|") {
				s.Name = cmd.Name + "|" + s.Name
			}
			prepare(s)
			cmd.subs[s.Name[strings.IndexByte(s.Name, '|')+1:]] = s
		}
	}
}

// fastTable is a direct-mapped cache in front of table: slot
// fastHash(name) holds the first command registered with that hash. A
// lookup hashes the name case-insensitively, compares one candidate and
// falls back to the map on a miss or collision, which saves the map probe
// (a fifth of the per-command CPU in profiles) for nearly every command.
var fastTable [1024]*Command

func fastHash(name []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		h ^= uint32(c)
		h *= 16777619
	}
	return h & uint32(len(fastTable)-1)
}

// equalLower reports whether name equals the lower-case lc, ignoring the
// case of ASCII letters in name.
func equalLower(name []byte, lc string) bool {
	if len(name) != len(lc) {
		return false
	}
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lc[i] {
			return false
		}
	}
	return true
}

// Lookup finds a command by name, case-insensitively, without allocating.
func Lookup(name []byte) *Command {
	if cmd := fastTable[fastHash(name)]; cmd != nil && equalLower(name, cmd.Name) {
		return cmd
	}
	var buf [32]byte
	if len(name) > len(buf) {
		return table[strings.ToLower(string(name))]
	}
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return table[string(buf[:len(name)])]
}

// Sub finds a subcommand of a container by name, case-insensitively.
func (cmd *Command) Sub(name []byte) *Command {
	if cmd.subs == nil {
		return nil
	}
	return cmd.subs[strings.ToLower(string(name))]
}

// Commands returns every top-level command, sorted by name.
func Commands() []*Command {
	out := make([]*Command, 0, len(table))
	for _, c := range table {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ArityOK reports whether argc arguments (name included) fit arity.
func ArityOK(arity, argc int) bool {
	if arity >= 0 {
		return argc == arity
	}
	return argc >= -arity
}

// Resolve finds the command (or subcommand) for argv and checks its arity.
// On failure it writes Redis's error to w and returns nil.
func (c *Ctx) Resolve(argv [][]byte) *Command {
	cmd := Lookup(argv[0])
	if cmd == nil {
		c.W.Error(ErrUnknownCommand(argv))
		return nil
	}
	if len(cmd.Subs) > 0 && len(argv) >= 2 {
		if sub := cmd.Sub(argv[1]); sub != nil {
			cmd = sub
		} else {
			c.W.Error(ErrUnknownSubcommand(argv[1], strings.ToUpper(cmd.Name)))
			return nil
		}
	}
	if !ArityOK(cmd.Arity, len(argv)) {
		c.W.Error(ErrWrongArgs(cmd.Name))
		return nil
	}
	return cmd
}

// Call executes a resolved command with its reply going to c.W. The caller
// holds the engine lock and has checked arity (Resolve).
func (c *Ctx) Call(cmd *Command, argv [][]byte) {
	c.Cmd = cmd
	if cmd.Run == nil {
		c.W.Error(ErrUnknownCommand(argv))
		return
	}
	if c.Eff != nil {
		c.callRecorded(cmd, argv)
		return
	}
	cmd.Run(c, argv)
}

// Exec resolves and runs argv. Used by MULTI/EXEC replay, scripts and
// the applier.
func (c *Ctx) Exec(argv [][]byte) {
	if cmd := c.Resolve(argv); cmd != nil {
		c.Call(cmd, argv)
	}
}
