package engine

import (
	"slices"
	"strconv"
	"unsafe"
)

// Set error texts not shared with other files.
const errSRandRange = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"

const (
	setIndexMin = 16 // members from which a hashtable set keeps a member index
)

func init() {
	Register(
		&Command{Name: "sadd", Arity: -3, Flags: "write denyoom fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0", Summary: "Adds one or more members to a set. Creates the key if it doesn't exist.", Run: cmdSAdd},
		&Command{Name: "srem", Arity: -3, Flags: "write fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0", Summary: "Removes one or more members from a set. Deletes the set if the last member was removed.", Run: cmdSRem},
		&Command{Name: "sismember", Arity: 3, Flags: "readonly fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0", Summary: "Determines whether a member belongs to a set.", Run: cmdSIsMember},
		&Command{Name: "smismember", Arity: -3, Flags: "readonly fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "6.2.0", Summary: "Determines whether multiple members belong to a set.", Run: cmdSMIsMember},
		&Command{Name: "scard", Arity: 2, Flags: "readonly fast", FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0", Summary: "Returns the number of members in a set.", Run: cmdSCard},
		&Command{Name: "smembers", Arity: 2, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0", Summary: "Returns all members of a set.", Run: cmdSMembers},
		&Command{Name: "spop", Arity: -2, Flags: "write fast noeffect", FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0", Summary: "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.", Run: cmdSPop},
		&Command{Name: "srandmember", Arity: -2, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0", Summary: "Get one or multiple random members from a set", Run: cmdSRandMember},
		&Command{Name: "sscan", Arity: -3, Flags: "readonly", FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "2.8.0", Summary: "Iterates over members of a set.", Run: cmdSScan},
	)
	RegisterKind(KindSet, KindOps{Clone: func(p unsafe.Pointer, n int64) (unsafe.Pointer, int64) {
		return unsafe.Pointer((*Set)(p).clone()), n
	}})
}

// Set is a set value in one of Redis 7.0's two encodings:
//
//   - intset (ht false): ints, sorted, while every member is an integer in
//     canonical form (string2ll) and there are at most 512 of them; replies
//     list them in ascending order, exactly as Redis;
//   - hashtable (ht true, never reverted): members in insertion order, a
//     removal moving the last member into the hole, plus a member index
//     once there are setIndexMin members. Redis replies in its hash-table
//     order here; ours is deterministic but different.
type Set struct {
	ints    []int64
	members []string
	idx     map[string]int32
	ht      bool
	gen     uint32 // copy-on-write generation (cow.go)
}

// set returns the Set of a set entry.
func (e *entry) set() *Set { return (*Set)(e.p) }

// Len is the number of members.
func (s *Set) Len() int {
	if s.ht {
		return len(s.members)
	}
	return len(s.ints)
}

func (s *Set) findMember(m string) int {
	if s.idx != nil {
		if i, ok := s.idx[m]; ok {
			return int(i)
		}
		return -1
	}
	for i, x := range s.members {
		if x == m {
			return i
		}
	}
	return -1
}

// Has reports whether m is a member.
func (s *Set) Has(m string) bool {
	if s.ht {
		return s.findMember(m) >= 0
	}
	n, ok := ParseInt(m)
	if !ok {
		return false
	}
	_, found := slices.BinarySearch(s.ints, n)
	return found
}

// toHT converts an intset to the hashtable encoding.
func (s *Set) toHT() {
	s.members = make([]string, len(s.ints), len(s.ints)+1)
	for i, n := range s.ints {
		s.members[i] = strconv.FormatInt(n, 10)
	}
	s.ints = nil
	s.ht = true
	if len(s.members) >= setIndexMin {
		s.buildIndex()
	}
}

func (s *Set) buildIndex() {
	s.idx = make(map[string]int32, len(s.members))
	for i, m := range s.members {
		s.idx[m] = int32(i)
	}
}

// Add adds m (a lookup view; copied when stored) and reports whether it is new.
func (s *Set) Add(m string) bool { return s.add(m, &defaultLimits) }

// add is Add under the limits lim: an all-integer set of at most
// set-max-intset-entries members is an intset, which replies in sorted
// order.
func (s *Set) add(m string, lim *EncodingLimits) bool {
	if !s.ht {
		if n, ok := ParseInt(m); ok {
			i, found := slices.BinarySearch(s.ints, n)
			if found {
				return false
			}
			s.ints = slices.Insert(s.ints, i, n)
			if int64(len(s.ints)) > lim.SetMaxIntsetEntries {
				s.toHT()
			}
			return true
		}
		s.toHT()
	}
	if s.findMember(m) >= 0 {
		return false
	}
	c := string([]byte(m))
	s.members = append(s.members, c)
	if s.idx != nil {
		s.idx[c] = int32(len(s.members) - 1)
	} else if len(s.members) >= setIndexMin {
		s.buildIndex()
	}
	return true
}

// Rem removes m and reports whether it was a member.
func (s *Set) Rem(m string) bool {
	if !s.ht {
		n, ok := ParseInt(m)
		if !ok {
			return false
		}
		i, found := slices.BinarySearch(s.ints, n)
		if !found {
			return false
		}
		s.removeAt(i)
		return true
	}
	i := s.findMember(m)
	if i < 0 {
		return false
	}
	s.removeAt(i)
	return true
}

// removeAt removes the member at position i (of ints or members).
func (s *Set) removeAt(i int) {
	if !s.ht {
		s.ints = slices.Delete(s.ints, i, i+1)
		return
	}
	last := len(s.members) - 1
	if s.idx != nil {
		delete(s.idx, s.members[i])
	}
	if i != last {
		s.members[i] = s.members[last]
		if s.idx != nil {
			s.idx[s.members[i]] = int32(i)
		}
	}
	s.members[last] = ""
	s.members = s.members[:last]
	if s.idx != nil && last < setIndexMin/2 {
		s.idx = nil
	}
	if cap(s.members) > 32 && len(s.members)*4 < cap(s.members) {
		s.members = append([]string(nil), s.members...)
	}
}

// writeAt replies the member at position i as a bulk string.
func (s *Set) writeAt(c *Ctx, i int) {
	if s.ht {
		c.W.BulkString(s.members[i])
	} else {
		var tmp [24]byte
		c.W.Bulk(appendInt(tmp[:0], s.ints[i])) // BulkInt would allocate
	}
}

// memberAt returns the member at position i as a string.
func (s *Set) memberAt(i int) string {
	if s.ht {
		return s.members[i]
	}
	return strconv.FormatInt(s.ints[i], 10)
}

func (s *Set) clone() *Set {
	c := &Set{ht: s.ht}
	if s.ht {
		c.members = slices.Clone(s.members)
		if s.idx != nil {
			c.buildIndex()
		}
	} else {
		c.ints = slices.Clone(s.ints)
	}
	return c
}

// lookupSet returns the live set at key (nil when missing); WRONGTYPE is
// written and ok=false when the key holds another type.
func (c *Ctx) lookupSet(key []byte, read bool) (*entry, bool) {
	return c.lookupKind(key, KindSet, read)
}

// cmdSAdd: SADD key member [member ...] — add members, creating the set.
// Reply: the number of members added. Errors: WRONGTYPE.
func cmdSAdd(c *Ctx, argv [][]byte) {
	e, ok := c.lookupSet(argv[1], false)
	if !ok {
		return
	}
	if e == nil {
		e = c.create(argv[1])
		e.setObj(KindSet, unsafe.Pointer(&Set{}))
	}
	s := e.set()
	var n int64
	for _, m := range argv[2:] {
		if s.add(bstr(m), &c.E.Enc) {
			n++
		}
	}
	if n > 0 {
		c.touched(argv[1])
		c.notify(NotifySet, "sadd", argv[1])
	}
	c.W.Int(n)
}

// cmdSRem: SREM key member [member ...] — remove members; the key is
// deleted when the set becomes empty. Reply: the number removed.
// Errors: WRONGTYPE.
func cmdSRem(c *Ctx, argv [][]byte) {
	e, ok := c.lookupSet(argv[1], false)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	s := e.set()
	var n int64
	for _, m := range argv[2:] {
		if s.Rem(bstr(m)) {
			n++
			if s.Len() == 0 {
				break
			}
		}
	}
	if n > 0 {
		c.removeIfEmpty(e, s.Len() == 0)
		c.touched(argv[1])
		c.notify(NotifySet, "srem", argv[1])
		if s.Len() == 0 {
			c.notify(NotifyGeneric, "del", argv[1])
		}
	}
	c.W.Int(n)
}

// cmdSIsMember: SISMEMBER key member — 1 if member is in the set, else 0.
func cmdSIsMember(c *Ctx, argv [][]byte) {
	e, ok := c.lookupSet(argv[1], true)
	if !ok {
		return
	}
	if e != nil && e.set().Has(bstr(argv[2])) {
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}

// cmdSMIsMember: SMISMEMBER key member [member ...] — an array of 1/0
// integers, one per member (all 0 for a missing key).
func cmdSMIsMember(c *Ctx, argv [][]byte) {
	e, ok := c.lookupSet(argv[1], true)
	if !ok {
		return
	}
	c.W.Array(len(argv) - 2)
	for _, m := range argv[2:] {
		if e != nil && e.set().Has(bstr(m)) {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
	}
}

// cmdSCard: SCARD key — the number of members, 0 for a missing key.
func cmdSCard(c *Ctx, argv [][]byte) {
	e, ok := c.lookupSet(argv[1], true)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(e.set().Len()))
}

// writeWholeSet replies every member of s with a set header ("~" in RESP3).
func (c *Ctx) writeWholeSet(s *Set) {
	n := s.Len()
	c.W.Set(n)
	for i := 0; i < n; i++ {
		s.writeAt(c, i)
	}
}

// cmdSMembers: SMEMBERS key — every member: a RESP3 set ("~"), an array in
// RESP2; empty for a missing key. Intsets reply in ascending order.
func cmdSMembers(c *Ctx, argv [][]byte) {
	e, ok := c.lookupSet(argv[1], true)
	if !ok {
		return
	}
	if e == nil {
		c.W.Set(0)
		return
	}
	c.writeWholeSet(e.set())
}

// cmdSPop: SPOP key [count] — remove and return random members (c.rng()).
// Without count: a bulk string, null for a missing key. With count (>= 0,
// else "value is out of range, must be positive"): a set reply ("~" in
// RESP3) of min(count, SCARD) members, empty for a missing key or count 0;
// when count >= SCARD the whole set is returned in its order and the key
// deleted. More arguments are a syntax error. The key is deleted when
// emptied. Errors: WRONGTYPE. Effects (Redis 7.0.15's): SREM key member
// without count (also when it empties the set); with a count, DEL key when
// it takes the whole set, else one SREM key member per member popped.
func cmdSPop(c *Ctx, argv [][]byte) {
	if len(argv) > 3 {
		c.W.Error(ErrSyntax)
		return
	}
	if len(argv) == 3 {
		c.spopCount(argv)
		return
	}
	e, ok := c.lookupSet(argv[1], false)
	if !ok {
		return
	}
	if e == nil {
		c.W.Null()
		return
	}
	s := e.set()
	i := c.rng().Intn(s.Len())
	c.notify(NotifySet, "spop", argv[1])
	s.writeAt(c, i)
	if f := c.own(3); f != nil {
		f.argStr("SREM")
		f.arg(argv[1])
		s.argAt(f, i)
	}
	s.removeAt(i)
	c.removeIfEmpty(e, s.Len() == 0)
	c.touched(argv[1])
	if s.Len() == 0 {
		c.notify(NotifyGeneric, "del", argv[1])
	}
}

// argAt appends the member at position i to an effect.
func (s *Set) argAt(f *Effects, i int) {
	if s.ht {
		f.argStr(s.members[i])
	} else {
		f.argInt(s.ints[i])
	}
}

func (c *Ctx) spopCount(argv [][]byte) {
	count, ok := ParseIntB(argv[2])
	if !ok || count < 0 {
		c.W.Error(ErrNotPositive)
		return
	}
	e, ok := c.lookupSet(argv[1], false)
	if !ok {
		return
	}
	if e == nil || count == 0 {
		c.W.Set(0)
		return
	}
	s := e.set()
	c.notify(NotifySet, "spop", argv[1])
	if count >= int64(s.Len()) {
		c.writeWholeSet(s)
		c.DB.removeEntry(e)
		c.notify(NotifyGeneric, "del", argv[1])
		c.touched(argv[1])
		c.ownDel(argv[1])
		return
	}
	c.W.Set(int(count))
	for k := int64(0); k < count; k++ {
		i := c.rng().Intn(s.Len())
		s.writeAt(c, i)
		// one SREM per member, in the reply's order (Redis 7.0.15)
		if f := c.also(3); f != nil {
			f.argStr("SREM")
			f.arg(argv[1])
			s.argAt(f, i)
		}
		s.removeAt(i)
	}
	c.PreventPropagation()
	c.touched(argv[1])
}

// cmdSRandMember: SRANDMEMBER key [count] — random members (c.rng()),
// the set unchanged. Without count: a bulk string, null for a missing key.
// With count: an array; count > 0 gives min(count, SCARD) distinct members
// (the whole set, in its order, when count >= SCARD); count < 0 gives -count
// members that may repeat; count 0 or a missing key give an empty array.
// Errors: not an integer, out of range (LLONG_MIN), syntax error for more
// arguments, WRONGTYPE.
func cmdSRandMember(c *Ctx, argv [][]byte) {
	if len(argv) > 3 {
		c.W.Error(ErrSyntax)
		return
	}
	if len(argv) == 2 {
		e, ok := c.lookupSet(argv[1], true)
		if !ok {
			return
		}
		if e == nil {
			c.W.Null()
			return
		}
		s := e.set()
		s.writeAt(c, c.rng().Intn(s.Len()))
		return
	}
	count, ok := ParseIntB(argv[2])
	if !ok {
		c.W.Error(ErrNotInt)
		return
	}
	if count == -1<<63 {
		c.W.Error(errSRandRange)
		return
	}
	e, ok := c.lookupSet(argv[1], true)
	if !ok {
		return
	}
	if e == nil || count == 0 {
		c.W.EmptyArray()
		return
	}
	s := e.set()
	n := s.Len()
	if count < 0 {
		if c.randCountTooLarge(count) {
			return
		}
		start := len(c.W.B)
		c.W.Array(int(-count))
		for k := int64(0); k < -count; k++ {
			if k&1023 == 1023 && c.randReplyTooLarge(start) {
				return
			}
			s.writeAt(c, c.rng().Intn(n))
		}
		return
	}
	if count >= int64(n) {
		c.W.Array(n)
		for i := 0; i < n; i++ {
			s.writeAt(c, i)
		}
		return
	}
	if count*4 < int64(n) {
		// few of many: draw positions until count distinct ones
		seen := make(map[int]struct{}, count)
		c.W.Array(int(count))
		for len(seen) < int(count) {
			i := c.rng().Intn(n)
			if _, dup := seen[i]; dup {
				continue
			}
			seen[i] = struct{}{}
			s.writeAt(c, i)
		}
		return
	}
	// partial Fisher-Yates over positions
	pos := make([]int32, n)
	for i := range pos {
		pos[i] = int32(i)
	}
	c.W.Array(int(count))
	for k := 0; k < int(count); k++ {
		j := k + c.rng().Intn(n-k)
		pos[k], pos[j] = pos[j], pos[k]
		s.writeAt(c, int(pos[k]))
	}
}

// cmdSScan: SSCAN key cursor [MATCH pattern] [COUNT count] — iterate the
// set. Reply: [next cursor, array of members]. An intset is returned whole
// with cursor 0 (COUNT ignored), as Redis does; a hashtable set is walked
// COUNT members per call with the cursor as a position (cursor values differ
// from Redis's). Errors as HSCAN.
func cmdSScan(c *Ctx, argv [][]byte) {
	cur, ok := parseScanCursor(argv[2])
	if !ok {
		c.W.Error(ErrInvalidCursor)
		return
	}
	e, ok := c.lookupSet(argv[1], true)
	if !ok {
		return
	}
	if e == nil {
		c.writeEmptyScan()
		return
	}
	o, ok := c.parseScanOpts(argv, 3, false)
	if !ok {
		return
	}
	s := e.set()
	n := uint64(s.Len())
	from, to, next := uint64(0), n, uint64(0)
	if s.ht {
		from, to, next = scanWindow(cur, n, o.count)
	}
	var out []string
	for k := from; k < to; k++ {
		i := k
		if s.ht { // walk down: see scanWindow
			i = to - 1 - (k - from)
		}
		m := s.memberAt(int(i))
		if o.usePat && !Match(o.pat, m, false) {
			continue
		}
		out = append(out, m)
	}
	c.W.Array(2)
	var tmp [24]byte
	c.W.Bulk(appendUint(tmp[:0], next))
	c.W.Array(len(out))
	for _, m := range out {
		c.W.BulkString(m)
	}
}

// Set algebra and SMOVE.

// Error texts of SINTERCARD.
const (
	errNumKeysTooMany = "ERR Number of keys can't be greater than number of args"
	errLimitNegative  = "ERR LIMIT can't be negative"
)

func init() {
	Register(
		&Command{Name: "smove", Arity: 4, Flags: "write fast", FirstKey: 1, LastKey: 2, Step: 1, Group: "set", Since: "1.0.0", Summary: "Moves a member from one set to another.", Run: cmdSMove},
		&Command{Name: "sinter", Arity: -2, Flags: "readonly", FirstKey: 1, LastKey: -1, Step: 1, Group: "set", Since: "1.0.0", Summary: "Returns the intersect of multiple sets.", Run: cmdSInter},
		&Command{Name: "sinterstore", Arity: -3, Flags: "write denyoom", FirstKey: 1, LastKey: -1, Step: 1, Group: "set", Since: "1.0.0", Summary: "Stores the intersect of multiple sets in a key.", Run: cmdSInterStore},
		&Command{Name: "sintercard", Arity: -3, Flags: "readonly", FirstKey: 0, LastKey: 0, Step: 0, Group: "set", Since: "7.0.0", Summary: "Returns the number of members of the intersect of multiple sets.", Run: cmdSInterCard},
		&Command{Name: "sunion", Arity: -2, Flags: "readonly", FirstKey: 1, LastKey: -1, Step: 1, Group: "set", Since: "1.0.0", Summary: "Returns the union of multiple sets.", Run: cmdSUnion},
		&Command{Name: "sunionstore", Arity: -3, Flags: "write denyoom", FirstKey: 1, LastKey: -1, Step: 1, Group: "set", Since: "1.0.0", Summary: "Stores the union of multiple sets in a key.", Run: cmdSUnionStore},
		&Command{Name: "sdiff", Arity: -2, Flags: "readonly", FirstKey: 1, LastKey: -1, Step: 1, Group: "set", Since: "1.0.0", Summary: "Returns the difference of multiple sets.", Run: cmdSDiff},
		&Command{Name: "sdiffstore", Arity: -3, Flags: "write denyoom", FirstKey: 1, LastKey: -1, Step: 1, Group: "set", Since: "1.0.0", Summary: "Stores the difference of multiple sets in a key.", Run: cmdSDiffStore},
	)
}

// setOperands returns the sets at keys, nil for missing ones. The first key
// holding another type writes WRONGTYPE and returns ok=false.
func (c *Ctx) setOperands(keys [][]byte, read bool) ([]*Set, bool) {
	sets := make([]*Set, len(keys))
	for i, k := range keys {
		e, ok := c.lookupSet(k, read)
		if !ok {
			return nil, false
		}
		if e != nil {
			sets[i] = e.set()
		}
	}
	return sets, true
}

// interEach calls fn for every member of the intersection of sets (none
// nil), iterating the smallest set (the first of equal sizes) in its order,
// as Redis does; fn returns false to stop.
func interEach(sets []*Set, fn func(s *Set, i int) bool) {
	order := slices.Clone(sets)
	slices.SortStableFunc(order, func(a, b *Set) int { return a.Len() - b.Len() })
	first := order[0]
	for i := 0; i < first.Len(); i++ {
		var m string
		if first.ht {
			m = first.members[i]
		}
		in := true
		for _, o := range order[1:] {
			if o == first {
				continue
			}
			if first.ht {
				in = o.Has(m)
			} else {
				in = o.hasInt(first.ints[i])
			}
			if !in {
				break
			}
		}
		if in && !fn(first, i) {
			return
		}
	}
}

// hasInt reports whether the integer n is a member.
func (s *Set) hasInt(n int64) bool {
	if !s.ht {
		_, found := slices.BinarySearch(s.ints, n)
		return found
	}
	var tmp [24]byte
	return s.findMember(bstr(appendInt(tmp[:0], n))) >= 0
}

// setAlgebra computes union (op 'u') or difference (op 'd') of sets into a
// new Set built like Redis's destination set (an intset while possible).
func setAlgebra(sets []*Set, op byte, lim *EncodingLimits) *Set {
	res := &Set{}
	if op == 'u' {
		for _, s := range sets {
			if s == nil {
				continue
			}
			for i := 0; i < s.Len(); i++ {
				res.add(s.memberAt(i), lim)
			}
		}
		return res
	}
	if sets[0] == nil {
		return res
	}
	first := sets[0]
	for i := 0; i < first.Len(); i++ {
		m := first.memberAt(i)
		keep := true
		for _, o := range sets[1:] {
			if o == first || (o != nil && o.Has(m)) {
				keep = false
				break
			}
		}
		if keep {
			res.add(m, lim)
		}
	}
	return res
}

// storeSet makes res the value of dst (replacing any value and its TTL), or
// deletes dst when res is empty, and replies res's cardinality.
func (c *Ctx) storeSet(dst []byte, res *Set, event string) {
	if res.Len() == 0 {
		c.W.Int(0)
		if e := c.lookupWrite(dst); e != nil {
			c.DB.removeEntry(e)
			c.touched(dst)
			c.notify(NotifyGeneric, "del", dst)
		}
		return
	}
	e := c.overwrite(c.lookupWrite(dst), dst)
	e.setObj(KindSet, unsafe.Pointer(res))
	c.touched(dst)
	c.W.Int(int64(res.Len()))
	c.notify(NotifySet, event, dst)
}

// cmdSInter: SINTER key [key ...] — the members in every set: a set reply
// ("~" in RESP3), empty when any key is missing. Members come in the order
// of the smallest set. Errors: WRONGTYPE for any key (checked first).
func cmdSInter(c *Ctx, argv [][]byte) {
	sets, ok := c.setOperands(argv[1:], true)
	if !ok {
		return
	}
	if slices.Contains(sets, nil) {
		c.W.Set(0)
		return
	}
	var out []int
	var from *Set
	interEach(sets, func(s *Set, i int) bool {
		from = s
		out = append(out, i)
		return true
	})
	c.W.Set(len(out))
	for _, i := range out {
		from.writeAt(c, i)
	}
}

// cmdSInterStore: SINTERSTORE destination key [key ...] — store the
// intersection in destination (overwriting any type; deleted when empty).
// Reply: its cardinality.
func cmdSInterStore(c *Ctx, argv [][]byte) {
	sets, ok := c.setOperands(argv[2:], true) // read lookups, as Redis's
	if !ok {
		return
	}
	if slices.Contains(sets, nil) {
		// a missing source: Redis deletes the destination before
		// replying (an empty intersection of existing sets replies first)
		if e := c.lookupWrite(argv[1]); e != nil {
			c.DB.removeEntry(e)
			c.touched(argv[1])
			c.notify(NotifyGeneric, "del", argv[1])
		}
		c.W.Int(0)
		return
	}
	res := &Set{}
	interEach(sets, func(s *Set, i int) bool {
		res.add(s.memberAt(i), &c.E.Enc)
		return true
	})
	c.storeSet(argv[1], res, "sinterstore")
}

// cmdSInterCard: SINTERCARD numkeys key [key ...] [LIMIT limit] — the
// cardinality of the intersection, counting stopped at limit (0 = no
// limit). Errors: "numkeys should be greater than 0", "Number of keys can't
// be greater than number of args", "LIMIT can't be negative", syntax error,
// WRONGTYPE.
func cmdSInterCard(c *Ctx, argv [][]byte) {
	nk, ok := ParseIntB(argv[1])
	if !ok || nk < 1 {
		c.W.Error(ErrNumKeys)
		return
	}
	if nk > int64(len(argv)-2) {
		c.W.Error(errNumKeysTooMany)
		return
	}
	var limit int64
	for j := 2 + int(nk); j < len(argv); j++ {
		if EqualFold(argv[j], "limit") && j+1 < len(argv) {
			j++
			n, ok := ParseIntB(argv[j])
			if !ok || n < 0 {
				c.W.Error(errLimitNegative)
				return
			}
			limit = n
			continue
		}
		c.W.Error(ErrSyntax)
		return
	}
	sets, ok := c.setOperands(argv[2:2+nk], true)
	if !ok {
		return
	}
	var n int64
	if !slices.Contains(sets, nil) {
		interEach(sets, func(*Set, int) bool {
			n++
			return limit == 0 || n < limit
		})
	}
	c.W.Int(n)
}

// setAlgebraCmd replies (store false) or stores (store true) a union/diff.
func (c *Ctx) setAlgebraCmd(argv [][]byte, op byte, store bool) {
	keys := argv[1:]
	if store {
		keys = argv[2:]
	}
	sets, ok := c.setOperands(keys, true) // read lookups also for a store, as Redis's
	if !ok {
		return
	}
	res := setAlgebra(sets, op, &c.E.Enc)
	if store {
		ev := "sunionstore"
		if op == 'd' {
			ev = "sdiffstore"
		}
		c.storeSet(argv[1], res, ev)
		return
	}
	c.writeWholeSet(res)
}

// cmdSUnion: SUNION key [key ...] — the members of any set: a set reply.
// The result is built as Redis builds it (an intset while all members are
// integers and at most 512), so all-integer unions reply sorted.
func cmdSUnion(c *Ctx, argv [][]byte) { c.setAlgebraCmd(argv, 'u', false) }

// cmdSUnionStore: SUNIONSTORE destination key [key ...] — store the union;
// reply its cardinality (destination deleted when empty).
func cmdSUnionStore(c *Ctx, argv [][]byte) { c.setAlgebraCmd(argv, 'u', true) }

// cmdSDiff: SDIFF key [key ...] — the members of the first set in none of
// the others: a set reply, ordered as SUNION's.
func cmdSDiff(c *Ctx, argv [][]byte) { c.setAlgebraCmd(argv, 'd', false) }

// cmdSDiffStore: SDIFFSTORE destination key [key ...] — store the
// difference; reply its cardinality (destination deleted when empty).
func cmdSDiffStore(c *Ctx, argv [][]byte) { c.setAlgebraCmd(argv, 'd', true) }

// cmdSMove: SMOVE source destination member — move member between sets.
// Reply: 1 moved, 0 when source is missing or lacks member. A missing
// source replies 0 before any type check; then WRONGTYPE for source or
// destination. Source == destination: 1 if member is in it, nothing changes.
func cmdSMove(c *Ctx, argv [][]byte) {
	src := c.lookupWrite(argv[1])
	dst := c.lookupWrite(argv[2])
	if src == nil {
		c.W.Int(0)
		return
	}
	if src.kind != KindSet || (dst != nil && dst.kind != KindSet) {
		c.W.Error(ErrWrongType)
		return
	}
	m := bstr(argv[3])
	if src == dst {
		if src.set().Has(m) {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
		return
	}
	ss := src.set()
	if !ss.Rem(m) {
		c.W.Int(0)
		return
	}
	c.notify(NotifySet, "srem", argv[1])
	c.removeIfEmpty(src, ss.Len() == 0)
	if ss.Len() == 0 {
		c.notify(NotifyGeneric, "del", argv[1])
	}
	if dst == nil {
		dst = c.create(argv[2])
		dst.setObj(KindSet, unsafe.Pointer(&Set{}))
	}
	c.touched(argv[1])
	if dst.set().add(m, &c.E.Enc) {
		c.touched(argv[2])
		c.notify(NotifySet, "sadd", argv[2])
	}
	c.W.Int(1)
}

// collEncoding is OBJECT ENCODING for the collection kinds, as Redis 7.0
// names them: lists are always "quicklist"; hashes "listpack" or
// "hashtable"; sets "intset" or "hashtable"; sorted sets "listpack" or
// "skiplist". ok is false for other kinds.
func (e *entry) collEncoding() (enc string, ok bool) {
	switch e.kind {
	case KindList:
		return "quicklist", true
	case KindHash:
		if e.hash().ht() {
			return "hashtable", true
		}
		return "listpack", true
	case KindSet:
		if e.set().ht {
			return "hashtable", true
		}
		return "intset", true
	case KindZSet:
		if e.zset().big() {
			return "skiplist", true
		}
		return "listpack", true
	}
	return "", false
}
