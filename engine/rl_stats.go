package engine

import (
	"cmp"
	"slices"

	"limitdb/ratelimit"
)

// Per-policy decision counters (RL.STATS) and the most-refused keys
// (RL.TOP, rl_top.go). This file holds the API the server's metrics
// collector and status page read, and the counting.
//
// The counters are node-local, not replicated state: the node that
// executes a decision counts it (the leader for RL.ALLOW, any node for
// RL.PEEK), followers applying effects (RL.SET, LIMITDB.POLICY …) count
// nothing, and neither snapshots, dump.rdb, DEBUG DIGEST nor effects
// carry them. A policy's counters hang off its record (RLPolicy.stats),
// so a decision reaches them through the pointer it already holds, with
// no lookup by name; put() carries them over when a change replaces the
// record, and a deleted policy's go with it (the memory stays bounded by
// the registry). Calls with inline numbers count in Engine.rlInline.

// RLCounters are one policy's decision counters since SinceMs.
type RLCounters struct {
	Requests     int64 // calls decided (RL.ALLOW, RL.PEEK, each limit of RL.ALLOWALL)
	Units        int64 // the cost those calls asked for
	Allowed      int64
	Denied       int64 // refused and enforced
	ShadowDenied int64 // refused, answered allowed (shadow)
	NearLimit    int64 // allowed with the used share at or above NEAR
	Errors       int64 // calls that named the policy and got an error reply
	// Units by result (they add up to Units): the metrics' rl_units_total
	// per result; RL.STATS answers Units only
	UnitsAllowed, UnitsDenied, UnitsShadowDenied int64
}

// Add adds b's counts to a (RL.STATS CLUSTER's sum, the metrics' folding
// of policies into one label).
func (a *RLCounters) Add(b *RLCounters) {
	a.Requests += b.Requests
	a.Units += b.Units
	a.Allowed += b.Allowed
	a.Denied += b.Denied
	a.ShadowDenied += b.ShadowDenied
	a.NearLimit += b.NearLimit
	a.Errors += b.Errors
	a.UnitsAllowed += b.UnitsAllowed
	a.UnitsDenied += b.UnitsDenied
	a.UnitsShadowDenied += b.UnitsShadowDenied
}

// RLStat is one row of RL.STATS: Policy "" counts calls with inline numbers.
type RLStat struct {
	Policy string
	RLCounters
	SinceMs int64
}

// rlStats are the counters of one policy (or of the inline calls) and,
// for a policy, its sketch of the most refused and requested keys.
type rlStats struct {
	RLCounters
	// sinceMs is when counting started: the first call counted or the
	// last RL.STATS RESET.
	sinceMs int64
	top     rlTop // rl_top.go; inline calls do not feed it
}

// RLStats returns the counters of every policy that has any, and of the
// inline calls (Policy ""), in byte order of the name. Caller holds the
// engine lock.
func (e *Engine) RLStats() []RLStat {
	var out []RLStat
	if s := &e.rlInline; s.sinceMs != 0 {
		out = append(out, RLStat{Policy: "", RLCounters: s.RLCounters, SinceMs: s.sinceMs})
	}
	for _, name := range e.Policies.Names() {
		if s := e.Policies.m[name].stats; s != nil {
			out = append(out, RLStat{Policy: name, RLCounters: s.RLCounters, SinceMs: s.sinceMs})
		}
	}
	return out
}

func sortRLStats(rows []RLStat) {
	slices.SortFunc(rows, func(a, b RLStat) int { return cmp.Compare(a.Policy, b.Policy) })
}

// rlStat returns the row of one policy ("" the inline calls), zero
// counters when nothing was counted; ok=false when there is no such
// policy.
func (e *Engine) rlStat(name string) (RLStat, bool) {
	var s *rlStats
	if name == "" {
		s = &e.rlInline
	} else {
		p := e.Policies.m[name]
		if p == nil {
			return RLStat{}, false
		}
		s = p.stats
	}
	if s == nil {
		return RLStat{Policy: name}, true
	}
	return RLStat{Policy: name, RLCounters: s.RLCounters, SinceMs: s.sinceMs}, true
}

// policyStats returns p's counters, made at the first call counted.
func (c *Ctx) policyStats(p *RLPolicy) *rlStats {
	if p.stats == nil {
		p.stats = &rlStats{sinceMs: c.Now}
	}
	return p.stats
}

