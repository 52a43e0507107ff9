package lua

import (
	"math"
	"math/bits"
)

// limitdb patch: LTable is PUC Lua 5.1's table (ltable.c as Redis 7.0
// embeds it), layout included, so that everything that walks a table in
// its internal order — next/pairs, cjson.encode, cmsgpack.pack, {map=}
// replies — gives Redis's order, and gives it on every call. Upstream kept
// a Go map (random order) plus an insertion-order key list.
//
// A table has an array part (array: len is Lua's sizearray) and a hash part
// of 2^k nodes (node; nil is Lua's dummynode, an empty part). A key's main
// position is its hash modulo the node count; colliding keys are chained
// through next, with Brent's variation (a key found in another key's main
// position is moved out). Free nodes are taken from the top (lastfree moves
// down); when none is left the table is rehashed: the array part gets the
// largest power of two n such that more than n/2 of the keys 1..n are used,
// the hash part the rest. Setting a key to nil leaves its node in place
// (key kept, value nil) until the next rehash, which is what lets next()
// continue a traversal that clears fields.
//
// Inside the table Lua's nil is Go's nil (array slots, node values, the key
// of a never-used node); LNil is only what the API returns.
//
// Not reproduced: Lua's garbage collector marks the keys of such dead nodes
// dead, after which a re-inserted key may land elsewhere; here a dead node
// always keeps its key (as Lua's does when no collection reached the table
// in between, which is the case for a script's own short-lived tables).

const (
	maxABits = 26            // MAXBITS: the array part has at most 2^26 slots
	maxASize = 1 << maxABits // MAXASIZE
)

// lnode is one node of the hash part.
type lnode struct {
	key  LValue // nil: never used (free)
	val  LValue // nil: no value (free, or a removed entry)
	next int32  // 1 + index of the next node of the chain; 0 ends it
}

// newLTable is luaH_new(narray, nhash).
func newLTable(narray int, nhash int) *LTable {
	tb := &LTable{Metatable: LNil}
	if narray > 0 {
		tb.array = make([]LValue, narray)
	}
	if nhash > 0 {
		tb.setNodeVector(nhash)
	}
	return tb
}

// strHash is Redis 7.0's luaS_hash: seeded with the length, every byte from
// the last to the first (Lua 5.1.5 skips bytes of strings of 32 bytes and
// more; Redis hashes them all).
func strHash(s string) uint32 {
	h := uint32(len(s))
	for i := len(s); i > 0; i-- {
		h ^= (h << 5) + (h >> 2) + uint32(s[i-1])
	}
	return h
}

// numPos is hashnum: the two 32-bit halves of the double summed, modulo
// an odd number; 0 and -0 go to node 0.
func numPos(f float64, size int) int {
	if f == 0 {
		return 0
	}
	b := math.Float64bits(f)
	return int((uint32(b) + uint32(b>>32)) % uint32((size-1)|1))
}

// luaInt is lua_number2int plus the round trip test: f's value as a C int.
func luaInt(f float64) (int, bool) {
	if f >= -2147483648 && f <= 2147483647 {
		if i := int(f); float64(i) == f {
			return i, true
		}
	}
	return 0, false
}

// ceilLog2 is Lua's ceillog2 (x >= 1).
func ceilLog2(x int) int { return bits.Len(uint(x - 1)) }

// mainPos is mainposition: the node a key hashes to (the hash part is not
// empty). Tables, functions, userdata and threads hash by their object id
// (objectAddr) where Lua uses their address.
func (tb *LTable) mainPos(key LValue) int {
	n := len(tb.node)
	switch k := key.(type) {
	case LString:
		return int(strHash(string(k)) & uint32(n-1))
	case LNumber:
		return numPos(float64(k), n)
	case LBool:
		if k {
			return 1 & (n - 1)
		}
		return 0
	}
	return int(uint32(objectAddr(key)) % uint32((n-1)|1))
}

// findStr is the node holding string key s, or -1.
func (tb *LTable) findStr(s string) int {
	nodes := tb.node
	if len(nodes) == 0 {
		return -1
	}
	if len(nodes) == 1 {
		return tb.findStrH(s, 0)
	}
	return tb.findStrH(s, strHash(s))
}

// findStrH is findStr with s's hash (strHash) known.
func (tb *LTable) findStrH(s string, h uint32) int {
	nodes := tb.node
	if len(nodes) == 0 {
		return -1
	}
	i := int(h & uint32(len(nodes)-1))
	for {
		n := &nodes[i]
		if k, ok := n.key.(LString); ok && string(k) == s {
			return i
		}
		if n.next == 0 {
			return -1
		}
		i = int(n.next) - 1
	}
}

