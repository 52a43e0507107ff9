package engine

import (
	"math"
	"math/big"
	"sort"
)

// Blocking commands: BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BLMPOP, BZPOPMIN,
// BZPOPMAX and BZMPOP, as Redis 7.0.15's t_list.c, t_zset.c and
// blocked.c. A handler serves at once when one of its keys holds data (and
// records the pop Redis propagates: LPOP, LMOVE, ZPOPMIN key count …);
// otherwise, outside MULTI and scripts, it leaves a Waiter in Ctx.Block
// and writes no reply. The connection layer (server/blocked.go) then
// queues the waiter on its keys (Engine.Block) and parks the client.
//
// Keys become ready when they are created (createIn: Redis's dbAdd calls
// signalKeyAsReady), when SWAPDB or a snapshot load brings them in
// (scanReady). After each unit — a command, a MULTI block, a script — the
// connection layer takes the ready keys in the order they became ready
// and serves their waiters in blocking order, each serve a unit of its
// own (door.Serve → ServeWaiter), as handleClientsBlockedOnKeys does.
//
// Nothing here is replicated state: waiters exist on the executing node
// only. Apply never creates waiters and never looks at them.

// Redis's texts for a bad timeout (timeout.c getTimeoutFromObjectOrReply).
const (
	errTimeoutNotFloat = "ERR timeout is not a float or out of range"
	errTimeoutNegative = "ERR timeout is negative"
)

// BlockOp is what a waiter does once served.
type BlockOp uint8

const (
	OpPop       BlockOp = iota + 1 // BLPOP, BRPOP
	OpMPop                         // BLMPOP
	OpMove                         // BLMOVE
	OpRPopLPush                    // BRPOPLPUSH
	OpZPop                         // BZPOPMIN, BZPOPMAX
	OpZMPop                        // BZMPOP
)

// onList reports whether the op waits for a list (else a sorted set).
func (op BlockOp) onList() bool { return op <= OpRPopLPush }

// Waiter is a client blocked on keys (Redis's client->bpop). The engine
// keeps it in each key's queue, in blocking order; Owner is the
// connection layer's.
type Waiter struct {
	Op      BlockOp
	Front   bool   // LEFT (lists) or MIN (sorted sets)
	ToFront bool   // BLMOVE's destination end
	Count   int64  // BLMPOP/BZMPOP's COUNT; -1 for the single pops
	Dst     string // BLMOVE/BRPOPLPUSH's destination
	DB      *DB
	Keys    []string // distinct, in argument order
	// TimeoutMs is the timeout from the command (0: none), relative;
	// the connection layer turns it into a deadline.
	TimeoutMs int64
	// Rank orders the waiters of a key (first blocked, first served): the
	// connection layer's arrival stamp, kept when a cluster's client is
	// blocked again on a new leader, so that it keeps its place.
	Rank  uint64
	Owner any

	nodes   []WaitNode // one per key, in Keys order (kept for reuse)
	blocked bool
}

// OnList reports whether w waits for a list (else a sorted set).
func (w *Waiter) OnList() bool { return w.Op.onList() }

// Blocked reports whether w is queued on its keys.
func (w *Waiter) Blocked() bool { return w.blocked }

// WaitNode is a waiter's place in one key's queue.
type WaitNode struct {
	w          *Waiter
	q          *waitQueue
	prev, next *WaitNode
}

// waitQueue is one key's waiters, first blocked first.
type waitQueue struct {
	key        string
	head, tail *WaitNode
}

// ReadyKey is a key that may now serve its waiters.
type ReadyKey struct {
	DB  *DB
	Key string
}

// blockState is the engine's part of blocking (node-local, guarded by the
// engine lock like the rest).
type blockState struct {
	// pending: a command blocked (Ctx.Block) or a key became ready since
	// the connection layer last looked (BlockPending: its one test per
	// command)
	pending  bool
	waiters  int
	ready    []ReadyKey
	readySet map[ReadyKey]struct{}
	spare    []ReadyKey   // the previous round's slice, reused
	freeW    []*Waiter    // unblocked waiters for reuse (newWaiter)
	freeQ    []*waitQueue // empty key queues for reuse (newQueue)
	// the last timeout parsed and its value (parseTimeout)
	lastTimeout   string
	lastTimeoutMs int64
}

