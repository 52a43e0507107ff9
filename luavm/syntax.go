package luavm

import (
	"strconv"
	"strings"
)

// A Lua 5.1 syntax checker that reports errors with PUC-Lua 5.1's texts
// (llex.c / lparser.c): "user_script:<line>: <msg> near '<token>'". Scripts
// are checked before gopher-lua compiles them, so a script Redis refuses is
// refused here with the same message (gopher-lua also accepts Lua 5.2's
// goto and labels, which Lua 5.1 does not have).

const (
	tkEOS = iota + 256
	tkName
	tkString
	tkNumber
	tkConcat
	tkDots
	tkEq
	tkGe
	tkLe
	tkNe
	tkAnd
	tkBreak
	tkDo
	tkElse
	tkElseif
	tkEnd
	tkFalse
	tkFor
	tkFunction
	tkIf
	tkIn
	tkLocal
	tkNil
	tkNot
	tkOr
	tkRepeat
	tkReturn
	tkThen
	tkTrue
	tkUntil
	tkWhile
)

var reserved = map[string]int{
	"and": tkAnd, "break": tkBreak, "do": tkDo, "else": tkElse, "elseif": tkElseif,
	"end": tkEnd, "false": tkFalse, "for": tkFor, "function": tkFunction, "if": tkIf,
	"in": tkIn, "local": tkLocal, "nil": tkNil, "not": tkNot, "or": tkOr,
	"repeat": tkRepeat, "return": tkReturn, "then": tkThen, "true": tkTrue,
	"until": tkUntil, "while": tkWhile,
}

var tokenText = map[int]string{
	tkEOS: "<eof>", tkName: "<name>", tkString: "<string>", tkNumber: "<number>",
	tkConcat: "..", tkDots: "...", tkEq: "==", tkGe: ">=", tkLe: "<=", tkNe: "~=",
}

func init() {
	for w, t := range reserved {
		tokenText[t] = w
	}
}

type synErr struct{ msg string }

type token struct {
	t    int
	text string // raw text for names, strings, numbers
}

type lexer struct {
	chunk    string // chunk id in messages ("user_script", "[string \"…\"]")
	src      string
	i        int
	line     int
	lastline int
	tok      token
	ahead    token
	hasAhead bool
	buf      strings.Builder
}

func (lx *lexer) cur() int {
	if lx.i < len(lx.src) {
		return int(lx.src[lx.i])
	}
	return -1
}

func (lx *lexer) fail(msg string, t int) {
	panic(synErr{lx.chunk + ":" + strconv.Itoa(lx.line) + ": " + msg + " near '" + lx.txtToken(t) + "'"})
}

func (lx *lexer) txtToken(t int) string {
	switch t {
	case tkName, tkString, tkNumber:
		return lx.buf.String()
	}
	return token2str(t)
}

func token2str(t int) string {
	if t < 256 {
		if t < 32 || t == 127 {
			return "char(" + strconv.Itoa(t) + ")"
		}
		return string([]byte{byte(t)})
	}
	return tokenText[t]
}

func (lx *lexer) syntaxError(msg string) {
	t := lx.tok.t
	if t == tkName || t == tkString || t == tkNumber {
		lx.buf.Reset()
		lx.buf.WriteString(lx.tok.text)
	}
	lx.fail(msg, t)
}

func (lx *lexer) newline() {
	old := lx.cur()
	lx.i++
	if c := lx.cur(); (c == '\n' || c == '\r') && c != old {
		lx.i++
	}
	lx.line++
}

func (lx *lexer) save(c int) { lx.buf.WriteByte(byte(c)) }

func (lx *lexer) saveNext() {
	lx.save(lx.cur())
	lx.i++
}

func (lx *lexer) next() {
	lx.lastline = lx.line
	if lx.hasAhead {
		lx.tok = lx.ahead
		lx.hasAhead = false
		return
	}
	lx.tok = lx.scan()
}

func (lx *lexer) lookahead() int {
	if !lx.hasAhead {
		lx.ahead = lx.scan()
		lx.hasAhead = true
	}
	return lx.ahead.t
}

