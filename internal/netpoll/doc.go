// Package netpoll is the event loops' Linux non-blocking I/O: an epoll
// set with an eventfd to wake its waiter (Epoll), reads and writes of
// non-blocking descriptors without the runtime's system-call bookkeeping
// (Read, RawRead, RawWrite; Conn, a TCP connection read and written that
// way inside the runtime's poller, for the links between nodes), and an
// io_uring that sends a batch of buffers with one system call
// (SendRing). It takes descriptors, connections and byte slices and
// knows nothing of clients, so it is tested alone; the loops themselves
// (turns, parking, hand-off) are server/evloop.go's, and
// server/DESIGN.md ("Waiting", "The write pass") says why each piece is
// as it is.
package netpoll
