package engine

import (
	"math/big"
	"strings"
)

// Redis computes INCRBYFLOAT and HINCRBYFLOAT in x87 long double and prints
// them with "%.17Lf"; these helpers reproduce both with 64-bit-mantissa
// big.Floats.

// Long double limits (x87 80-bit): largest binary exponent (as big.Float's
// MantExp reports it, mantissa in [0.5, 1)) and smallest (subnormal).
const (
	ldMaxExp = 16384
	ldMinExp = -16444
)

// parseLongDouble parses s as Redis's getLongDoubleFromObject does with
// glibc's strtold: no leading space, no trailing garbage, decimal or hex
// floats, "inf"/"infinity" accepted, NaN and out-of-range values rejected.
// The result is rounded to the 64-bit mantissa of x87 long double.
func parseLongDouble(s string) (*big.Float, bool) {
	if len(s) == 0 || len(s) > 5*1024 || isSpaceByte(s[0]) {
		return nil, false
	}
	body := s
	neg := false
	if body[0] == '+' || body[0] == '-' {
		neg = body[0] == '-'
		body = body[1:]
	}
	if lb := strings.ToLower(body); lb == "inf" || lb == "infinity" {
		return new(big.Float).SetInf(neg), true
	}
	if strings.IndexByte(body, '_') >= 0 || len(body) == 0 {
		return nil, false
	}
	if len(body) >= 2 && body[0] == '0' && (body[1]|0x20 == 'b' || body[1]|0x20 == 'o') {
		return nil, false
	}
	if body[0] != '.' && (body[0] < '0' || body[0] > '9') {
		return nil, false
	}
	hex := len(body) >= 2 && body[0] == '0' && body[1]|0x20 == 'x'
	if !hex && strings.IndexAny(body, "pP") >= 0 {
		return nil, false // a binary exponent needs a hex mantissa
	}
	f, _, err := big.ParseFloat(s, 0, 64, big.ToNearestEven)
	if err != nil {
		return nil, false
	}
	if !ldInRange(f) {
		return nil, false
	}
	return f, true
}

// ldInRange reports whether a finite f is representable as a long double
// (no overflow, no underflow to zero).
func ldInRange(f *big.Float) bool {
	if f.Sign() == 0 {
		return true
	}
	exp := f.MantExp(nil)
	return exp <= ldMaxExp && exp >= ldMinExp
}

// formatLongDouble is Redis's ld2string in human mode: "%.17Lf" with the
// trailing zeros (and a trailing '.') removed, and "-0" written as "0".
func formatLongDouble(f *big.Float) string {
	s := f.Text('f', 17)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// longDoubleFinite reports whether f did not overflow a long double.
func longDoubleFinite(f *big.Float) bool { return !f.IsInf() && f.MantExp(nil) <= ldMaxExp }
