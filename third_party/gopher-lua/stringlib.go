package lua

import (
	"fmt"
	"strings"

	"github.com/yuin/gopher-lua/pm"
)

const emptyLString LString = LString("")

func OpenString(L *LState) int {
	var mod *LTable
	//_, ok := L.G.builtinMts[int(LTString)]
	//if !ok {
	// limitdb patch: lstrlib.c's order and metatable: the string table is
	// the __index of a metatable of its own (upstream made the library its
	// own metatable, so string.__index existed), gfind is gmatch
	// (LUA_COMPAT_GFIND)
	mod = L.registerLib(StringLibName, []libFunc{
		{"byte", strByte}, {"char", strChar}, {"dump", strDump}, {"find", strFind},
		{"format", strFormat}, {"gfind", strGmatch}, {"gmatch", strGmatch}, {"gsub", strGsub},
		{"len", strLen}, {"lower", strLower}, {"match", strMatch}, {"rep", strRep},
		{"reverse", strReverse}, {"sub", strSub}, {"upper", strUpper},
	}).(*LTable)
	gmatch := L.NewClosure(strGmatch, L.NewFunction(strGmatchIter))
	mod.RawSetString("gmatch", gmatch)
	mod.RawSetString("gfind", gmatch)
	mt := L.CreateTable(0, 1)
	mt.RawSetString("__index", mod)
	L.G.builtinMts[int(LTString)] = mt
	//}
	L.Push(mod)
	return 1
}

// strByte is Lua 5.1's str_byte (limitdb patch): 64-bit positions, at most
// LUAI_MAXCSTACK results ("stack overflow (string slice too long)").
func strByte(L *LState) int {
	str := L.CheckString(1)
	l := len(str)
	posi := posrelat(L.OptInteger(2, 1), l)
	pose := posrelat(L.OptInteger(3, posi), l)
	if posi <= 0 {
		posi = 1
	}
	if pose > int64(l) {
		pose = int64(l)
	}
	if posi > pose {
		return 0
	}
	n := pose - posi + 1
	if !L.cStackRoom(n) {
		L.RaiseError("stack overflow (string slice too long)")
	}
	for i := posi - 1; i < pose; i++ {
		L.Push(LNumber(str[i]))
	}
	return int(n)
}

// strChar is Lua 5.1's str_char (limitdb patch): luaL_checkint codes,
// "invalid value" outside 0..255.
func strChar(L *LState) int {
	top := L.GetTop()
	L.ChargeMem(top + memString)
	bytes := make([]byte, top)
	for i := 1; i <= top; i++ {
		c := L.CheckInt(i)
		if c < 0 || c > 255 {
			L.ArgError(i, "invalid value")
		}
		bytes[i-1] = uint8(c)
	}
	L.Push(LString(string(bytes)))
	return 1
}

func strDump(L *LState) int {
	L.RaiseError("GopherLua does not support the string.dump")
	return 0
}

func strFind(L *LState) int {
	str := L.CheckString(1)
	pattern := L.CheckString(2)
	init := findInit(L, str)
	if len(pattern) == 0 {
		L.Push(LNumber(init + 1))
		L.Push(LNumber(init))
		return 2
	}
	plain := false
	if L.GetTop() == 4 {
		plain = LVAsBool(L.Get(4))
	}

	if plain {
		pos := strings.Index(str[init:], pattern)
		if pos < 0 {
			L.Push(LNil)
			return 1
		}
		L.Push(LNumber(init+pos) + 1)
		L.Push(LNumber(init + pos + len(pattern)))
		return 2
	}

	mds, err := pm.FindCtl(L.matchCtl(), pattern, unsafeFastStringToReadOnlyBytes(str), init, 1)
	if err != nil {
		L.RaiseError(err.Error())
	}
	if len(mds) == 0 {
		L.Push(LNil)
		return 1
	}
	md := mds[0]
	L.Push(LNumber(md.Capture(0) + 1))
	L.Push(LNumber(md.Capture(1)))
	for i := 2; i < md.CaptureLength(); i += 2 {
		if md.IsPosCapture(i) {
			L.Push(LNumber(md.Capture(i)))
		} else {
			L.Push(LString(str[md.Capture(i):md.Capture(i+1)]))
		}
	}
	return md.CaptureLength()/2 + 1
}

