package resp

import (
	"bytes"
	"errors"
	"io"
	"sync/atomic"
)

// Limits of Redis 7.0 that a request must respect.
const (
	InlineMax      = 64 * 1024          // PROTO_INLINE_MAX_SIZE
	MaxBulkLen     = 512 * 1024 * 1024  // proto-max-bulk-len default
	MaxQueryBuffer = 1024 * 1024 * 1024 // client-query-buffer-limit default
	maxMultibulk   = 1<<31 - 1          // INT_MAX
	readChunk      = 16 * 1024
)

// ProtocolError is a malformed request. Its text is what Redis replies
// (after "ERR "); the connection is closed after the reply.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "Protocol error: " + e.Msg }

// ErrQueryBufferLimit means the client sent more unparsed input than
// client-query-buffer-limit allows; Redis closes such a client silently.
var ErrQueryBufferLimit = errors.New("query buffer limit reached")

// Reader decodes requests (multibulk and inline) from a stream with bounded
// memory: it never allocates on a length the client claims, only on bytes
// that arrived, and it keeps its progress through a partly received request
// so that a large request is not re-parsed on every read.
//
// Arguments returned by Next alias the read buffer and a reused slice: they
// are valid until the next call to Next or Fill. Anything kept longer must be
// copied.
type Reader struct {
	// Limits bounds what a client may send (shared by a server's
	// connections, so CONFIG SET applies at once); nil means Redis's
	// defaults.
	Limits *Limits
	// Unauth applies Redis's limits for a connection that has not
	// authenticated: at most 10 arguments, bulks of at most 16384 bytes.
	Unauth bool

	rd  io.Reader
	buf []byte
	r   int // start of unparsed input
	w   int // end of input

	// progress through a partly received multibulk request; offsets are
	// relative to buf[0] and fixed up when the buffer is compacted.
	inMulti bool
	want    int // arguments still to read
	spans   []span
	args    [][]byte
	start   int // offset of the request's first byte
	pos     int // next unparsed byte of the request
	pending int // bytes from start that complete the current bulk

	// clean counts the bytes after the current line's first byte (r.r, or
	// r.pos inside a multibulk) already searched for its terminator, so a
	// line that trickles in a byte per read is searched once: rescanning it
	// on every read cost 0.5 s of CPU per 60 KB line sent a byte at a time
	// (BenchmarkReaderTrickle). Zeroed whenever a line is consumed.
	clean int
}

type span struct{ off, n int }

// Limits are the request size limits (client-query-buffer-limit and
// proto-max-bulk-len); safe for concurrent use. Zero values mean Redis's
// defaults.
type Limits struct {
	MaxQuery atomic.Int64
	MaxBulk  atomic.Int64
}

func (l *Limits) maxQuery() int64 {
	if l != nil {
		if n := l.MaxQuery.Load(); n > 0 {
			return n
		}
	}
	return MaxQueryBuffer
}

func (l *Limits) maxBulk() int64 {
	if l != nil {
		if n := l.MaxBulk.Load(); n > 0 {
			return n
		}
	}
	return MaxBulkLen
}

// NewReader returns a Reader over rd.
func NewReader(rd io.Reader) *Reader {
	return &Reader{rd: rd, buf: make([]byte, readChunk)}
}

// Buffered reports how many bytes are waiting to be parsed.
func (r *Reader) Buffered() int { return r.w - r.r }

// Full says whether the unparsed input has reached the query-buffer
// limit: the next Fill fails. A caller that reads only when the socket is
// readable (an event loop) checks it after each read, since the input
// that filled the buffer may be the last to come.
func (r *Reader) Full() bool { return int64(r.w-r.r) >= r.Limits.maxQuery() }

