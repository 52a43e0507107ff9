package lua

import (
	"strconv"
	"strings"
	"testing"
)

// run executes src in a fresh state and returns its single string result.
func run(t *testing.T, src string) string {
	t.Helper()
	L := NewState()
	defer L.Close()
	if err := L.DoString(src); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return L.ToString(-1)
}

// TestTableOrderRedis: traversal orders and borders that redis-server
// 7.0.15 returned for the same scripts (tests/scenarios/scripting/tables.txt
// compares many more against a live server).
func TestTableOrderRedis(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`local t = {} for i = 1, 12 do t['k'..i] = i end
		  local r = {} for k in pairs(t) do r[#r+1] = k end return table.concat(r, ' ')`,
			"k12 k9 k8 k1 k3 k2 k10 k11 k6 k7 k4 k5"},
		// number keys: hashnum, hashmod's odd modulus, Brent's moves
		{`local t = {} for _, k in ipairs({7, 3.5, -1, 100, 2^40, 0.25, -0.5, 1e10, 33, 12}) do t[k] = true end
		  local r = {} for k in pairs(t) do r[#r+1] = tostring(k) end return table.concat(r, ' ')`,
			"0.25 7 100 10000000000 -0.5 -1 33 1099511627776 12 3.5"},
		// a removed key keeps its node; setting it again reuses the node
		{`local t = {} for i = 1, 9 do t['x'..i] = i end t.x3 = nil t.x7 = nil t.y = 1 t.x3 = 3
		  local r = {} for k in pairs(t) do r[#r+1] = k end return table.concat(r, ' ')`,
			"x6 x5 x4 x2 x3 x1 y x8 x9"},
		// clearing during traversal, then a rehash drops the dead nodes
		{`local t = {} for i = 1, 9 do t['x'..i] = i end for k in pairs(t) do t[k] = nil end
		  for i = 1, 5 do t['z'..i] = i end
		  local r = {} for k in pairs(t) do r[#r+1] = k end return table.concat(r, ' ')`,
			"z5 z4 z1 z2 z3"},
		// a constructor with 9 record fields: 16 nodes from the start
		{`local t = {a=1, b=2, c=3, [1]=1, [2]=2, [4]=4, [true]=1, [false]=0, [2.5]=1}
		  local r = {} for k in pairs(t) do r[#r+1] = tostring(k) end return table.concat(r, ' ')`,
			"a true c b 2 4 2.5 false 1"},
		// long keys: every byte is hashed
		{`local t = {} for i = 1, 40 do t[string.rep('ab', i)] = i end
		  local r = {} for k, v in pairs(t) do r[#r+1] = v end return table.concat(r, ' ')`,
			"31 23 14 28 36 40 22 25 16 18 11 6 13 27 21 15 3 8 7 12 4 2 26 39 38 37 30 19 35 17 34 9 32 10 1 5 24 20 29 33"},
		// borders: binary search in the array part, unbound search in the hash part
		{`local r = {} for _, t in ipairs({{1,2,nil,4}, {nil,2}, {1,nil}, {[1]=1,[2]=2,[4]=4}, {1,2,3,nil,5,nil,nil,8,9}}) do r[#r+1] = #t end
		  local u = {} for i = 1, 10 do u[i] = i end u[3] = nil u[10] = nil r[#r+1] = #u
		  local v = {} v[1]=1 v[2]=2 v[3]=3 v[4]=4 v[6]=6 v[7]=7 v[8]=8 r[#r+1] = #v
		  return table.concat(r, ' ')`,
			"4 2 1 4 9 9 8"},
		// ltablib's quicksort: the order of elements that compare equal
		{`local u = {} for i = 1, 20 do u[i] = {k = i % 3, i = i} end
		  table.sort(u, function(a, b) return a.k < b.k end)
		  local r = {} for i = 1, 20 do r[i] = u[i].i end return table.concat(r, ',')`,
			"15,9,6,12,18,3,13,1,16,19,10,4,7,17,2,11,8,14,5,20"},
	} {
		if got := run(t, c.src); got != c.want {
			t.Errorf("%s\ngot  %s\nwant %s", c.src, got, c.want)
		}
	}
}