// findNum is the node holding number key f, or -1.
func (tb *LTable) findNum(f float64) int {
	nodes := tb.node
	if len(nodes) == 0 {
		return -1
	}
	i := numPos(f, len(nodes))
	for {
		n := &nodes[i]
		if k, ok := n.key.(LNumber); ok && float64(k) == f {
			return i
		}
		if n.next == 0 {
			return -1
		}
		i = int(n.next) - 1
	}
}

// findAny is the node holding key (a boolean or an object), or -1.
func (tb *LTable) findAny(key LValue) int {
	nodes := tb.node
	if len(nodes) == 0 {
		return -1
	}
	i := tb.mainPos(key)
	for {
		n := &nodes[i]
		if n.key == key {
			return i
		}
		if n.next == 0 {
			return -1
		}
		i = int(n.next) - 1
	}
}

// find is the node holding key (not in the array part), or -1.
func (tb *LTable) find(key LValue) int {
	switch k := key.(type) {
	case LString:
		return tb.findStr(string(k))
	case LNumber:
		return tb.findNum(float64(k))
	case *LNilType, nil:
		return -1
	}
	return tb.findAny(key)
}

// getInt is luaH_getnum (nil when absent).
func (tb *LTable) getInt(k int) LValue {
	if uint(k-1) < uint(len(tb.array)) {
		return tb.array[k-1]
	}
	if i := tb.findNum(float64(k)); i >= 0 {
		return tb.node[i].val
	}
	return nil
}

// get is luaH_get (nil when absent).
func (tb *LTable) get(key LValue) LValue {
	switch k := key.(type) {
	case LString:
		if i := tb.findStr(string(k)); i >= 0 {
			return tb.node[i].val
		}
		return nil
	case LNumber:
		// an integer in the array part's range is there; any other number
		// hashes the same whether or not it is an integer (hashnum)
		if f := float64(k); f >= 1 && f <= float64(len(tb.array)) {
			if n := int(f); float64(n) == f {
				return tb.array[n-1]
			}
		}
		if i := tb.findNum(float64(k)); i >= 0 {
			return tb.node[i].val
		}
		return nil
	}
	if i := tb.find(key); i >= 0 {
		return tb.node[i].val
	}
	return nil
}

// set is luaH_set: the slot of key's value, creating the key (with a nil
// value) when absent. key is neither nil nor NaN.
func (tb *LTable) set(key LValue) *LValue {
	if k, ok := key.(LNumber); ok {
		if f := float64(k); f >= 1 && f <= float64(len(tb.array)) {
			if n := int(f); float64(n) == f {
				return &tb.array[n-1]
			}
		}
	}
	if i := tb.find(key); i >= 0 {
		return &tb.node[i].val
	}
	return tb.newKey(key)
}

// setInt is luaH_setnum.
func (tb *LTable) setInt(k int) *LValue {
	if uint(k-1) < uint(len(tb.array)) {
		return &tb.array[k-1]
	}
	if i := tb.findNum(float64(k)); i >= 0 {
		return &tb.node[i].val
	}
	return tb.newKey(LNumber(k))
}

// setStr is luaH_setstr.
func (tb *LTable) setStr(s string) *LValue {
	if i := tb.findStr(s); i >= 0 {
		return &tb.node[i].val
	}
	return tb.newKey(LString(s))
}

// setStrH is setStr with s's hash known.
func (tb *LTable) setStrH(s string, h uint32) *LValue {
	if i := tb.findStrH(s, h); i >= 0 {
		return &tb.node[i].val
	}
	return tb.newKey(LString(s))
}

// newKey is newkey: inserts key (absent) and returns its value slot. If
// the key's main position is taken by a key that is not in its own main
// position, that key moves to a free node; otherwise the new key goes to
// the free node, chained after the main position. No free node: rehash.
func (tb *LTable) newKey(key LValue) *LValue {
	if tb.node == nil {
		tb.rehash(key)
		return tb.set(key)
	}
	nodes := tb.node
	mp := tb.mainPos(key)
	if nodes[mp].val != nil {
		f := tb.freePos()
		if f < 0 {
			tb.rehash(key)
			return tb.set(key)
		}
		other := tb.mainPos(nodes[mp].key)
		if other != mp {
			for int(nodes[other].next)-1 != mp {
				other = int(nodes[other].next) - 1
			}
			nodes[other].next = int32(f + 1)
			nodes[f] = nodes[mp]
			nodes[mp].next = 0
			nodes[mp].val = nil
		} else {
			nodes[f].next = nodes[mp].next
			nodes[mp].next = int32(f + 1)
			mp = f
		}
	}
	nodes[mp].key = key
	return &nodes[mp].val
}