// Block queues w on each of its keys (Redis's blockForKeys).
func (e *Engine) Block(w *Waiter) {
	db := w.DB
	if db.blocking == nil {
		db.blocking = make(map[string]*waitQueue)
	}
	if cap(w.nodes) < len(w.Keys) {
		w.nodes = make([]WaitNode, len(w.Keys))
	}
	w.nodes = w.nodes[:len(w.Keys)]
	w.blocked = true
	for i, k := range w.Keys {
		q := db.blocking[k]
		if q == nil {
			q = e.newQueue(k)
			db.blocking[k] = q
		}
		// after the last waiter of a lower rank: the tail for a new
		// arrival, further up for one blocked again after a leader change
		after := q.tail
		for after != nil && after.w.Rank > w.Rank {
			after = after.prev
		}
		n := &w.nodes[i]
		*n = WaitNode{w: w, q: q, prev: after}
		if after != nil {
			n.next = after.next
			after.next = n
		} else {
			n.next = q.head
			q.head = n
		}
		if n.next != nil {
			n.next.prev = n
		} else {
			q.tail = n
		}
	}
	e.blk.waiters++
}

// Unblock takes w out of its keys' queues (Redis's
// unblockClientWaitingData). Harmless when w is not blocked.
func (e *Engine) Unblock(w *Waiter) {
	if !w.blocked {
		return
	}
	for i := range w.nodes {
		n := &w.nodes[i]
		q := n.q
		if n.prev != nil {
			n.prev.next = n.next
		} else {
			q.head = n.next
		}
		if n.next != nil {
			n.next.prev = n.prev
		} else {
			q.tail = n.prev
		}
		if q.head == nil {
			delete(w.DB.blocking, q.key)
			if len(e.blk.freeQ) < 64 {
				e.blk.freeQ = append(e.blk.freeQ, q)
			}
		}
		*n = WaitNode{}
	}
	w.blocked = false
	e.blk.waiters--
}

// newQueue returns an empty queue for key (reused: a key's queue comes and
// goes with each waiter of a ping-pong).
func (e *Engine) newQueue(key string) *waitQueue {
	if n := len(e.blk.freeQ); n > 0 {
		q := e.blk.freeQ[n-1]
		e.blk.freeQ = e.blk.freeQ[:n-1]
		q.key = key
		return q
	}
	return &waitQueue{key: key}
}

// newWaiter returns a Waiter to fill: one the connection layer gave back
// (FreeWaiter) when there is one. Blocking allocated a Waiter, its keys
// and its nodes each time: a ping-pong of BLPOP/LPUSH spent a third of its
// allocations there.
func (e *Engine) newWaiter() *Waiter {
	if n := len(e.blk.freeW); n > 0 {
		w := e.blk.freeW[n-1]
		e.blk.freeW = e.blk.freeW[:n-1]
		return w
	}
	return &Waiter{}
}

// FreeWaiter gives w back once it is unblocked and nothing refers to it
// (the lock is held).
func (e *Engine) FreeWaiter(w *Waiter) {
	if w.blocked || len(e.blk.freeW) >= 64 {
		return
	}
	keys, nodes := w.Keys[:0], w.nodes[:0]
	clear(w.Keys)
	*w = Waiter{Keys: keys, nodes: nodes}
	e.blk.freeW = append(e.blk.freeW, w)
}

// BlockedClients is the number of waiters (INFO's blocked_clients).
func (e *Engine) BlockedClients() int { return e.blk.waiters }

// keyCreated notes that key was added to db (Redis's dbAdd →
// signalKeyAsReady). The caller has checked len(db.blocking) != 0, so a
// node where nobody blocks pays that one test per key creation. Redis
// also filters on the new value's type (a string never serves anyone);
// the type is not set yet here, so a key created as another type is
// queued too and skipped when served (its waiters stay blocked): only the
// order of ready keys within one unit can differ, for a key created first
// as another type and later, in the same unit, as a list or sorted set.
func (e *Engine) keyCreated(db *DB, key string) {
	if db.blocking[key] == nil {
		return
	}
	e.markReady(db, key)
}