// keysWithPos returns n distinct string keys whose main position in a
// table of size nodes is pos.
func keysWithPos(t *testing.T, size, pos, n int) []LString {
	var ks []LString
	for i := 0; i < 100000 && len(ks) < n; i++ {
		k := "key" + strconv.Itoa(i)
		if int(strHash(k)&uint32(size-1)) == pos {
			ks = append(ks, LString(k))
		}
	}
	if len(ks) < n {
		t.Fatalf("no %d keys for node %d of %d", n, pos, size)
	}
	return ks
}

func nodeOf(t *testing.T, tb *LTable, k LValue) int {
	t.Helper()
	i := tb.find(k)
	if i < 0 {
		t.Fatalf("%v not in the hash part", k)
	}
	return i
}

// TestTableCollisions: a colliding key goes to the highest free node and is
// chained after its main position; a key whose main position holds a key
// that is not in its own main position takes the node, the other key moves.
func TestTableCollisions(t *testing.T) {
	tb := newLTable(0, 8)
	a := keysWithPos(t, 8, 1, 2) // both hash to node 1
	b := keysWithPos(t, 8, 7, 1) // hashes to node 7
	tb.RawSet(a[0], LTrue)
	tb.RawSet(a[1], LTrue) // collides: free nodes are taken from the top
	if n := nodeOf(t, tb, a[0]); n != 1 {
		t.Fatalf("a0 in node %d, want its main position 1", n)
	}
	if n := nodeOf(t, tb, a[1]); n != 7 {
		t.Fatalf("a1 in node %d, want 7 (lastfree)", n)
	}
	tb.RawSet(b[0], LTrue) // node 7 is b0's main position: a1 moves out
	if n := nodeOf(t, tb, b[0]); n != 7 {
		t.Fatalf("b0 in node %d, want 7", n)
	}
	if n := nodeOf(t, tb, a[1]); n != 6 {
		t.Fatalf("a1 moved to node %d, want 6", n)
	}
	if tb.node[1].next != 7 { // 1 + index 6
		t.Fatalf("chain of node 1: %d", tb.node[1].next)
	}
	// a removed key keeps its node: next() continues from it
	tb.RawSet(a[0], LNil)
	if k, _, ok := tb.next(a[0]); !ok || k == LNil {
		t.Fatalf("next after a removed key: %v %v", k, ok)
	}
	if _, _, ok := tb.next(LString("absent")); ok {
		t.Fatal("next of an absent key must fail")
	}
	// add keys until one finds no free node: the rehash sizes the hash
	// part for the live keys plus the new one, the removed key not counted
	for i := 0; len(tb.node) == 8; i++ {
		if i == 100 {
			t.Fatal("no rehash")
		}
		live := 0
		tb.ForEach(func(LValue, LValue) { live++ })
		tb.RawSet(LNumber(1000+i), LTrue)
		if want := 1 << ceilLog2(live+1); len(tb.node) != 8 && len(tb.node) != want {
			t.Fatalf("after rehash: %d nodes (want %d for %d keys)", len(tb.node), want, live+1)
		}
	}
	if tb.find(a[0]) >= 0 {
		t.Fatal("the removed key survived the rehash")
	}
}

