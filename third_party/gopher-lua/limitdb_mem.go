package lua

import "unsafe"

// limitdb patch: a memory budget for one script run.
//
// gopher-lua has no allocator hook (its values live on the Go heap, which
// other goroutines share), so the budget is kept deterministically at the
// places where a script can make memory grow: every string the VM or a
// library builds (concatenation, string.rep/format/gsub/sub/char/upper/
// lower/reverse, table.concat, and through ChargeMem the cjson, cmsgpack and
// struct outputs and redis.call replies), every table created and every
// growth of a table's array or hash part, every closure.
//
// Charges only add up (Lua values are not freed one by one), so when the
// bytes charged since the last measure pass what the budget has left, a
// census walks everything the script can still reach (stack, registry,
// globals, upvalues, tables, threads) and sizes it; that figure replaces the
// running total. A script that keeps building and dropping values is
// measured now and then (the census costs what is live, and the next one
// comes only after at least an eighth of the budget has been charged
// again), a script whose live data passes the limit gets "not enough
// memory", raised before the allocation that would pass it.

// MemErrorText is Lua's out-of-memory message.
const MemErrorText = "not enough memory"

// memBudget is shared by a state and its coroutines (it lives in Global).
type memBudget struct {
	limit     int64 // bytes; <= 0: no limit
	charged   int64 // bytes charged since the last census
	threshold int64 // census when charged passes this
	live      int64 // bytes live at the last census
	held      int64 // bytes in buffers a Go function is still building
	exceeded  bool  // the last error raised was the budget's
	main      *LState
}

// Approximate sizes on a 64-bit Go heap.
const (
	memSlot     = 16   // an LValue interface in an array or the registry
	memString   = 16   // a string header besides its bytes
	memTable    = 120  // an LTable
	memNode     = 40   // a node of a table's hash part: key, value, chain
	memFunction = 80   // an LFunction with its upvalue slice
	memMatch    = 96   // a pattern match kept by gsub/gmatch, with its replacement
	memThread   = 8192 // a coroutine: its LState, registry and first frames
)

// SetMemLimit starts a run with a budget of limit bytes (<= 0: none).
func (ls *LState) SetMemLimit(limit int64) {
	m := &ls.G.mem
	m.limit, m.charged, m.live, m.held, m.exceeded, m.main = limit, 0, 0, 0, false, ls
	m.threshold = limit
}

// MemExceeded reports whether the budget raised the last memory error.
func (ls *LState) MemExceeded() bool { return ls.G.mem.exceeded }

// ChargeMem accounts n bytes the script is about to allocate and raises
// "not enough memory" when its live data would pass the budget.
func (ls *LState) ChargeMem(n int) {
	m := &ls.G.mem
	if m.limit <= 0 {
		return
	}
	m.charged += int64(n)
	if m.charged > m.threshold {
		ls.memCensus(int64(n))
	}
}

// ChargeHeld is ChargeMem for bytes appended to a buffer a Go function
// keeps until it returns (no census can see it): they count as live until
// ReleaseHeld. A buffer abandoned by an error stays counted until the run
// ends (conservative).
func (ls *LState) ChargeHeld(n int) {
	ls.ChargeMem(n)
	ls.G.mem.held += int64(n)
}

// ReleaseHeld ends ChargeHeld's accounting of n bytes.
// (An encoder releases its buffer's capacity, which may exceed what it
// charged: held never goes below zero.)
func (ls *LState) ReleaseHeld(n int) { ls.G.mem.held = max(ls.G.mem.held-int64(n), 0) }

// chargeGrowth is ChargeMem for table growth (tables carry their budget).
func (tb *LTable) chargeGrowth(n int) {
	if tb.mem != nil && tb.mem.limit > 0 {
		tb.mem.charged += int64(n)
		if tb.mem.charged > tb.mem.threshold && tb.mem.main != nil {
			tb.mem.main.G.CurrentThread.memCensus(int64(n))
		}
	}
}