func strGsub(L *LState) int {
	str := L.CheckString(1)
	pat := L.CheckString(2)
	L.CheckTypes(3, LTString, LTTable, LTFunction)
	repl := L.CheckAny(3)
	limit := L.OptInt(4, len(str)+1) // luaL_optint (limitdb patch)
	if limit <= 0 {
		L.SetTop(1)
		L.Push(LNumber(0))
		return 2
	}

	mds, held := findCharged(L, pat, str, limit)
	defer L.ReleaseHeld(held)
	if len(mds) == 0 {
		L.SetTop(1)
		L.Push(LNumber(0))
		return 2
	}
	switch lv := repl.(type) {
	case LString:
		L.Push(LString(strGsubStr(L, str, string(lv), mds)))
	case *LTable:
		L.Push(LString(strGsubTable(L, str, lv, mds)))
	case *LFunction:
		L.Push(LString(strGsubFunc(L, str, lv, mds)))
	}
	L.Push(LNumber(len(mds)))
	return 2
}

type replaceInfo struct {
	Indicies []int
	String   string
}

func checkCaptureIndex(L *LState, m *pm.MatchData, idx int) {
	if idx <= 2 {
		return
	}
	if idx >= m.CaptureLength() {
		L.RaiseError("invalid capture index")
	}
}

func capturedString(L *LState, m *pm.MatchData, str string, idx int) string {
	checkCaptureIndex(L, m, idx)
	if idx >= m.CaptureLength() && idx == 2 {
		idx = 0
	}
	if m.IsPosCapture(idx) {
		return fmt.Sprint(m.Capture(idx))
	} else {
		return str[m.Capture(idx):m.Capture(idx+1)]
	}

}

// strGsubDoReplace builds the result in one pass (limitdb patch: upstream
// copied the whole string once per match, quadratic in the match count),
// charged to the script's memory budget.
func strGsubDoReplace(L *LState, str string, info []replaceInfo) string {
	size := len(str)
	for _, r := range info {
		size += len(r.String) - (r.Indicies[1] - r.Indicies[0])
	}
	L.ChargeMem(size + memString)
	buf := make([]byte, 0, size)
	prev := 0
	for _, r := range info {
		buf = append(buf, str[prev:r.Indicies[0]]...)
		buf = append(buf, r.String...)
		prev = r.Indicies[1]
	}
	buf = append(buf, str[prev:]...)
	return string(buf)
}

func strGsubStr(L *LState, str string, repl string, matches []*pm.MatchData) string {
	infoList := make([]replaceInfo, 0, len(matches))
	for _, match := range matches {
		start, end := match.Capture(0), match.Capture(1)
		sc := newFlagScanner('%', "", "", repl)
		for c, eos := sc.Next(); !eos; c, eos = sc.Next() {
			if !sc.ChangeFlag {
				if sc.HasFlag {
					if c >= '0' && c <= '9' {
						sc.AppendString(capturedString(L, match, str, 2*(int(c)-48)))
					} else {
						sc.AppendChar('%')
						sc.AppendChar(c)
					}
					sc.HasFlag = false
				} else {
					sc.AppendChar(c)
				}
			}
		}
		infoList = append(infoList, replaceInfo{[]int{start, end}, sc.String()})
	}

	return strGsubDoReplace(L, str, infoList)
}

