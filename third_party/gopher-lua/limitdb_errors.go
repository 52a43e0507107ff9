package lua

// limitdb patch: PUC-Lua 5.1's type-error messages, with the variable
// description Lua derives from the bytecode ("attempt to perform arithmetic
// on local 'x' (a boolean value)", "attempt to call global 'f' (a nil
// value)", "attempt to index field 'y' (a nil value)"). Redis scripts
// return these texts to clients, so limitdb must produce Lua's.

// objName is Lua 5.1's getobjname for register reg at instruction pc.
func objName(p *FunctionProto, reg, pc int) (kind, name string) {
	if n := localName(p, reg, pc); n != "" {
		return "local", n
	}
	for i := pc - 1; i >= 0; i-- {
		inst := p.Code[i]
		op := opGetOpCode(inst)
		a := opGetArgA(inst)
		switch op {
		case OP_SETGLOBAL, OP_SETUPVAL, OP_SETTABLE, OP_SETTABLEKS, OP_EQ, OP_LT, OP_LE,
			OP_TEST, OP_JMP, OP_RETURN, OP_SETLIST, OP_CLOSE:
			continue
		case OP_LOADNIL:
			if reg >= a && reg <= opGetArgB(inst) {
				return "", ""
			}
			continue
		case OP_CALL, OP_TAILCALL:
			if reg >= a {
				return "", ""
			}
			continue
		case OP_SELF:
			if reg == a+1 {
				return "", ""
			}
		}
		if a != reg {
			continue
		}
		switch op {
		case OP_GETGLOBAL:
			if s, ok := p.Constants[opGetArgBx(inst)].(LString); ok {
				return "global", string(s)
			}
			return "global", "?"
		case OP_MOVE:
			if b := opGetArgB(inst); b < a {
				return objName(p, b, i)
			}
		case OP_GETTABLE, OP_GETTABLEKS:
			return "field", kname(p, opGetArgC(inst))
		case OP_GETUPVAL:
			if b := opGetArgB(inst); b < len(p.DbgUpvalues) {
				return "upvalue", p.DbgUpvalues[b]
			}
			return "upvalue", "?"
		case OP_SELF:
			return "method", kname(p, opGetArgC(inst))
		}
		return "", ""
	}
	return "", ""
}

func kname(p *FunctionProto, c int) string {
	if opIsK(c) {
		if s, ok := p.Constants[opIndexK(c)].(LString); ok {
			return string(s)
		}
	}
	return "?"
}

// localName is luaF_getlocalname: the name of the reg-th active local at pc.
func localName(p *FunctionProto, reg, pc int) string {
	n := reg + 1
	for _, l := range p.DbgLocals {
		if l.StartPc > pc {
			break
		}
		if pc < l.EndPc {
			n--
			if n == 0 {
				if len(l.Name) > 0 && l.Name[0] == '(' {
					return ""
				}
				return l.Name
			}
		}
	}
	return ""
}

// curInst returns the current Lua instruction and its index.
func (ls *LState) curInst() (*FunctionProto, uint32, int, bool) {
	cf := ls.currentFrame
	if cf == nil || cf.Fn == nil || cf.Fn.IsG || cf.Fn.Proto == nil || cf.Pc <= 0 || cf.Pc > len(cf.Fn.Proto.Code) {
		return nil, 0, 0, false
	}
	return cf.Fn.Proto, cf.Fn.Proto.Code[cf.Pc-1], cf.Pc - 1, true
}

// typeError raises luaG_typeerror for v, described by register reg of the
// current frame (reg < 0: no description).
func (ls *LState) typeError(v LValue, op string, reg int) {
	kind, name := "", ""
	if reg >= 0 {
		if p, _, pc, ok := ls.curInst(); ok {
			kind, name = objName(p, reg, pc)
		}
	}
	if kind != "" {
		ls.RaiseError("attempt to %s %s '%s' (a %s value)", op, kind, name, v.Type().String())
	}
	ls.RaiseError("attempt to %s a %s value", op, v.Type().String())
}

// arithError is luaG_aritherror for the current arithmetic instruction.
func (ls *LState) arithError(lhs, rhs LValue) {
	p, inst, _, ok := ls.curInst()
	bad, rk := rhs, -1
	_, lnum := lhs.(LNumber)
	if !lnum {
		bad = lhs
	}
	if ok {
		switch op := opGetOpCode(inst); op {
		case OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_POW:
			rk = opGetArgC(inst)
			if !lnum {
				rk = opGetArgB(inst)
			}
		case OP_UNM:
			rk = opGetArgB(inst)
		}
	}
	_ = p
	if rk >= 0 && opIsK(rk) {
		rk = -1
	}
	ls.typeError(bad, "perform arithmetic on", rk)
}

// concatError is luaG_concaterror for registers i (lhs) and i+1 (absolute).
func (ls *LState) concatError(lhs, rhs LValue, i int) {
	bad, reg := lhs, i
	if LVCanConvToString(lhs) {
		bad, reg = rhs, i+1
	}
	if cf := ls.currentFrame; cf != nil {
		reg -= cf.LocalBase
	} else {
		reg = -1
	}
	ls.typeError(bad, "concatenate", reg)
}

// indexError is the error for indexing a non-table: obj is the value the
// instruction indexed, curobj the one in the __index chain that failed.
func (ls *LState) indexError(curobj, obj LValue) {
	reg := -1
	if curobj == obj {
		if _, inst, _, ok := ls.curInst(); ok {
			switch opGetOpCode(inst) {
			case OP_GETTABLE, OP_GETTABLEKS, OP_SELF:
				reg = opGetArgB(inst)
			case OP_SETTABLE, OP_SETTABLEKS:
				reg = opGetArgA(inst)
			}
		}
	}
	ls.typeError(curobj, "index", reg)
}

// callError is the error for calling a non-function value.
func (ls *LState) callError(v LValue) {
	reg := -1
	if _, inst, _, ok := ls.curInst(); ok {
		switch opGetOpCode(inst) {
		case OP_CALL, OP_TAILCALL:
			reg = opGetArgA(inst)
		}
	}
	ls.typeError(v, "call", reg)
}

// compareError is luaG_ordererror.
func (ls *LState) compareError(lhs, rhs LValue) {
	t1, t2 := lhs.Type().String(), rhs.Type().String()
	if t1 == t2 {
		ls.runError("attempt to compare two %s values", t1)
	}
	ls.runError("attempt to compare %s with %s", t1, t2)
}

// runError is luaG_runerror: the message gets the position only when the
// running function is a Lua function; raised inside a library function
// (table.sort comparing a nil, next with a bad key, rawset(t, nil, v)) it
// has none. RaiseError always names the nearest Lua caller, as luaL_error.
func (ls *LState) runError(format string, args ...interface{}) {
	if cf := ls.currentFrame; cf != nil && cf.Fn != nil && cf.Fn.IsG {
		ls.raiseError(0, format, args...)
	}
	ls.raiseError(1, format, args...)
}
