package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"

	"limitdb/resp"
)

// EffectsVersion is the format version of an effect record: the RESP
// commands below, applied with Apply semantics (apply.go). A node that
// meets a record of a newer version refuses it.
const EffectsVersion = 1

// Effects is the effect stream of one unit (a command, a MULTI/EXEC block,
// a script call), as Redis 7.0 propagates it to its AOF and replicas: each
// write recorded in its deterministic form (SET … PXAT, PEXPIREAT, SREM of
// the members SPOP chose, DEL of a key found expired …), RESP-encoded, with
// a SELECT wherever the database changes after the first effect. DB is the
// database of the first effect: a record is self-contained given it.
//
// The rules are Redis's call()/alsoPropagate: a command that changed
// something (Stats.Dirty moved) propagates its own argv after it ran, unless
// it rewrote its effect (Rewrite) or suppressed it (PreventPropagation);
// effects a command adds while it runs (AlsoPropagate, a lazy expiry's DEL)
// come before it.
type Effects struct {
	B  []byte // the commands, RESP arrays of bulk strings
	N  int    // commands in B, SELECTs excluded
	DB int    // database of the first effect; -1 while there is none
	// NoMulti: the unit's effects go out without MULTI/EXEC even when
	// there are several (Redis's propagate_no_multi): the DELs of an
	// active-expiry step or an eviction, or of SCAN/RANDOMKEY run on
	// their own. Each of those is independent of the others.
	NoMulti bool

	cur int // database of the last effect
}

// Reset empties the stream for the next unit, keeping its buffer.
func (f *Effects) Reset() {
	f.B, f.N, f.DB, f.cur, f.NoMulti = f.B[:0], 0, -1, -1, false
}

// NewEffects returns an empty stream.
func NewEffects() *Effects { return &Effects{DB: -1, cur: -1} }

// begin starts an effect of n arguments in database db.
func (f *Effects) begin(db, n int) {
	if f.N == 0 {
		f.DB = db
	} else if db != f.cur {
		f.B = append(f.B, "*2\r\n$6\r\nSELECT\r\n"...)
		f.arg(strconv.AppendInt(nil, int64(db), 10))
	}
	f.cur = db
	f.N++
	f.B = appendLen(f.B, '*', n)
}

// appendLen appends a RESP length line: *n or $n and CRLF. Lengths under
// 100 (argument counts, keys, small values) are written digit by digit:
// with strconv, recording a SET's effect took 618 instructions, 366 so
// (valgrind --tool=lackey on BenchmarkEffectsSet); it was 5 % of the CPU
// at SET P=16.
func appendLen(b []byte, prefix byte, n int) []byte {
	switch {
	case n < 10:
		return append(b, prefix, '0'+byte(n), '\r', '\n')
	case n < 100:
		return append(b, prefix, '0'+byte(n/10), '0'+byte(n%10), '\r', '\n')
	}
	b = append(b, prefix)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

func (f *Effects) arg(a []byte) {
	f.B = append(appendLen(f.B, '$', len(a)), a...)
	f.B = append(f.B, '\r', '\n')
}

func (f *Effects) argStr(a string) {
	f.B = append(appendLen(f.B, '$', len(a)), a...)
	f.B = append(f.B, '\r', '\n')
}

// argInt appends an integer argument in decimal, without allocating. Its
// length (at most 20) is written by hand: limiter states are six integers
// per effect.
func (f *Effects) argInt(n int64) {
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], n, 10)
	f.B = append(f.B, '$')
	if len(d) >= 10 {
		f.B = append(f.B, '0'+byte(len(d)/10))
	}
	f.B = append(f.B, '0'+byte(len(d)%10), '\r', '\n')
	f.B = append(f.B, d...)
	f.B = append(f.B, '\r', '\n')
}

func (f *Effects) add(db int, argv [][]byte) {
	f.begin(db, len(argv))
	for _, a := range argv {
		f.arg(a)
	}
}