func strGsubTable(L *LState, str string, repl *LTable, matches []*pm.MatchData) string {
	infoList := make([]replaceInfo, 0, len(matches))
	for _, match := range matches {
		idx := 0
		if match.CaptureLength() > 2 { // has captures
			idx = 2
		}
		var value LValue
		if match.IsPosCapture(idx) {
			value = L.GetTable(repl, LNumber(match.Capture(idx)))
		} else {
			value = L.GetField(repl, str[match.Capture(idx):match.Capture(idx+1)])
		}
		if !LVIsFalse(value) {
			infoList = append(infoList, replaceInfo{[]int{match.Capture(0), match.Capture(1)}, LVAsString(value)})
		}
	}
	return strGsubDoReplace(L, str, infoList)
}

func strGsubFunc(L *LState, str string, repl *LFunction, matches []*pm.MatchData) string {
	infoList := make([]replaceInfo, 0, len(matches))
	for _, match := range matches {
		start, end := match.Capture(0), match.Capture(1)
		L.Push(repl)
		nargs := 0
		if match.CaptureLength() > 2 { // has captures
			for i := 2; i < match.CaptureLength(); i += 2 {
				if match.IsPosCapture(i) {
					L.Push(LNumber(match.Capture(i)))
				} else {
					L.Push(LString(capturedString(L, match, str, i)))
				}
				nargs++
			}
		} else {
			L.Push(LString(capturedString(L, match, str, 0)))
			nargs++
		}
		L.Call(nargs, 1)
		ret := L.reg.Pop()
		if !LVIsFalse(ret) {
			infoList = append(infoList, replaceInfo{[]int{start, end}, LVAsString(ret)})
		}
	}
	return strGsubDoReplace(L, str, infoList)
}

type strMatchData struct {
	str     string
	pos     int
	matches []*pm.MatchData
}

func strGmatchIter(L *LState) int {
	md := L.CheckUserData(1).Value.(*strMatchData)
	str := md.str
	matches := md.matches
	idx := md.pos
	md.pos += 1
	if idx == len(matches) {
		return 0
	}
	L.Push(L.Get(1))
	match := matches[idx]
	if match.CaptureLength() == 2 {
		L.Push(LString(str[match.Capture(0):match.Capture(1)]))
		return 1
	}

	for i := 2; i < match.CaptureLength(); i += 2 {
		if match.IsPosCapture(i) {
			L.Push(LNumber(match.Capture(i)))
		} else {
			L.Push(LString(str[match.Capture(i):match.Capture(i+1)]))
		}
	}
	return match.CaptureLength()/2 - 1
}

func strGmatch(L *LState) int {
	str := L.CheckString(1)
	pattern := L.CheckString(2)
	// the matches live in the iterator until it is dropped: they stay
	// counted until the run ends (conservative)
	mds, _ := findCharged(L, pattern, str, len(str)+1)
	L.Push(L.Get(UpvalueIndex(1)))
	ud := L.NewUserData()
	ud.Value = &strMatchData{str, 0, mds}
	L.Push(ud)
	return 2
}

func strLen(L *LState) int {
	str := L.CheckString(1)
	L.Push(LNumber(len(str)))
	return 1
}

func strLower(L *LState) int {
	str := L.CheckString(1)
	L.ChargeMem(len(str) + memString)
	L.Push(LString(strings.ToLower(str)))
	return 1
}

func strMatch(L *LState) int {
	str := L.CheckString(1)
	pattern := L.CheckString(2)
	offset := findInit(L, str)

	mds, err := pm.FindCtl(L.matchCtl(), pattern, unsafeFastStringToReadOnlyBytes(str), offset, 1)
	if err != nil {
		L.RaiseError(err.Error())
	}
	if len(mds) == 0 {
		L.Push(LNil)
		return 0
	}
	md := mds[0]
	nsubs := md.CaptureLength() / 2
	switch nsubs {
	case 1:
		L.Push(LString(str[md.Capture(0):md.Capture(1)]))
		return 1
	default:
		for i := 2; i < md.CaptureLength(); i += 2 {
			if md.IsPosCapture(i) {
				L.Push(LNumber(md.Capture(i)))
			} else {
				L.Push(LString(str[md.Capture(i):md.Capture(i+1)]))
			}
		}
		return nsubs - 1
	}
}