// skipSep counts '=' of a long bracket at [ or ]: the count when another
// bracket follows, else -count-1.
func (lx *lexer) skipSep() int {
	s := lx.cur()
	lx.saveNext()
	count := 0
	for lx.cur() == '=' {
		lx.saveNext()
		count++
	}
	if lx.cur() == s {
		return count
	}
	return -count - 1
}

func (lx *lexer) longString(comment bool, sep int) {
	lx.saveNext() // second [
	if c := lx.cur(); c == '\n' || c == '\r' {
		lx.newline()
	}
	for {
		switch c := lx.cur(); c {
		case -1:
			if comment {
				lx.fail("unfinished long comment", tkEOS)
			}
			lx.fail("unfinished long string", tkEOS)
		case '[':
			if lx.skipSep() == sep {
				lx.saveNext()
				if sep == 0 {
					lx.fail("nesting of [[...]] is deprecated", '[')
				}
			}
		case ']':
			if lx.skipSep() == sep {
				lx.saveNext()
				return
			}
		case '\n', '\r':
			lx.save('\n')
			lx.newline()
		default:
			lx.saveNext()
		}
	}
}

func (lx *lexer) readString(del int) {
	lx.saveNext()
	for lx.cur() != del {
		switch c := lx.cur(); c {
		case -1:
			lx.fail("unfinished string", tkEOS)
		case '\n', '\r':
			lx.fail("unfinished string", tkString)
		case '\\':
			lx.i++ // the backslash is not saved
			switch c2 := lx.cur(); {
			case c2 == -1:
				continue
			case c2 == '\n' || c2 == '\r':
				lx.save('\n')
				lx.newline()
			case c2 >= '0' && c2 <= '9':
				n := 0
				for k := 0; k < 3 && lx.cur() >= '0' && lx.cur() <= '9'; k++ {
					n = n*10 + lx.cur() - '0'
					lx.i++
				}
				if n > 255 {
					lx.fail("escape sequence too large", tkString)
				}
				lx.save(n)
			default:
				if e := strings.IndexByte("abfnrtv", byte(c2)); e >= 0 {
					lx.save(int("\a\b\f\n\r\t\v"[e]))
					lx.i++
				} else {
					lx.saveNext()
				}
			}
		default:
			lx.saveNext()
		}
	}
	lx.saveNext()
}

func isAlnum(c int) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func (lx *lexer) readNumeral() {
	for c := lx.cur(); c >= '0' && c <= '9' || c == '.'; c = lx.cur() {
		lx.saveNext()
	}
	if c := lx.cur(); c == 'e' || c == 'E' {
		lx.saveNext()
		if c := lx.cur(); c == '+' || c == '-' {
			lx.saveNext()
		}
	}
	for isAlnum(lx.cur()) {
		lx.saveNext()
	}
	if !str2d(lx.buf.String()) {
		lx.fail("malformed number", tkNumber)
	}
}

// str2d is luaO_str2d's acceptance test (strtod, then hex via strtoul).
func str2d(s string) bool {
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return !strings.ContainsAny(s, "_pP") || strings.HasPrefix(strings.ToLower(s), "0x")
	}
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		_, err := strconv.ParseUint(s[2:], 16, 64)
		return err == nil
	}
	return false
}

