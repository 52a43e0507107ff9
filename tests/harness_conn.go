package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"
)

func waitPing(addr string) error { return waitPingOr(addr, nil) }

// waitPingOr waits up to 10 s for addr to answer PING, and gives up at
// once when exited (nil: never) closes.
func waitPingOr(addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := Dial(addr); err == nil {
			r, err := c.Do("PING")
			c.Close()
			if err == nil && string(r) == "+PONG\r\n" {
				return nil
			}
		}
		select {
		case <-exited:
			return errRedisExited
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("server at %s did not answer PING", addr)
}

// Conn is a raw RESP connection: it sends commands and returns each reply's
// exact bytes.
type Conn struct {
	nc net.Conn
	br *bufio.Reader
	// ReplyTimeout bounds the wait for one reply (0: 10 s)
	ReplyTimeout time.Duration
}

// Dial connects to addr.
func Dial(addr string) (*Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &Conn{nc: nc, br: bufio.NewReader(nc)}, nil
}

func (c *Conn) Close() error { return c.nc.Close() }

// Encode encodes args as a multibulk request.
func Encode(args ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.Bytes()
}

// Do sends one command and returns its raw reply.
func (c *Conn) Do(args ...string) ([]byte, error) {
	if err := c.Send(Encode(args...)); err != nil {
		return nil, err
	}
	return c.ReadReply()
}

// Send writes raw bytes.
func (c *Conn) Send(b []byte) error {
	c.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := c.nc.Write(b)
	return err
}

// ReadReply reads one complete reply and returns its raw bytes.
func (c *Conn) ReadReply() ([]byte, error) {
	d := c.ReplyTimeout
	if d == 0 {
		d = 10 * time.Second
	}
	c.nc.SetReadDeadline(time.Now().Add(d))
	var out bytes.Buffer
	err := readValue(c.br, &out)
	return out.Bytes(), err
}

func readLine(br *bufio.Reader, out *bytes.Buffer) (string, error) {
	line, err := br.ReadString('\n')
	out.WriteString(line)
	if err != nil {
		return "", err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return "", fmt.Errorf("bad reply line %q", line)
	}
	return line[:len(line)-2], nil
}

func readValue(br *bufio.Reader, out *bytes.Buffer) error {
	line, err := readLine(br, out)
	if err != nil {
		return err
	}
	switch line[0] {
	case '+', '-', ':', ',', '_', '#', '(':
		return nil
	case '$', '=', '!':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return err
		}
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := ioReadFull(br, buf); err != nil {
			return err
		}
		out.Write(buf)
		return nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return err
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			if err := readValue(br, out); err != nil {
				return err
			}
		}
		if line[0] == '|' { // an attribute precedes the real reply
			return readValue(br, out)
		}
		return nil
	}
	return fmt.Errorf("unknown reply type %q", line)
}

func ioReadFull(br *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := br.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// mustDial connects to addr; the connection closes when the test ends.
func mustDial(t testing.TB, addr string) *Conn {
	t.Helper()
	c, err := Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// mustDo sends one command on c and returns its raw reply, failing the
// test on a connection error.
func mustDo(t testing.TB, c *Conn, args ...string) []byte {
	t.Helper()
	r, err := c.Do(args...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// mustDialFrom opens a raw connection to addr from the local address from
// (its replies due within 5 s); the test closes it.
func mustDialFrom(t testing.TB, addr string, from net.IP) *Conn {
	t.Helper()
	d := net.Dialer{Timeout: time.Second, LocalAddr: &net.TCPAddr{IP: from}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	return &Conn{nc: nc, br: bufio.NewReader(nc)}
}

// mustDialUnix opens a raw connection to the unix socket sock; the test
// closes it.
func mustDialUnix(t testing.TB, sock string) *Conn {
	t.Helper()
	nc, err := net.DialTimeout("unix", sock, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &Conn{nc: nc, br: bufio.NewReader(nc)}
}
