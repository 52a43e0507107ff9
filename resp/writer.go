// Package resp encodes replies (RESP2 and RESP3) and decodes requests and
// replies. It knows nothing about commands or the keyspace.
package resp

import (
	"math"
	"strconv"

	"github.com/tidwall/redcon"
)

// Writer appends replies to B in the protocol version of the client it
// serves. Handlers call the typed methods; the RESP2/RESP3 choice (maps as
// flat arrays, doubles as bulk strings, nulls as $-1 / *-1) is made here
// once, so no handler has to know which protocol its client speaks.
type Writer struct {
	B     []byte
	Proto int // 2 or 3
}

// NewWriter returns a RESP2 writer.
func NewWriter() *Writer { return &Writer{Proto: 2} }

func (w *Writer) Reset()   { w.B = w.B[:0] }
func (w *Writer) Len() int { return len(w.B) }

// Int writes an integer reply (":n").
func (w *Writer) Int(n int64) { w.B = appendHeader(w.B, ':', n) }

// Bulk writes a bulk string.
func (w *Writer) Bulk(b []byte) {
	w.B = appendHeader(w.B, '$', int64(len(b)))
	w.B = append(w.B, b...)
	w.B = append(w.B, '\r', '\n')
}

// BulkString writes a bulk string.
func (w *Writer) BulkString(s string) {
	w.B = appendHeader(w.B, '$', int64(len(s)))
	w.B = append(w.B, s...)
	w.B = append(w.B, '\r', '\n')
}

// BulkInt writes n formatted in decimal as a bulk string, without
// allocating (redcon's AppendBulkInt allocates the digits).
func (w *Writer) BulkInt(n int64) {
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], n, 10)
	w.B = appendHeader(w.B, '$', int64(len(d)))
	w.B = append(w.B, d...)
	w.B = append(w.B, '\r', '\n')
}

// Status writes a simple string ("+OK").
func (w *Writer) Status(s string) { w.B = redcon.AppendString(w.B, s) }

// OK writes "+OK".
func (w *Writer) OK() { w.B = append(w.B, "+OK\r\n"...) }

// Error writes an error reply. s carries its code ("ERR …", "WRONGTYPE …").
// Newlines would break the framing, so they become spaces as Redis does.
func (w *Writer) Error(s string) {
	w.B = append(w.B, '-')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		w.B = append(w.B, c)
	}
	w.B = append(w.B, '\r', '\n')
}

// Null writes the null bulk string: "$-1" in RESP2, "_" in RESP3.
func (w *Writer) Null() {
	if w.Proto == 3 {
		w.B = append(w.B, "_\r\n"...)
	} else {
		w.B = append(w.B, "$-1\r\n"...)
	}
}

// NullArray writes the null array: "*-1" in RESP2, "_" in RESP3.
func (w *Writer) NullArray() {
	if w.Proto == 3 {
		w.B = append(w.B, "_\r\n"...)
	} else {
		w.B = append(w.B, "*-1\r\n"...)
	}
}

// Array writes an array header of n elements.
func (w *Writer) Array(n int) { w.B = appendHeader(w.B, '*', int64(n)) }

// Map writes a map header of n key/value pairs: "%n" in RESP3, an array of
// 2n elements in RESP2.
func (w *Writer) Map(n int) {
	if w.Proto == 3 {
		w.B = appendHeader(w.B, '%', int64(n))
	} else {
		w.B = appendHeader(w.B, '*', int64(2*n))
	}
}

// Set writes a set header: "~n" in RESP3, an array in RESP2.
func (w *Writer) Set(n int) {
	if w.Proto == 3 {
		w.B = appendHeader(w.B, '~', int64(n))
	} else {
		w.B = appendHeader(w.B, '*', int64(n))
	}
}

// Push writes a push header (RESP3 only; RESP2 uses an array).
func (w *Writer) Push(n int) {
	if w.Proto == 3 {
		w.B = appendHeader(w.B, '>', int64(n))
	} else {
		w.B = appendHeader(w.B, '*', int64(n))
	}
}

// Double writes a double: ",<v>" in RESP3, a bulk string in RESP2, formatted
// as Redis 7.0 does (%.17g, "inf", "-inf").
func (w *Writer) Double(f float64) {
	if w.Proto == 3 {
		w.B = append(w.B, ',')
		w.B = AppendDouble(w.B, f)
		w.B = append(w.B, '\r', '\n')
		return
	}
	var tmp [32]byte
	w.Bulk(AppendDouble(tmp[:0], f))
}

// Bool writes a boolean: "#t"/"#f" in RESP3, ":1"/":0" in RESP2.
func (w *Writer) Bool(b bool) {
	if w.Proto == 3 {
		if b {
			w.B = append(w.B, "#t\r\n"...)
		} else {
			w.B = append(w.B, "#f\r\n"...)
		}
		return
	}
	if b {
		w.B = append(w.B, ":1\r\n"...)
	} else {
		w.B = append(w.B, ":0\r\n"...)
	}
}

// Verbatim writes a verbatim string ("=len\r\ntxt:…" in RESP3, bulk in RESP2).
func (w *Writer) Verbatim(s string) {
	if w.Proto == 3 {
		w.B = appendHeader(w.B, '=', int64(len(s)+4))
		w.B = append(w.B, "txt:"...)
		w.B = append(w.B, s...)
		w.B = append(w.B, '\r', '\n')
		return
	}
	w.BulkString(s)
}

// BigNumber writes a RESP3 big number ("(…"), a bulk string in RESP2.
func (w *Writer) BigNumber(s string) {
	if w.Proto == 3 {
		w.B = append(w.B, '(')
		w.B = append(w.B, s...)
		w.B = append(w.B, '\r', '\n')
		return
	}
	w.BulkString(s)
}

// Raw appends already-encoded RESP.
func (w *Writer) Raw(b []byte) { w.B = append(w.B, b...) }

// EmptyArray writes "*0".
func (w *Writer) EmptyArray() { w.B = append(w.B, "*0\r\n"...) }

func appendHeader(b []byte, c byte, n int64) []byte {
	if n >= 0 && n <= 9 {
		return append(b, c, byte('0'+n), '\r', '\n')
	}
	b = append(b, c)
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\r', '\n')
}

// AppendDouble formats f as Redis 7.0 replies it: "%.17g", with "inf" and
// "-inf" for the infinities.
func AppendDouble(b []byte, f float64) []byte {
	if math.IsInf(f, 1) {
		return append(b, "inf"...)
	}
	if math.IsInf(f, -1) {
		return append(b, "-inf"...)
	}
	if math.IsNaN(f) {
		return append(b, "nan"...)
	}
	return AppendG17(b, f)
}

// AppendG17 is C's printf("%.17g", f) for finite f.
func AppendG17(b []byte, f float64) []byte {
	return appendG(b, f, 17)
}

// AppendG formats like C's "%.<prec>g"; strconv's 'g' with an explicit
// precision produces the same digits and exponent form (checked against C).
func AppendG(b []byte, f float64, prec int) []byte { return appendG(b, f, prec) }

func appendG(b []byte, f float64, prec int) []byte {
	if f == 0 {
		if math.Signbit(f) {
			return append(b, "-0"...)
		}
		return append(b, '0')
	}
	return strconv.AppendFloat(b, f, 'g', prec, 64)
}

// AppendCommand appends argv as a multibulk request (a RESP array of bulk
// strings), the form commands take on the wire and in a replication
// stream.
func AppendCommand(b []byte, argv ...[]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(argv)), 10)
	b = append(b, '\r', '\n')
	for _, a := range argv {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}