// Commands splits the stream into its commands (SELECTs included), for
// tests and tools; the slices alias B.
func (f *Effects) Commands() [][][]byte {
	var out [][][]byte
	r := resp.NewReader(bytes.NewReader(f.B))
	for r.Fill() == nil {
		for {
			argv, err := r.Next()
			if err != nil || argv == nil {
				break
			}
			cp := make([][]byte, len(argv))
			for i, a := range argv {
				cp[i] = append([]byte(nil), a...)
			}
			out = append(out, cp)
		}
	}
	return out
}

// --- what handlers call ---------------------------------------------------

// EffectArgs builds an effect's arguments: Rewrite and AlsoPropagate take
// one. Arguments are copied when the effect is recorded.
type EffectArgs []effectArg

type effectArg struct {
	b []byte
	s string
	n int64
	k uint8 // 0 bytes, 1 string, 2 integer
}

// Args starts an effect with its command name.
func Args(name string) EffectArgs { return EffectArgs{{s: name, k: 1}} }

// B appends a []byte argument.
func (a EffectArgs) B(b ...[]byte) EffectArgs {
	for _, x := range b {
		a = append(a, effectArg{b: x})
	}
	return a
}

// S appends string arguments.
func (a EffectArgs) S(s ...string) EffectArgs {
	for _, x := range s {
		a = append(a, effectArg{s: x, k: 1})
	}
	return a
}

// I appends an integer argument in decimal.
func (a EffectArgs) I(n int64) EffectArgs { return append(a, effectArg{n: n, k: 2}) }

func (f *Effects) addArgs(db int, a EffectArgs) {
	f.begin(db, len(a))
	var tmp [20]byte
	for _, x := range a {
		switch x.k {
		case 0:
			f.arg(x.b)
		case 1:
			f.argStr(x.s)
		default:
			f.arg(strconv.AppendInt(tmp[:0], x.n, 10))
		}
	}
}

// propState is a command's propagation state while it runs (Ctx.prop).
type propState struct {
	own     EffectArgs // the rewritten effect (Rewrite), when rewritten
	rewrote bool
	prevent bool
	force   bool // propagate even though nothing changed (FLUSHALL)
}

// Rewrite replaces the running command's own effect with a (Redis's
// rewriteClientCommandVector): it is recorded after the command, in the
// command's database, if the command changed something.
func (c *Ctx) Rewrite(a EffectArgs) {
	c.prop.own, c.prop.rewrote = a, true
}

// PreventPropagation suppresses the running command's own effect (Redis's
// preventCommandPropagation); effects it added stay.
func (c *Ctx) PreventPropagation() { c.prop.prevent = true }

// ForcePropagation records the running command's own effect even when it
// changed nothing (Redis's forceCommandPropagation: FLUSHALL and FLUSHDB of
// empty databases still reach replicas).
func (c *Ctx) ForcePropagation() { c.prop.force = true }

// own starts the running command's own effect of n arguments and returns
// the stream to write them into (f.argStr, f.arg, f.argInt), or nil when
// nothing is recorded. It is Rewrite without EffectArgs, so the hot
// commands rewrite without allocating; the caller writes exactly n
// arguments, calls it only once it has changed something and as its last
// step (Redis records the own effect after everything the command
// propagated while it ran).
func (c *Ctx) own(n int) *Effects {
	if c.Eff == nil {
		return nil
	}
	c.prop.prevent = true
	c.Eff.begin(c.DB.ID, n)
	return c.Eff
}

// ownDel makes DEL key the running command's own effect.
func (c *Ctx) ownDel(key []byte) {
	if f := c.own(2); f != nil {
		f.argStr("DEL")
		f.arg(key)
	}
}

// also starts an effect of n arguments recorded now, in the current
// database: AlsoPropagate without EffectArgs (no allocation), for effects
// a command emits one by one (SPOP's SREMs).
func (c *Ctx) also(n int) *Effects {
	if c.Eff == nil {
		return nil
	}
	c.Eff.begin(c.DB.ID, n)
	return c.Eff
}

