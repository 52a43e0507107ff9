package lua

func OpenTable(L *LState) int {
	// limitdb patch: ltablib.c's order (pairs(table) as Lua's)
	tabmod := L.registerLib(TabLibName, []libFunc{
		{"concat", tableConcat}, {"foreach", tableForeach}, {"foreachi", tableForeachi},
		{"getn", tableGetN}, {"maxn", tableMaxN}, {"insert", tableInsert},
		{"remove", tableRemove}, {"setn", tableSetN}, {"sort", tableSort},
	})
	L.Push(tabmod)
	return 1
}

// tableSort is Lua 5.1's sort (limitdb patch): its quicksort (auxsort)
// over t[1..#t] with rawget/rawset, so the order of elements that compare
// equal, the comparator calls and the errors ("invalid order function for
// sorting", comparing a nil) are Lua's. Upstream sorted the array part
// with Go's sort.
func tableSort(L *LState) int {
	tbl := L.CheckTable(1)
	n := tbl.Len()
	s := luaSorter{L: L, t: tbl}
	if L.Get(2) != LNil {
		s.fn = L.CheckFunction(2)
	}
	s.auxsort(1, n)
	return 0
}

type luaSorter struct {
	L  *LState
	t  *LTable
	fn *LFunction
}

// lt is sort_comp: the comparator's truth, or a < b.
func (s *luaSorter) lt(a, b LValue) bool {
	if s.fn != nil {
		s.L.Push(s.fn)
		s.L.Push(a)
		s.L.Push(b)
		s.L.Call(2, 1)
		return LVAsBool(s.L.reg.Pop())
	}
	return lessThan(s.L, a, b)
}

func (s *luaSorter) get(i int) LValue             { return s.t.RawGetInt(i) }
func (s *luaSorter) set(i int, v LValue)          { s.t.RawSetInt(i, v) }
func (s *luaSorter) swap(i, j int, vi, vj LValue) { s.set(i, vj); s.set(j, vi) }

// auxsort is ltablib.c's auxsort, step for step.
func (s *luaSorter) auxsort(l, u int) {
	for l < u {
		// sort a[l], a[(l+u)/2] and a[u]
		al, au := s.get(l), s.get(u)
		if s.lt(au, al) {
			s.swap(l, u, al, au)
		}
		if u-l == 1 {
			break
		}
		i := (l + u) / 2
		ai, al := s.get(i), s.get(l)
		if s.lt(ai, al) {
			s.swap(i, l, ai, al)
		} else {
			au := s.get(u)
			if s.lt(au, ai) {
				s.swap(i, u, ai, au)
			}
		}
		if u-l == 2 {
			break
		}
		p := s.get(i) // the pivot, moved to u-1
		s.swap(i, u-1, p, s.get(u-1))
		// a[l] <= P == a[u-1] <= a[u]: partition l+1..u-2
		j := u - 1
		i = l
		for {
			var ai, aj LValue
			for {
				i++
				ai = s.get(i)
				if !s.lt(ai, p) {
					break
				}
				if i > u {
					s.L.RaiseError("invalid order function for sorting")
				}
			}
			for {
				j--
				aj = s.get(j)
				if !s.lt(p, aj) {
					break
				}
				if j < l {
					s.L.RaiseError("invalid order function for sorting")
				}
			}
			if j < i {
				break
			}
			s.swap(i, j, ai, aj)
		}
		s.swap(u-1, i, s.get(u-1), s.get(i))
		// recurse into the smaller half, loop on the larger
		if i-l < u-i {
			j = l
			i = i - 1
			l = i + 2
		} else {
			j = i + 1
			i = u
			u = j - 2
		}
		s.auxsort(j, i)
	}
}

func tableGetN(L *LState) int {
	L.Push(LNumber(L.CheckTable(1).Len()))
	return 1
}

// tableMaxN is Lua 5.1's maxn: the largest positive number key, whole or
// not (limitdb patch: upstream looked at the array part only).
func tableMaxN(L *LState) int {
	L.Push(LNumber(L.CheckTable(1).maxn()))
	return 1
}

// tableSetN is Lua 5.1's setn as Redis builds it (without LUA_COMPAT_GETN):
// an error (limitdb patch).
func tableSetN(L *LState) int {
	L.CheckTable(1)
	L.RaiseError("'setn' is obsolete")
	return 0
}

// tableForeach is Lua 5.1's table.foreach(t, f): f(k, v) for every entry
// in next's order until f returns a non-nil value, which is returned
// (limitdb patch: upstream has no foreach).
func tableForeach(L *LState) int {
	tbl := L.CheckTable(1)
	fn := L.CheckFunction(2)
	k, v, _ := tbl.next(LNil)
	for k != LNil {
		L.Push(fn)
		L.Push(k)
		L.Push(v)
		L.Call(2, 1)
		if r := L.Get(-1); r != LNil {
			return 1
		}
		L.Pop(1)
		var ok bool
		if k, v, ok = tbl.next(k); !ok {
			L.runError("invalid key to 'next'")
		}
	}
	return 0
}

// tableForeachi is Lua 5.1's table.foreachi(t, f): f(i, t[i]) for i in
// 1..#t (the length taken once) until f returns a non-nil value.
func tableForeachi(L *LState) int {
	tbl := L.CheckTable(1)
	n := tbl.Len()
	fn := L.CheckFunction(2)
	for i := 1; i <= n; i++ {
		L.Push(fn)
		L.Push(LNumber(i))
		L.Push(tbl.RawGetInt(i))
		L.Call(2, 1)
		if r := L.Get(-1); r != LNil {
			return 1
		}
		L.Pop(1)
	}
	return 0
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
