package server

// noteServed, rerouteBlocked, unblockForwarding: the cluster's part of
// blocking (filled in below).

func (s *Server) noteServed(rc *client) {}

func (s *Server) rerouteBlocked(cl *client, bs *blockState) bool { return s.sendBlockedReply(cl) }

func (s *Server) unblockForwarding(target *client, asError bool) bool { return false }