// AlsoPropagate records an effect now, in the current database, before the
// running command's own (Redis's alsoPropagate).
func (c *Ctx) AlsoPropagate(a EffectArgs) {
	if c.Eff != nil {
		c.Eff.addArgs(c.DB.ID, a)
	}
}

// propagateDel records the DEL of a key deleted by expiry or eviction.
func (c *Ctx) propagateDel(db *DB, key string) {
	if c.Eff != nil {
		c.Eff.begin(db.ID, 2)
		c.Eff.argStr("DEL")
		c.Eff.argStr(key)
	}
}

// callRecorded runs a resolved command and records its own effect by
// Redis's rule (Effects). c.Eff is not nil.
func (c *Ctx) callRecorded(cmd *Command, argv [][]byte) {
	saved := c.prop
	c.prop = propState{}
	dirty := c.E.Stats.Dirty
	if cmd.F&FlagArbitraryKeys != 0 && !c.InScript && !c.InMulti {
		c.Eff.NoMulti = true
	}
	defer c.resyncOnPanic(cmd, argv)
	cmd.Run(c, argv)
	if (c.E.Stats.Dirty != dirty || c.prop.force) && !c.prop.prevent && cmd.F&FlagScript == 0 {
		if c.prop.rewrote {
			c.Eff.addArgs(c.DB.ID, c.prop.own)
		} else {
			c.Eff.add(c.DB.ID, argv)
		}
	}
	c.prop = saved
}

// PanicStack is what a contained panic carries past callRecorded: the
// original value and the stack where it happened (the re-panic would
// otherwise hide it).
type PanicStack struct {
	Value any
	Stack []byte
}

func (p *PanicStack) String() string { return fmt.Sprintf("%v\n%s", p.Value, p.Stack) }

// resyncOnPanic runs (deferred) after every recorded command: when its
// handler panicked, the command may have changed its keys half-way and
// recorded nothing of it, so each key it could have touched is recorded
// as its whole current state — DEL, then RESTORE of its DUMP with its
// absolute deadline — and followers end where this node is. A key whose
// value cannot even be serialised is deleted here and everywhere. Then
// the panic goes on to the caller's containment. (An open-coded defer:
// no cost measurable in BenchmarkEffects*, 0 allocs kept.)
func (c *Ctx) resyncOnPanic(cmd *Command, argv [][]byte) {
	r := recover()
	if r == nil {
		return
	}
	if _, ok := r.(*PanicStack); !ok {
		r = &PanicStack{Value: r, Stack: debug.Stack()}
	}
	db := c.DB
	it := cmd.Keys(argv)
	for {
		pos, _, ok := it.Next()
		if !ok {
			break
		}
		c.resyncKey(db, string(argv[pos]))
	}
	panic(r)
}

// resyncKey records key's whole state in db as effects.
func (c *Ctx) resyncKey(db *DB, key string) {
	c.Eff.begin(db.ID, 2)
	c.Eff.argStr("DEL")
	c.Eff.argStr(key)
	e := db.dict.find(key)
	if e == nil {
		return
	}
	payload, ok := c.E.safeDump(e)
	if !ok {
		db.removeEntry(e) // unreadable: gone here as on every follower
		return
	}
	c.Eff.begin(db.ID, 5)
	c.Eff.argStr("RESTORE")
	c.Eff.argStr(key)
	c.Eff.arg(strconv.AppendInt(nil, e.exp, 10))
	c.Eff.arg(payload)
	c.Eff.argStr("ABSTTL")
}

// safeDump is DUMP's payload of e, or false when serialising it panics
// (a value a panicking command left inconsistent).
func (e *Engine) safeDump(en *entry) (p []byte, ok bool) {
	defer func() {
		if recover() != nil {
			e.dumpW = nil
			p, ok = nil, false
		}
	}()
	return append([]byte(nil), e.dumpPayload(en)...), true
}

