package netpoll

import (
	"io"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Conn is a TCP connection whose reads and writes are RawRead and
// RawWrite inside its syscall.RawConn's callbacks: the runtime's poller
// still parks a reader or writer that would block, and deadlines hold,
// but no system call is entered with the runtime's bookkeeping. The
// links between nodes (Raft, forwarding, the map's asks) run on it:
// nine single-P processes on two cores each woke sysmon on every socket
// read and write of a replication round (entersyscallWakeSysmon), and
// sysmon, once woken, polled every 20 µs until the P idled again:
// 17.5 % of a loaded follower's CPU and 10 % of a 3 × 3 cluster's
// (../../bench/RESULTS.md, "Commit notices", "Raw links").
type Conn struct {
	*net.TCPConn
	rc syscall.RawConn
}

// NewConn wraps c; a connection that is not TCP, or whose descriptor
// cannot be had, is returned as it is.
func NewConn(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	return &Conn{TCPConn: tc, rc: rc}
}

func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	err := c.rc.Read(func(fd uintptr) bool {
		for {
			m, e := RawRead(int(fd), p)
			if e == unix.EINTR {
				continue
			}
			n, rerr = m, e
			return e != unix.EAGAIN // EAGAIN: the poller waits for input
		}
	})
	if n == 0 && err == nil && rerr == nil {
		return 0, io.EOF
	}
	return max(n, 0), c.opError("read", err, rerr)
}

func (c *Conn) Write(p []byte) (int, error) {
	done := 0
	var werr error
	err := c.rc.Write(func(fd uintptr) bool {
		for done < len(p) {
			m, e := RawWrite(int(fd), p[done:])
			switch e {
			case nil:
				done += m
			case unix.EINTR:
			case unix.EAGAIN:
				return false // the poller waits for room
			default:
				werr = e
				return true
			}
		}
		return true
	})
	return done, c.opError("write", err, werr)
}

// opError is the error net.TCPConn would give for the poller's error
// (a deadline's is a net.Error whose Timeout is true) or the call's, nil
// for neither.
func (c *Conn) opError(op string, poller, call error) error {
	err := poller
	if err == nil && call != nil {
		err = os.NewSyscallError(op, call)
	}
	if err == nil {
		return nil
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