// freePos is getfreepos: the next never-used node below lastfree, or -1.
func (tb *LTable) freePos() int {
	for tb.lastfree > 0 {
		tb.lastfree--
		if tb.node[tb.lastfree].key == nil {
			return int(tb.lastfree)
		}
	}
	return -1
}

// arrayIndex is arrayindex for countint: k when key is a number with a C
// int value in 1..MAXASIZE.
func arrayIndex(key LValue) (int, bool) {
	if n, ok := key.(LNumber); ok {
		if k, ok := luaInt(float64(n)); ok && k > 0 && k <= maxASize {
			return k, true
		}
	}
	return 0, false
}

// rehash sizes both parts for the keys in use plus ek (rehash, numusearray,
// numusehash, countint, computesizes) and rebuilds the table.
func (tb *LTable) rehash(ek LValue) {
	var nums [maxABits + 1]int // nums[i]: integer keys in (2^(i-1), 2^i]
	nasize := 0
	i := 1
	for lg, ttlg := 0, 1; lg <= maxABits; lg, ttlg = lg+1, ttlg*2 {
		lim := ttlg
		if lim > len(tb.array) {
			lim = len(tb.array)
			if i > lim {
				break
			}
		}
		lc := 0
		for ; i <= lim; i++ {
			if tb.array[i-1] != nil {
				lc++
			}
		}
		nums[lg] += lc
		nasize += lc
	}
	totaluse := nasize
	for j := len(tb.node) - 1; j >= 0; j-- {
		if n := &tb.node[j]; n.val != nil {
			if k, ok := arrayIndex(n.key); ok {
				nums[ceilLog2(k)]++
				nasize++
			}
			totaluse++
		}
	}
	if k, ok := arrayIndex(ek); ok {
		nums[ceilLog2(k)]++
		nasize++
	}
	totaluse++
	// computesizes: the largest power of two n with more than n/2 of the
	// keys 1..n in use
	a, na, n := 0, 0, 0
	for i, twotoi := 0, 1; twotoi/2 < nasize; i, twotoi = i+1, twotoi*2 {
		if nums[i] > 0 {
			a += nums[i]
			if a > twotoi/2 {
				n, na = twotoi, a
			}
		}
		if a == nasize {
			break
		}
	}
	tb.resize(n, totaluse-na)
}

// resize is ltable.c's resize: the array part gets nasize slots, the hash
// part room for nhsize keys (a new node vector); keys of a shrinking array
// part and the old nodes (from the last to the first) are inserted again.
func (tb *LTable) resize(nasize, nhsize int) {
	oldarray := tb.array
	oldnode := tb.node
	// charge first: a budget error leaves the table as it was
	grow := 0
	if nasize > len(oldarray) && nasize > cap(oldarray) {
		grow += nasize * memSlot
	}
	if nhsize > 0 {
		grow += (1 << ceilLog2(nhsize)) * memNode
	}
	tb.chargeGrowth(grow)
	if nasize > len(oldarray) {
		tb.setArrayVector(nasize)
	}
	tb.setNodeVector(nhsize)
	if nasize < len(oldarray) {
		// Lua reallocates the array down after moving the vanishing slice
		// into the hash part; a fresh slice drops the old one's capacity
		if nasize > 0 {
			tb.array = make([]LValue, nasize)
			copy(tb.array, oldarray)
		} else {
			tb.array = nil
		}
		for i := nasize; i < len(oldarray); i++ {
			if v := oldarray[i]; v != nil {
				*tb.setInt(i + 1) = v
			}
		}
	}
	for i := len(oldnode) - 1; i >= 0; i-- {
		if n := &oldnode[i]; n.val != nil {
			*tb.set(n.key) = n.val
		}
	}
}

// setArrayVector grows the array part to size slots (new ones nil). Slots
// past len are always nil, so a slice with room is only extended.
func (tb *LTable) setArrayVector(size int) {
	if size <= cap(tb.array) {
		tb.array = tb.array[:size]
		return
	}
	a := make([]LValue, size)
	copy(a, tb.array)
	tb.array = a
}

