package lua

import (
	"sort"
)

func OpenTable(L *LState) int {
	tabmod := L.RegisterModule(TabLibName, tableFuncs)
	L.Push(tabmod)
	return 1
}

var tableFuncs = map[string]LGFunction{
	"getn":   tableGetN,
	"concat": tableConcat,
	"insert": tableInsert,
	"maxn":   tableMaxN,
	"remove": tableRemove,
	"sort":   tableSort,
}

func tableSort(L *LState) int {
	tbl := L.CheckTable(1)
	sorter := lValueArraySorter{L, nil, tbl.array}
	if L.GetTop() != 1 {
		sorter.Fn = L.CheckFunction(2)
	}
	sort.Sort(sorter)
	return 0
}

func tableGetN(L *LState) int {
	L.Push(LNumber(L.CheckTable(1).Len()))
	return 1
}

func tableMaxN(L *LState) int {
	L.Push(LNumber(L.CheckTable(1).MaxN()))
	return 1
}

// tableRemove is Lua 5.1's tremove (limitdb patch): a luaL_optint position,
// nothing removed (no result) outside 1..#t.
func tableRemove(L *LState) int {
	tbl := L.CheckTable(1)
	e := tbl.Len()
	pos := L.OptInt(2, e)
	if !(1 <= pos && pos <= e) {
		return 0
	}
	L.Push(tbl.RawGetInt(pos))
	for ; pos < e; pos++ {
		tbl.RawSetInt(pos, tbl.RawGetInt(pos+1))
	}
	tbl.RawSetInt(e, LNil)
	return 1
}

// tableConcat is Lua 5.1's tconcat (limitdb patch): luaL_optint range,
// Lua 5.1's error text, the result built in one buffer (upstream pushed
// every element on the stack) and charged to the script's memory budget.
func tableConcat(L *LState) int {
	sep := L.OptString(2, "")
	tbl := L.CheckTable(1)
	i := int64(L.OptInt(3, 1))
	var last int64
	if L.Get(4) == LNil {
		last = int64(tbl.Len())
	} else {
		last = int64(L.CheckInt(4))
	}
	var buf []byte
	for ; i <= last; i++ {
		v := tbl.RawGetInt(int(i))
		if !LVCanConvToString(v) {
			L.RaiseError("invalid value (%s) at index %d in table for 'concat'", v.Type().String(), i)
		}
		s := LVAsString(v)
		n := len(s)
		if i < last {
			n += len(sep)
		}
		L.ChargeHeld(n)
		buf = append(buf, s...)
		if i < last {
			buf = append(buf, sep...)
		}
	}
	L.ReleaseHeld(len(buf))
	L.ChargeMem(len(buf) + memString)
	L.Push(LString(buf))
	return 1
}

// tableInsert is Lua 5.1's tinsert (limitdb patch): table.insert(t, v)
// sets t[#t+1]; table.insert(t, pos, v) shifts t[pos..#t] up one (or just
// sets t[pos] beyond the end); other argument counts are an error.
func tableInsert(L *LState) int {
	tbl := L.CheckTable(1)
	e := tbl.Len() + 1
	var pos int
	switch L.GetTop() {
	case 2:
		pos = e
	case 3:
		pos = L.CheckInt(2) // luaL_checkint: numeric strings too, low 32 bits
		if pos > e {
			e = pos
		}
		for i := e; i > pos; i-- {
			tbl.RawSetInt(i, tbl.RawGetInt(i-1))
		}
	default:
		L.RaiseError("wrong number of arguments to 'insert'")
	}
	tbl.RawSetInt(pos, L.Get(L.GetTop()))
	return 0
}

//
