package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// conn is one raw RESP connection with preallocated buffers: requests are
// appended to wbuf and replies are skipped in rbuf without decoding into Go
// values, so the generator costs little CPU per command.
type conn struct {
	nc   net.Conn
	wbuf []byte
	rbuf []byte
	// scratch holds a script's arguments while its header is written
	scratch []byte
	r, n    int // unparsed reply bytes are rbuf[r:n]
	rng     uint64
	errs    int64 // error replies seen
	// lastErr keeps the first error reply text (for skip messages).
	lastErr string
	// lastNull: the last reply read was a null (a BLPOP timeout)
	lastNull bool
}

// dial connects to addr and, when auth is not empty ("password" or
// "user password"), authenticates before any measured command.
func dial(addr, auth string, seed uint64) (*conn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	c := &conn{nc: nc, wbuf: make([]byte, 0, 64*1024), rbuf: make([]byte, 256*1024), rng: rngSeed(seed)}
	if auth != "" {
		words := strings.Fields(auth)
		b := appendArrayHdr(nil, 1+len(words))
		b = appendBulkStr(b, "AUTH")
		for _, w := range words {
			b = appendBulkStr(b, w)
		}
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := nc.Write(b); err != nil {
			nc.Close()
			return nil, err
		}
		reply := make([]byte, 512)
		n, err := nc.Read(reply)
		nc.SetDeadline(time.Time{})
		if err != nil || string(reply[:n]) != "+OK\r\n" {
			nc.Close()
			return nil, fmt.Errorf("AUTH failed: %q %v", reply[:n], err)
		}
	}
	return c, nil
}

// rngSeed is a connection's first generator state: the same seed gives
// the same key sequence on every side.
func rngSeed(seed uint64) uint64 { return seed*0x9E3779B97F4A7C15 + 1 }

// next is xorshift64*: a fixed-seed PRNG, no allocation, no global lock.
func (c *conn) next() uint64 {
	x := c.rng
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	c.rng = x
	return x * 2685821657736338717
}

func (c *conn) intn(n int) int { return int(c.next() % uint64(n)) }

// --- request encoding (append-only, no allocation) ---

func appendArrayHdr(b []byte, n int) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

func appendBulk(b []byte, s []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

func appendBulkStr(b []byte, s string) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// appendBulkKey appends the bulk "<prefix><n>".
func appendBulkKey(b []byte, prefix string, n int64) []byte {
	var tmp [24]byte
	d := strconv.AppendInt(tmp[:0], n, 10)
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(prefix)+len(d)), 10)
	b = append(b, '\r', '\n')
	b = append(b, prefix...)
	b = append(b, d...)
	return append(b, '\r', '\n')
}

// appendTaggedKey appends the bulk "{<prefix><n>}".
func appendTaggedKey(b []byte, prefix string, n int64) []byte {
	var tmp [24]byte
	d := strconv.AppendInt(tmp[:0], n, 10)
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(prefix)+len(d)+2), 10)
	b = append(b, '\r', '\n', '{')
	b = append(b, prefix...)
	b = append(b, d...)
	return append(b, '}', '\r', '\n')
}

func appendBulkInt(b []byte, n int64) []byte { return appendBulkKey(b, "", n) }

// --- reply skipping ---

// skip returns the offset after the reply starting at p in b, or -1 when
// the reply is not complete yet.
func skip(b []byte, p int) int {
	if p >= len(b) {
		return -1
	}
	nl := -1
	for i := p + 1; i+1 < len(b); i++ {
		if b[i] == '\r' {
			nl = i
			break
		}
	}
	if nl < 0 || nl+1 >= len(b) {
		return -1
	}
	end := nl + 2
	switch b[p] {
	case '+', '-', ':', '_', ',', '#', '(':
		return end
	case '$', '=', '!':
		n := atoi(b[p+1 : nl])
		if n < 0 {
			return end
		}
		if end+n+2 > len(b) {
			return -1
		}
		return end + n + 2
	case '*', '~', '>', '%', '|':
		n := atoi(b[p+1 : nl])
		if b[p] == '%' || b[p] == '|' {
			n *= 2
		}
		q := end
		for i := 0; i < n; i++ {
			q = skip(b, q)
			if q < 0 {
				return -1
			}
		}
		return q
	}
	return end
}