// rlCount counts one decided call, under pol (nil: inline numbers): cost
// units asked for; allowed as enforced, shadowDenied when a refusal was
// answered allowed; limit and remaining from the reply (the used share
// for NEAR). A policy's call also feeds its sketch with key.
func (c *Ctx) rlCount(pol *RLPolicy, key []byte, cost int64, allowed, shadowDenied bool, limit, remaining int64) {
	var s *rlStats
	near := PolicyNearDefault
	if pol != nil {
		s, near = c.policyStats(pol), pol.Near
	} else {
		s = &c.E.rlInline
		if s.sinceMs == 0 {
			s.sinceMs = c.Now
		}
	}
	s.Requests++
	s.Units += cost
	switch {
	case shadowDenied:
		s.ShadowDenied++
		s.UnitsShadowDenied += cost
	case !allowed:
		s.Denied++
		s.UnitsDenied += cost
	default:
		s.Allowed++
		s.UnitsAllowed += cost
		if float64(limit-remaining) >= near*float64(limit) {
			s.NearLimit++
		}
	}
	if pol != nil {
		s.top.add(c.Now, key, !allowed || shadowDenied)
	}
}

// rlCountResult is rlCount for a ratelimit.Result (the RL.* replies).
func (c *Ctx) rlCountResult(pol *RLPolicy, key []byte, cost int64, r *ratelimit.Result, shadowDenied bool) {
	c.rlCount(pol, key, cost, r.Allowed && !shadowDenied, shadowDenied, r.Limit, r.Remaining)
}

// rlCountError counts a call under pol (nil: inline numbers) that got an
// error reply.
func (c *Ctx) rlCountError(pol *RLPolicy) {
	if pol != nil {
		c.policyStats(pol).Errors++
		return
	}
	s := &c.E.rlInline
	if s.sinceMs == 0 {
		s.sinceMs = c.Now
	}
	s.Errors++
}

// rlCountErrorReply counts an inline call whose reply, written from
// before on, is an error (RL.ALLOWALL and CL.THROTTLE, which have many).
func (c *Ctx) rlCountErrorReply(before int) {
	if len(c.W.B) > before && c.W.B[before] == '-' {
		c.rlCountError(nil)
	}
}

// rlStatsReset zeroes the counters of name ("" the inline calls) and
// restarts them at now; false when there is no such policy. The sketch
// keeps its window.
func (e *Engine) rlStatsReset(name string, now int64) bool {
	if name == "" {
		e.rlInline.RLCounters, e.rlInline.sinceMs = RLCounters{}, now
		return true
	}
	p := e.Policies.m[name]
	if p == nil {
		return false
	}
	if p.stats == nil {
		p.stats = &rlStats{}
	}
	p.stats.RLCounters, p.stats.sinceMs = RLCounters{}, now
	return true
}

// adoptStats gives the policies of r (a registry just loaded from a
// snapshot, restored, or swapped in by LIMITDB.POLICY LOAD) the
// node-local counters old's policies of the same name had.
func (r *Policies) adoptStats(old *Policies) {
	for name, p := range r.m {
		if o := old.m[name]; o != nil {
			p.stats = o.stats
		}
	}
}

// RLTopEntry is one key of RL.TOP: Count is its estimated number of
// refusals (or requests) in the window, Err the most it may be overcounted.
type RLTopEntry struct {
	Key   string
	Count int64
	Err   int64
}

// RLTop returns at most n keys of the policy with the most refusals
// (requested: the most requests) over the last windowMs before nowMs,
// most first. Caller holds the engine lock.
func (e *Engine) RLTop(policy string, n int, windowMs int64, requested bool, nowMs int64) []RLTopEntry {
	p := e.Policies.m[policy]
	if p == nil || p.stats == nil || n <= 0 {
		return nil
	}
	out := p.stats.top.query(windowMs, requested, nowMs)
	sortRLTop(out)
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// sortRLTop orders entries most first, ties in byte order of the key.
func sortRLTop(out []RLTopEntry) {
	slices.SortFunc(out, func(a, b RLTopEntry) int {
		if a.Count != b.Count {
			return cmp.Compare(b.Count, a.Count)
		}
		return cmp.Compare(a.Key, b.Key)
	})
}
