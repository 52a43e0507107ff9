package engine

import "limitdb/ratelimit"

// RL.SET, the effect form of the native limiters.
//
// What RL.ALLOW, RL.ALLOWALL, RL.REFUND and CL.THROTTLE do depends on the
// clock, so, like Redis's EXPIRE → PEXPIREAT, they are never replicated as
// sent: each limiter they change is recorded as
//
//	RL.SET key algorithm limit period burst a b deadline [LOG size t1 … tB] [POLICY name]
//
// the limiter's whole state with absolute times: its algorithm (as RL.INFO
// names it, "cell" for CL.THROTTLE's), its parameters as stored (period in
// ms, in seconds for cell), the state words A and B (times in them are
// absolute: a TAT in unix ns, a window start in unix ms …) and the key's
// deadline in unix ms (when the limiter is back to full). A sliding log
// adds its ring size and its B live grant times, oldest first, from ring
// index A; the other slots are zero (ratelimit's slClear keeps them so),
// so the ring is rebuilt exactly. POLICY name, when the decision was made
// under a named policy (RL.ALLOW key POLICY name), raises that policy's
// LiveUntil to the deadline (policy.go). A limiter that becomes full (RL.REFUND)
// or is reset is recorded as DEL key. Applying RL.SET reads no clock.
//
// Clients may call it too, like RESTORE (it is @dangerous: it can set any
// state): the key's old value, of any type, is replaced. A deadline not in
// the future deletes the key instead (recorded as DEL key when there was
// one), as RESTORE does with a past ABSTTL; while applying it is stored.

const (
	errRLSetAlgo  = "ERR unknown algorithm, expected gcra, token-bucket, leaky-bucket, fixed-window, sliding-window, sliding-log or cell"
	errRLSetState = "ERR invalid limiter state"
	errRLSetLog   = "ERR sliding-log needs LOG size and its live grant times, other algorithms no LOG"
)

func init() {
	Register(&Command{Name: "rl.set", Arity: -9, Flags: "write denyoom", FirstKey: 1, LastKey: 1, Step: 1, Group: "ratelimit", Since: "1.0.0",
		Summary: "Sets a rate limiter's algorithm, parameters, state and deadline (the effect form of RL.* and CL.THROTTLE).", Run: cmdRLSet})
}

// parseAlgoAny is ratelimit.ParseAlgo plus "cell".
func parseAlgoAny(b []byte) (ratelimit.Algo, bool) {
	if a, ok := ratelimit.ParseAlgo(b); ok {
		return a, true
	}
	if EqualFold(b, ratelimit.Cell.String()) {
		return ratelimit.Cell, true
	}
	return 0, false
}

// cellParamsError checks CL.THROTTLE's parameters (Burst = max_burst,
// Limit = count, Period = seconds) as cmdCLThrottle does, quantity aside.
func cellParamsError(p *ratelimit.Params) string {
	switch {
	case p.Limit == 0 || p.Period == 0:
		return errCellZero
	case p.Burst < 0 || p.Limit < 0 || p.Period < 0:
		return errCellNeg
	case p.Period > 9e9:
		return errCellLarge
	}
	if t := ratelimit.CellEmission(p); t <= 0 || p.Burst >= (1<<62)/t {
		return errCellLarge
	}
	return ""
}