func atoi(b []byte) int {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	n := 0
	for _, c := range b {
		n = n*10 + int(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

// roundTrip writes wbuf and reads k complete top-level replies. An error
// reply is counted (and the first text kept), not returned.
func (c *conn) roundTrip(k int) error {
	if _, err := c.nc.Write(c.wbuf); err != nil {
		return err
	}
	c.wbuf = c.wbuf[:0]
	for k > 0 {
		if c.r < c.n {
			q := skip(c.rbuf[:c.n], c.r)
			if q >= 0 {
				c.lastNull = c.rbuf[c.r] == '_' || c.rbuf[c.r] == '*' && c.rbuf[c.r+1] == '-'
				if c.rbuf[c.r] == '-' || containsErr(c.rbuf[c.r:q]) {
					c.errs++
					if c.lastErr == "" {
						c.lastErr = string(c.rbuf[c.r : q-2])
					}
				}
				c.r = q
				k--
				continue
			}
		}
		// need more input
		if c.r > 0 {
			copy(c.rbuf, c.rbuf[c.r:c.n])
			c.n -= c.r
			c.r = 0
		}
		if c.n == len(c.rbuf) {
			nb := make([]byte, 2*len(c.rbuf))
			copy(nb, c.rbuf[:c.n])
			c.rbuf = nb
		}
		m, err := c.nc.Read(c.rbuf[c.n:])
		if m == 0 && err != nil {
			return err
		}
		c.n += m
	}
	if c.r == c.n {
		c.r, c.n = 0, 0
	}
	return nil
}

// sendBatch pipelines the operations from..to-1, each built by b and
// answered by perOp replies, in one write, and reads the replies.
func (c *conn) sendBatch(from, to, perOp int, b func(b []byte, i int) []byte) error {
	c.wbuf = c.wbuf[:0]
	for j := from; j < to; j++ {
		c.wbuf = b(c.wbuf, j)
	}
	return c.roundTrip((to - from) * perOp)
}

// containsErr reports an error element inside an aggregate reply (EXEC
// replies carry per-command errors): a "\r\n-" sequence.
func containsErr(b []byte) bool {
	if b[0] != '*' {
		return false
	}
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' && b[i+2] == '-' {
			return true
		}
	}
	return false
}

// do sends one command and returns its raw reply (for setup and probes).
func (c *conn) do(args ...string) (string, error) {
	c.wbuf = appendArrayHdr(c.wbuf[:0], len(args))
	for _, a := range args {
		c.wbuf = appendBulkStr(c.wbuf, a)
	}
	start := c.r
	if _, err := c.nc.Write(c.wbuf); err != nil {
		return "", err
	}
	c.wbuf = c.wbuf[:0]
	for {
		if q := skip(c.rbuf[:c.n], start); q >= 0 {
			s := string(c.rbuf[start:q])
			extra := q < c.n
			c.r, c.n = 0, 0
			if extra {
				return s, fmt.Errorf("unexpected extra reply data")
			}
			return s, nil
		}
		if c.n == len(c.rbuf) {
			nb := make([]byte, 2*len(c.rbuf))
			copy(nb, c.rbuf[:c.n])
			c.rbuf = nb
		}
		c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		m, err := c.nc.Read(c.rbuf[c.n:])
		c.nc.SetReadDeadline(time.Time{})
		if m == 0 && err != nil {
			return "", err
		}
		c.n += m
	}
}

// bulkValue extracts the payload of a "$n\r\n…\r\n" or "+…\r\n" reply.
func bulkValue(r string) string {
	if len(r) > 0 && r[0] == '$' {
		for i := 0; i < len(r); i++ {
			if r[i] == '\n' {
				return r[i+1 : len(r)-2]
			}
		}
	}
	if len(r) > 2 {
		return r[1 : len(r)-2]
	}
	return r
}
