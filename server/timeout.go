package server

import "time"

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
