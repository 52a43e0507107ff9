//go:build unix

package server

import "syscall"

// peerClosed reports whether the peer of cl's socket has closed it or
// reset it. A socket already closed answers at once, without a system
// call: an event loop that read the hang-up shuts the socket before it
// drops the client (under the engine lock), and a unit run meanwhile off
// the loop (a script) served the dead waiter — TestJobQueueLibrary lost
// a job to it in 3 of 6 runs with io-model loop.
//
// With peek, an end of file or an error waiting to be read counts too,
// seen with a non-blocking MSG_PEEK that leaves the data where it is
// (one recvfrom(2)). That is for a waiter whose hang-up nothing orders
// before the serving unit: a blocked client's goroutine would learn it
// from its next read, but goroutines run in no particular order, and a
// producer's LPUSH sent after a worker closed its blocked connection
// (bee-queue's Queue.close) could serve the dead waiter first and lose
// the job to it, where Redis's event loop handles the earlier hang-up
// first. RawConn.Control does not take the read lock, which the blocked
// goroutine's Read holds. Sockets only (out.raw): TLS and pipes answer
// false.
func (cl *client) peerClosed(peek bool) bool {
	if cl.out.raw == nil {
		return false
	}
	if !peek {
		// whether the descriptor is still open; a function that captures
		// nothing: the closure below escapes (two allocations per served
		// waiter, 14 % of a BLPOP/LPUSH ping-pong's objects)
		return cl.out.raw.Control(noControl) != nil
	}
	closed := false
	if err := cl.out.raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = n == 0 && err == nil || err == syscall.ECONNRESET
	}); err != nil {
		return true
	}
	return closed
}

// noControl is peerClosed's Control without a peek.
func noControl(uintptr) {}