// setNodeVector gives the table an empty hash part for size keys: the
// next power of two nodes, or the dummy node for 0.
func (tb *LTable) setNodeVector(size int) {
	if size == 0 {
		tb.node, tb.lastfree = nil, 0
		return
	}
	lsize := ceilLog2(size)
	if lsize > maxABits {
		tb.overflow()
	}
	tb.node = make([]lnode, 1<<lsize)
	tb.lastfree = int32(len(tb.node))
}

// overflow raises Lua's "table overflow" (a hash part of more than 2^26
// nodes).
func (tb *LTable) overflow() {
	if tb.mem != nil && tb.mem.main != nil {
		tb.mem.main.G.CurrentThread.RaiseError("table overflow")
	}
	panic("table overflow")
}

// resizeArray is luaH_resizearray: the hash part keeps its size but is
// rebuilt.
func (tb *LTable) resizeArray(nasize int) {
	tb.resize(nasize, len(tb.node))
}

// setList is OP_SETLIST's store of the values vals, ending at index
// last: the array part grows to last first (luaH_resizearray), then the
// values are stored from the last down.
func (tb *LTable) setList(last int, vals []LValue) {
	if last > len(tb.array) {
		tb.resizeArray(last)
	}
	for n := len(vals) - 1; n >= 0; n-- {
		v := vals[n]
		if v == LNil {
			v = nil
		}
		*tb.setInt(last) = v
		last--
	}
}

// getn is luaH_getn: a border of the table (t[n] ~= nil and t[n+1] == nil),
// found as Lua finds it, so #t of a table with holes is Lua's.
func (tb *LTable) getn() int {
	j := uint(len(tb.array))
	if j > 0 && tb.array[j-1] == nil {
		i := uint(0)
		for j-i > 1 {
			m := (i + j) / 2
			if tb.array[m-1] == nil {
				j = m
			} else {
				i = m
			}
		}
		return int(i)
	}
	if tb.node == nil {
		return int(j)
	}
	// unbound_search
	i := j
	j++
	for tb.getInt(int(j)) != nil {
		i = j
		j *= 2
		if j > math.MaxInt32 {
			// a table built against the search: linear
			i = 1
			for tb.getInt(int(i)) != nil {
				i++
			}
			return int(i - 1)
		}
	}
	for j-i > 1 {
		m := (i + j) / 2
		if tb.getInt(int(m)) == nil {
			j = m
		} else {
			i = m
		}
	}
	return int(i)
}

// next is luaH_next: the entry after key (nil: the first) in Lua's order,
// the array part then the nodes; ok is false when key is not in the table
// ("invalid key to 'next'"). At the end k is LNil.
func (tb *LTable) next(key LValue) (k, v LValue, ok bool) {
	i := -1
	if key != LNil && key != nil {
		if n, isInt := arrayIndex(key); isInt && n <= len(tb.array) {
			i = n - 1
		} else if j := tb.find(key); j >= 0 {
			i = j + len(tb.array)
		} else {
			return LNil, LNil, false
		}
	}
	for i++; i < len(tb.array); i++ {
		if v := tb.array[i]; v != nil {
			return LNumber(i + 1), v, true
		}
	}
	for i -= len(tb.array); i < len(tb.node); i++ {
		if n := &tb.node[i]; n.val != nil {
			return n.key, n.val, true
		}
	}
	return LNil, LNil, true
}

// Len returns length of this LTable without using __len (Lua's #t).
func (tb *LTable) Len() int {
	return tb.getn()
}

// Append sets t[#t+1] (table.insert(t, v)); nil is ignored.
func (tb *LTable) Append(value LValue) {
	if value == LNil || value == nil {
		return
	}
	*tb.setInt(tb.getn() + 1) = value
}

// Insert inserts a given LValue at position `i` in this table, moving
// t[i..#t] up one (table.insert(t, i, v)).
func (tb *LTable) Insert(i int, value LValue) {
	if value == LNil {
		value = nil
	}
	e := tb.getn() + 1
	if i > e {
		e = i
	}
	for j := e; j > i; j-- {
		*tb.setInt(j) = tb.getInt(j - 1)
	}
	*tb.setInt(i) = value
}

// MaxN returns the largest positive number key (table.maxn), truncated.
func (tb *LTable) MaxN() int {
	return int(tb.maxn())
}

// maxn is table.maxn: the largest positive number key, 0 if none.
func (tb *LTable) maxn() float64 {
	max := 0.0
	tb.ForEach(func(k, _ LValue) {
		if n, ok := k.(LNumber); ok && float64(n) > max {
			max = float64(n)
		}
	})
	return max
}

