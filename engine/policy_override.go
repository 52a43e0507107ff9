package engine

import (
	"slices"
	"strconv"

	"limitdb/ratelimit"
)

// Per-subject overrides: RL.POLICY OVERRIDE name SUBJECT key LIMIT n
// [PERIOD ms] gives one subject (the limited key of RL.ALLOW key POLICY
// name) its own LIMIT, and PERIOD when given (else the policy's, whatever
// it becomes); ALGO, BURST, SHADOW and NEAR stay the policy's. A decision
// looks the key up among the overrides before taking the base parameters
// (rlPolicyCall, only when the policy has overrides) and is counted under
// the base policy. Overrides belong to their policy: RL.POLICY SET and
// APPLY keep them (refusing a change they would not fit), DEL and a
// removal by APPLY drop them, snapshots, DUMP and RESTORE carry them.
//
// An override change is a change of the policy: it takes the next
// registry version (so an IFVERSION sees it) and sets updated_ms and
// updated_by, but is not in the history, which holds the base parameters.

// PolicyOverrideMax bounds the overrides of one policy (each is in every
// snapshot, and a whole registry travels in one APPLY effect).
const PolicyOverrideMax = 1024

// PolicyOverride is one subject's limit; Period 0: the policy's.
type PolicyOverride struct {
	Limit, Period int64
}

// paramsFor returns the parameters a subject with override o decides by.
func (p *RLPolicy) paramsFor(o PolicyOverride) ratelimit.Params {
	q := p.Params
	q.Limit = o.Limit
	if o.Period > 0 {
		q.Period = o.Period
	}
	return q
}

// checkOverrides checks that every override in ov fits p's parameters
// (RL.POLICY SET and APPLY replacing a policy that has them).
func (c *Ctx) checkOverrides(p *RLPolicy, ov map[string]PolicyOverride) bool {
	for subj, o := range ov {
		q := p.paramsFor(o)
		if msg := q.Validate(); msg != "" {
			c.W.Error("ERR the override of subject '" + subj + "' does not fit policy '" + p.Name + "': " + msg)
			return false
		}
	}
	return true
}

// setOverride installs (o != nil) or removes the override of subj in p,
// as version v made at ms by by.
func (r *Policies) setOverride(p *RLPolicy, subj string, o *PolicyOverride, v, ms int64, by string) {
	if o != nil {
		if p.Overrides == nil {
			p.Overrides = make(map[string]PolicyOverride)
		}
		p.Overrides[subj] = *o
	} else {
		delete(p.Overrides, subj)
		if len(p.Overrides) == 0 {
			p.Overrides = nil
		}
	}
	p.Version, p.UpdatedMs, p.UpdatedBy = v, ms, by
	r.Version = max(r.Version, v)
}

// cmdPolicyOverride: RL.POLICY OVERRIDE name SUBJECT key LIMIT n [PERIOD
// ms] — sets key's override. Reply: the policy's new version. Errors: no
// such policy, the parameters' own (a limit the policy's ALGO refuses),
// more than PolicyOverrideMax subjects. The effect is LIMITDB.POLICY
// OVERRIDE name version ms user subject limit period; the notification
// "override <name> <version> <subject>".
func cmdPolicyOverride(c *Ctx, argv [][]byte) {
	if !EqualFold(argv[3], "subject") || !EqualFold(argv[5], "limit") || len(argv) != 7 && (len(argv) != 9 || !EqualFold(argv[7], "period")) {
		c.W.Error(ErrSyntax)
		return
	}
	var o PolicyOverride
	var ok bool
	if o.Limit, ok = ParseIntB(argv[6]); !ok || o.Limit <= 0 {
		c.W.Error(ratelimit.ErrLimit)
		return
	}
	if len(argv) == 9 {
		if o.Period, ok = ParseIntB(argv[8]); !ok || o.Period <= 0 {
			c.W.Error(ratelimit.ErrPeriod)
			return
		}
	}
	p := c.policyOrErr(argv[2])
	if p == nil {
		return
	}
	q := p.paramsFor(o)
	if msg := q.Validate(); msg != "" {
		c.W.Error(msg)
		return
	}
	subj := string(argv[4])
	if _, has := p.Overrides[subj]; !has && len(p.Overrides) >= PolicyOverrideMax {
		c.W.Error("ERR policy '" + p.Name + "' has " + strconv.Itoa(PolicyOverrideMax) + " overrides, the most a policy holds")
		return
	}
	v := c.E.Policies.Version + 1
	c.E.Policies.setOverride(p, subj, &o, v, c.Now, c.userName())
	c.E.Stats.Dirty++
	c.Rewrite(Args("LIMITDB.POLICY").S("OVERRIDE", p.Name).I(v).I(c.Now).S(p.UpdatedBy, subj).I(o.Limit).I(o.Period))
	c.notifyPolicy("override " + p.Name + " " + strconv.FormatInt(v, 10) + " " + subj)
	c.W.Int(v)
}

