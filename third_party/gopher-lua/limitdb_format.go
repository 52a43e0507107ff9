package lua

import (
	"math"
	"strconv"
	"strings"
)

// limitdb patch: string.format as PUC-Lua 5.1's str_format (lstrlib.c)
// instead of Go's fmt.Sprintf. Each '%' spec takes the next argument
// ("no value" when missing); flags are "-+ #0" (at most 5), width and
// precision at most two digits each. Conversions: c d i o u x X e E f g G
// (arguments checked as numbers; strings convertible to numbers accepted),
// s (strings or numbers, %.14g), q (Lua-quoted string, width ignored).
// Integer conversions truncate the double as C's (long) cast; o u x X print
// it as unsigned; inf/nan print as glibc does (inf, -nan, ...).

const fmtFlags = "-+ #0"

func strFormat(L *LState) int {
	strfrmt := L.CheckString(1)
	top := L.GetTop()
	arg := 1
	var b strings.Builder
	held := 0 // bytes charged with ChargeHeld (limitdb memory budget)
	for i := 0; i < len(strfrmt); {
		c := strfrmt[i]
		if c != '%' {
			b.WriteByte(c)
			i++
			continue
		}
		i++
		if i < len(strfrmt) && strfrmt[i] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		arg++
		if arg > top {
			L.ArgError(arg, "no value")
		}
		// scanformat
		p := i
		for p < len(strfrmt) && strings.IndexByte(fmtFlags, strfrmt[p]) >= 0 {
			p++
		}
		if p-i > len(fmtFlags) {
			L.RaiseError("invalid format (repeated flags)")
		}
		flags := strfrmt[i:p]
		width, prec := -1, -1
		digits := func() int {
			n := -1
			for k := 0; k < 2 && p < len(strfrmt) && isDigit(strfrmt[p]); k++ {
				if n < 0 {
					n = 0
				}
				n = n*10 + int(strfrmt[p]-'0')
				p++
			}
			return n
		}
		width = digits()
		if p < len(strfrmt) && strfrmt[p] == '.' {
			p++
			prec = digits()
			if prec < 0 {
				prec = 0
			}
		}
		if p < len(strfrmt) && isDigit(strfrmt[p]) {
			L.RaiseError("invalid format (width or precision too long)")
		}
		if p >= len(strfrmt) {
			L.RaiseError("%s", "invalid option '%' to 'format'")
		}
		conv := strfrmt[p]
		i = p + 1
		spec := cSpec{flags: flags, width: width, prec: prec}
		switch conv {
		case 'c':
			n := float64(L.CheckNumber(arg))
			spec.prec = -1
			b.WriteString(cStr(spec.pad(string([]byte{byte(cLong(n))}), false)))
		case 'd', 'i':
			n := cLong(float64(L.CheckNumber(arg)))
			b.WriteString(spec.integer(strconv.FormatUint(absU(n), 10), n < 0, ""))
		case 'o', 'u', 'x', 'X':
			u := cULong(float64(L.CheckNumber(arg)))
			var s, prefix string
			switch conv {
			case 'o':
				s = strconv.FormatUint(u, 8)
				if spec.has('#') && s[0] != '0' {
					s = "0" + s
				}
			case 'u':
				s = strconv.FormatUint(u, 10)
			case 'x', 'X':
				s = strconv.FormatUint(u, 16)
				if spec.has('#') && u != 0 {
					prefix = "0x"
				}
				if conv == 'X' {
					s, prefix = strings.ToUpper(s), strings.ToUpper(prefix)
				}
			}
			sp := spec
			sp.flags = strings.NewReplacer("+", "", " ", "").Replace(sp.flags) // unsigned: no sign
			b.WriteString(sp.integer(s, false, prefix))
		case 'e', 'E', 'f', 'g', 'G':
			b.WriteString(spec.float(float64(L.CheckNumber(arg)), conv))
		case 'q':
			q := L.CheckString(arg)
			L.ChargeHeld(2*len(q) + 2) // script memory budget
			held += 2*len(q) + 2
			addQuoted(&b, q)
		case 's':
			s := L.CheckString(arg)
			L.ChargeHeld(len(s) + 100) // script memory budget (a width pads to 99)
			held += len(s) + 100
			if prec < 0 && len(s) >= 100 {
				b.WriteString(s) // Lua keeps the whole string, no formatting
			} else {
				if prec >= 0 && len(s) > prec {
					s = s[:prec]
				}
				spec.prec = -1
				b.WriteString(cStr(spec.pad(cStr(s), false)))
			}
		default:
			L.RaiseError("%s", "invalid option '%"+string([]byte{conv})+"' to 'format'")
		}
	}
	L.ReleaseHeld(held)
	L.ChargeMem(b.Len())
	L.Push(LString(b.String()))
	return 1
}

