package server

// queued accounts for the request just added to the MULTI queue. The
// queue is input that has been parsed but not yet run, so limitdb counts
// its bytes (argument lengths plus 16 per argument for the slice header)
// together with the unparsed input against client-query-buffer-limit:
// past it the client is closed as one whose query buffer overflowed.
// Redis 7.0 bounds neither (a MULTI queue only counts toward the client's
// memory in CLIENT LIST multi-mem and maxmemory-clients). It returns false
// when the client is being closed.
func (cl *client) queued(argv [][]byte) bool {
	for _, a := range argv {
		cl.queueSize += int64(len(a)) + 16
	}
	if cl.queueSize+int64(cl.rd.Buffered()) <= cl.s.limits.MaxQuery.Load() {
		return true
	}
	cl.s.log.Warn("closing client whose MULTI queue reached the max query buffer length", "client", cl.id, "queued", cl.queueSize)
	cl.queue = nil
	cl.queueSize = 0
	cl.closeNow = true
	return false
}

// resetQueue empties the MULTI queue, keeping its array only when small
// (the queued arguments are released either way).
func (cl *client) resetQueue() {
	if cap(cl.queue) > 1024 {
		cl.queue = nil
	} else {
		clear(cl.queue)
		cl.queue = cl.queue[:0]
	}
	cl.queueSize = 0
}
