package engine

import (
	"strconv"
	"sync"
	"unsafe"

	"limitdb/ratelimit"
)

// Native rate limiting: the RL.* family and redis-cell's CL.THROTTLE.
//
// A limiter is a key of KindLimiter. Its value lives in the entry itself:
//
//	gcra, cell:  p = *ratelimit.Params, interned and shared by every key
//	             with the same parameters; n = the TAT in ns (0 = full).
//	other algos: p = *limObj or *limLog (per key; the Params come first, so p
//	             can always be read as *ratelimit.Params); n = state word A.
//
// Every limiter key carries an expiry: the time it is back to full, so
// idle limiters vanish by themselves. Decisions use c.Now only. Their
// effects are RL.SET of the new state (rlset.go) or DEL.

const (
	errRLAlgo      = "ERR unknown algorithm, expected gcra, token-bucket, leaky-bucket, fixed-window, sliding-window or sliding-log"
	errRLMismatch  = "ERR the key holds a limiter with another algorithm (RL.RESET it first)"
	errRLRefund    = "ERR refund must be a positive integer"
	errRLNumLimits = "ERR numlimits must be a positive integer"
	errRLDupKey    = "ERR the same key appears twice in RL.ALLOWALL"
	errCellUsage   = "Cell error: Usage: cl.throttle <key> <max_burst> <count per period> <period> [<quantity>]"
	errCellZero    = "Cell error: Zero rates are not supported"
	errCellNeg     = "Cell error: negative values are not supported"
	errCellLarge   = "Cell error: arguments are too large"
	errCellParse   = "Cell error: Couldn't parse as integer: "
)

