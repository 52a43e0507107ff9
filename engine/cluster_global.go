package engine

import (
	"strconv"
	"strings"
)

// Cluster-wide state over several groups (issue 22): the policy registry
// with its overrides, the ACL users, the script cache, the function
// libraries and the cluster-wide CONFIG parameters are one state for the
// whole cluster. The directory group holds it: every change runs there
// (the server forwards it to the directory's leader), and its leader then
// pushes the whole state to every other group, each of which applies it
// as one unit of its own log (LIMITDB.GLOBAL LOAD). The state is ordered
// by a version the directory's engine keeps (Global.Ver): the directory's
// leader stamps a new version (LIMITDB.GLOBAL STAMP, recording the
// content's digest) whenever the content's digest is no longer the one
// it stamped, and a group applies a push only when its version is newer
// than the one it holds, so a late or repeated push never takes a group
// back. Both effects read nothing but their arguments and the state.

// Global is the group's version of the cluster-wide state.
type Global struct {
	// Ver is the version the group holds: in the directory group the
	// last stamped one, in another group the last push it applied (0:
	// none).
	Ver int64
	// Digest is the content's digest at Ver (GlobalContent's).
	Digest uint64
	// Scripts is, in a group that applied pushes, the digest of the
	// scripts-and-functions part it last applied: a push whose part is
	// the same leaves the group's own cache (its EVAL-cached scripts) and
	// interpreter alone.
	Scripts uint64
}

// auxGlobal is Global in a snapshot ("ver digest scripts"), absent while
// Ver is 0.
const auxGlobal = "limitdb-global"

// ErrClusterWideHere refuses a cluster-wide change (RL.POLICY's writes
// and the like) inside a script or MULTI block of a group other than the
// directory in a cluster of several groups: it would change that group
// alone, and the directory's next push would undo it.
const ErrClusterWideHere = "ERR cluster-wide state (policies, users, scripts, functions, cluster-wide parameters) changes only outside scripts and MULTI in a cluster of several groups"

const (
	errGlobalContent = "ERR LIMITDB.GLOBAL LOAD content is malformed"
	errGlobalVersion = "ERR LIMITDB.GLOBAL version must be a positive integer"
	errGlobalDigest  = "ERR LIMITDB.GLOBAL digest must be an unsigned integer"
)

func init() {
	const flags = "write admin noscript loading stale"
	Register(&Command{Name: "limitdb.global", Arity: -2, Group: "server", Since: "1.0.0", Summary: "The effect form of the cluster-wide state of several groups (cluster mode).", Subs: []*Command{
		{Name: "stamp", Arity: 3, Flags: flags, Group: "server", Since: "1.0.0", Summary: "Gives the cluster-wide state of the directory group a new version (an effect).", Run: cmdGlobalStamp},
		{Name: "load", Arity: 4, Flags: flags, Group: "server", Since: "1.0.0", Summary: "Replaces the group's cluster-wide state by a newer version pushed by the directory group (an effect).", Run: cmdGlobalLoad},
		{Name: "live", Arity: -4, Flags: flags, Group: "server", Since: "1.0.0", Summary: "Raises policies' live deadlines to those other groups' keys have (an effect).", Run: cmdGlobalLive},
	}})
}

// GlobalOf is the group's version record (lock held).
func (e *Engine) GlobalOf() Global { return e.global }

// SeveralGroups reports whether this group is in a cluster of more than
// one group (lock held): a member with an index, or the directory group
// with another group beside it.
func (e *Engine) SeveralGroups() bool {
	d := e.dir
	return d != nil && (d.rec.Index > 0 || (d.rec.Directory && len(d.groups) > 1))
}

// ElsewhereClusterWide reports whether cluster-wide changes belong to
// another group than this one (lock held): what a script or MULTI block
// here may not change.
func (e *Engine) ElsewhereClusterWide() bool { return e.dir != nil && e.dir.rec.Index > 0 }