// Remove removes from this table the element at a given position
// (table.remove: t[pos+1..#t] move down one; pos outside 1..#t removes
// nothing).
func (tb *LTable) Remove(pos int) LValue {
	e := tb.getn()
	if pos < 1 || pos > e {
		return LNil
	}
	old := tb.getInt(pos)
	for ; pos < e; pos++ {
		*tb.setInt(pos) = tb.getInt(pos + 1)
	}
	*tb.setInt(e) = nil
	if old == nil {
		return LNil
	}
	return old
}

// RawSet sets a given LValue to a given index without the __newindex metamethod.
// A nil or NaN key is ignored (LState.RawSet raises Lua's errors for them).
func (tb *LTable) RawSet(key LValue, value LValue) {
	if value == LNil {
		value = nil
	}
	switch k := key.(type) {
	case LString:
		if i := tb.findStr(string(k)); i >= 0 {
			tb.node[i].val = value
		} else {
			*tb.newKey(key) = value // the caller's boxed key, not a new one
		}
		return
	case LNumber:
		if k != k {
			return
		}
	case *LNilType, nil:
		return
	}
	*tb.set(key) = value
}

// RawSetInt sets a given LValue at a position `key` without the __newindex metamethod.
func (tb *LTable) RawSetInt(key int, value LValue) {
	if value == LNil {
		value = nil
	}
	*tb.setInt(key) = value
}

// RawSetString sets a given LValue to a given string index without the __newindex metamethod.
func (tb *LTable) RawSetString(key string, value LValue) {
	if value == LNil {
		value = nil
	}
	*tb.setStr(key) = value
}

// RawSetH sets a given LValue to a given index without the __newindex metamethod.
func (tb *LTable) RawSetH(key LValue, value LValue) {
	tb.RawSet(key, value)
}

// RawGet returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGet(key LValue) LValue {
	if v := tb.get(key); v != nil {
		return v
	}
	return LNil
}

// RawGetInt returns an LValue at position `key` without __index metamethod.
func (tb *LTable) RawGetInt(key int) LValue {
	if v := tb.getInt(key); v != nil {
		return v
	}
	return LNil
}

// RawGetH returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGetH(key LValue) LValue {
	return tb.RawGet(key)
}

// RawGetString returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGetString(key string) LValue {
	if i := tb.findStr(key); i >= 0 {
		if v := tb.node[i].val; v != nil {
			return v
		}
	}
	return LNil
}

// ForEach iterates over this table of elements, yielding each in turn to a
// given function, in next()'s order (the array part, then the nodes).
func (tb *LTable) ForEach(cb func(LValue, LValue)) {
	for i, v := range tb.array {
		if v != nil {
			cb(LNumber(i+1), v)
		}
	}
	for i := range tb.node {
		if n := &tb.node[i]; n.val != nil {
			cb(n.key, n.val)
		}
	}
}

// This function is equivalent to lua_next ( http://www.lua.org/manual/5.1/manual.html#lua_next ).
// A key that is not in the table ends the traversal (LNil, LNil); Lua
// raises "invalid key to 'next'", as next() and pairs() here do.
func (tb *LTable) Next(key LValue) (LValue, LValue) {
	k, v, _ := tb.next(key)
	return k, v
}

// seqArraySize is the array part Lua's rehashes give a table filled with n
// non-nil values at 1..n, one after the other: every key past the array
// part triggers a rehash that doubles it.
func seqArraySize(n int) int {
	if n <= 0 {
		return 0
	}
	return 1 << ceilLog2(n)
}

// ShapeArray gives tb the layout a fresh table has after lua_newtable and
// lua_rawseti of n non-nil values at 1..n (the array part the power of two
// at or above n, no hash part, no metatable), keeping the values at 1..n
// for the caller to overwrite and clearing the rest. Reused argument
// tables (KEYS, ARGV) are then indistinguishable from Redis's fresh ones.
func (tb *LTable) ShapeArray(n int) {
	size := seqArraySize(n)
	if len(tb.array) == size && tb.node == nil && tb.Metatable == LNil {
		// the usual case: the same count as last time, nothing added
		if n < size {
			clear(tb.array[n:])
		}
		return
	}
	tb.Metatable = LNil
	if tb.node != nil {
		tb.setNodeVector(0)
	}
	old := tb.array
	switch {
	case size > cap(old) || cap(old) > 2*size+16:
		tb.array = make([]LValue, size)
		copy(tb.array, old[:min(n, len(old))])
	case size >= len(old):
		tb.array = old[:size]
	default:
		clear(old[size:])
		tb.array = old[:size]
	}
	clear(tb.array[min(n, len(tb.array)):])
}