func (e *Engine) markReady(db *DB, key string) {
	rk := ReadyKey{db, key}
	if _, dup := e.blk.readySet[rk]; dup {
		return
	}
	if e.blk.readySet == nil {
		e.blk.readySet = make(map[ReadyKey]struct{})
	}
	rk.Key = db.blocking[key].key // the queue's copy: key may alias a buffer
	e.blk.readySet[rk] = struct{}{}
	e.blk.ready = append(e.blk.ready, rk)
	e.blk.pending = true
}

// scanReady marks every key of db with waiters that now exists as a list
// or a sorted set (Redis's scanDatabaseForReadyKeys, after SWAPDB or a
// load). Redis walks its hash table; the keys are taken in byte order here
// so that the order is the same on every run.
func (e *Engine) scanReady(db *DB) {
	if len(db.blocking) == 0 {
		return
	}
	keys := make([]string, 0, len(db.blocking))
	for k := range db.blocking {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if en := db.dict.find(k); en != nil && (en.kind == KindList || en.kind == KindZSet) {
			e.markReady(db, k)
		}
	}
}

// BlockPending reports whether a command asked to block or a key became
// ready since ClearBlockPending: one field test, what the connection
// layer pays after each command.
func (e *Engine) BlockPending() bool { return e.blk.pending }

// ClearBlockPending is called once the connection layer has blocked the
// client and served the ready keys.
func (e *Engine) ClearBlockPending() { e.blk.pending = false }

// HasReady reports whether keys are waiting to serve their waiters.
func (e *Engine) HasReady() bool { return len(e.blk.ready) != 0 }

// DropReady forgets the ready keys (every waiter was taken away: the node
// stopped executing).
func (e *Engine) DropReady() {
	clear(e.blk.readySet)
	e.blk.ready = e.blk.ready[:0]
	e.blk.pending = false
}

// TakeReady returns the keys that became ready, in that order, and starts
// a new list: serving them (a BLMOVE's push) may make more keys ready,
// which the caller takes in its next round. Each key stays in the ready
// set until ReadyDone, so it is not queued twice meanwhile.
func (e *Engine) TakeReady() []ReadyKey {
	l := e.blk.ready
	e.blk.ready = e.blk.spare[:0]
	e.blk.spare = nil
	return l
}

// ReadyDone takes rk out of the ready set (before its waiters are served,
// as Redis does) and, after the round, gives back the round's slice.
func (e *Engine) ReadyDone(rk ReadyKey) { delete(e.blk.readySet, rk) }

// RoundDone returns a round's slice for reuse.
func (e *Engine) RoundDone(l []ReadyKey) {
	clear(l)
	if e.blk.spare == nil && cap(l) <= 64 {
		e.blk.spare = l[:0]
	}
}

// FirstWaiter returns the first waiter node of key in db, for a walk
// with Next (nil when none). The walk may unblock the waiter it stands
// on: take Next first.
func (db *DB) FirstWaiter(key string) *WaitNode {
	if q := db.blocking[key]; q != nil {
		return q.head
	}
	return nil
}

// Next is the node after n (nil at the end).
func (n *WaitNode) Next() *WaitNode { return n.next }

// Waiter is the waiter at n.
func (n *WaitNode) Waiter() *Waiter { return n.w }

// ReadyKind looks the ready key up as Redis's handleClientsBlockedOnKeys
// does (a key found past its deadline is deleted, which is a DEL effect)
// and returns its kind (KindNone when missing).
func (c *Ctx) ReadyKind(db *DB, key string) Kind {
	c.DB = db
	e := c.find(db, key)
	if e == nil {
		return KindNone
	}
	return e.kind
}

// findWrite is lookupWrite for a string key in db.
func (c *Ctx) findWrite(db *DB, key string) *entry {
	e := c.find(db, key)
	if e != nil {
		c.touchLRU(e)
		if c.E.cow.active.Load() != 0 {
			c.E.cowEntry(e)
		}
	}
	return e
}