func init() {
	Register(
		&Command{Name: "rl.allow", Arity: -4, Flags: "write denyoom fast noeffect", FirstKey: 1, LastKey: 1, Step: 1, Group: "ratelimit", Since: "1.0.0", Summary: "Decides and consumes a request against a rate limiter.", Run: cmdRLAllow},
		&Command{Name: "rl.peek", Arity: -4, Flags: "readonly fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "ratelimit", Since: "1.0.0", Summary: "Tells what RL.ALLOW would decide, without consuming.", Run: cmdRLPeek},
		&Command{Name: "rl.refund", Arity: 3, Flags: "write fast noeffect", FirstKey: 1, LastKey: 1, Step: 1, Group: "ratelimit", Since: "1.0.0", Summary: "Gives units back to a rate limiter.", Run: cmdRLRefund},
		&Command{Name: "rl.reset", Arity: 2, Flags: "write fast noeffect", FirstKey: 1, LastKey: 1, Step: 1, Group: "ratelimit", Since: "1.0.0", Summary: "Deletes a rate limiter (back to full).", Run: cmdRLReset},
		&Command{Name: "rl.info", Arity: 2, Flags: "readonly fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "ratelimit", Since: "1.0.0", Summary: "Returns a rate limiter's algorithm, parameters and state.", Run: cmdRLInfo},
		&Command{Name: "rl.allowall", Arity: -5, Flags: "write denyoom noeffect", FirstKey: 2, LastKey: 2, Step: 1, Group: "ratelimit", Since: "1.0.0", Summary: "Decides one request against several limits, all or nothing.", Run: cmdRLAllowAll},
		&Command{Name: "cl.throttle", Arity: -1, Flags: "write denyoom fast noeffect", FirstKey: 1, LastKey: 1, Step: 1, Group: "ratelimit", Since: "1.0.0", Summary: "redis-cell's GCRA rate limiter.", Run: cmdCLThrottle},
	)
	RegisterKind(KindLimiter, KindOps{Clone: cloneLimiter})
}

// limObj is the per-key value of the algorithms that need a second state
// word (44 bytes with the copy-on-write generation: the 48-byte class, as
// before it had one).
type limObj struct {
	prm ratelimit.Params // must stay the first field
	b   int64
	gen uint32 // copy-on-write generation (cow.go)
}

// limLog is sliding-log's per-key value: a limObj and the ring of times
// (72 bytes: the 80-byte class; the ring itself is 8 bytes per unit).
type limLog struct {
	limObj // must stay the first field
	log    []int64
}

func sharedAlgo(a ratelimit.Algo) bool { return a == ratelimit.GCRA || a == ratelimit.Cell }

var intern struct {
	mu sync.Mutex
	m  map[ratelimit.Params]*ratelimit.Params
}

// internParams returns the shared copy of p.
func internParams(p *ratelimit.Params) *ratelimit.Params {
	intern.mu.Lock()
	q := intern.m[*p]
	if q == nil {
		if intern.m == nil {
			intern.m = make(map[ratelimit.Params]*ratelimit.Params)
		}
		q = new(ratelimit.Params)
		*q = *p
		intern.m[*q] = q
	}
	intern.mu.Unlock()
	return q
}

func cloneLimiter(p unsafe.Pointer, n int64) (unsafe.Pointer, int64) {
	prm := (*ratelimit.Params)(p)
	if sharedAlgo(prm.Algo) {
		return p, n
	}
	if prm.Algo == ratelimit.SlidingLog {
		o := (*limLog)(p)
		c := &limLog{limObj: o.limObj, log: append([]int64(nil), o.log...)}
		return unsafe.Pointer(c), n
	}
	c := *(*limObj)(p)
	return unsafe.Pointer(&c), n
}

func limParams(e *entry) *ratelimit.Params { return (*ratelimit.Params)(e.p) }

// limLoad reads e's state.
func limLoad(e *entry) ratelimit.State {
	st := ratelimit.State{A: e.n}
	if !sharedAlgo(limParams(e).Algo) {
		st.B = (*limObj)(e.p).b
		if limParams(e).Algo == ratelimit.SlidingLog {
			st.Log = (*limLog)(e.p).log
		}
	}
	return st
}

// limStore writes p and st into e (a new or existing limiter key) and
// sets its deadline to now+resetAfter (at least 1 ms ahead).
func (c *Ctx) limStore(e *entry, p *ratelimit.Params, st *ratelimit.State, resetAfter int64) {
	c.limStoreAt(e, p, st, c.Now+max(1, resetAfter))
}

// limStoreAt writes p and st into e with the absolute deadline. e is a
// new key or a limiter of p's algorithm (RL.SET makes any other value a
// fresh one first).
func (c *Ctx) limStoreAt(e *entry, p *ratelimit.Params, st *ratelimit.State, deadline int64) {
	if sharedAlgo(p.Algo) {
		if e.kind != KindLimiter || limParams(e) != p && *limParams(e) != *p {
			e.setObj(KindLimiter, unsafe.Pointer(internParams(p)))
		}
	} else {
		var o *limObj
		if e.kind == KindLimiter {
			o = (*limObj)(e.p)
		} else if p.Algo == ratelimit.SlidingLog {
			l := &limLog{}
			e.setObj(KindLimiter, unsafe.Pointer(l))
			o = &l.limObj
		} else {
			o = &limObj{}
			e.setObj(KindLimiter, unsafe.Pointer(o))
		}
		o.prm = *p
		o.b = st.B
		if p.Algo == ratelimit.SlidingLog {
			(*limLog)(e.p).log = st.Log
		}
	}
	e.n = st.A
	c.DB.setExpire(e, deadline)
}

// rlArgs are the parsed arguments of one limit.
type rlArgs struct {
	key  []byte
	p    ratelimit.Params
	cost int64
}

// parseLimit parses "limit period-ms" at argv[0:2]; ok=false after writing
// the error.
func (c *Ctx) parseLimit(a *rlArgs, lim, per []byte) bool {
	var ok bool
	if a.p.Limit, ok = ParseIntB(lim); !ok || a.p.Limit <= 0 {
		c.W.Error(ratelimit.ErrLimit)
		return false
	}
	if a.p.Period, ok = ParseIntB(per); !ok || a.p.Period <= 0 {
		c.W.Error(ratelimit.ErrPeriod)
		return false
	}
	return true
}

// parseOpts parses [ALGO a] [BURST n] [COST n] in any order.
func (c *Ctx) parseOpts(opts [][]byte, a *rlArgs) bool {
	a.cost = 1
	for i := 0; i < len(opts); i += 2 {
		if i+1 >= len(opts) {
			c.W.Error(ErrSyntax)
			return false
		}
		v := opts[i+1]
		var ok bool
		switch {
		case EqualFold(opts[i], "algo"):
			if a.p.Algo, ok = ratelimit.ParseAlgo(v); !ok {
				c.W.Error(errRLAlgo)
				return false
			}
		case EqualFold(opts[i], "burst"):
			if a.p.Burst, ok = ParseIntB(v); !ok || a.p.Burst < 0 {
				c.W.Error(ratelimit.ErrBurst)
				return false
			}
		case EqualFold(opts[i], "cost"):
			if a.cost, ok = ParseIntB(v); !ok || a.cost <= 0 {
				c.W.Error(ratelimit.ErrCost)
				return false
			}
		default:
			c.W.Error(ErrSyntax)
			return false
		}
	}
	return true
}

// validate checks the parameters and the cost.
func (c *Ctx) validate(a *rlArgs) bool {
	if msg := a.p.Validate(); msg != "" {
		c.W.Error(msg)
		return false
	}
	if msg := a.p.CheckCost(a.cost); msg != "" {
		c.W.Error(msg)
		return false
	}
	return true
}

// parseRL parses RL.ALLOW / RL.PEEK arguments.
func (c *Ctx) parseRL(argv [][]byte, a *rlArgs) bool {
	a.key = argv[1]
	return c.parseLimit(a, argv[2], argv[3]) && c.parseOpts(argv[4:], a) && c.validate(a)
}

// loadFor looks key up for a decision with params p: WRONGTYPE or an
// algorithm mismatch is written as an error (ok=false). For a missing key
// the state is fresh (with a new log buffer for sliding-log when
// withLog).
func (c *Ctx) loadFor(key []byte, p *ratelimit.Params, withLog bool) (e *entry, st ratelimit.State, ok bool) {
	e, ok = c.lookupKind(key, KindLimiter, false)
	if !ok {
		return nil, st, false
	}
	return c.loadEntry(e, p, withLog)
}

// loadEntry is loadFor's part after the lookup: e's state (fresh for nil).
func (c *Ctx) loadEntry(e *entry, p *ratelimit.Params, withLog bool) (*entry, ratelimit.State, bool) {
	var st ratelimit.State
	if e == nil {
		if withLog && p.Algo == ratelimit.SlidingLog {
			st.Log = ratelimit.NewLog(p)
		}
		return nil, st, true
	}
	if limParams(e).Algo != p.Algo {
		c.W.Error(errRLMismatch)
		return nil, st, false
	}
	st = limLoad(e)
	if p.Algo == ratelimit.SlidingLog && int64(len(st.Log)) < p.Limit {
		if !withLog {
			// a peek with a larger limit: the live entries are what count
			return e, st, true
		}
		st = growLog(st, p.Limit)
	}
	return e, st, true
}

// growLog moves a sliding log's live entries into a buffer of n slots.
func growLog(st ratelimit.State, n int64) ratelimit.State {
	nl := make([]int64, n)
	m := int64(len(st.Log))
	for i := int64(0); i < st.B; i++ {
		j := st.A + i
		if j >= m {
			j -= m
		}
		nl[i] = st.Log[j]
	}
	return ratelimit.State{A: 0, B: st.B, Log: nl}
}

// writeResult writes a decision as a map: allowed, limit, remaining,
// retry_after_ms, reset_after_ms (RESP2: a flat array of name, value),
// announcing extra more fields that the caller writes next.
func (c *Ctx) writeResult(r *ratelimit.Result, extra int) {
	w := c.W
	w.Map(5 + extra)
	w.Raw(rlAllowedName)
	if r.Allowed {
		w.Raw(rlOne)
	} else {
		w.Raw(rlZero)
	}
	w.Raw(rlLimitName)
	w.Int(r.Limit)
	w.Raw(rlRemainingName)
	w.Int(r.Remaining)
	w.Raw(rlRetryName)
	w.Int(r.RetryAfter)
	w.Raw(rlResetName)
	w.Int(r.ResetAfter)
}

// the reply's field names, pre-encoded as bulk strings
var (
	rlAllowedName   = []byte("$7\r\nallowed\r\n")
	rlLimitName     = []byte("$5\r\nlimit\r\n")
	rlRemainingName = []byte("$9\r\nremaining\r\n")
	rlRetryName     = []byte("$14\r\nretry_after_ms\r\n")
	rlResetName     = []byte("$14\r\nreset_after_ms\r\n")
	rlOne           = []byte(":1\r\n")
	rlZero          = []byte(":0\r\n")
)

// cmdRLAllow: RL.ALLOW key limit period-ms [ALGO a] [BURST n] [COST n] —
// decides a request of COST units (default 1) and consumes them when
// allowed. Reply: map allowed, limit (capacity), remaining,
// retry_after_ms (-1 when allowed), reset_after_ms. Errors: WRONGTYPE;
// bad limit/period/burst/cost; cost above the capacity; unknown ALGO;
// another algorithm on the key; syntax. A refused request changes
// nothing. New parameters for an existing key of the same algorithm take
// effect on the first allowed request and keep the state.
func cmdRLAllow(c *Ctx, argv [][]byte) {
	if EqualFold(argv[2], "policy") {
		c.rlPolicyCall(argv, true)
		return
	}
	var a rlArgs
	if !c.parseRL(argv, &a) {
		c.rlCountError(nil)
		return
	}
	e, st, ok := c.loadFor(a.key, &a.p, true)
	if !ok {
		c.rlCountError(nil)
		return
	}
	r := ratelimit.Decide(&a.p, &st, c.Now, a.cost, true)
	c.rlCountResult(nil, a.key, a.cost, &r, false)
	if r.Allowed {
		if e == nil {
			e = c.create(a.key)
		}
		c.limStore(e, &a.p, &st, r.ResetAfter)
		c.touched(a.key)
		c.limEffect(a.key, e, true, nil)
	}
	c.notifyDecision(a.key, r.Allowed)
	c.writeResult(&r, 0)
}

// notifyDecision raises a limiter's decision as a keyspace event of
// limitdb's class 'r': rl.allow when the request passed (its units were
// consumed), rl.deny when it was refused (nothing changed: an event, not
// an effect). RL.PEEK and CL.THROTTLE with quantity 0 decide nothing and
// raise nothing.
func (c *Ctx) notifyDecision(key []byte, allowed bool) {
	if allowed {
		c.notify(NotifyRatelimit, "rl.allow", key)
	} else {
		c.notify(NotifyRatelimit, "rl.deny", key)
	}
}

// cmdRLPeek: RL.PEEK key limit period-ms [ALGO a] [BURST n] [COST n] —
// what RL.ALLOW would answer now, without consuming: allowed says whether
// COST units would pass; remaining and reset_after_ms describe the
// current state; retry_after_ms is -1 when the request would pass. A
// missing key is a full limiter. Same errors as RL.ALLOW.
func cmdRLPeek(c *Ctx, argv [][]byte) {
	if EqualFold(argv[2], "policy") {
		c.rlPolicyCall(argv, false)
		return
	}
	var a rlArgs
	if !c.parseRL(argv, &a) {
		c.rlCountError(nil)
		return
	}
	_, st, ok := c.loadFor(a.key, &a.p, false)
	if !ok {
		c.rlCountError(nil)
		return
	}
	if a.p.Algo == ratelimit.SlidingLog && st.Log == nil {
		var one [1]int64
		st.Log = one[:]
	}
	r := ratelimit.Decide(&a.p, &st, c.Now, a.cost, false)
	c.rlCountResult(nil, a.key, a.cost, &r, false)
	c.writeResult(&r, 0)
}

// cmdRLRefund: RL.REFUND key n — gives n units back, never beyond full.
// Reply: the remaining units afterwards; nil when the key does not exist
// (a missing limiter is full). A limiter that becomes full is deleted.
// Errors: WRONGTYPE; n not a positive integer.
func cmdRLRefund(c *Ctx, argv [][]byte) {
	n, ok := ParseIntB(argv[2])
	if !ok || n <= 0 {
		c.W.Error(errRLRefund)
		return
	}
	e, ok := c.lookupKind(argv[1], KindLimiter, false)
	if !ok {
		return
	}
	if e == nil {
		c.W.Null()
		return
	}
	p := *limParams(e)
	st := limLoad(e)
	rem := ratelimit.Refund(&p, &st, c.Now, n)
	full := ratelimit.Full(&p, &st, c.Now)
	if full {
		c.DB.removeEntry(e)
		c.ownDel(argv[1])
	} else {
		e.n = st.A
		if !sharedAlgo(p.Algo) {
			(*limObj)(e.p).b = st.B
		}
		// back to full sooner: move the deadline
		var reset int64
		if p.Algo == ratelimit.Cell {
			reset = ratelimit.CellThrottle(&p, &st, c.Now, 0).ResetAfter / 1e6
		} else {
			reset = ratelimit.Decide(&p, &st, c.Now, 1, false).ResetAfter
		}
		c.DB.setExpire(e, c.Now+max(1, reset))
		c.limEffect(argv[1], e, true, nil)
	}
	c.touched(argv[1])
	c.notify(NotifyRatelimit, "rl.refund", argv[1])
	if full {
		c.notify(NotifyGeneric, "del", argv[1]) // back to full: reclaimed
	}
	c.W.Int(rem)
}

// cmdRLReset: RL.RESET key — deletes the limiter (it is full again).
// Reply: 1 when a limiter was deleted, 0 when the key did not exist.
// Errors: WRONGTYPE when the key holds another type (it is not deleted).
func cmdRLReset(c *Ctx, argv [][]byte) {
	e, ok := c.lookupKind(argv[1], KindLimiter, false)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	c.DB.removeEntry(e)
	c.touched(argv[1])
	c.notify(NotifyRatelimit, "rl.reset", argv[1])
	c.notify(NotifyGeneric, "del", argv[1])
	c.W.Int(1)
	c.ownDel(argv[1])
}

// cmdRLInfo: RL.INFO key — map algorithm, limit, period_ms, burst,
// capacity, remaining, reset_after_ms, ttl_ms, state (array of the state
// words). nil for a missing key; WRONGTYPE for another type.
func cmdRLInfo(c *Ctx, argv [][]byte) {
	e, ok := c.lookupKind(argv[1], KindLimiter, true)
	if !ok {
		return
	}
	if e == nil {
		c.W.Null()
		return
	}
	p := *limParams(e)
	st := limLoad(e)
	var rem, reset int64
	period := p.Period
	capy := p.Capacity()
	if p.Algo == ratelimit.Cell {
		cr := ratelimit.CellThrottle(&p, &st, c.Now, 0)
		rem, reset = cr.Remaining, (cr.ResetAfter+999999)/1e6
		period *= 1000
	} else {
		r := ratelimit.Decide(&p, &st, c.Now, 1, false)
		rem, reset = r.Remaining, r.ResetAfter
	}
	ttl := int64(-1)
	if e.exp != 0 {
		ttl = e.exp - c.Now
	}
	w := c.W
	w.Map(9)
	w.BulkString("algorithm")
	w.BulkString(p.Algo.String())
	w.BulkString("limit")
	w.Int(p.Limit)
	w.BulkString("period_ms")
	w.Int(period)
	w.BulkString("burst")
	w.Int(p.Burst)
	w.BulkString("capacity")
	w.Int(capy)
	w.BulkString("remaining")
	w.Int(rem)
	w.BulkString("reset_after_ms")
	w.Int(reset)
	w.BulkString("ttl_ms")
	w.Int(ttl)
	w.BulkString("state")
	w.Array(2)
	w.Int(st.A)
	w.Int(st.B)
}

// cmdRLAllowAll: RL.ALLOWALL numlimits key limit period-ms [key limit
// period-ms ...] [ALGO a] [BURST n] [COST n] — one request of COST units
// against numlimits limits (one key each, distinct keys), all or nothing:
// the units are consumed from every limit only when every limit allows.
// The options after the numlimits triples apply to every inline limit
// (COST to every limit). A limit may instead be "key POLICY name": the
// named policy's parameters (its override for key, if any), as RL.ALLOW
// key POLICY name; it is three words like an inline limit, so that the
// keys stay every third word (the key specs, ACL key checks), and takes
// the request's COST. A limit of a shadow policy that would refuse does
// not refuse the request: its entry says allowed with shadow_denied 1 and
// nothing is consumed from it (as a refusal would leave it). Reply: map
// allowed (1/0), refused (1-based index of the first limit that refused,
// -1 when allowed), retry_after_ms (the longest wait among the refusing
// limits, -1 when allowed), limits (array of maps: key, allowed, limit,
// remaining, retry_after_ms, reset_after_ms, and for a policy limit
// policy, version, shadow_denied — after consumption when allowed, as
// RL.PEEK otherwise). Errors: as RL.ALLOW, plus numlimits not a positive
// integer, too few arguments (syntax), a key given twice; on any error
// nothing changes.
func cmdRLAllowAll(c *Ctx, argv [][]byte) {
	before := len(c.W.B)
	rlAllowAll(c, argv)
	c.rlCountErrorReply(before)
}

func rlAllowAll(c *Ctx, argv [][]byte) {
	n, ok := ParseIntB(argv[1])
	if !ok || n <= 0 {
		c.W.Error(errRLNumLimits)
		return
	}
	if n > int64(len(argv)-2)/3 {
		c.W.Error(ErrSyntax)
		return
	}
	var opts rlArgs
	if !c.parseOpts(argv[2+3*n:], &opts) {
		return
	}
	var bufA [8]rlArgs
	var bufE [8]*entry
	var bufS [8]ratelimit.State
	var bufR [8]ratelimit.Result
	var bufP [8]*RLPolicy
	var bufF [8]uint8
	args, ents, sts, res, pols, flags := bufA[:0], bufE[:0], bufS[:0], bufR[:0], bufP[:0], bufF[:0]
	if n > 8 {
		args, ents = make([]rlArgs, 0, n), make([]*entry, 0, n)
		sts, res = make([]ratelimit.State, 0, n), make([]ratelimit.Result, 0, n)
		pols, flags = make([]*RLPolicy, 0, n), make([]uint8, 0, n)
	}
	for i := int64(0); i < n; i++ {
		a := opts
		a.key = argv[2+3*i]
		for j := range args {
			if string(args[j].key) == string(a.key) {
				c.W.Error(errRLDupKey)
				return
			}
		}
		var pol *RLPolicy
		if EqualFold(argv[3+3*i], "policy") {
			if pol = c.E.Policies.Get(argv[4+3*i]); pol == nil {
				c.W.Error(errNoSuchPolicy(argv[4+3*i]))
				return
			}
			a.p = pol.keyParams(a.key)
		} else if !c.parseLimit(&a, argv[3+3*i], argv[4+3*i]) {
			return
		}
		if !c.validate(&a) {
			return
		}
		args, pols = append(args, a), append(pols, pol)
	}
	for i := range args {
		e, ok := c.lookupKind(args[i].key, KindLimiter, false)
		if !ok {
			return
		}
		var f uint8
		if pol := pols[i]; pol != nil && e != nil && limParams(e).Algo != args[i].p.Algo && pol.ResetMs != 0 {
			// changed with RESETKEYS: the old algorithm's state starts
			// full, as in rlPolicyCall
			f |= allReplace
		}
		ents = append(ents, e)
		if f&allReplace != 0 {
			e = nil
		}
		_, st, ok := c.loadEntry(e, &args[i].p, true)
		if !ok {
			return
		}
		sts, flags = append(sts, st), append(flags, f)
	}
	// first every limit as a peek (the same condition as consuming), so
	// that nothing is written unless every limit allows
	refused := -1
	var retry int64 = -1
	for i := range args {
		st := sts[i]
		r := ratelimit.Decide(&args[i].p, &st, c.Now, args[i].cost, false)
		if !r.Allowed && pols[i] != nil && pols[i].Shadow {
			flags[i] |= allShadowDenied
		} else if !r.Allowed {
			if refused < 0 {
				refused = i + 1
			}
			retry = max(retry, r.RetryAfter)
		}
		res = append(res, r)
	}
	if refused < 0 {
		for i := range args {
			if flags[i]&allShadowDenied != 0 {
				continue
			}
			res[i] = ratelimit.Decide(&args[i].p, &sts[i], c.Now, args[i].cost, true)
			e := ents[i]
			if e == nil {
				e = c.create(args[i].key)
			} else if flags[i]&allReplace != 0 {
				c.DB.setExpire(e, 0)
				e.setObj(KindString, nil)
			}
			c.limStore(e, &args[i].p, &sts[i], res[i].ResetAfter)
			var name []byte
			if pols[i] != nil {
				name = argv[4+3*i]
				c.E.Policies.raiseLive(name, e.exp)
			}
			c.touched(args[i].key)
			c.limEffect(args[i].key, e, false, name)
		}
		c.PreventPropagation()
	}
	for i := range args {
		c.rlCountResult(pols[i], args[i].key, args[i].cost, &res[i], flags[i]&allShadowDenied != 0)
		c.notifyDecision(args[i].key, res[i].Allowed)
	}
	w := c.W
	w.Map(4)
	w.BulkString("allowed")
	if refused < 0 {
		w.Int(1)
	} else {
		w.Int(0)
	}
	w.BulkString("refused")
	w.Int(int64(refused))
	w.BulkString("retry_after_ms")
	w.Int(retry)
	w.BulkString("limits")
	w.Array(len(args))
	for i := range args {
		r := &res[i]
		shadowDenied := flags[i]&allShadowDenied != 0
		if shadowDenied {
			r.Allowed, r.RetryAfter = true, -1
		}
		if pols[i] != nil {
			w.Map(9)
		} else {
			w.Map(6)
		}
		w.BulkString("key")
		w.Bulk(args[i].key)
		w.BulkString("allowed")
		if r.Allowed {
			w.Int(1)
		} else {
			w.Int(0)
		}
		w.BulkString("limit")
		w.Int(r.Limit)
		w.BulkString("remaining")
		w.Int(r.Remaining)
		w.BulkString("retry_after_ms")
		w.Int(r.RetryAfter)
		w.BulkString("reset_after_ms")
		w.Int(r.ResetAfter)
		if pol := pols[i]; pol != nil {
			w.Raw(rlPolicyName)
			w.BulkString(pol.Name)
			w.Raw(rlVersionName)
			w.Int(pol.Version)
			w.Raw(rlShadowDeniedName)
			w.Int(b2i(shadowDenied))
		}
	}
}

// RL.ALLOWALL's per-limit flags.
const (
	allReplace      = 1 << iota // the key holds another algorithm, reset by RESETKEYS
	allShadowDenied             // a shadow policy's limit that would refuse
)

// parseRustInt parses an integer as Rust's i64::from_str does: an
// optional sign ('+' or '-') and decimal digits, nothing else.
func parseRustInt(b []byte) (int64, bool) {
	n, err := strconv.ParseInt(bstr(b), 10, 64)
	return n, err == nil
}

// cmdCLThrottle: CL.THROTTLE key max_burst count period-s [quantity] —
// redis-cell's GCRA: count per period seconds, bursts of max_burst+1.
// quantity (default 1) 0 peeks. Reply (array in RESP2 and RESP3):
// limited (0/1), limit (max_burst+1), remaining, retry_after (s, -1 when
// allowed), reset_after (s), seconds rounded up as redis-cell does.
// Errors are redis-cell's ("Cell error: ..."); negative arguments are
// refused (redis-cell computes nonsense with them).
func cmdCLThrottle(c *Ctx, argv [][]byte) {
	before := len(c.W.B)
	clThrottle(c, argv)
	c.rlCountErrorReply(before)
}

func clThrottle(c *Ctx, argv [][]byte) {
	if len(argv) != 5 && len(argv) != 6 {
		c.W.Error(errCellUsage)
		return
	}
	var v [4]int64
	v[3] = 1
	for i := 2; i < len(argv); i++ {
		n, ok := parseRustInt(argv[i])
		if !ok {
			c.W.Error(errCellParse + string(argv[i]))
			return
		}
		v[i-2] = n
	}
	p := ratelimit.Params{Algo: ratelimit.Cell, Burst: v[0], Limit: v[1], Period: v[2]}
	qty := v[3]
	if p.Limit == 0 || p.Period == 0 {
		c.W.Error(errCellZero)
		return
	}
	if p.Burst < 0 || p.Limit < 0 || p.Period < 0 || qty < 0 {
		c.W.Error(errCellNeg)
		return
	}
	if p.Period > 9e9 {
		c.W.Error(errCellLarge)
		return
	}
	t := ratelimit.CellEmission(&p)
	if t <= 0 || p.Burst >= (1<<62)/t || qty >= (1<<62)/t {
		c.W.Error(errCellLarge)
		return
	}
	e, ok := c.lookupKind(argv[1], KindLimiter, false)
	if !ok {
		return
	}
	var st ratelimit.State
	if e != nil {
		if limParams(e).Algo != ratelimit.Cell {
			c.W.Error(errRLMismatch)
			return
		}
		st = limLoad(e)
	}
	r := ratelimit.CellThrottle(&p, &st, c.Now, qty)
	c.rlCount(nil, argv[1], qty, !r.Limited, false, r.Limit, r.Remaining)
	if !r.Limited && qty > 0 {
		if e == nil {
			e = c.create(argv[1])
		}
		c.limStore(e, &p, &st, r.ResetAfter/1e6)
		c.touched(argv[1])
		c.limEffect(argv[1], e, true, nil)
	}
	if qty > 0 {
		c.notifyDecision(argv[1], !r.Limited)
	}
	w := c.W
	w.Array(5)
	if r.Limited {
		w.Int(1)
	} else {
		w.Int(0)
	}
	w.Int(r.Limit)
	w.Int(r.Remaining)
	w.Int(ratelimit.CellSeconds(r.RetryAfter))
	w.Int(ratelimit.CellSeconds(r.ResetAfter))
}
