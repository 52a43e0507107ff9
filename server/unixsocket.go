package server

import (
	"errors"
	"net"
	"os"
	"strconv"
	"syscall"
)

// listenUnix opens the unixsocket listener when the parameter is set: a
// stale socket file is removed first and unixsocketperm (octal, 0 = leave
// the umask's) applied, as Redis does. The caller holds net.mu.
func (s *Server) listenUnix() error {
	path := s.conf.params["unixsocket"]
	if path == "" {
		return nil
	}
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		s.log.Warn("Failed opening Unix socket: " + err.Error())
		return err
	}
	if perm, _ := strconv.ParseUint(s.conf.params["unixsocketperm"], 8, 32); perm != 0 {
		if err := os.Chmod(path, os.FileMode(perm)); err != nil {
			ln.Close()
			return err
		}
	}
	l := &listener{ln: ln, unix: true}
	s.net.listeners = append(s.net.listeners, l)
	if s.net.serving {
		s.startAccept(l)
	}
	return nil
}

// unixAddr is how Redis shows a unix-socket client's address (CLIENT
// LIST addr and laddr, CLIENT KILL ADDR): the socket path and ":0".
type unixAddr string

func (a unixAddr) Network() string { return "unix" }
func (a unixAddr) String() string  { return string(a) }

// unixConn is an accepted unix-socket connection showing unixAddr as both
// ends; SyscallConn is kept for CLIENT LIST's fd.
type unixConn struct {
	net.Conn
	addr unixAddr
}

func (c unixConn) RemoteAddr() net.Addr { return c.addr }
func (c unixConn) LocalAddr() net.Addr  { return c.addr }

func (c unixConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.New("no file descriptor")
}

// isUnixConn reports a unix-socket client (CLIENT LIST flag U).
func isUnixConn(nc net.Conn) bool {
	_, ok := nc.(unixConn)
	return ok
}
