package engine

import (
	"errors"
	"strconv"

	"limitdb/ratelimit"
)

// The policy registry in a snapshot: one aux field limitdb-policy per
// policy and limitdb-policy-ver, the registry's version counter. Redis
// 7.0 skips aux fields it does not know (rdbLoadRio: "Unrecognized RDB
// AUX field"), so a file with policies and no limiter keys still loads
// in redis-server (tests/rdb_policy_test.go).
//
// A record is a list of netstrings ("<len>:<bytes>", binary-safe: names
// and descriptions are any bytes): name, algo, limit, period, burst,
// shadow, near, desc, version, created_ms, updated_ms, updated_by,
// reset_ms, live_until_ms, the history's length, then per change (oldest
// first) version, ms, by, algo, limit, period, burst, shadow, near, desc,
// resetkeys; then, only when the policy has overrides, their number and
// per override (in subject order) subject, limit, period (a record
// without them reads as before overrides existed).

const (
	auxPolicy    = "limitdb-policy"
	auxPolicyVer = "limitdb-policy-ver"
)

var errPolicyRecord = errors.New("bad policy record")

type policyEnc struct{ b []byte }

func (w *policyEnc) str(s string) {
	w.b = strconv.AppendInt(w.b, int64(len(s)), 10)
	w.b = append(w.b, ':')
	w.b = append(w.b, s...)
}

func (w *policyEnc) int(n int64) { w.str(strconv.FormatInt(n, 10)) }

func (w *policyEnc) params(p *ratelimit.Params, shadow bool, near float64, desc string) {
	w.str(p.Algo.String())
	w.int(p.Limit)
	w.int(p.Period)
	w.int(p.Burst)
	w.int(b2i(shadow))
	w.str(formatNear(near))
	w.str(desc)
}

// encodePolicy is p's aux value (also what the strict digest mixes).
func encodePolicy(p *RLPolicy) string {
	var w policyEnc
	w.str(p.Name)
	w.params(&p.Params, p.Shadow, p.Near, p.Desc)
	w.int(p.Version)
	w.int(p.CreatedMs)
	w.int(p.UpdatedMs)
	w.str(p.UpdatedBy)
	w.int(p.ResetMs)
	w.int(p.LiveUntil)
	w.int(int64(len(p.History)))
	for i := range p.History {
		h := &p.History[i]
		w.int(h.Version)
		w.int(h.Ms)
		w.str(h.By)
		w.params(&h.Params, h.Shadow, h.Near, h.Desc)
		w.int(b2i(h.ResetKeys))
	}
	if len(p.Overrides) > 0 {
		w.int(int64(len(p.Overrides)))
		for _, s := range p.overrideSubjects() {
			o := p.Overrides[s]
			w.str(s)
			w.int(o.Limit)
			w.int(o.Period)
		}
	}
	return string(w.b)
}

type policyDec struct {
	s   string
	err bool
}

func (d *policyDec) str() string {
	i := 0
	for i < len(d.s) && i < 8 && d.s[i] >= '0' && d.s[i] <= '9' {
		i++
	}
	if i == 0 || i >= len(d.s) || d.s[i] != ':' {
		d.err = true
		return ""
	}
	n, _ := strconv.Atoi(d.s[:i])
	if n > len(d.s)-i-1 {
		d.err = true
		return ""
	}
	v := d.s[i+1 : i+1+n]
	d.s = d.s[i+1+n:]
	return v
}

func (d *policyDec) int() int64 {
	n, err := strconv.ParseInt(d.str(), 10, 64)
	if err != nil {
		d.err = true
	}
	return n
}

func (d *policyDec) bool() bool {
	switch d.int() {
	case 0:
		return false
	case 1:
		return true
	}
	d.err = true
	return false
}

func (d *policyDec) params(p *ratelimit.Params, shadow *bool, near *float64, desc *string) {
	var ok bool
	if p.Algo, ok = ratelimit.ParseAlgo([]byte(d.str())); !ok {
		d.err = true
	}
	p.Limit, p.Period, p.Burst = d.int(), d.int(), d.int()
	*shadow = d.bool()
	if *near, ok = parseNear([]byte(d.str())); !ok {
		d.err = true
	}
	*desc = d.str()
	if !d.err && (p.Validate() != "" || len(*desc) > policyDescMax) {
		d.err = true
	}
}

// decodePolicy reads an aux value written by encodePolicy.
func decodePolicy(s string) (*RLPolicy, error) {
	d := &policyDec{s: s}
	p := &RLPolicy{Name: d.str()}
	d.params(&p.Params, &p.Shadow, &p.Near, &p.Desc)
	p.Version, p.CreatedMs, p.UpdatedMs = d.int(), d.int(), d.int()
	p.UpdatedBy = d.str()
	p.ResetMs, p.LiveUntil = d.int(), d.int()
	n := d.int()
	if d.err || n < 0 || n > PolicyHistoryMax || !validPolicyName([]byte(p.Name)) || p.Version < 1 {
		return nil, errPolicyRecord
	}
	for range n {
		var h PolicyChange
		h.Version, h.Ms = d.int(), d.int()
		h.By = d.str()
		d.params(&h.Params, &h.Shadow, &h.Near, &h.Desc)
		h.ResetKeys = d.bool()
		if d.err {
			return nil, errPolicyRecord
		}
		p.History = append(p.History, h)
	}
	if d.s != "" {
		n := d.int()
		if d.err || n < 1 || n > PolicyOverrideMax {
			return nil, errPolicyRecord
		}
		p.Overrides = make(map[string]PolicyOverride, n)
		for range n {
			s := d.str()
			o := PolicyOverride{Limit: d.int(), Period: d.int()}
			q := p.paramsFor(o)
			if _, dup := p.Overrides[s]; d.err || dup || o.Limit <= 0 || o.Period < 0 || q.Validate() != "" {
				return nil, errPolicyRecord
			}
			p.Overrides[s] = o
		}
	}
	if d.s != "" {
		return nil, errPolicyRecord
	}
	return p, nil
}

// aux returns the registry's aux fields, in name order.
func (r *Policies) aux() []AuxField {
	if r.Version == 0 && len(r.m) == 0 {
		return nil
	}
	out := []AuxField{{auxPolicyVer, strconv.FormatInt(r.Version, 10)}}
	for _, n := range r.Names() {
		out = append(out, AuxField{auxPolicy, encodePolicy(r.m[n])})
	}
	return out
}

// loadAux adds an aux field of the registry to r (a registry being
// loaded); ok=false when k is not one of its fields.
func (r *Policies) loadAux(k, v string) (ok bool, err error) {
	switch k {
	case auxPolicyVer:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return true, errPolicyRecord
		}
		r.Version = max(r.Version, n)
	case auxPolicy:
		p, err := decodePolicy(v)
		if err != nil {
			return true, err
		}
		if r.m == nil {
			r.m = make(map[string]*RLPolicy)
		}
		if r.m[p.Name] != nil {
			return true, errPolicyRecord
		}
		r.m[p.Name] = p
		r.Version = max(r.Version, p.Version)
	default:
		return false, nil
	}
	return true, nil
}
