package engine

import (
	"math"
	"slices"
	"strconv"

	"limitdb/ratelimit"
)

// Named rate-limit policies: RL.POLICY SET/GET/DEL/LIST/HISTORY, and the
// registry RL.ALLOW … POLICY name and RL.PEEK … POLICY name decide with.
//
// The registry is replicated state beside the keyspace, like the function
// libraries and the ACL: no database holds it, so FLUSHALL leaves it and
// SCAN, KEYS and DBSIZE do not see it. Each change is one unit whose
// effect is LIMITDB.POLICY PUT (the whole new record, with its version,
// times and user, so that applying it reads no clock), LIMITDB.POLICY
// DEL, OVERRIDE/UNOVERRIDE (policy_override.go) or, for APPLY and
// RESTORE, LOAD of the whole registry (policy_apply.go); executor and followers run the same code (putPolicy, delPolicy), so
// the history each keeps is the same. Snapshots carry the registry as aux
// fields (policyAux*), which Redis 7.0 skips.
//
// Versions come from one registry-wide counter (Policies.Version): each
// change takes the next value, so a policy's versions increase, and a
// name deleted and created again never reuses a version an IFVERSION may
// still hold.
//
// A key does not name the policy it was decided under. What the registry
// knows is LiveUntil, the latest deadline of a key an RL.ALLOW under the
// policy stored (the RL.SET effect carries POLICY name, so followers
// raise it too): a limiter is full, the same as absent, from its
// deadline on, so before LiveUntil the policy may have live keys and
// after it has none. RL.POLICY SET refuses an ALGO change while keys may
// be live unless RESETKEYS, RL.POLICY DEL refuses while keys may be live
// unless FORCE.

// PolicyHistoryMax is how many changes a policy's history keeps.
const PolicyHistoryMax = 16

// Bounds on what a policy holds, so that a record stays small (it is in
// every snapshot and, later, in metric labels).
const (
	policyNameMax = 128
	policyDescMax = 1024
	// PolicyNearDefault is NEAR's default: the share of the capacity in use
	// at which a decision counts as near the limit (envoyproxy/ratelimit's
	// near-limit ratio).
	PolicyNearDefault = 0.8
)

const (
	errPolicyName    = "ERR policy name must be 1 to 128 bytes"
	errPolicyDesc    = "ERR description must be at most 1024 bytes"
	errPolicyNear    = "ERR near must be a number above 0 and at most 1"
	errPolicyVersion = "ERR version must be a non-negative integer"
	errPolicyNeed    = "ERR RL.POLICY SET needs LIMIT and PERIOD"
	errPolicyCount   = "ERR count must be a positive integer"
	errPolicyEffect  = "ERR invalid policy record"
)

// RLPolicy is one named policy.
type RLPolicy struct {
	Name      string
	Params    ratelimit.Params
	Shadow    bool
	Near      float64
	Desc      string
	Version   int64
	CreatedMs int64
	UpdatedMs int64
	UpdatedBy string // the ACL user of the last change
	// ResetMs is the time of the last change made with RESETKEYS (0:
	// never): from then on a key decided under the policy that holds
	// another algorithm starts full at its next call instead of being
	// refused.
	ResetMs int64
	// LiveUntil is the latest deadline of a key stored under the policy.
	LiveUntil int64
	History   []PolicyChange // oldest first, at most PolicyHistoryMax
	// Overrides are the per-subject limits (policy_override.go): the
	// limited key → its LIMIT and PERIOD; nil when there are none, so
	// that a decision without overrides makes no lookup.
	Overrides map[string]PolicyOverride
	// stats are the node-local decision counters and sketch
	// (rl_stats.go), nil until a call is counted; not replicated.
	stats *rlStats
}

// PolicyChange is one entry of a policy's history: the policy as a change
// left it.
type PolicyChange struct {
	Version   int64
	Ms        int64
	By        string
	Params    ratelimit.Params
	Shadow    bool
	Near      float64
	Desc      string
	ResetKeys bool
}

// Policies is the registry.
type Policies struct {
	m map[string]*RLPolicy
	// Version is the last version given to a change.
	Version int64
}