// TestTableSizes: array and hash sizes as Lua's rehash and constructors
// give them.
func TestTableSizes(t *testing.T) {
	tb := newLTable(0, 0)
	for i, want := range []int{1, 2, 4, 4, 8, 8, 8, 8, 16} {
		tb.RawSetInt(i+1, LTrue)
		if len(tb.array) != want || tb.node != nil {
			t.Fatalf("after t[%d]: array %d, nodes %d (want array %d)", i+1, len(tb.array), len(tb.node), want)
		}
	}
	// assigning nil to an absent key creates its node (luaH_set)
	tb = newLTable(0, 0)
	tb.RawSetString("x", LNil)
	if len(tb.node) != 1 || tb.findStr("x") != 0 {
		t.Fatalf("t.x = nil: %d nodes", len(tb.node))
	}
	if k, _ := tb.Next(LNil); k != LNil {
		t.Fatalf("next of a table with only a nil field: %v", k)
	}
	// sparse keys stay in the hash part
	tb = newLTable(0, 0)
	tb.RawSetInt(50000000, LTrue)
	if len(tb.array) != 0 || len(tb.node) != 1 {
		t.Fatalf("t[5e7]: array %d, nodes %d", len(tb.array), len(tb.node))
	}
	// constructor size hints go through luaO_int2fb/luaO_fb2int
	for n, want := range map[int]int{0: 0, 7: 7, 8: 8, 15: 15, 16: 16, 17: 18, 50: 52, 100: 104} {
		if got := fb2Int(int2Fb(n)); got != want {
			t.Errorf("fb2int(int2fb(%d)) = %d, want %d", n, got, want)
		}
	}
	L := NewState()
	defer L.Close()
	for _, c := range []struct {
		src          string
		array, nodes int
	}{
		{"return {}", 0, 0},
		{"return {1, 2, 3}", 3, 0},
		{"return {[1] = 1, [2] = 2}", 0, 2},
		{"return {1, 2, 3, a = 1, b = 2, c = 3}", 3, 4},
		{"return {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}", 18, 0},
		{"local function f(...) return {...} end return f(1, 2, 3)", 3, 0},
		{"local function f(...) return {x = 1, ...} end return f(1, 2, 3)", 3, 1},
	} {
		if err := L.DoString(c.src); err != nil {
			t.Fatal(err)
		}
		tb := L.Get(-1).(*LTable)
		L.Pop(1)
		if len(tb.array) != c.array || len(tb.node) != c.nodes {
			t.Errorf("%s: array %d, nodes %d; want %d, %d", c.src, len(tb.array), len(tb.node), c.array, c.nodes)
		}
	}
}

// TestTableShapeArray: a reused argument table looks fresh.
func TestTableShapeArray(t *testing.T) {
	tb := newLTable(0, 0)
	for i := 1; i <= 5; i++ {
		tb.RawSetInt(i, LString("v"))
	}
	tb.RawSetString("x", LTrue)
	tb.Metatable = newLTable(0, 0)
	tb.ShapeArray(2)
	if len(tb.array) != 2 || tb.node != nil || tb.Metatable != LNil || tb.RawGetInt(1) != LString("v") || tb.RawGetInt(3) != LNil {
		t.Fatalf("array %d nodes %d", len(tb.array), len(tb.node))
	}
	tb.ShapeArray(3)
	if len(tb.array) != 4 || tb.RawGetInt(3) != LNil || tb.Len() != 2 {
		t.Fatalf("array %d, #t %d", len(tb.array), tb.Len())
	}
}

// TestObjectIDs: objects print as addresses made from ids, the same ones
// again after the counter is set back.
func TestObjectIDs(t *testing.T) {
	L := NewState()
	defer L.Close()
	src := `local k = {} local t = {[k] = 1, [print] = 2, [{}] = 3}
	        local r = {} for key in pairs(t) do r[#r+1] = tostring(key) end
	        return tostring({}) .. ' ' .. table.concat(r, ' ')`
	var first string
	for i := 0; i < 3; i++ {
		prev := L.SetObjectIDs(RunObjectIDs)
		if err := L.DoString(src); err != nil {
			t.Fatal(err)
		}
		got := L.ToString(-1)
		L.Pop(1)
		L.SetObjectIDs(prev)
		if i == 0 {
			first = got
		} else if got != first {
			t.Fatalf("run %d: %q, first %q", i, got, first)
		}
	}
	if !strings.HasPrefix(first, "table: 0x551000000") || len(strings.Fields(first)[1]) != 14 {
		t.Fatalf("%q", first)
	}
}