// ServeWaiter serves w from key (a list or sorted set holding data, of
// the kind w waits for): the pop, its reply on c.W (the waiter's writer,
// in its protocol) and its effect as Redis 7.0 propagates it (serve
// ClientBlockedOnList / serveClientsBlockedOnSortedSetKey). It reports
// whether the key was emptied and deleted. c.DB is w.DB.
func (c *Ctx) ServeWaiter(w *Waiter, key string) (deleted bool) {
	c.DB = w.DB
	e := c.findWrite(w.DB, key)
	if e == nil {
		return true
	}
	if w.Op.onList() {
		return c.serveList(w, key, e)
	}
	return c.serveZSet(w, key, e)
}

func (c *Ctx) serveList(w *Waiter, key string, e *entry) bool {
	l := e.list()
	switch w.Op {
	case OpPop:
		if f := c.also(2); f != nil {
			f.argStr(popName(w.Front))
			f.argStr(key)
		}
		var v lelem
		if w.Front {
			v = l.PopFront()
		} else {
			v = l.PopBack()
		}
		c.W.Array(2)
		c.W.BulkString(key)
		v.write(c.W)
		c.notifyKey(w.DB, NotifyList, popEvent(w.Front), key)
	case OpMPop:
		n := int(min(w.Count, int64(l.Len())))
		if f := c.also(3); f != nil {
			f.argStr(popName(w.Front))
			f.argStr(key)
			f.argInt(int64(n))
		}
		c.W.Array(2)
		c.W.BulkString(key)
		c.W.Array(n)
		for i := 0; i < n; i++ {
			if w.Front {
				l.PopFront().write(c.W)
			} else {
				l.PopBack().write(c.W)
			}
		}
		// listElementsRemoved: the event, signalModifiedKey, dirty += count
		c.notifyKey(w.DB, NotifyList, popEvent(w.Front), key)
		c.signal(w.DB, key)
		c.E.Stats.Dirty += int64(n) - 1
	default: // OpMove, OpRPopLPush
		dst := c.findWrite(w.DB, w.Dst)
		if dst != nil && dst.kind != KindList {
			c.W.Error(ErrWrongType)
			return false
		}
		var v lelem
		if w.Front {
			v = l.PopFront()
		} else {
			v = l.PopBack()
		}
		if dst == nil {
			dst = c.createIn(w.DB, w.Dst)
			dst.setList(List{c.newLP()})
		}
		c.signal(w.DB, w.Dst)
		if w.ToFront {
			dst.list().PushFront(v)
		} else {
			dst.list().PushBack(v)
		}
		v.write(c.W)
		// lmoveHandlePush's event, then the source's
		c.notifyKey(w.DB, NotifyList, pushEvent(w.ToFront), w.Dst)
		c.notifyKey(w.DB, NotifyList, popEvent(w.Front), key)
		if w.Op == OpRPopLPush {
			if f := c.also(3); f != nil {
				f.argStr("RPOPLPUSH")
				f.argStr(key)
				f.argStr(w.Dst)
			}
		} else if f := c.also(5); f != nil {
			f.argStr("LMOVE")
			f.argStr(key)
			f.argStr(w.Dst)
			f.argStr(sideName(w.Front))
			f.argStr(sideName(w.ToFront))
		}
	}
	// No signalModifiedKey for the source: the push that made it ready
	// did (Redis's comment in serveClientBlockedOnList).
	if l.Len() == 0 {
		w.DB.removeEntry(e)
		c.notifyKey(w.DB, NotifyGeneric, "del", key)
		return true
	}
	return false
}

func (c *Ctx) serveZSet(w *Waiter, key string, e *entry) bool {
	count := int64(-1)
	if w.Op == OpZMPop {
		count = w.Count
	}
	return c.zpopFrom(e, e.zset(), key, w.Front, count, c.also)
}

func popName(front bool) string {
	if front {
		return "LPOP"
	}
	return "RPOP"
}

func zpopName(min bool) string {
	if min {
		return "ZPOPMIN"
	}
	return "ZPOPMAX"
}

