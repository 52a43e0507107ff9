package engine

import (
	"math"
	"strconv"
	"strings"
	"unsafe"

	"limitdb/resp"
)

// ParseInt is Redis's string2ll (see resp.ParseInt) for a string.
func ParseInt(s string) (int64, bool) {
	return resp.ParseInt(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// ParseIntB is ParseInt for a []byte argument.
func ParseIntB(b []byte) (int64, bool) { return resp.ParseInt(b) }

// ParseFloat parses a double as Redis's string2ld/strtod-based helpers do for
// command arguments: no leading/trailing space, "inf"/"-inf"/"+inf" (any
// case, also "infinity") accepted, NaN rejected, hex floats accepted by
// strtod are rejected here only where Redis rejects them.
func ParseFloat(s string) (float64, bool) {
	if len(s) == 0 || isSpaceByte(s[0]) || isSpaceByte(s[len(s)-1]) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// strtod accepts overflow as ±HUGE_VAL with ERANGE; Redis rejects
		// ERANGE, so both fail here alike.
		ls := strings.ToLower(s)
		switch ls {
		case "inf", "+inf", "infinity", "+infinity":
			return math.Inf(1), true
		case "-inf", "-infinity":
			return math.Inf(-1), true
		}
		return 0, false
	}
	if math.IsNaN(f) {
		return 0, false
	}
	// Go accepts "1_000" and "0x1p-2"; strtod accepts hex but not '_'.
	if strings.IndexByte(s, '_') >= 0 {
		return 0, false
	}
	return f, true
}

// ParseFloatB is ParseFloat for a []byte argument.
func ParseFloatB(b []byte) (float64, bool) { return ParseFloat(bstr(b)) }

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// EqualFold reports whether arg equals the lower-case word w, ignoring case.
func EqualFold(arg []byte, w string) bool {
	if len(arg) != len(w) {
		return false
	}
	for i := 0; i < len(arg); i++ {
		c := arg[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

// Match is Redis's stringmatchlen: glob-style matching with *, ?, [...]
// (with ^ negation and a-z ranges) and \ escapes.
func Match(pattern, s string, nocase bool) bool {
	var skipLonger bool
	return matchLen(pattern, s, nocase, 0, &skipLonger)
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// skipLonger is Redis's skipLongerMatches: once the rest of the pattern
// after a '*' matched at no position of the rest of the string, no earlier
// '*' can make it match by consuming more, so every level gives up (this
// keeps patterns like "a*a*a*…b" linear instead of exponential).
func matchLen(p, s string, nocase bool, depth int, skipLonger *bool) bool {
	if depth > 1000 {
		return false
	}
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for len(s) > 0 {
				if matchLen(p[1:], s, nocase, depth+1, skipLonger) {
					return true
				}
				if *skipLonger {
					return false
				}
				s = s[1:]
			}
			*skipLonger = true
			return false
		case '?':
			s = s[1:]
		case '[':
			p = p[1:]
			not := len(p) > 0 && p[0] == '^'
			if not {
				p = p[1:]
			}
			match := false
			for {
				if len(p) == 0 {
					break
				}
				if p[0] == '\\' && len(p) >= 2 {
					p = p[1:]
					if p[0] == s[0] {
						match = true
					}
				} else if p[0] == ']' {
					break
				} else if len(p) >= 3 && p[1] == '-' {
					start, end := p[0], p[2]
					c := s[0]
					if start > end {
						start, end = end, start
					}
					if nocase {
						start, end, c = lower(start), lower(end), lower(c)
					}
					p = p[2:]
					if c >= start && c <= end {
						match = true
					}
				} else {
					if nocase {
						if lower(p[0]) == lower(s[0]) {
							match = true
						}
					} else if p[0] == s[0] {
						match = true
					}
				}
				p = p[1:]
			}
			if len(p) == 0 {
				// pattern ended inside [...]: Redis treats it as ending there
				p = "]"
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if nocase {
				if lower(p[0]) != lower(s[0]) {
					return false
				}
			} else if p[0] != s[0] {
				return false
			}
			s = s[1:]
		}
		p = p[1:]
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}

// parseMPop parses what LMPOP, ZMPOP, BLMPOP and BZMPOP share from their
// numkeys (argv[at]): numkeys key … where [COUNT n], in
// lmpopGenericCommand's order and with its texts. where is LEFT|RIGHT for
// lists (front: LEFT), MIN|MAX for sorted sets (front: MIN); count
// defaults to 1.
func (c *Ctx) parseMPop(argv [][]byte, at int, zset bool) (keys [][]byte, front bool, count int64, ok bool) {
	nk, okN := ParseIntB(argv[at])
	if !okN || nk < 1 {
		c.W.Error(ErrNumKeys)
		return nil, false, 0, false
	}
	if nk >= int64(len(argv)-at-1) {
		c.W.Error(ErrSyntax)
		return nil, false, 0, false
	}
	wi := at + 1 + int(nk)
	w := argv[wi]
	switch {
	case !zset && EqualFold(w, "left"), zset && EqualFold(w, "min"):
		front = true
	case !zset && EqualFold(w, "right"), zset && EqualFold(w, "max"):
	default:
		c.W.Error(ErrSyntax)
		return nil, false, 0, false
	}
	count = -1
	for j := wi + 1; j < len(argv); j++ {
		if count == -1 && EqualFold(argv[j], "count") && j+1 < len(argv) {
			j++
			n, okC := ParseIntB(argv[j])
			if !okC || n < 1 {
				c.W.Error(ErrCountPositive)
				return nil, false, 0, false
			}
			count = n
			continue
		}
		c.W.Error(ErrSyntax)
		return nil, false, 0, false
	}
	if count == -1 {
		count = 1
	}
	return argv[at+1 : wi], front, count, true
}