// cmdPolicyUnoverride: RL.POLICY UNOVERRIDE name SUBJECT key — removes
// key's override. Reply: the policy's new version; 0 when key had none
// (nothing changed). An error when there is no such policy. The effect is
// LIMITDB.POLICY UNOVERRIDE name version ms user subject; the
// notification "unoverride <name> <version> <subject>".
func cmdPolicyUnoverride(c *Ctx, argv [][]byte) {
	if !EqualFold(argv[3], "subject") {
		c.W.Error(ErrSyntax)
		return
	}
	p := c.policyOrErr(argv[2])
	if p == nil {
		return
	}
	subj := string(argv[4])
	if _, has := p.Overrides[subj]; !has {
		c.W.Int(0)
		return
	}
	v := c.E.Policies.Version + 1
	c.E.Policies.setOverride(p, subj, nil, v, c.Now, c.userName())
	c.E.Stats.Dirty++
	c.Rewrite(Args("LIMITDB.POLICY").S("UNOVERRIDE", p.Name).I(v).I(c.Now).S(p.UpdatedBy, subj))
	c.notifyPolicy("unoverride " + p.Name + " " + strconv.FormatInt(v, 10) + " " + subj)
	c.W.Int(v)
}

// cmdPolicyOverrides: RL.POLICY OVERRIDES name — the policy's overrides
// in subject byte order: an array of maps subject, limit, period_ms (0:
// the policy's period). An error when there is no such policy.
func cmdPolicyOverrides(c *Ctx, argv [][]byte) {
	p := c.policyOrErr(argv[2])
	if p == nil {
		return
	}
	subjs := p.overrideSubjects()
	w := c.W
	w.Array(len(subjs))
	for _, s := range subjs {
		o := p.Overrides[s]
		w.Map(3)
		w.BulkString("subject")
		w.BulkString(s)
		w.BulkString("limit")
		w.Int(o.Limit)
		w.BulkString("period_ms")
		w.Int(o.Period)
	}
}

// overrideSubjects returns p's overridden subjects in byte order.
func (p *RLPolicy) overrideSubjects() []string {
	out := make([]string, 0, len(p.Overrides))
	for s := range p.Overrides {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// cmdLimitdbPolicyOverride: LIMITDB.POLICY OVERRIDE name version ms user
// subject limit period — the effect of RL.POLICY OVERRIDE. Reply +OK.
func cmdLimitdbPolicyOverride(c *Ctx, argv [][]byte) {
	p := c.E.Policies.Get(argv[2])
	v, okV := ParseIntB(argv[3])
	t, okT := ParseIntB(argv[4])
	var o PolicyOverride
	var okL, okP bool
	o.Limit, okL = ParseIntB(argv[7])
	o.Period, okP = ParseIntB(argv[8])
	if p == nil || !okV || !okT || !okL || !okP || v < 1 || o.Limit <= 0 || o.Period < 0 {
		c.W.Error(errPolicyEffect)
		return
	}
	q := p.paramsFor(o)
	if q.Validate() != "" {
		c.W.Error(errPolicyEffect)
		return
	}
	c.E.Policies.setOverride(p, string(argv[6]), &o, v, t, string(argv[5]))
	c.E.Stats.Dirty++
	c.W.OK()
}

// cmdLimitdbPolicyUnoverride: LIMITDB.POLICY UNOVERRIDE name version ms
// user subject — the effect of RL.POLICY UNOVERRIDE. Reply +OK.
func cmdLimitdbPolicyUnoverride(c *Ctx, argv [][]byte) {
	p := c.E.Policies.Get(argv[2])
	v, okV := ParseIntB(argv[3])
	t, okT := ParseIntB(argv[4])
	if p == nil || !okV || !okT || v < 1 {
		c.W.Error(errPolicyEffect)
		return
	}
	c.E.Policies.setOverride(p, string(argv[6]), nil, v, t, string(argv[5]))
	c.E.Stats.Dirty++
	c.W.OK()
}