func (lx *lexer) scan() token {
	lx.buf.Reset()
	for {
		c := lx.cur()
		switch c {
		case -1:
			return token{t: tkEOS}
		case '\n', '\r':
			lx.newline()
		case '-':
			lx.i++
			if lx.cur() != '-' {
				return token{t: '-'}
			}
			lx.i++
			if lx.cur() == '[' {
				sep := lx.skipSep()
				lx.buf.Reset()
				if sep >= 0 {
					lx.longString(true, sep)
					lx.buf.Reset()
					continue
				}
			}
			for c := lx.cur(); c != '\n' && c != '\r' && c != -1; c = lx.cur() {
				lx.i++
			}
		case '[':
			sep := lx.skipSep()
			if sep >= 0 {
				lx.longString(false, sep)
				return token{t: tkString, text: lx.buf.String()}
			}
			if sep == -1 {
				return token{t: '['}
			}
			lx.fail("invalid long string delimiter", tkString)
		case '=':
			lx.i++
			if lx.cur() != '=' {
				return token{t: '='}
			}
			lx.i++
			return token{t: tkEq}
		case '<', '>', '~':
			lx.i++
			if lx.cur() != '=' {
				return token{t: c}
			}
			lx.i++
			return token{t: map[int]int{'<': tkLe, '>': tkGe, '~': tkNe}[c]}
		case '"', '\'':
			lx.readString(c)
			return token{t: tkString, text: lx.buf.String()}
		case '.':
			lx.saveNext()
			if lx.cur() == '.' {
				lx.saveNext()
				if lx.cur() == '.' {
					lx.saveNext()
					return token{t: tkDots}
				}
				return token{t: tkConcat}
			}
			if c := lx.cur(); c < '0' || c > '9' {
				return token{t: '.'}
			}
			lx.readNumeral()
			return token{t: tkNumber, text: lx.buf.String()}
		default:
			switch {
			case c == ' ' || c == '\t' || c == '\v' || c == '\f':
				lx.i++
			case c >= '0' && c <= '9':
				lx.readNumeral()
				return token{t: tkNumber, text: lx.buf.String()}
			case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
				for isAlnum(lx.cur()) {
					lx.saveNext()
				}
				w := lx.buf.String()
				if t, ok := reserved[w]; ok {
					return token{t: t}
				}
				return token{t: tkName, text: w}
			default:
				lx.i++
				return token{t: c}
			}
		}
	}
}

// --- parser ------------------------------------------------------------------

type synFunc struct {
	vararg bool
	loops  int
}

type parser struct {
	lx *lexer
	fs *synFunc
	// level is lparser.c's nesting count (enterlevel: every chunk and
	// subexpression): past LUAI_MAXCCALLS (200) Lua refuses the chunk. It
	// also bounds how deep gopher-lua's own parser and compiler recurse
	// (a Go stack overflow is fatal).
	level int
}

const maxSyntaxLevels = 200

func (p *parser) enter() {
	p.level++
	if p.level > maxSyntaxLevels {
		panic(synErr{p.lx.chunk + ":" + strconv.Itoa(p.lx.line) + ": chunk has too many syntax levels"})
	}
}

const (
	expOther = iota
	expVar
	expCall
)

func (p *parser) t() int { return p.lx.tok.t }

func (p *parser) errExpected(t int) { p.lx.syntaxError("'" + token2str(t) + "' expected") }

func (p *parser) check(t int) {
	if p.t() != t {
		p.errExpected(t)
	}
}

func (p *parser) checkNext(t int) {
	p.check(t)
	p.lx.next()
}

func (p *parser) testNext(t int) bool {
	if p.t() == t {
		p.lx.next()
		return true
	}
	return false
}

func (p *parser) checkMatch(what, who, line int) {
	if !p.testNext(what) {
		if line == p.lx.line {
			p.errExpected(what)
		}
		p.lx.syntaxError("'" + token2str(what) + "' expected (to close '" + token2str(who) + "' at line " + strconv.Itoa(line) + ")")
	}
}

func (p *parser) checkName() { p.checkNext(tkName) }

func blockFollow(t int) bool {
	switch t {
	case tkElse, tkElseif, tkEnd, tkUntil, tkEOS:
		return true
	}
	return false
}

func (p *parser) chunk() {
	p.enter()
	defer func() { p.level-- }()
	last := false
	for !last && !blockFollow(p.t()) {
		last = p.statement()
		p.testNext(';')
	}
}

func (p *parser) block() { p.chunk() }