// sideName is what Redis writes for a served BLMOVE's ends (its shared
// "left" and "right" objects, lower case).
func sideName(front bool) string {
	if front {
		return "left"
	}
	return "right"
}

// --- the commands --------------------------------------------------------

func init() {
	Register(
		&Command{Name: "blpop", Arity: -3, Flags: "write noscript blocking noeffect", FirstKey: 1, LastKey: -2, Step: 1, Group: "list", Since: "2.0.0", Summary: "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", Run: cmdBLPop},
		&Command{Name: "brpop", Arity: -3, Flags: "write noscript blocking noeffect", FirstKey: 1, LastKey: -2, Step: 1, Group: "list", Since: "2.0.0", Summary: "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", Run: cmdBRPop},
		&Command{Name: "brpoplpush", Arity: 4, Flags: "write denyoom noscript blocking noeffect", FirstKey: 1, LastKey: 2, Step: 1, Group: "list", Since: "2.2.0", Summary: "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped.", Run: cmdBRPopLPush},
		&Command{Name: "blmove", Arity: 6, Flags: "write denyoom noscript blocking noeffect", FirstKey: 1, LastKey: 2, Step: 1, Group: "list", Since: "6.2.0", Summary: "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved.", Run: cmdBLMove},
		&Command{Name: "blmpop", Arity: -5, Flags: "write blocking noeffect", Group: "list", Since: "7.0.0", Summary: "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", Run: cmdBLMPop},
		&Command{Name: "bzpopmin", Arity: -3, Flags: "write noscript fast blocking noeffect", FirstKey: 1, LastKey: -2, Step: 1, Group: "sorted-set", Since: "5.0.0", Summary: "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", Run: cmdBZPopMin},
		&Command{Name: "bzpopmax", Arity: -3, Flags: "write noscript fast blocking noeffect", FirstKey: 1, LastKey: -2, Step: 1, Group: "sorted-set", Since: "5.0.0", Summary: "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped.", Run: cmdBZPopMax},
		&Command{Name: "bzmpop", Arity: -5, Flags: "write blocking noeffect", Group: "sorted-set", Since: "7.0.0", Summary: "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", Run: cmdBZMPop},
	)
}