// GlobalContent is the cluster-wide state as LIMITDB.GLOBAL LOAD takes it
// (netstrings), and its digest (lock held): the registry (each policy's
// record without its live deadline, which is the keys' and so each
// group's own), the users (aclfile form), the seven cluster-wide
// parameters, the cached scripts' bodies in SHA order and the libraries'
// code in name order.
func (e *Engine) GlobalContent() (string, uint64) {
	var w policyEnc
	r := &e.Policies
	w.int(r.Version)
	names := r.Names()
	w.int(int64(len(names)))
	for _, n := range names {
		p := *r.m[n]
		p.LiveUntil = 0
		w.str(encodePolicy(&p))
	}
	w.str(e.Settings.ACL)
	l := &e.Enc
	for _, v := range [...]int64{l.HashMaxListpackEntries, l.HashMaxListpackValue, l.SetMaxIntsetEntries,
		l.ZsetMaxListpackEntries, l.ZsetMaxListpackValue, l.ProtoMaxBulkLen, int64(e.Notify)} {
		w.int(v)
	}
	var bodies, libs []string
	if scriptsCodec.Save != nil {
		for _, f := range scriptsCodec.Save(e.Scripts) {
			if f.Key == "lua" {
				bodies = append(bodies, f.Value)
			}
		}
	}
	if scriptsCodec.Functions != nil {
		libs = scriptsCodec.Functions(e.Scripts)
	}
	w.int(int64(len(bodies)))
	for _, b := range bodies {
		w.str(b)
	}
	w.int(int64(len(libs)))
	for _, c := range libs {
		w.str(c)
	}
	return string(w.b), crc64Update(0, w.b)
}

// globalContent is GlobalContent decoded.
type globalContent struct {
	reg          Policies
	acl          string
	conf         [7]int64
	scripts      []string
	libs         []string
	scriptDigest uint64 // of the scripts and libraries part
}

func decodeGlobal(s string) (*globalContent, bool) {
	d := &policyDec{s: s}
	g := &globalContent{reg: Policies{Version: d.int()}}
	n := d.int()
	if d.err || g.reg.Version < 0 || n < 0 || n > int64(len(s)) {
		return nil, false
	}
	for range n {
		ok, err := g.reg.loadAux(auxPolicy, d.str())
		if d.err || !ok || err != nil {
			return nil, false
		}
	}
	g.acl = d.str()
	for i := range g.conf {
		g.conf[i] = d.int()
		if g.conf[i] < 0 {
			d.err = true
		}
	}
	part := d.s
	for _, dst := range [...]*[]string{&g.scripts, &g.libs} {
		n := d.int()
		if d.err || n < 0 || n > int64(len(s)) {
			return nil, false
		}
		for range n {
			*dst = append(*dst, d.str())
		}
	}
	if d.err || d.s != "" {
		return nil, false
	}
	g.scriptDigest = crc64Update(0, []byte(part))
	return g, true
}

// globalConfNames are the parameters of the content's seven values, in
// order, as the server's CONFIG names them.
var globalConfNames = [7]string{"hash-max-listpack-entries", "hash-max-listpack-value", "set-max-intset-entries",
	"zset-max-listpack-entries", "zset-max-listpack-value", "proto-max-bulk-len", "notify-keyspace-events"}

// cmdGlobalStamp: LIMITDB.GLOBAL STAMP digest — the directory group's
// cluster-wide state (whose digest the leader computed) takes the next
// version. Reply: the version.
func cmdGlobalStamp(c *Ctx, argv [][]byte) {
	dg, err := strconv.ParseUint(string(argv[2]), 10, 64)
	if err != nil {
		c.W.Error(errGlobalDigest)
		return
	}
	c.E.global.Ver++
	c.E.global.Digest = dg
	c.E.Stats.Dirty++
	c.W.Int(c.E.global.Ver)
}