func (ls *LState) memCensus(pending int64) {
	m := &ls.G.mem
	live := memReachable(m.main) + m.held
	m.live, m.charged = live, 0
	if live+pending > m.limit {
		m.exceeded = true
		m.threshold = m.limit / 8
		ls.Error(LString(MemErrorText), 0)
		return
	}
	m.threshold = max(m.limit-live-pending, m.limit/8)
}

// memReachable sizes everything reachable from L's roots. It walks with an
// explicit stack (a deeply nested table must not deepen the Go stack) and
// counts a string of 256 bytes or more once however often it is referenced.
func memReachable(L *LState) int64 {
	seen := map[unsafe.Pointer]struct{}{}
	var work []LValue
	var n int64
	visit := func(p unsafe.Pointer) bool {
		if _, ok := seen[p]; ok {
			return false
		}
		seen[p] = struct{}{}
		return true
	}
	var thread func(t *LState)
	thread = func(t *LState) {
		if !visit(unsafe.Pointer(t)) {
			return
		}
		n += memThread + int64(cap(t.reg.array))*memSlot
		work = append(work, t.reg.array[:t.reg.top]...)
		for i := 0; i < t.stack.Sp(); i++ {
			if f := t.stack.At(i); f != nil && f.Fn != nil {
				work = append(work, f.Fn)
			}
		}
		if t.Env != nil {
			work = append(work, t.Env)
		}
	}
	// scalar values are sized in place; only containers go on the work list
	// (a census must not allocate as much as the data it measures)
	add := func(v LValue) {
		switch x := v.(type) {
		case LString:
			if len(x) < 256 {
				n += int64(len(x)) + memString
				return
			}
		case LNumber, LBool, nil:
			return
		case *LNilType:
			return
		}
		work = append(work, v)
	}
	thread(L)
	work = append(work, L.G.Registry, L.G.Global)
	if L.G.CurrentThread != nil {
		thread(L.G.CurrentThread)
	}
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		switch x := v.(type) {
		case LString:
			if len(x) >= 256 && !visit(unsafe.Pointer(unsafe.StringData(string(x)))) {
				continue
			}
			n += int64(len(x)) + memString
		case *LTable:
			if x == nil || !visit(unsafe.Pointer(x)) {
				continue
			}
			n += memTable + int64(cap(x.array))*memSlot + int64(len(x.node))*memNode
			for _, val := range x.array {
				add(val)
			}
			for i := range x.node {
				add(x.node[i].key)
				add(x.node[i].val)
			}
			if x.Metatable != nil {
				work = append(work, x.Metatable)
			}
		case *LFunction:
			if x == nil || !visit(unsafe.Pointer(x)) {
				continue
			}
			n += memFunction
			if x.Proto != nil && visit(unsafe.Pointer(x.Proto)) {
				n += protoSize(x.Proto)
			}
			if x.Env != nil {
				work = append(work, x.Env)
			}
			for _, uv := range x.Upvalues {
				if uv != nil {
					work = append(work, uv.Value())
				}
			}
		case *LUserData:
			if x == nil || !visit(unsafe.Pointer(x)) {
				continue
			}
			if x.Metatable != nil {
				work = append(work, x.Metatable)
			}
			if x.Env != nil {
				work = append(work, x.Env)
			}
		case *LState:
			if x != nil {
				thread(x)
			}
		}
	}
	return n
}

// protoSize approximates a compiled function's memory: code, debug line
// info, constants and nested prototypes (loadstring can make big ones).
func protoSize(p *FunctionProto) int64 {
	n := int64(len(p.Code))*8 + int64(len(p.DbgSourcePositions))*8 + int64(len(p.Constants))*memSlot + int64(len(p.stringConstants))*memString
	for _, c := range p.FunctionPrototypes {
		n += protoSize(c)
	}
	return n
}

// MemInUse sizes what the interpreter's roots reach (the census's
// measure), for INFO's used_memory_vm_* fields. It allocates as the census
// does; call it outside a run.
func (ls *LState) MemInUse() int64 { return memReachable(ls) }
