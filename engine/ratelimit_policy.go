package engine

import "limitdb/ratelimit"

// RL.ALLOW key POLICY name [COST n] [SHADOW] and RL.PEEK key POLICY name
// [COST n] [SHADOW]: the decision of the inline form, with the parameters
// of the named policy (policy.go). A policy changed since the key's last
// call applies under the inline form's "changing parameters" rules; a key
// holding another algorithm is refused as inline, unless the policy was
// changed with RESETKEYS, when it starts full (RL.ALLOW replaces it).
//
// Shadow (the policy's SHADOW or the call's): the decision is made and the
// state evolves exactly as enforced (a would-be refusal consumes nothing
// and raises rl.deny), but the reply says allowed (retry_after_ms -1) with
// shadow_denied 1.

// rlPolicyCall runs the POLICY form; consume: RL.ALLOW, else RL.PEEK. An
// error reply counts under the policy it names, if there is one
// (rl_stats.go); a decision counts in rlPolicyDecide.
func (c *Ctx) rlPolicyCall(argv [][]byte, consume bool) {
	before := len(c.W.B)
	c.rlPolicyDecide(argv, consume)
	if len(c.W.B) > before && c.W.B[before] == '-' {
		if pol := c.E.Policies.Get(argv[3]); pol != nil {
			c.rlCountError(pol)
		}
	}
}

func (c *Ctx) rlPolicyDecide(argv [][]byte, consume bool) {
	a := rlArgs{key: argv[1], cost: 1}
	name := argv[3]
	shadow := false
	for i := 4; i < len(argv); i++ {
		switch {
		case EqualFold(argv[i], "shadow"):
			shadow = true
		case EqualFold(argv[i], "cost") && i+1 < len(argv):
			i++
			var ok bool
			if a.cost, ok = ParseIntB(argv[i]); !ok || a.cost <= 0 {
				c.W.Error(ratelimit.ErrCost)
				return
			}
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}
	pol := c.E.Policies.Get(name)
	if pol == nil {
		c.W.Error(errNoSuchPolicy(name))
		return
	}
	a.p = pol.Params
	if pol.Overrides != nil {
		a.p = pol.keyParams(a.key) // the subject's override (policy_override.go)
	}
	shadow = shadow || pol.Shadow
	if msg := a.p.CheckCost(a.cost); msg != "" {
		c.W.Error(msg)
		return
	}
	e, ok := c.lookupKind(a.key, KindLimiter, false)
	if !ok {
		return
	}
	old, replace := e, false
	if e != nil && limParams(e).Algo != a.p.Algo && pol.ResetMs != 0 {
		// changed with RESETKEYS: the old algorithm's state starts full
		e, replace = nil, true
	}
	e, st, ok := c.loadEntry(e, &a.p, consume)
	if !ok {
		return
	}
	var r ratelimit.Result
	if consume {
		r = ratelimit.Decide(&a.p, &st, c.Now, a.cost, true)
		if r.Allowed {
			if replace {
				// a fresh value in the same entry, as RL.SET does
				e = old
				c.DB.setExpire(e, 0)
				e.setObj(KindString, nil)
			} else if e == nil {
				e = c.create(a.key)
			}
			c.limStore(e, &a.p, &st, r.ResetAfter)
			c.E.Policies.raiseLive(name, e.exp)
			c.touched(a.key)
			c.limEffect(a.key, e, true, name)
		}
		c.notifyDecision(a.key, r.Allowed)
	} else {
		if a.p.Algo == ratelimit.SlidingLog && st.Log == nil {
			var one [1]int64
			st.Log = one[:]
		}
		r = ratelimit.Decide(&a.p, &st, c.Now, a.cost, false)
	}
	denied := !r.Allowed && shadow
	c.rlCountResult(pol, a.key, a.cost, &r, denied)
	if denied {
		r.Allowed, r.RetryAfter = true, -1
	}
	c.writeResult(&r, 3)
	w := c.W
	w.Raw(rlPolicyName)
	w.BulkString(pol.Name)
	w.Raw(rlVersionName)
	w.Int(pol.Version)
	w.Raw(rlShadowDeniedName)
	if denied {
		w.Raw(rlOne)
	} else {
		w.Raw(rlZero)
	}
}

// keyParams are the parameters key decides by under pol: its override's
// (policy_override.go), else the policy's; a map lookup only when the
// policy has overrides.
func (pol *RLPolicy) keyParams(key []byte) ratelimit.Params {
	if pol.Overrides != nil {
		if o, ok := pol.Overrides[bstr(key)]; ok {
			return pol.paramsFor(o)
		}
	}
	return pol.Params
}

var (
	rlPolicyName       = []byte("$6\r\npolicy\r\n")
	rlVersionName      = []byte("$7\r\nversion\r\n")
	rlShadowDeniedName = []byte("$13\r\nshadow_denied\r\n")
)
