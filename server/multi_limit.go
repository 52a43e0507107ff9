package server

// queued checks the MULTI queue after a request was added (Tx.Enqueue). The
// queue is input that has been parsed but not yet run, so limitdb counts
// its bytes (argument lengths plus 16 per argument for the slice header)
// together with the unparsed input against client-query-buffer-limit:
// past it the client is closed as one whose query buffer overflowed.
// Redis 7.0 bounds neither (a MULTI queue only counts toward the client's
// memory in CLIENT LIST multi-mem and maxmemory-clients). It returns false
// when the client is being closed.
func (cl *client) queued() bool {
	buffered := 0
	if cl.rd != nil { // a forwarded client has no reader: its block came whole
		buffered = cl.rd.Buffered()
	}
	if cl.tx.Size+int64(buffered) <= cl.s.limits.MaxQuery.Load() {
		return true
	}
	cl.s.log.Warn("closing client whose MULTI queue reached the max query buffer length", "client", cl.id, "queued", cl.tx.Size)
	cl.tx.Queue = nil
	cl.tx.Size = 0
	cl.closeNow = true
	return false
}