// cmdGlobalLoad: LIMITDB.GLOBAL LOAD version content — when version is
// newer than the group's, the group's cluster-wide state becomes
// content's, all parts in this one unit: the registry (each policy keeps
// this group's live deadline and counters), the users (through the
// server, which validates them as ACL LOAD does: on error nothing
// changes), the parameters, and — only when that part differs from the
// last one applied — the script cache and libraries (a new scripting
// state from them, keeping the group's math.random state). An older or
// equal version changes nothing. Reply: the version the group holds.
func cmdGlobalLoad(c *Ctx, argv [][]byte) {
	ver, err := strconv.ParseInt(string(argv[2]), 10, 64)
	if err != nil || ver <= 0 {
		c.W.Error(errGlobalVersion)
		return
	}
	e := c.E
	if ver <= e.global.Ver {
		c.W.Int(e.global.Ver)
		return
	}
	g, ok := decodeGlobal(string(argv[3]))
	if !ok {
		c.W.Error(errGlobalContent)
		return
	}
	var scripts any
	rebuild := g.scriptDigest != e.global.Scripts && scriptsCodec.Load != nil
	if rebuild {
		var fields []AuxField
		if scriptsCodec.Save != nil {
			for _, f := range scriptsCodec.Save(e.Scripts) {
				if f.Key != "lua" {
					fields = append(fields, f) // the generator's state stays the group's
				}
			}
		}
		for _, b := range g.scripts {
			fields = append(fields, AuxField{Key: "lua", Value: b})
		}
		if scripts, err = scriptsCodec.Load(fields, g.libs); err != nil {
			c.W.Error(errGlobalContent + ": " + err.Error())
			return
		}
	}
	if g.acl != "" && g.acl != e.Settings.ACL {
		if f := e.Settings.OnACL; f != nil {
			if err := f(g.acl); err != nil {
				c.W.Error("ERR " + err.Error())
				return
			}
		}
		e.Settings.ACL = g.acl
	}
	for name, p := range g.reg.m {
		if old := e.Policies.m[name]; old != nil {
			p.LiveUntil = old.LiveUntil
		}
	}
	g.reg.adoptStats(&e.Policies)
	e.Policies = g.reg
	for i, name := range globalConfNames {
		e.SetEncodingLimit(name, g.conf[i])
		if f := e.Settings.OnConfig; f != nil {
			f(name, strconv.FormatInt(g.conf[i], 10))
		}
	}
	if rebuild {
		e.Scripts = scripts
		e.global.Scripts = g.scriptDigest
	}
	e.global.Ver = ver
	e.global.Digest = crc64Update(0, argv[3])
	e.Stats.Dirty++
	c.W.Int(ver)
}

// encodeGlobal is Global's aux value ("" when Ver is 0).
func encodeGlobal(g Global) string {
	if g.Ver == 0 {
		return ""
	}
	return strconv.FormatInt(g.Ver, 10) + " " + strconv.FormatUint(g.Digest, 10) + " " + strconv.FormatUint(g.Scripts, 10)
}

func decodeGlobalAux(v string) (Global, bool) {
	f := strings.Fields(v)
	if len(f) != 3 {
		return Global{}, false
	}
	ver, err1 := strconv.ParseInt(f[0], 10, 64)
	dg, err2 := strconv.ParseUint(f[1], 10, 64)
	sc, err3 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || ver <= 0 {
		return Global{}, false
	}
	return Global{Ver: ver, Digest: dg, Scripts: sc}, true
}

// PolicyLive is a policy's live deadline (LiveUntil).
type PolicyLive struct {
	Name  string
	Until int64
}

// LiveDeadlines are the policies' live deadlines that are set, in name
// order (lock held): what a member group reports to the directory.
func (e *Engine) LiveDeadlines() []PolicyLive {
	var out []PolicyLive
	for _, n := range e.Policies.Names() {
		if p := e.Policies.m[n]; p.LiveUntil > 0 {
			out = append(out, PolicyLive{n, p.LiveUntil})
		}
	}
	return out
}

// LiveRaises is the part of reported deadlines that would raise this
// registry's (lock held), as LIMITDB.GLOBAL LIVE's arguments.
func (e *Engine) LiveRaises(reported []PolicyLive) [][]byte {
	var args [][]byte
	for _, l := range reported {
		if p := e.Policies.m[l.Name]; p != nil && l.Until > p.LiveUntil {
			args = append(args, []byte(l.Name), strconv.AppendInt(nil, l.Until, 10))
		}
	}
	return args
}

// cmdGlobalLive: LIMITDB.GLOBAL LIVE name deadline [name deadline …] —
// in the directory group, each named policy's live deadline becomes at
// least the one given (the latest deadline of the policy's keys in other
// groups, as they report it), so that the live-keys refusals of RL.POLICY
// SET and DEL count every group's keys; unknown names are skipped. Reply
// +OK.
func cmdGlobalLive(c *Ctx, argv [][]byte) {
	if len(argv)%2 != 0 {
		c.W.Error(ErrSyntax)
		return
	}
	until := make([]int64, 0, len(argv)/2)
	for i := 2; i < len(argv); i += 2 {
		v, ok := ParseIntB(argv[i+1])
		if !ok {
			c.W.Error(ErrSyntax)
			return
		}
		until = append(until, v)
	}
	for i := 2; i < len(argv); i += 2 {
		if p := c.E.Policies.m[string(argv[i])]; p != nil && until[i/2-1] > p.LiveUntil {
			p.LiveUntil = until[i/2-1]
			c.E.Stats.Dirty++
		}
	}
	c.W.OK()
}