// cmdRLSet: RL.SET key algorithm limit period burst a b deadline [LOG size
// t1 … tB] [POLICY name] — see above (a policy that does not exist is
// ignored: it was deleted with FORCE). Reply +OK. Errors: unknown algorithm; ErrNotInt;
// the parameter errors of RL.ALLOW (CL.THROTTLE's for cell); "invalid
// limiter state" for a negative word or a sliding log whose A, B and
// times do not fit its size; LOG missing for sliding-log or given for
// another algorithm; "invalid expire time in 'rl.set' command" for a
// deadline below 1.
func cmdRLSet(c *Ctx, argv [][]byte) {
	algo, ok := parseAlgoAny(argv[2])
	if !ok {
		c.W.Error(errRLSetAlgo)
		return
	}
	var v [6]int64
	for i := range v {
		if v[i], ok = ParseIntB(argv[3+i]); !ok {
			c.W.Error(ErrNotInt)
			return
		}
	}
	p := ratelimit.Params{Algo: algo, Limit: v[0], Period: v[1], Burst: v[2]}
	st := ratelimit.State{A: v[3], B: v[4]}
	deadline := v[5]
	msg := ""
	if algo == ratelimit.Cell {
		msg = cellParamsError(&p)
	} else {
		msg = p.Validate()
	}
	if msg != "" {
		c.W.Error(msg)
		return
	}
	if st.A < 0 || st.B < 0 {
		c.W.Error(errRLSetState)
		return
	}
	// POLICY name last (never a log time, which is an integer): the key was
	// decided under that policy, which may have live keys until deadline
	var policy []byte
	if n := len(argv); n >= 11 && EqualFold(argv[n-2], "policy") {
		policy, argv = argv[n-1], argv[:n-2]
	}
	hasLog := len(argv) > 9
	if hasLog != (algo == ratelimit.SlidingLog) || hasLog && (len(argv) < 11 || !EqualFold(argv[9], "log")) {
		c.W.Error(errRLSetLog)
		return
	}
	if hasLog {
		size, ok := ParseIntB(argv[10])
		if !ok {
			c.W.Error(ErrNotInt)
			return
		}
		if size < 1 || size > ratelimit.MaxLogLimit || st.A >= size || st.B > size || int64(len(argv)-11) != st.B {
			c.W.Error(errRLSetState)
			return
		}
		st.Log = make([]int64, size)
		for i, a := range argv[11:] {
			t, ok := ParseIntB(a)
			if !ok {
				c.W.Error(ErrNotInt)
				return
			}
			if t < 0 {
				c.W.Error(errRLSetState)
				return
			}
			st.Log[(st.A+int64(i))%size] = t
		}
	}
	if deadline < 1 {
		c.W.Error(ErrInvalidExpire(c.Cmd.Name))
		return
	}
	key := argv[1]
	if deadline <= c.Now {
		if c.delete(c.DB, bstr(key)) {
			c.ownDel(key)
		}
		c.W.OK()
		return
	}
	e := c.lookupWrite(key)
	if e == nil {
		e = c.create(key)
	} else if e.kind != KindLimiter || limParams(e).Algo != algo {
		// a fresh value in the same entry (the key keeps its place in
		// the table, as an update in place on the executing node did)
		c.DB.setExpire(e, 0)
		e.setObj(KindString, nil)
	}
	c.limStoreAt(e, &p, &st, deadline)
	if policy != nil {
		c.E.Policies.raiseLive(policy, deadline)
	}
	c.touched(key)
	c.notify(NotifyRatelimit, "rl.set", key)
	c.W.OK()
}

// limEffect records e, the limiter at key that the running command has
// just stored, as RL.SET: the command's own effect when own, else an
// effect now (RL.ALLOWALL's several keys), with POLICY policy when not
// nil. No allocation.
func (c *Ctx) limEffect(key []byte, e *entry, own bool, policy []byte) {
	if c.Eff == nil {
		return
	}
	p := limParams(e)
	st := limLoad(e)
	n := 9
	if p.Algo == ratelimit.SlidingLog {
		n += 2 + int(st.B)
	}
	if policy != nil {
		n += 2
	}
	var f *Effects
	if own {
		f = c.own(n)
	} else {
		f = c.also(n)
	}
	f.argStr("RL.SET")
	f.arg(key)
	f.argStr(p.Algo.String())
	f.argInt(p.Limit)
	f.argInt(p.Period)
	f.argInt(p.Burst)
	f.argInt(st.A)
	f.argInt(st.B)
	f.argInt(e.exp)
	if p.Algo == ratelimit.SlidingLog {
		f.argStr("LOG")
		size := int64(len(st.Log))
		f.argInt(size)
		for i := int64(0); i < st.B; i++ {
			f.argInt(st.Log[(st.A+i)%size])
		}
	}
	if policy != nil {
		f.argStr("POLICY")
		f.arg(policy)
	}
}