// parseTimeout is getTimeoutFromObjectOrReply with UNIT_SECONDS: a long
// double in seconds (strtold's syntax, hex included), times 1000 and
// rounded up, converted to a long long as x86 does (a value past its range
// becomes LLONG_MIN, hence "timeout is negative" for 1e300 or inf). It
// returns the timeout in ms (0: none).
func (c *Ctx) parseTimeout(b []byte) (int64, bool) {
	// clients repeat their timeout: the last one parsed is kept (none at
	// first: "" matched the empty cache and blocked forever, where Redis
	// answers "timeout is not a float")
	if bc := &c.E.blk; len(b) != 0 && len(b) == len(bc.lastTimeout) && string(b) == bc.lastTimeout {
		return bc.lastTimeoutMs, true
	}
	ms, err := ParseBlockTimeout(b)
	if err == "" && len(b) <= 32 && !isDigits(b) {
		c.E.blk.lastTimeout, c.E.blk.lastTimeoutMs = string(b), ms
	}
	if err != "" {
		c.W.Error(err)
		return 0, false
	}
	return ms, true
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ParseBlockTimeout parses a blocking command's timeout (see
// parseTimeout): the timeout in ms, or Redis's error text.
func ParseBlockTimeout(b []byte) (int64, string) {
	// an integer number of seconds is exact without the long double
	// (math/big cost a ping-pong of BLPOP/LPUSH 7% of the server's CPU)
	if len(b) <= 9 {
		if n, ok := ParseIntB(b); ok {
			if n < 0 {
				return 0, errTimeoutNegative
			}
			return n * 1000, ""
		}
	}
	f, ok := parseLongDouble(bstr(b))
	if !ok {
		return 0, errTimeoutNotFloat
	}
	ms := int64(math.MinInt64)
	if !f.IsInf() {
		x := new(big.Float).SetPrec(64).Mul(f, big.NewFloat(1000))
		if i, acc := x.Int(nil); i != nil {
			if acc == big.Below { // Int truncates toward zero: ceil
				i.Add(i, big.NewInt(1))
			}
			if i.IsInt64() {
				ms = i.Int64()
			}
		}
	}
	if ms < 0 {
		return 0, errTimeoutNegative
	}
	return ms, ""
}

// TimeoutArg is the position of a blocking command's timeout in argv
// (BLMPOP and BZMPOP: first; the others: last).
func TimeoutArg(cmd *Command, argv [][]byte) int {
	if cmd.Name == "blmpop" || cmd.Name == "bzmpop" {
		return 1
	}
	return len(argv) - 1
}

// denyBlocking: inside MULTI and scripts a blocking command never blocks
// (Redis's CLIENT_DENY_BLOCKING); it answers as on a timeout.
func (c *Ctx) denyBlocking() bool { return c.InMulti || c.InScript }

// blockOn makes the running command wait on keys (none held anything to
// pop): op with its end (front), count (-1: a single pop) and timeout in
// ms. Inside MULTI or a script it cannot block and answers the null
// array, as Redis's blocking pops do.
func (c *Ctx) blockOn(keys [][]byte, op BlockOp, front bool, count, timeout int64) {
	if c.denyBlocking() {
		c.W.NullArray()
		return
	}
	w := c.E.newWaiter()
	w.Op, w.Front, w.Count, w.TimeoutMs = op, front, count, timeout
	w.Keys = distinctKeys(w.Keys, keys)
	c.block(w)
}

// block asks the connection layer to block the client on w (the command
// writes no reply).
func (c *Ctx) block(w *Waiter) {
	w.DB = c.DB
	c.Block = w
	c.E.blk.pending = true
}

// distinctKeys appends copies of the keys to out, once each (Redis's
// bpop.keys is a set).
func distinctKeys(out []string, keys [][]byte) []string {
next:
	for _, k := range keys {
		for _, o := range out {
			if o == bstr(k) {
				continue next
			}
		}
		out = append(out, string(k))
	}
	return out
}

// cmdBLPop: BLPOP key [key …] timeout — LPOP of the first non-empty list:
// [key, element]; with every list missing the client blocks until one of
// them gets data, or the timeout (null array). Errors: the timeout's (it
// is parsed first), WRONGTYPE for a non-list met before a non-empty list.
// Effect: LPOP key (served later too).
func cmdBLPop(c *Ctx, argv [][]byte) { c.bpop(argv, true) }

// cmdBRPop: BRPOP key [key …] timeout — BLPOP from the tail (RPOP).
func cmdBRPop(c *Ctx, argv [][]byte) { c.bpop(argv, false) }

func (c *Ctx) bpop(argv [][]byte, front bool) {
	timeout, ok := c.parseTimeout(argv[len(argv)-1])
	if !ok {
		return
	}
	keys := argv[1 : len(argv)-1]
	for _, key := range keys {
		e, ok := c.lookupList(key, false)
		if !ok {
			return
		}
		if e == nil {
			continue
		}
		l := e.list()
		var v lelem
		if front {
			v = l.PopFront()
		} else {
			v = l.PopBack()
		}
		c.W.Array(2)
		c.W.Bulk(key)
		v.write(c.W)
		c.removeIfEmpty(e, l.Len() == 0)
		c.touched(key)
		c.notifyPopped(key, front, l.Len() == 0)
		if f := c.own(2); f != nil {
			f.argStr(popName(front))
			f.arg(key)
		}
		return
	}
	c.blockOn(keys, OpPop, front, -1, timeout)
}

// cmdBLMove: BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout —
// LMOVE, blocking while source is missing. Errors: syntax error for the
// ends (checked first), the timeout's, WRONGTYPE. A timeout answers the
// null array; inside MULTI or a script an empty source gives a null bulk
// (Redis's replies). Effect: LMOVE with the ends as sent (RPOPLPUSH for
// BRPOPLPUSH); served later, LMOVE … left|right left|right.
func cmdBLMove(c *Ctx, argv [][]byte) {
	from, ok := c.parseWhere(argv[3])
	if !ok {
		return
	}
	to, ok := c.parseWhere(argv[4])
	if !ok {
		return
	}
	timeout, ok := c.parseTimeout(argv[5])
	if !ok {
		return
	}
	c.blmove(argv, from, to, timeout, OpMove)
}

// cmdBRPopLPush: BRPOPLPUSH source destination timeout — BLMOVE source
// destination RIGHT LEFT timeout.
func cmdBRPopLPush(c *Ctx, argv [][]byte) {
	timeout, ok := c.parseTimeout(argv[3])
	if !ok {
		return
	}
	c.blmove(argv, false, true, timeout, OpRPopLPush)
}

func (c *Ctx) blmove(argv [][]byte, from, to bool, timeout int64, op BlockOp) {
	src, ok := c.lookupList(argv[1], false)
	if !ok {
		return
	}
	if src == nil {
		if c.denyBlocking() {
			c.W.Null()
			return
		}
		w := c.E.newWaiter()
		w.Op, w.Front, w.ToFront, w.Count, w.Dst, w.TimeoutMs = op, from, to, -1, string(argv[2]), timeout
		w.Keys = append(w.Keys, string(argv[1]))
		c.block(w)
		return
	}
	dirty := c.E.Stats.Dirty
	c.lmove(argv[1], argv[2], from, to)
	if c.E.Stats.Dirty == dirty {
		return // WRONGTYPE for the destination
	}
	if op == OpRPopLPush {
		c.Rewrite(Args("RPOPLPUSH").B(argv[1], argv[2]))
	} else {
		c.Rewrite(Args("LMOVE").B(argv[1], argv[2], argv[3], argv[4]))
	}
}

// cmdBLMPop: BLMPOP timeout numkeys key [key …] LEFT|RIGHT [COUNT count]
// — LMPOP, blocking while every list is missing: [key, [elements]], the
// null array on timeout. Errors: LMPOP's (checked before the timeout),
// the timeout's, WRONGTYPE. Effect: LPOP|RPOP key <number popped>.
func cmdBLMPop(c *Ctx, argv [][]byte) {
	keys, front, count, ok := c.parseMPop(argv, 2, false)
	if !ok {
		return
	}
	timeout, ok := c.parseTimeout(argv[1])
	if !ok || c.lmpopFirst(keys, front, count) {
		return
	}
	c.blockOn(keys, OpMPop, front, count, timeout)
}

// cmdBZPopMin: BZPOPMIN key [key …] timeout — ZPOPMIN of the first
// non-empty sorted set: [key, member, score]; blocks while every key is
// missing (null array on timeout). Errors: the timeout's, WRONGTYPE.
// Effect: ZPOPMIN key.
func cmdBZPopMin(c *Ctx, argv [][]byte) { c.bzpop(argv, true) }

// cmdBZPopMax: BZPOPMAX key [key …] timeout — as BZPOPMIN, highest score.
func cmdBZPopMax(c *Ctx, argv [][]byte) { c.bzpop(argv, false) }

func (c *Ctx) bzpop(argv [][]byte, min bool) {
	timeout, ok := c.parseTimeout(argv[len(argv)-1])
	if !ok {
		return
	}
	keys := argv[1 : len(argv)-1]
	if c.zpopFirst(keys, min, -1) {
		return
	}
	c.blockOn(keys, OpZPop, min, -1, timeout)
}

// cmdBZMPop: BZMPOP timeout numkeys key [key …] MIN|MAX [COUNT count] —
// ZMPOP, blocking while every key is missing: [key, [[member, score] …]],
// the null array on timeout. Errors: ZMPOP's, the timeout's, WRONGTYPE.
// Effect: ZPOPMIN|ZPOPMAX key <number popped>.
func cmdBZMPop(c *Ctx, argv [][]byte) {
	keys, min, count, ok := c.parseMPop(argv, 2, true)
	if !ok {
		return
	}
	timeout, ok := c.parseTimeout(argv[1])
	if !ok {
		return
	}
	if c.zpopFirst(keys, min, count) {
		return
	}
	c.blockOn(keys, OpZMPop, min, count, timeout)
}
