package engine

import (
	"bytes"
	"strconv"

	"limitdb/resp"
)

// EffectsVersion is the format version of an effect record: the RESP
// commands below, applied with Apply semantics (applymode.go). A node that
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

	cur int // database of the last effect
}

// Reset empties the stream for the next unit, keeping its buffer.
func (f *Effects) Reset() {
	f.B, f.N, f.DB, f.cur = f.B[:0], 0, -1, -1
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
	f.B = append(f.B, '*')
	f.B = strconv.AppendInt(f.B, int64(n), 10)
	f.B = append(f.B, '\r', '\n')
}

func (f *Effects) arg(a []byte) {
	f.B = append(f.B, '$')
	f.B = strconv.AppendInt(f.B, int64(len(a)), 10)
	f.B = append(f.B, '\r', '\n')
	f.B = append(f.B, a...)
	f.B = append(f.B, '\r', '\n')
}

func (f *Effects) argStr(a string) {
	f.B = append(f.B, '$')
	f.B = strconv.AppendInt(f.B, int64(len(a)), 10)
	f.B = append(f.B, '\r', '\n')
	f.B = append(f.B, a...)
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
	cmd.Run(c, argv)
	if c.E.Stats.Dirty != dirty && !c.prop.prevent && cmd.F&FlagScript == 0 {
		if c.prop.rewrote {
			c.Eff.addArgs(c.DB.ID, c.prop.own)
		} else {
			c.Eff.add(c.DB.ID, argv)
		}
	}
	c.prop = saved
}
