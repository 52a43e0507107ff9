package server

import (
	"io"
	"net"
	"time"
)

// errProtected is Redis 7.0's reply to a non-local connection in protected
// mode (networking.c, clientAcceptHandler), sent before closing.
const errProtected = "-DENIED Redis is running in protected mode because protected " +
	"mode is enabled and no password is set for the default user. " +
	"In this mode connections are only accepted from the loopback interface. " +
	"If you want to connect from external computers to Redis you " +
	"may adopt one of the following solutions: " +
	"1) Just disable protected mode sending the command " +
	"'CONFIG SET protected-mode no' from the loopback interface " +
	"by connecting to Redis from the same host the server is " +
	"running, however MAKE SURE Redis is not publicly accessible " +
	"from internet if you do so. Use CONFIG REWRITE to make this " +
	"change permanent. " +
	"2) Alternatively you can just disable the protected mode by " +
	"editing the Redis configuration file, and setting the protected " +
	"mode option to 'no', and then restarting the server. " +
	"3) If you started the server manually just for testing, restart " +
	"it with the '--protected-mode no' option. " +
	"4) Setup a an authentication password for the default user. " +
	"NOTE: You only need to do one of the above things in order for " +
	"the server to start accepting connections from the outside.\r\n"

// protectedNoPassword reports whether the default user can log in without
// a password (its nopass flag, as Redis 7.0 tests it), the condition for
// protected mode to refuse outsiders.
func (s *Server) protectedNoPassword() bool { return s.defaultUserNoPass() }

// isLocalAddr is Redis 7.0's islocalClient: unix-socket clients and, over
// TCP, only 127.0.0.1 and ::1 count as local (not the rest of 127.0.0.0/8).
func isLocalAddr(a net.Addr) bool {
	if _, unix := a.(unixAddr); unix {
		return true
	}
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return false
	}
	ip := ta.IP.String()
	return ip == "127.0.0.1" || ip == "::1"
}

// protectedRefuses turns away, as Redis does, a connection from a
// non-local address while protected-mode is on and no password is set:
// the DENIED reply, rejected_connections counted, the connection closed.
func (s *Server) protectedRefuses(nc net.Conn) bool {
	if !s.net.protected.Load() || !s.protectedNoPassword() || isLocalAddr(nc.RemoteAddr()) {
		return false
	}
	nc.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = nc.Write([]byte(errProtected))
	s.stats.rejectedConns.Add(1)
	closeGently(nc)
	return true
}

// closeGently closes a refused connection so that its client reads the
// error: FIN after the reply, then what the client already sent is read
// and dropped (100 ms, 64 KB at most) — closing a socket with unread input
// sends a reset, which can discard the reply before the client reads it
// (seen under load in TestProtectedModeMatchesRedis).
func closeGently(nc net.Conn) {
	if hc, ok := nc.(interface{ CloseWrite() error }); ok {
		hc.CloseWrite()
	}
	nc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	io.Copy(io.Discard, io.LimitReader(nc, 64<<10))
	nc.Close()
}
