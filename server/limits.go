package server

import (
	"crypto/tls"
	"net"
	"time"
)

const errMaxClients = "-ERR max number of clients reached\r\n"

// refuseClient turns a connection away when maxclients are connected, as
// Redis does: one error reply, then close.
func (s *Server) refuseClient(nc net.Conn) bool {
	s.mu.Lock()
	n := int64(len(s.clients)) + s.net.pending.Load() // handshaking ones count, as in Redis
	s.mu.Unlock()
	if n < s.maxClients.Load() {
		return false
	}
	s.stats.rejectedConns.Add(1)
	if _, secure := nc.(*tls.Conn); !secure { // no handshake yet: Redis sends nothing on TLS
		nc.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = nc.Write([]byte(errMaxClients))
	}
	nc.Close()
	return true
}

// closeIdleClients closes clients idle longer than the timeout parameter
// (seconds; 0 = never), like Redis's clientsCronHandleTimeout. Run by cron.
func (s *Server) closeIdleClients() {
	limit := s.idleLimit.Load()
	if limit <= 0 {
		return
	}
	now := time.Now()
	s.door.Lock()
	for _, c := range s.sortedClients() {
		// blocked clients wait as long as their command says (Redis's
		// clientsCronHandleTimeout skips them); Pub/Sub clients have no
		// timeout
		if c.blk == nil && !c.subscribed() && now.Sub(c.lastInteraction()) > time.Duration(limit)*time.Second {
			c.nc.Close()
		}
	}
	s.door.Unlock()
}