// --- records ----------------------------------------------------------------
//
// A record is one unit's effects as the log carries them: a header, then
// the effects as RESP arrays of bulk strings. The header is
//
//	'E' version db count clock
//
// the byte 'E' and four unsigned varints: the format version
// (EffectsVersion), the database of the first effect, the number of
// effects (SELECT, MULTI and EXEC not counted) and the unit's time in unix
// ms (Engine.ClockMs, which followers keep so that a new leader never
// runs a unit earlier than one already applied). The body is the stream
// as Redis 7.0 would write it to its AOF after a SELECT of that database:
// a unit of more than one effect is wrapped in MULTI … EXEC (unless
// Effects.NoMulti), a single effect goes out bare, and SELECT appears
// where the database changes.

// recordMagic starts every record; a bare RESP body ('*') is refused.
const recordMagic = 'E'

var (
	multiCmd = []byte("*1\r\n$5\r\nMULTI\r\n")
	execCmd  = []byte("*1\r\n$4\r\nEXEC\r\n")
)

// AppendRecord appends the record of one unit's effects f, executed at
// clockMs, to dst. A unit without effects has no record: the caller skips
// it (f.N == 0).
func AppendRecord(dst []byte, f *Effects, clockMs int64) []byte {
	db := f.DB
	if db < 0 {
		db = 0
	}
	dst = append(dst, recordMagic)
	dst = binary.AppendUvarint(dst, EffectsVersion)
	dst = binary.AppendUvarint(dst, uint64(db))
	dst = binary.AppendUvarint(dst, uint64(f.N))
	dst = binary.AppendUvarint(dst, uint64(max(clockMs, 0)))
	wrap := f.N > 1 && !f.NoMulti
	if wrap {
		dst = append(dst, multiCmd...)
	}
	dst = append(dst, f.B...)
	if wrap {
		dst = append(dst, execCmd...)
	}
	return dst
}

// RecordLen is the length of AppendRecord's record of f, so that a log
// can write its length before it (the cluster's entries) without encoding
// it twice.
func RecordLen(f *Effects, clockMs int64) int {
	n := 1 + uvarintLen(EffectsVersion) + uvarintLen(uint64(max(f.DB, 0))) +
		uvarintLen(uint64(f.N)) + uvarintLen(uint64(max(clockMs, 0))) + len(f.B)
	if f.N > 1 && !f.NoMulti {
		n += len(multiCmd) + len(execCmd)
	}
	return n
}

func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// RecordHeader is a record's header.
type RecordHeader struct {
	Version int
	DB      int
	Count   int
	ClockMs int64
}

// ParseRecordHeader splits a record into its header and its body (the
// RESP commands). A record of a newer version is refused: its body may
// mean something this node does not know.
func ParseRecordHeader(rec []byte) (RecordHeader, []byte, error) {
	var h RecordHeader
	if len(rec) == 0 || rec[0] != recordMagic {
		return h, nil, errors.New("effects record: bad header")
	}
	p := rec[1:]
	var v [4]uint64
	for i := range v {
		x, n := binary.Uvarint(p)
		if n <= 0 {
			return h, nil, errors.New("effects record: truncated header")
		}
		v[i], p = x, p[n:]
		if i == 0 && x > EffectsVersion {
			return h, nil, fmt.Errorf("effects record version %d is newer than this node's %d: upgrade it to apply the log", x, EffectsVersion)
		}
	}
	if v[0] < 1 || v[1] >= NumDBs || v[2] > uint64(len(p)) || v[3] > math.MaxInt64 {
		return h, nil, fmt.Errorf("effects record: bad header (version %d, db %d, count %d)", v[0], v[1], v[2])
	}
	h = RecordHeader{Version: int(v[0]), DB: int(v[1]), Count: int(v[2]), ClockMs: int64(v[3])}
	return h, p, nil
}