// Get returns the policy named name, nil when there is none.
func (r *Policies) Get(name []byte) *RLPolicy { return r.m[bstr(name)] }

// Len is the number of policies.
func (r *Policies) Len() int { return len(r.m) }

// Names returns the policy names in byte order.
func (r *Policies) Names() []string {
	out := make([]string, 0, len(r.m))
	for n := range r.m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// put installs p (a new record: version, params, times, user), keeping the
// old record's LiveUntil and history, and appends the change to the
// history. resetKeys: the change was made with RESETKEYS.
func (r *Policies) put(p *RLPolicy, resetKeys bool) {
	if r.m == nil {
		r.m = make(map[string]*RLPolicy)
	}
	if old := r.m[p.Name]; old != nil {
		p.LiveUntil = old.LiveUntil
		p.History = old.History
		p.Overrides = old.Overrides
		p.stats = old.stats
		if !resetKeys {
			p.ResetMs = old.ResetMs
		}
	}
	if resetKeys {
		p.ResetMs = p.UpdatedMs
	}
	ch := PolicyChange{Version: p.Version, Ms: p.UpdatedMs, By: p.UpdatedBy, Params: p.Params, Shadow: p.Shadow, Near: p.Near, Desc: p.Desc, ResetKeys: resetKeys}
	if len(p.History) >= PolicyHistoryMax {
		p.History = slices.Delete(p.History, 0, len(p.History)-PolicyHistoryMax+1)
	}
	p.History = append(p.History, ch)
	r.m[p.Name] = p
	r.Version = max(r.Version, p.Version)
}

// raiseLive records that a key under the named policy lives until
// deadline (RL.ALLOW on the executor, RL.SET … POLICY name applied).
func (r *Policies) raiseLive(name []byte, deadline int64) {
	if p := r.m[bstr(name)]; p != nil && deadline > p.LiveUntil {
		p.LiveUntil = deadline
	}
}

func init() {
	Register(
		&Command{Name: "rl.policy", Arity: -2, Group: "ratelimit", Since: "1.0.0", Summary: "A container for named rate-limit policy commands.", Subs: []*Command{
			{Name: "set", Arity: -3, Flags: "write denyoom noeffect", Group: "ratelimit", Since: "1.0.0", Summary: "Creates or replaces a named policy; returns its new version.", Run: cmdPolicySet},
			{Name: "get", Arity: 3, Flags: "readonly fast", Group: "ratelimit", Since: "1.0.0", Summary: "Returns a policy's parameters, version and last change.", Run: cmdPolicyGet},
			{Name: "del", Arity: -3, Flags: "write noeffect", Group: "ratelimit", Since: "1.0.0", Summary: "Deletes a named policy.", Run: cmdPolicyDel},
			{Name: "list", Arity: -2, Flags: "readonly", Group: "ratelimit", Since: "1.0.0", Summary: "Lists the policy names, optionally those matching a pattern.", Run: cmdPolicyList},
			{Name: "history", Arity: -3, Flags: "readonly", Group: "ratelimit", Since: "1.0.0", Summary: "Returns a policy's recent changes, newest first.", Run: cmdPolicyHistory},
			{Name: "apply", Arity: -2, Flags: "write denyoom noeffect", Group: "ratelimit", Since: "1.0.0", Summary: "Replaces the whole registry with a set of policies, atomically; returns the diff.", Run: cmdPolicyApply},
			{Name: "override", Arity: -7, Flags: "write denyoom noeffect", Group: "ratelimit", Since: "1.0.0", Summary: "Gives one subject (limited key) of a policy its own limit.", Run: cmdPolicyOverride},
			{Name: "unoverride", Arity: 5, Flags: "write noeffect", Group: "ratelimit", Since: "1.0.0", Summary: "Removes a subject's override of a policy.", Run: cmdPolicyUnoverride},
			{Name: "overrides", Arity: 3, Flags: "readonly", Group: "ratelimit", Since: "1.0.0", Summary: "Lists a policy's per-subject overrides.", Run: cmdPolicyOverrides},
			{Name: "dump", Arity: 2, Flags: "readonly", Group: "ratelimit", Since: "1.0.0", Summary: "Serializes the whole registry into one checksummed payload.", Run: cmdPolicyDump},
			{Name: "restore", Arity: -3, Flags: "write denyoom noeffect", Group: "ratelimit", Since: "1.0.0", Summary: "Replaces the registry with a payload of RL.POLICY DUMP.", Run: cmdPolicyRestore},
		}},
		&Command{Name: "limitdb.policy", Arity: -2, Group: "server", Since: "1.0.0", Summary: "The effect form of RL.POLICY changes.", Subs: []*Command{
			{Name: "put", Arity: 15, Flags: "write admin noscript loading stale", Group: "server", Since: "1.0.0", Summary: "Installs a policy record (an effect: how RL.POLICY SET replicates).", Run: cmdLimitdbPolicyPut},
			{Name: "del", Arity: 3, Flags: "write admin noscript loading stale", Group: "server", Since: "1.0.0", Summary: "Deletes a policy (an effect: how RL.POLICY DEL replicates).", Run: cmdLimitdbPolicyDel},
			{Name: "load", Arity: 3, Flags: "write admin noscript loading stale", Group: "server", Since: "1.0.0", Summary: "Replaces the whole registry (an effect: how RL.POLICY APPLY and RESTORE replicate).", Run: cmdLimitdbPolicyLoad},
			{Name: "override", Arity: 9, Flags: "write admin noscript loading stale", Group: "server", Since: "1.0.0", Summary: "Sets a subject's override (an effect: how RL.POLICY OVERRIDE replicates).", Run: cmdLimitdbPolicyOverride},
			{Name: "unoverride", Arity: 7, Flags: "write admin noscript loading stale", Group: "server", Since: "1.0.0", Summary: "Removes a subject's override (an effect: how RL.POLICY UNOVERRIDE replicates).", Run: cmdLimitdbPolicyUnoverride},
		}},
	)
}

// userNamer is implemented by the server's client (Ctx.ACL): the ACL user
// a change is attributed to.
type userNamer interface{ UserName() string }

// userName is the ACL user running the command ("default" without one:
// tests, the engine alone).
func (c *Ctx) userName() string {
	if u, ok := c.ACL.(userNamer); ok {
		return u.UserName()
	}
	return "default"
}

// PolicyChannel is the Pub/Sub channel every registry change is announced
// on: "set <name> <version>", "del <name>", "apply <version>", "restore
// <version>", "override <name> <version> <subject>", "unoverride <name>
// <version> <subject>". It is not a __keyspace@ channel (no key changed)
// and does not depend on notify-keyspace-events: changes are rare and an
// operator watching them should not have to turn on a flood of key events.
const PolicyChannel = "__limitdb__:policy"

// notifyPolicy publishes msg on PolicyChannel. Like a keyspace event it
// reveals its unit's change, so a replicating node holds it back until
// the change is committed; the server hands it to the other nodes of a
// cluster, whose followers apply effects without a Publisher.
func (c *Ctx) notifyPolicy(msg string) {
	if c.Pub != nil {
		c.Pub.Publish([]byte(PolicyChannel), []byte(msg), c.pubFlags(PubEvent))
	}
}

// ErrNoSuchPolicy is the error for a name that is no policy.
func ErrNoSuchPolicy(name []byte) string { return errNoSuchPolicy(name) }

func errNoSuchPolicy(name []byte) string {
	return "ERR no such policy '" + string(name) + "'"
}

// checkVersion is IFVERSION's compare-and-set check of p, the policy
// named name (nil: none, version 0) against want (-1: no IFVERSION); on a
// mismatch it writes the error and returns false.
func (c *Ctx) checkVersion(name []byte, p *RLPolicy, want int64) bool {
	if want < 0 {
		return true
	}
	var have int64
	if p != nil {
		have = p.Version
	}
	if have != want {
		c.W.Error("ERR version mismatch: policy '" + string(name) + "' is at version " + strconv.FormatInt(have, 10) +
			", IFVERSION " + strconv.FormatInt(want, 10) + " (nothing changed)")
		return false
	}
	return true
}

// changeOpts are the options of a change of the registry: IFVERSION v,
// DRYRUN, RESETKEYS, FORCE (RL.POLICY DEL takes IFVERSION and FORCE).
type changeOpts struct {
	ifVersion             int64 // -1: none
	dry, resetKeys, force bool
}

// parseChangeOpts parses changeOpts from args up to their end or, with
// stop, the word POLICY; n is how many it took.
func (c *Ctx) parseChangeOpts(args [][]byte, stop bool) (o changeOpts, n int, ok bool) {
	o.ifVersion = -1
	for ; n < len(args) && !(stop && EqualFold(args[n], "policy")); n++ {
		switch {
		case EqualFold(args[n], "dryrun"):
			o.dry = true
		case EqualFold(args[n], "resetkeys"):
			o.resetKeys = true
		case EqualFold(args[n], "force"):
			o.force = true
		case EqualFold(args[n], "ifversion") && n+1 < len(args):
			n++
			if o.ifVersion, ok = c.parseVersion(args[n]); !ok {
				return o, n, false
			}
		default:
			c.W.Error(ErrSyntax)
			return o, n, false
		}
	}
	return o, n, true
}

// parseVersion parses IFVERSION's value, writing the error when it is not
// a non-negative integer.
func (c *Ctx) parseVersion(b []byte) (int64, bool) {
	v, ok := ParseIntB(b)
	if !ok || v < 0 {
		c.W.Error(errPolicyVersion)
		return 0, false
	}
	return v, true
}

// policyOrErr returns the policy named name, or writes "no such policy"
// and returns nil.
func (c *Ctx) policyOrErr(name []byte) *RLPolicy {
	p := c.E.Policies.Get(name)
	if p == nil {
		c.W.Error(errNoSuchPolicy(name))
	}
	return p
}

func validPolicyName(name []byte) bool { return len(name) >= 1 && len(name) <= policyNameMax }

// parseNear parses NEAR's ratio: a number in (0, 1].
func parseNear(b []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || !(f > 0 && f <= 1) {
		return 0, false
	}
	return f, true
}

func formatNear(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// policySpec is one policy as RL.POLICY SET or one POLICY of RL.POLICY
// APPLY gives it.
type policySpec struct {
	p         *RLPolicy
	resetKeys bool
	ifVersion int64 // -1: no IFVERSION
}

// parsePolicySpec parses name's options LIMIT n PERIOD ms [ALGO a] [BURST
// b] [SHADOW] [NEAR ratio] [DESC text] [IFVERSION v] [RESETKEYS] from
// opts, up to their end or, with stop, the word POLICY in the place of an
// option (RL.POLICY APPLY's next policy); n is how many it took. Options
// left out take their defaults: gcra, burst 0, enforcing, near 0.8, no
// description. ok=false after writing the error.
func (c *Ctx) parsePolicySpec(name []byte, opts [][]byte, stop bool) (s policySpec, n int, ok bool) {
	if !validPolicyName(name) {
		c.W.Error(errPolicyName)
		return s, 0, false
	}
	p := &RLPolicy{Name: string(name), Near: PolicyNearDefault}
	s = policySpec{p: p, ifVersion: -1}
	var haveLimit, havePeriod bool
	i := 0
opts:
	for ; i < len(opts); i++ {
		o := opts[i]
		switch {
		case stop && EqualFold(o, "policy"):
			break opts
		case EqualFold(o, "shadow"):
			p.Shadow = true
			continue
		case EqualFold(o, "resetkeys"):
			s.resetKeys = true
			continue
		}
		if i+1 >= len(opts) {
			c.W.Error(ErrSyntax)
			return s, 0, false
		}
		i++
		v := opts[i]
		switch {
		case EqualFold(o, "limit"):
			if p.Params.Limit, ok = ParseIntB(v); !ok || p.Params.Limit <= 0 {
				c.W.Error(ratelimit.ErrLimit)
				return s, 0, false
			}
			haveLimit = true
		case EqualFold(o, "period"):
			if p.Params.Period, ok = ParseIntB(v); !ok || p.Params.Period <= 0 {
				c.W.Error(ratelimit.ErrPeriod)
				return s, 0, false
			}
			havePeriod = true
		case EqualFold(o, "algo"):
			if p.Params.Algo, ok = ratelimit.ParseAlgo(v); !ok {
				c.W.Error(errRLAlgo)
				return s, 0, false
			}
		case EqualFold(o, "burst"):
			if p.Params.Burst, ok = ParseIntB(v); !ok || p.Params.Burst < 0 {
				c.W.Error(ratelimit.ErrBurst)
				return s, 0, false
			}
		case EqualFold(o, "near"):
			if p.Near, ok = parseNear(v); !ok {
				c.W.Error(errPolicyNear)
				return s, 0, false
			}
		case EqualFold(o, "desc"):
			if len(v) > policyDescMax {
				c.W.Error(errPolicyDesc)
				return s, 0, false
			}
			p.Desc = string(v)
		case EqualFold(o, "ifversion"):
			if s.ifVersion, ok = c.parseVersion(v); !ok {
				return s, 0, false
			}
		default:
			c.W.Error(ErrSyntax)
			return s, 0, false
		}
	}
	if !haveLimit || !havePeriod {
		c.W.Error(errPolicyNeed)
		return s, 0, false
	}
	if msg := p.Params.Validate(); msg != "" {
		c.W.Error(msg)
		return s, 0, false
	}
	return s, i, true
}

// checkReplace checks that s may replace old (nil: a new policy): an ALGO
// change while keys of the policy may be live needs RESETKEYS (reset),
// and each override of old must fit the new parameters. On a refusal it
// writes the error and returns false.
func (c *Ctx) checkReplace(old *RLPolicy, p *RLPolicy, reset bool) bool {
	if old == nil {
		return true
	}
	if old.Params.Algo != p.Params.Algo && old.LiveUntil > c.Now && !reset {
		c.W.Error("ERR policy '" + old.Name + "' may have live keys of algorithm " + old.Params.Algo.String() +
			": changing ALGO needs RESETKEYS")
		return false
	}
	return c.checkOverrides(p, old.Overrides)
}

// stamp gives p (replacing old, nil: none) version v and the change's
// time and user.
func (c *Ctx) stamp(p, old *RLPolicy, v int64) {
	p.Version = v
	p.UpdatedMs, p.UpdatedBy = c.Now, c.userName()
	p.CreatedMs = c.Now
	if old != nil {
		p.CreatedMs = old.CreatedMs
	}
}

// cmdPolicySet: RL.POLICY SET name LIMIT n PERIOD ms [ALGO a] [BURST b]
// [SHADOW] [NEAR ratio] [DESC text] [IFVERSION v] [RESETKEYS] — creates or
// replaces the policy (parsePolicySpec; its overrides stay). Reply: the
// new version. IFVERSION v: only if the policy is at version v (0: only
// if it does not exist). An ALGO change while keys of the policy may be
// live needs RESETKEYS. The effect is LIMITDB.POLICY PUT of the new
// record; the notification "set <name> <version>".
func cmdPolicySet(c *Ctx, argv [][]byte) {
	name := argv[2]
	s, _, ok := c.parsePolicySpec(name, argv[3:], false)
	if !ok {
		return
	}
	p := s.p
	old := c.E.Policies.Get(name)
	if !c.checkVersion(name, old, s.ifVersion) || !c.checkReplace(old, p, s.resetKeys) {
		return
	}
	c.stamp(p, old, c.E.Policies.Version+1)
	c.E.Policies.put(p, s.resetKeys)
	c.E.Stats.Dirty++
	c.Rewrite(policyPutArgs(p, s.resetKeys))
	c.notifyPolicy("set " + p.Name + " " + strconv.FormatInt(p.Version, 10))
	c.W.Int(p.Version)
}

// policyPutArgs is the effect of a change: LIMITDB.POLICY PUT name version
// created_ms updated_ms updated_by algo limit period burst shadow near
// resetkeys desc.
func policyPutArgs(p *RLPolicy, resetKeys bool) EffectArgs {
	return Args("LIMITDB.POLICY").S("PUT", p.Name).I(p.Version).I(p.CreatedMs).I(p.UpdatedMs).S(p.UpdatedBy, p.Params.Algo.String()).
		I(p.Params.Limit).I(p.Params.Period).I(p.Params.Burst).I(b2i(p.Shadow)).S(formatNear(p.Near)).I(b2i(resetKeys)).S(p.Desc)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// cmdLimitdbPolicyPut: LIMITDB.POLICY PUT … (policyPutArgs) — installs the
// record as RL.POLICY SET did on the executing node. Reply +OK; a record
// that does not hold a valid policy is an error (ERR invalid policy
// record, or the parameter's own error).
func cmdLimitdbPolicyPut(c *Ctx, argv [][]byte) {
	p := &RLPolicy{Name: string(argv[2]), UpdatedBy: string(argv[6]), Desc: string(argv[14])}
	var n [8]int64
	for i, j := range []int{3, 4, 5, 8, 9, 10, 11, 13} {
		var ok bool
		if n[i], ok = ParseIntB(argv[j]); !ok {
			c.W.Error(errPolicyEffect)
			return
		}
	}
	p.Version, p.CreatedMs, p.UpdatedMs = n[0], n[1], n[2]
	p.Params.Limit, p.Params.Period, p.Params.Burst = n[3], n[4], n[5]
	algo, okA := ratelimit.ParseAlgo(argv[7])
	near, okN := parseNear(argv[12])
	if !okA || !okN || !validPolicyName(argv[2]) || n[6]>>1 != 0 || n[7]>>1 != 0 || p.Version < 1 || len(p.Desc) > policyDescMax {
		c.W.Error(errPolicyEffect)
		return
	}
	p.Params.Algo, p.Near, p.Shadow = algo, near, n[6] == 1
	if msg := p.Params.Validate(); msg != "" {
		c.W.Error(msg)
		return
	}
	c.E.Policies.put(p, n[7] == 1)
	c.E.Stats.Dirty++
	c.W.OK()
}

// cmdPolicyGet: RL.POLICY GET name — map name, algo, limit, period_ms,
// burst, shadow, near, desc, version, created_ms, updated_ms, updated_by,
// reset_ms, live_until_ms, overrides (how many subjects have one); nil
// when there is no such policy.
func cmdPolicyGet(c *Ctx, argv [][]byte) {
	p := c.E.Policies.Get(argv[2])
	if p == nil {
		c.W.Null()
		return
	}
	w := c.W
	w.Map(15)
	w.BulkString("name")
	w.BulkString(p.Name)
	writePolicyParams(c, &p.Params, p.Shadow, p.Near, p.Desc)
	w.BulkString("version")
	w.Int(p.Version)
	w.BulkString("created_ms")
	w.Int(p.CreatedMs)
	w.BulkString("updated_ms")
	w.Int(p.UpdatedMs)
	w.BulkString("updated_by")
	w.BulkString(p.UpdatedBy)
	w.BulkString("reset_ms")
	w.Int(p.ResetMs)
	w.BulkString("live_until_ms")
	w.Int(p.LiveUntil)
	w.BulkString("overrides")
	w.Int(int64(len(p.Overrides)))
}

// writePolicyParams writes the seven parameter fields of a policy map.
func writePolicyParams(c *Ctx, p *ratelimit.Params, shadow bool, near float64, desc string) {
	w := c.W
	w.BulkString("algo")
	w.BulkString(p.Algo.String())
	w.BulkString("limit")
	w.Int(p.Limit)
	w.BulkString("period_ms")
	w.Int(p.Period)
	w.BulkString("burst")
	w.Int(p.Burst)
	w.BulkString("shadow")
	w.Int(b2i(shadow))
	w.BulkString("near")
	w.BulkString(formatNear(near))
	w.BulkString("desc")
	w.BulkString(desc)
}

// cmdPolicyDel: RL.POLICY DEL name [IFVERSION v] [FORCE] — deletes the
// policy and its history. Reply: 1 deleted, 0 no such policy (IFVERSION
// aside). Refused while keys of the policy may be live unless FORCE
// (they are left as they are: calls naming the policy then get "no such
// policy" until it is set again). The history goes with the policy:
// HISTORY then answers "no such policy", and a policy set again under the
// name starts a new history (the registry's versions still never repeat).
// The effect is LIMITDB.POLICY DEL name; the notification "del <name>".
func cmdPolicyDel(c *Ctx, argv [][]byte) {
	name := argv[2]
	o, n, ok := c.parseChangeOpts(argv[3:], false)
	if !ok {
		return
	}
	if n < len(argv)-3 || o.dry || o.resetKeys {
		c.W.Error(ErrSyntax)
		return
	}
	ifVersion, force := o.ifVersion, o.force
	p := c.E.Policies.Get(name)
	if !c.checkVersion(name, p, ifVersion) {
		return
	}
	if p == nil {
		c.W.Int(0)
		return
	}
	if p.LiveUntil > c.Now && !force {
		c.W.Error("ERR policy '" + string(name) + "' may have live keys until " + strconv.FormatInt(p.LiveUntil, 10) +
			" (unix ms): delete it with FORCE")
		return
	}
	delete(c.E.Policies.m, p.Name)
	c.E.Stats.Dirty++
	c.Rewrite(Args("LIMITDB.POLICY").S("DEL", p.Name))
	c.notifyPolicy("del " + p.Name)
	c.W.Int(1)
}

// cmdLimitdbPolicyDel: LIMITDB.POLICY DEL name — the effect of RL.POLICY
// DEL. Reply +OK; a policy that does not exist is an error (the executor
// deleted one).
func cmdLimitdbPolicyDel(c *Ctx, argv [][]byte) {
	if c.E.Policies.Get(argv[2]) == nil {
		c.W.Error(errNoSuchPolicy(argv[2]))
		return
	}
	delete(c.E.Policies.m, string(argv[2]))
	c.E.Stats.Dirty++
	c.W.OK()
}

// cmdPolicyList: RL.POLICY LIST [MATCH pattern] — the policy names in byte
// order, those matching the glob pattern with MATCH.
func cmdPolicyList(c *Ctx, argv [][]byte) {
	var pattern []byte
	switch {
	case len(argv) == 2:
	case len(argv) == 4 && EqualFold(argv[2], "match"):
		pattern = argv[3]
	default:
		c.W.Error(ErrSyntax)
		return
	}
	names := c.E.Policies.Names()
	if pattern != nil {
		k := 0
		for _, n := range names {
			if Match(string(pattern), n, false) {
				names[k] = n
				k++
			}
		}
		names = names[:k]
	}
	c.W.Array(len(names))
	for _, n := range names {
		c.W.BulkString(n)
	}
}

// cmdPolicyHistory: RL.POLICY HISTORY name [COUNT n] — the policy's last
// changes (at most PolicyHistoryMax are kept), newest first, at most n:
// an array of maps version, updated_ms, updated_by, algo, limit,
// period_ms, burst, shadow, near, desc, resetkeys. An error when there is
// no such policy.
func cmdPolicyHistory(c *Ctx, argv [][]byte) {
	count := int64(math.MaxInt64)
	switch {
	case len(argv) == 3:
	case len(argv) == 5 && EqualFold(argv[3], "count"):
		var ok bool
		if count, ok = ParseIntB(argv[4]); !ok || count <= 0 {
			c.W.Error(errPolicyCount)
			return
		}
	default:
		c.W.Error(ErrSyntax)
		return
	}
	p := c.policyOrErr(argv[2])
	if p == nil {
		return
	}
	n := int(min(count, int64(len(p.History))))
	w := c.W
	w.Array(n)
	for i := len(p.History) - 1; i >= len(p.History)-n; i-- {
		h := &p.History[i]
		w.Map(11)
		w.BulkString("version")
		w.Int(h.Version)
		w.BulkString("updated_ms")
		w.Int(h.Ms)
		w.BulkString("updated_by")
		w.BulkString(h.By)
		writePolicyParams(c, &h.Params, h.Shadow, h.Near, h.Desc)
		w.BulkString("resetkeys")
		w.Int(b2i(h.ResetKeys))
	}
}