func (p *parser) statement() bool {
	line := p.lx.line
	switch p.t() {
	case tkIf:
		p.testThenBlock()
		for p.t() == tkElseif {
			p.testThenBlock()
		}
		if p.testNext(tkElse) {
			p.block()
		}
		p.checkMatch(tkEnd, tkIf, line)
	case tkWhile:
		p.lx.next()
		p.expr()
		p.checkNext(tkDo)
		p.loopBlock()
		p.checkMatch(tkEnd, tkWhile, line)
	case tkDo:
		p.lx.next()
		p.block()
		p.checkMatch(tkEnd, tkDo, line)
	case tkFor:
		p.lx.next()
		p.checkName()
		switch p.t() {
		case '=':
			p.lx.next()
			p.expr()
			p.checkNext(',')
			p.expr()
			if p.testNext(',') {
				p.expr()
			}
		case ',', tkIn:
			for p.testNext(',') {
				p.checkName()
			}
			p.checkNext(tkIn)
			p.exprList()
		default:
			p.lx.syntaxError("'=' or 'in' expected")
		}
		p.checkNext(tkDo)
		p.loopBlock()
		p.checkMatch(tkEnd, tkFor, line)
	case tkRepeat:
		p.lx.next()
		p.fs.loops++
		p.chunk()
		p.checkMatch(tkUntil, tkRepeat, line)
		p.expr()
		p.fs.loops--
	case tkFunction:
		p.lx.next()
		p.checkName()
		for p.testNext('.') {
			p.checkName()
		}
		if p.testNext(':') {
			p.checkName()
		}
		p.body(line)
	case tkLocal:
		p.lx.next()
		if p.testNext(tkFunction) {
			p.checkName()
			p.body(line)
		} else {
			p.checkName()
			for p.testNext(',') {
				p.checkName()
			}
			if p.testNext('=') {
				p.exprList()
			}
		}
	case tkReturn:
		p.lx.next()
		if !blockFollow(p.t()) && p.t() != ';' {
			p.exprList()
		}
		return true
	case tkBreak:
		p.lx.next()
		if p.fs.loops == 0 {
			p.lx.syntaxError("no loop to break")
		}
		return true
	default:
		if k := p.primaryExp(); k != expCall {
			p.assignment(k)
		}
	}
	return false
}

func (p *parser) loopBlock() {
	p.fs.loops++
	p.block()
	p.fs.loops--
}

func (p *parser) assignment(k int) {
	if k != expVar {
		p.lx.syntaxError("syntax error")
	}
	if p.testNext(',') {
		p.assignment(p.primaryExp())
		return
	}
	p.checkNext('=')
	p.exprList()
}

func (p *parser) testThenBlock() {
	p.lx.next()
	p.expr()
	p.checkNext(tkThen)
	p.block()
}

func (p *parser) body(line int) {
	saved := p.fs
	p.fs = &synFunc{}
	p.checkNext('(')
	if p.t() != ')' {
		for {
			switch p.t() {
			case tkName:
				p.lx.next()
			case tkDots:
				p.lx.next()
				p.fs.vararg = true
			default:
				p.lx.syntaxError("<name> or '...' expected")
			}
			if p.fs.vararg || !p.testNext(',') {
				break
			}
		}
	}
	p.checkNext(')')
	p.chunk()
	p.checkMatch(tkEnd, tkFunction, line)
	p.fs = saved
}

func (p *parser) exprList() {
	p.expr()
	for p.testNext(',') {
		p.expr()
	}
}

func isBinop(t int) bool {
	switch t {
	case '+', '-', '*', '/', '%', '^', tkConcat, tkNe, tkEq, '<', tkLe, '>', tkGe, tkAnd, tkOr:
		return true
	}
	return false
}

func (p *parser) expr() int {
	p.enter()
	entered := p.level
	defer func() { p.level = entered - 1 }()
	k := expOther
	if t := p.t(); t == tkNot || t == '-' || t == '#' {
		p.lx.next()
		p.expr1()
	} else {
		k = p.simpleExp()
	}
	for isBinop(p.t()) {
		// right-associative operators (.. and ^) nest one level per
		// operator in Lua's subexpr, the others return first
		rightAssoc := p.t() == tkConcat || p.t() == '^'
		p.lx.next()
		p.expr1()
		if rightAssoc {
			p.level++
		}
		k = expOther
	}
	return k
}