// cStr cuts s at its first NUL: Lua adds sprintf's output with strlen.
func cStr(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

type cSpec struct {
	flags       string
	width, prec int
}

func (s cSpec) has(f byte) bool { return strings.IndexByte(s.flags, f) >= 0 }

// pad applies the width: left-justified with '-', zero-padded after the sign
// with '0' when zero is allowed, else right-justified with spaces.
func (s cSpec) pad(body string, zero bool) string {
	if s.width <= len(body) {
		return body
	}
	n := s.width - len(body)
	if s.has('-') {
		return body + strings.Repeat(" ", n)
	}
	if zero && s.has('0') {
		k := 0
		if len(body) > 0 && (body[0] == '-' || body[0] == '+' || body[0] == ' ') {
			k = 1
		}
		if len(body) > k+1 && body[k] == '0' && (body[k+1]|0x20) == 'x' {
			k += 2
		}
		return body[:k] + strings.Repeat("0", n) + body[k:]
	}
	return strings.Repeat(" ", n) + body
}

func (s cSpec) sign(neg bool) string {
	switch {
	case neg:
		return "-"
	case s.has('+'):
		return "+"
	case s.has(' '):
		return " "
	}
	return ""
}

// integer formats digits (no sign) as C's %d/%o/%u/%x with the precision as
// minimum digit count (a precision disables the '0' flag).
func (s cSpec) integer(digits string, neg bool, prefix string) string {
	if s.prec >= 0 {
		if s.prec == 0 && digits == "0" {
			digits = ""
		}
		if len(digits) < s.prec {
			digits = strings.Repeat("0", s.prec-len(digits)) + digits
		}
	}
	return s.pad(s.sign(neg)+prefix+digits, s.prec < 0)
}

func (s cSpec) float(f float64, conv byte) string {
	if math.IsInf(f, 0) || f != f {
		body := "inf"
		if f != f {
			body = "nan"
		}
		if conv == 'E' || conv == 'G' {
			body = strings.ToUpper(body)
		}
		return s.pad(s.sign(math.Signbit(f))+body, false)
	}
	prec := s.prec
	if prec < 0 {
		prec = 6
	}
	var body string
	switch conv {
	case 'e', 'E':
		body = strconv.FormatFloat(math.Abs(f), 'e', prec, 64)
	case 'f':
		body = strconv.FormatFloat(math.Abs(f), 'f', prec, 64)
	default:
		if prec == 0 {
			prec = 1
		}
		body = cG(math.Abs(f), prec, s.has('#'))
	}
	if s.has('#') && prec == 0 && conv != 'g' && conv != 'G' && !strings.ContainsAny(body, ".") {
		if k := strings.IndexAny(body, "eE"); k >= 0 {
			body = body[:k] + "." + body[k:]
		} else {
			body += "."
		}
	}
	if conv == 'E' || conv == 'G' {
		body = strings.ToUpper(body)
	}
	return s.pad(s.sign(math.Signbit(f))+body, true)
}

// cG is C's %.<prec>g for a non-negative finite f: %e when the exponent is
// < -4 or >= prec, else %f, trailing zeros removed unless alt.
func cG(f float64, prec int, alt bool) string {
	e := strconv.FormatFloat(f, 'e', prec-1, 64)
	k := strings.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[k+1:])
	var out string
	if exp < -4 || exp >= prec {
		mant := e[:k]
		if !alt {
			mant = trimZeros(mant)
		}
		out = mant + e[k:]
	} else {
		out = strconv.FormatFloat(f, 'f', prec-1-exp, 64)
		if !alt {
			out = trimZeros(out)
		}
	}
	return out
}

func trimZeros(s string) string {
	if strings.IndexByte(s, '.') < 0 {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// cLong is C's (long)d on x86-64: out of range and NaN give INT64_MIN.
func cLong(d float64) int64 {
	if d != d || d >= 9223372036854775808.0 || d < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(d)
}

// cULong is (unsigned long)d as gcc does it on x86-64 (2^64 and above: 0).
func cULong(d float64) uint64 {
	if d >= 18446744073709551616.0 {
		return 0
	}
	if d >= 9223372036854775808.0 {
		return uint64(d)
	}
	return uint64(cLong(d))
}

func absU(n int64) uint64 {
	if n < 0 {
		return uint64(-(n + 1)) + 1
	}
	return uint64(n)
}

// addQuoted is Lua 5.1's %q: "\"", "\\" and newline escaped with a
// backslash, \r as \r, NUL as \000, everything else as is.
func addQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\', '\n':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\r':
			b.WriteString("\\r")
		case 0:
			b.WriteString("\\000")
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}