// strRep is Lua 5.1's str_rep (limitdb patch): a luaL_checkint count, the
// result charged to the script's memory budget before it is built.
func strRep(L *LState) int {
	str := L.CheckString(1)
	n := L.CheckInt(2)
	if n <= 0 || len(str) == 0 {
		L.Push(emptyLString)
		return 1
	}
	L.ChargeMem(len(str)*n + memString)
	L.Push(LString(strings.Repeat(str, n)))
	return 1
}

func strReverse(L *LState) int {
	str := L.CheckString(1)
	L.ChargeMem(2*len(str) + memString)
	bts := []byte(str)
	out := make([]byte, len(bts))
	for i, j := 0, len(bts)-1; j >= 0; i, j = i+1, j-1 {
		out[i] = bts[j]
	}
	L.Push(LString(string(out)))
	return 1
}

// strSub is Lua 5.1's str_sub (limitdb patch): 64-bit positions.
func strSub(L *LState) int {
	str := L.CheckString(1)
	l := len(str)
	start := posrelat(L.CheckInteger(2), l)
	end := posrelat(L.OptInteger(3, -1), l)
	if start < 1 {
		start = 1
	}
	if end > int64(l) {
		end = int64(l)
	}
	if start > end {
		L.Push(emptyLString)
		return 1
	}
	L.ChargeMem(int(end-start+1) + memString)
	L.Push(LString(str[start-1 : end]))
	return 1
}

// findInit is str_find_aux's start: a 64-bit position clamped to the string.
func findInit(L *LState, str string) int {
	init := posrelat(L.OptInteger(3, 1), len(str)) - 1
	if init < 0 {
		init = 0
	} else if init > int64(len(str)) {
		init = int64(len(str))
	}
	return int(init)
}

func strUpper(L *LState) int {
	str := L.CheckString(1)
	L.ChargeMem(len(str) + memString)
	L.Push(LString(strings.ToUpper(str)))
	return 1
}

func luaIndex2StringIndex(str string, i int, start bool) int {
	if start && i != 0 {
		i -= 1
	}
	l := len(str)
	if i < 0 {
		i = l + i + 1
	}
	i = intMax(0, i)
	if !start && i > l {
		i = l
	}
	return i
}

//

// matchCtl lets SCRIPT KILL (the state's context) stop a long pattern
// match (limitdb patch, see pm.Control).
func (ls *LState) matchCtl() *pm.Control {
	if ls.pmCtl == nil {
		ls.pmCtl = &pm.Control{Stop: func() bool { return ls.ctx != nil && ls.ctx.Err() != nil }}
	}
	return ls.pmCtl
}

// findCharged is pm.Find for gsub and gmatch, which keep every match (gsub
// also a replacement per match) until they are done (limitdb patch): it
// finds them in batches and charges each batch to the script's memory
// budget as held bytes before finding the next, so a subject with millions
// of matches fails with "not enough memory" instead of allocating them all.
// It returns the matches and the bytes held (the caller releases them).
func findCharged(L *LState, pat, str string, limit int) ([]*pm.MatchData, int) {
	const batch = 4096
	src := unsafeFastStringToReadOnlyBytes(str)
	anchored := len(pat) > 0 && pat[0] == '^'
	var all []*pm.MatchData
	held, off := 0, 0
	for len(all) < limit && off <= len(src) {
		n := min(limit-len(all), batch)
		mds, err := pm.FindCtl(L.matchCtl(), pat, src, off, n)
		if err != nil {
			L.ReleaseHeld(held)
			L.RaiseError(err.Error())
		}
		L.ChargeHeld(len(mds) * memMatch)
		held += len(mds) * memMatch
		all = append(all, mds...)
		if len(mds) < n || anchored {
			break
		}
		// pm.Find resumes after a match at max(start+1, end)
		last := mds[len(mds)-1]
		off = max(last.Capture(0)+1, last.Capture(1))
	}
	return all, held
}