func (p *parser) expr1() {
	p.enter()
	defer func() { p.level-- }()
	// unary operands bind tighter, but for syntax only the shape matters
	if t := p.t(); t == tkNot || t == '-' || t == '#' {
		p.lx.next()
		p.expr1()
		return
	}
	p.simpleExp()
}

func (p *parser) simpleExp() int {
	switch p.t() {
	case tkNumber, tkString, tkNil, tkTrue, tkFalse:
	case tkDots:
		if !p.fs.vararg {
			p.lx.syntaxError("cannot use '...' outside a vararg function")
		}
	case '{':
		p.constructor()
		return expOther
	case tkFunction:
		line := p.lx.line
		p.lx.next()
		p.body(line)
		return expOther
	default:
		return p.primaryExp()
	}
	p.lx.next()
	return expOther
}

func (p *parser) primaryExp() int {
	k := expVar
	switch p.t() {
	case '(':
		line := p.lx.line
		p.lx.next()
		p.expr()
		p.checkMatch(')', '(', line)
		k = expOther
	case tkName:
		p.lx.next()
	default:
		p.lx.syntaxError("unexpected symbol")
	}
	for {
		switch p.t() {
		case '.':
			p.lx.next()
			p.checkName()
			k = expVar
		case '[':
			p.lx.next()
			p.expr()
			p.checkNext(']')
			k = expVar
		case ':':
			p.lx.next()
			p.checkName()
			p.funcArgs()
			k = expCall
		case '(', tkString, '{':
			p.funcArgs()
			k = expCall
		default:
			return k
		}
	}
}

func (p *parser) funcArgs() {
	line := p.lx.line
	switch p.t() {
	case '(':
		if line != p.lx.lastline {
			p.lx.syntaxError("ambiguous syntax (function call x new statement)")
		}
		p.lx.next()
		if p.t() != ')' {
			p.exprList()
		}
		p.checkMatch(')', '(', line)
	case '{':
		p.constructor()
	case tkString:
		p.lx.next()
	default:
		p.lx.syntaxError("function arguments expected")
	}
}

func (p *parser) constructor() {
	line := p.lx.line
	p.checkNext('{')
	for {
		if p.t() == '}' {
			break
		}
		switch p.t() {
		case tkName:
			if p.lx.lookahead() != '=' {
				p.expr()
			} else {
				p.lx.next()
				p.checkNext('=')
				p.expr()
			}
		case '[':
			p.lx.next()
			p.expr()
			p.checkNext(']')
			p.checkNext('=')
			p.expr()
		default:
			p.expr()
		}
		if !p.testNext(',') && !p.testNext(';') {
			break
		}
	}
	p.checkMatch('}', '{', line)
}

// chunkID is luaO_chunkid(LUA_IDSIZE) for a loadstring chunk name (runtime
// messages); chunkIDLex is the lexer's, with MAXSRC.
func chunkID(name string) string { return chunkIDN(name, 60) }

func chunkIDLex(name string) string { return chunkIDN(name, 80) }

func chunkIDN(name string, size int) string {
	switch {
	case strings.HasPrefix(name, "="):
		if len(name) > size {
			return name[1:size]
		}
		return name[1:]
	case strings.HasPrefix(name, "@"):
		if len(name)-1 <= size-1 {
			return name[1:]
		}
		return "..." + name[len(name)-(size-1-3):]
	}
	l := strings.IndexAny(name, "\n\r")
	if l < 0 {
		l = len(name)
	}
	room := size - 17
	if l > room {
		l = room
	}
	if l < len(name) {
		return "[string \"" + name[:l] + "...\"]"
	}
	return "[string \"" + name + "\"]"
}

// checkSyntaxAs checks src reporting errors under the chunk id.
func checkSyntaxAs(src, chunk string) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(synErr)
			if !ok {
				panic(r)
			}
			msg = e.msg
		}
	}()
	lx := &lexer{chunk: chunk, src: src, line: 1, lastline: 1}
	p := &parser{lx: lx, fs: &synFunc{vararg: true}}
	lx.next()
	p.chunk()
	p.check(tkEOS)
	return ""
}