// Fill reads more input from the stream, growing the buffer only as data
// arrives. It invalidates earlier arguments.
func (r *Reader) Fill() error {
	if r.inMulti {
		// keep the partial request's start at offset 0
		r.compact(r.start)
	} else {
		r.compact(r.r)
	}
	if r.Full() {
		return ErrQueryBufferLimit
	}
	if r.w == len(r.buf) {
		n := len(r.buf) * 2
		if need := r.neededBytes(); need > n && need-len(r.buf) < len(r.buf)*4 {
			n = need // a bulk about to complete: size it once
		}
		nb := make([]byte, n)
		copy(nb, r.buf[:r.w])
		r.buf = nb
	}
	n, err := r.rd.Read(r.buf[r.w:])
	r.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// neededBytes estimates the buffer size that completes the current bulk.
func (r *Reader) neededBytes() int {
	if r.inMulti {
		return r.pending
	}
	return 0
}

func (r *Reader) compact(from int) {
	if from == 0 {
		return
	}
	copy(r.buf, r.buf[from:r.w])
	r.w -= from
	r.r -= from
	if r.inMulti {
		r.start -= from
		r.pos -= from
		for i := range r.spans {
			r.spans[i].off -= from
		}
	}
	// shrink a buffer that grew for a big request once it is drained
	if r.w == 0 && len(r.buf) > 1024*1024 {
		r.buf = make([]byte, readChunk)
	}
}

// Next parses the next complete request from the buffer. It returns
// (nil, nil) when more input is needed, and a *ProtocolError for malformed
// input. Empty requests (an empty inline line, "*0", "*-1") are skipped.
func (r *Reader) Next() ([][]byte, error) {
	for {
		if !r.inMulti {
			if r.r >= r.w {
				return nil, nil
			}
			if r.buf[r.r] != '*' {
				args, ok, err := r.inline()
				if err != nil || !ok {
					return nil, err
				}
				if len(args) == 0 {
					continue
				}
				return args, nil
			}
			nl := r.findEOL(r.r, '\r')
			if nl < 0 {
				if r.w-r.r > InlineMax {
					return nil, &ProtocolError{"too big mbulk count string"}
				}
				return nil, nil
			}
			n, ok := ParseInt(r.buf[r.r+1 : r.r+nl])
			if !ok || n > maxMultibulk {
				return nil, &ProtocolError{"invalid multibulk length"}
			}
			if n > 10 && r.Unauth {
				return nil, &ProtocolError{"unauthenticated multibulk length"}
			}
			// Redis skips the header's "\r\n" without checking the '\n'.
			if r.r+nl+2 > r.w {
				return nil, nil
			}
			r.clean = 0
			if n <= 0 {
				r.r += nl + 2
				continue
			}
			r.inMulti = true
			r.want = int(n)
			r.start = r.r
			r.pos = r.r + nl + 2
			r.spans = r.spans[:0]
		}
		for r.want > 0 {
			p := r.pos
			if p >= r.w {
				return nil, nil
			}
			nl := r.findEOL(p, '\r')
			if nl < 0 {
				if r.w-p > InlineMax {
					return nil, &ProtocolError{"too big bulk count string"}
				}
				return nil, nil
			}
			if r.buf[p] != '$' {
				return nil, &ProtocolError{"expected '$', got '" + string(r.buf[p]) + "'"}
			}
			n, ok := ParseInt(r.buf[p+1 : p+nl])
			if !ok || n < 0 || n > r.Limits.maxBulk() {
				return nil, &ProtocolError{"invalid bulk length"}
			}
			if n > 16384 && r.Unauth {
				return nil, &ProtocolError{"unauthenticated bulk length"}
			}
			end := p + nl + 2 + int(n) + 2
			r.clean = 0
			if end > r.w {
				r.pending = end - r.start
				return nil, nil
			}
			r.spans = append(r.spans, span{p + nl + 2, int(n)})
			r.pos = end
			r.want--
		}
		r.pending = 0
		r.inMulti = false
		r.r = r.pos
		r.args = r.args[:0]
		for _, s := range r.spans {
			r.args = append(r.args, r.buf[s.off:s.off+s.n:s.off+s.n])
		}
		return r.args, nil
	}
}

// inline parses a request in the inline (telnet) form.
func (r *Reader) inline() ([][]byte, bool, error) {
	b := r.buf[r.r:r.w]
	nl := r.findEOL(r.r, '\n')
	if nl < 0 {
		if len(b) > InlineMax {
			return nil, false, &ProtocolError{"too big inline request"}
		}
		return nil, false, nil
	}
	line := b[:nl]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	args, ok := SplitArgs(line, r.args[:0])
	if !ok {
		return nil, false, &ProtocolError{"unbalanced quotes in request"}
	}
	r.args = args
	r.r += nl + 1
	r.clean = 0
	return args, true, nil
}

// findEOL returns the offset from 'from' of the first c in the buffered
// input, or -1, searching only bytes not searched before.
func (r *Reader) findEOL(from int, c byte) int {
	i := bytes.IndexByte(r.buf[from+r.clean:r.w], c)
	if i < 0 {
		r.clean = r.w - from
		return -1
	}
	return r.clean + i
}

// ParseInt is Redis's string2ll: an optional '-', digits, no leading zeros
// (except "0"), no '+', no spaces, within int64. It is the one
// implementation: request headers and every integer argument use it.
func ParseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	neg := false
	i := 0
	if b[0] == '-' {
		neg = true
		i = 1
		if len(b) == 1 {
			return 0, false
		}
	}
	if b[i] == '0' {
		return 0, len(b) == 1
	}
	var v uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// SplitArgs splits an inline request like Redis's sdssplitargs: spaces
// separate arguments, "double quotes" take C escapes (\n \r \t \b \a \\ \"
// \xHH), 'single quotes' take \' only, and a closing quote must be followed
// by a space or the end. ok is false on unbalanced quotes. The arguments are
// fresh copies appended to dst.
func SplitArgs(line []byte, dst [][]byte) (args [][]byte, ok bool) {
	args = dst
	p := 0
	for {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		if p >= len(line) {
			return args, true
		}
		var cur []byte
		inq, insq := false, false
		done := false
		cur = []byte{}
		for !done {
			if inq {
				if p >= len(line) {
					return nil, false
				}
				c := line[p]
				if c == '\\' && p+3 < len(line) && line[p+1] == 'x' && isHex(line[p+2]) && isHex(line[p+3]) {
					cur = append(cur, hexVal(line[p+2])<<4|hexVal(line[p+3]))
					p += 3
				} else if c == '\\' && p+1 < len(line) {
					p++
					switch line[p] {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'b':
						c = '\b'
					case 'a':
						c = '\a'
					default:
						c = line[p]
					}
					cur = append(cur, c)
				} else if c == '"' {
					if p+1 < len(line) && !isSpace(line[p+1]) {
						return nil, false
					}
					done = true
				} else {
					cur = append(cur, c)
				}
			} else if insq {
				if p >= len(line) {
					return nil, false
				}
				c := line[p]
				if c == '\\' && p+1 < len(line) && line[p+1] == '\'' {
					p++
					cur = append(cur, '\'')
				} else if c == '\'' {
					if p+1 < len(line) && !isSpace(line[p+1]) {
						return nil, false
					}
					done = true
				} else {
					cur = append(cur, c)
				}
			} else {
				if p >= len(line) {
					break
				}
				switch c := line[p]; c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					cur = append(cur, c)
				}
			}
			if p < len(line) {
				p++
			}
		}
		args = append(args, cur)
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f'
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
