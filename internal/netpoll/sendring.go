package netpoll

import (
	"math"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SendRing is an io_uring(7) used for one thing: an event loop sends the
// replies of a turn's connections with one system call (io_uring_enter)
// instead of one write(2) each. Every send wakes the client that waits
// for it, and on a busy machine that client is often put on the loop's
// own CPU; the kernel switches to it when the system call that woke it
// returns to user space. With one write(2) per connection, the loop was
// switched out in the middle of its turn's writes, and every connection
// after that one waited with it (BLPOP/LPUSH ping-pong: 0.6 involuntary
// switches per exchange against Redis's 0.4-0.5). With the whole turn's
// sends in one system call, the switch, if any, comes after the last
// (with preempt=none, this project's machines' kernel, a woken task
// takes the CPU only on the return to user space; a fully preemptible
// kernel may switch sooner, and then the ring costs what write(2) did).
//
// The sends are MSG_DONTWAIT: each completes within io_uring_enter, as
// write(2) on the non-blocking socket would (bytes taken, possibly fewer
// than asked, or EAGAIN); NewSendRing checks that the kernel does so
// (dontWaitCompletes). No Go module for io_uring is served to this
// project, and the part needed is small: setup, the two rings, one
// opcode.
type SendRing struct {
	fd      int
	ring    []byte // the submission and completion rings (one mapping)
	sqesMem []byte
	entries uint32

	sqHead, sqTail, sqMask *uint32
	sqArray                unsafe.Pointer
	cqHead, cqTail, cqMask *uint32
	cqes                   unsafe.Pointer
	sqes                   unsafe.Pointer
}

// io_uring ABI (include/uapi/linux/io_uring.h)
const (
	ioringOpSend            = 26
	ioringEnterGetevents    = 1 << 0
	ioringFeatNativeWorkers = 1 << 9
	ioringSetupSubmitAll    = 1 << 7
	ioringSetupCoopTaskrun  = 1 << 8

	ioringOffSqRing = 0
	ioringOffSqes   = 0x10000000

	sqeSize = 64
	cqeSize = 16
)

type ioUringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  struct {
		head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
		userAddr                                                        uint64
	}
	cqOff struct {
		head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
		userAddr                                                        uint64
	}
}

// NewSendRing sets up a ring of n entries; an error means the kernel
// has no io_uring for this process (too old, disabled by
// kernel.io_uring_disabled, refused by a seccomp filter), and the caller
// writes each descriptor with write(2).
func NewSendRing(n uint32) (*SendRing, error) {
	var p ioUringParams
	var fd uintptr
	var e syscall.Errno
	// SUBMIT_ALL (5.18) and COOP_TASKRUN (5.19) are optional: sendChunk
	// takes back what a stopped submission left, and the task-run hint
	// only saves an interrupt
	for _, flags := range []uint32{ioringSetupSubmitAll | ioringSetupCoopTaskrun, 0} {
		p = ioUringParams{flags: flags}
		fd, _, e = syscall.Syscall(unix.SYS_IO_URING_SETUP, uintptr(n), uintptr(unsafe.Pointer(&p)), 0)
		if e != unix.EINVAL {
			break
		}
	}
	if e != 0 {
		return nil, e
	}
	r := &SendRing{fd: int(fd), entries: p.sqEntries}
	if p.features&ioringFeatNativeWorkers == 0 {
		// before 5.12: one mapping for both rings (5.4) and the send
		// opcode (5.6) are not to be relied upon
		unix.Close(r.fd)
		return nil, unix.ENOSYS
	}
	size := p.sqOff.array + p.sqEntries*4
	if c := p.cqOff.cqes + p.cqEntries*cqeSize; c > size {
		size = c
	}
	ring, err := unix.Mmap(r.fd, ioringOffSqRing, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		unix.Close(r.fd)
		return nil, err
	}
	sqes, err := unix.Mmap(r.fd, ioringOffSqes, int(p.sqEntries*sqeSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		unix.Munmap(ring)
		unix.Close(r.fd)
		return nil, err
	}
	r.ring, r.sqesMem = ring, sqes
	base := unsafe.Pointer(&ring[0])
	r.sqHead = (*uint32)(unsafe.Add(base, p.sqOff.head))
	r.sqTail = (*uint32)(unsafe.Add(base, p.sqOff.tail))
	r.sqMask = (*uint32)(unsafe.Add(base, p.sqOff.ringMask))
	r.sqArray = unsafe.Add(base, p.sqOff.array)
	r.cqHead = (*uint32)(unsafe.Add(base, p.cqOff.head))
	r.cqTail = (*uint32)(unsafe.Add(base, p.cqOff.tail))
	r.cqMask = (*uint32)(unsafe.Add(base, p.cqOff.ringMask))
	r.cqes = unsafe.Add(base, p.cqOff.cqes)
	r.sqes = unsafe.Pointer(&sqes[0])
	if !r.dontWaitCompletes() {
		r.Close()
		return nil, unix.ENOTSUP
	}
	return r, nil
}

// Close releases the ring.
func (r *SendRing) Close() {
	unix.Munmap(r.sqesMem)
	unix.Munmap(r.ring)
	unix.Close(r.fd)
}

// NotSent is Send's result for a buffer the kernel did not take
// from the ring (nothing of it was sent): the caller writes it itself.
const NotSent = math.MinInt32

// Send sends bufs[i] on fds[i] (every buffer non-empty) and stores in
// res[i] the bytes the kernel took, minus the errno, or NotSent. The
// caller keeps the buffers referenced until it returns. An error means
// the ring is unusable: what it did not send is marked NotSent.
func (r *SendRing) Send(fds []int32, bufs [][]byte, res []int32) error {
	for i := range res {
		res[i] = NotSent
	}
	for off := 0; off < len(fds); off += int(r.entries) {
		end := min(off+int(r.entries), len(fds))
		if err := r.sendChunk(fds[off:end], bufs[off:end], res[off:end]); err != nil {
			return err
		}
	}
	return nil
}

// sendChunk is Send for at most r.entries buffers: the ring is empty
// on entry and on return.
func (r *SendRing) sendChunk(fds []int32, bufs [][]byte, res []int32) error {
	taken, err := r.submit(fds, bufs)
	got := uint32(0)
	for {
		n, rerr := r.reap(res)
		got += n
		if rerr != nil {
			err = rerr
		}
		if got >= taken {
			break
		}
		// not completed within the submission (NewSendRing checked
		// that MSG_DONTWAIT sends are)
		if err := r.wait(taken - got); err != nil {
			return err
		}
	}
	if err == nil && taken < uint32(len(fds)) {
		err = unix.EAGAIN
	}
	return err
}

// wait waits for n more completions, as a system call that may block.
func (r *SendRing) wait(n uint32) error {
	_, _, e := syscall.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), 0, uintptr(n), ioringEnterGetevents, 0, 0)
	if e != 0 && e != syscall.EINTR {
		return e
	}
	return nil
}

// submit queues a MSG_DONTWAIT send of bufs[i] on fds[i] for each i
// (user data i) and submits them; it returns how many the kernel took.
// What it did not take is taken back (the kernel reads the tail again at
// each call), and is left to write(2).
func (r *SendRing) submit(fds []int32, bufs [][]byte) (uint32, error) {
	n := uint32(len(fds))
	tail := *r.sqTail
	mask := *r.sqMask
	for i := uint32(0); i < n; i++ {
		idx := (tail + i) & mask
		sqe := unsafe.Add(r.sqes, uintptr(idx)*sqeSize)
		*(*[sqeSize]byte)(sqe) = [sqeSize]byte{}
		*(*uint8)(sqe) = ioringOpSend
		*(*int32)(unsafe.Add(sqe, 4)) = fds[i]
		*(*uint64)(unsafe.Add(sqe, 16)) = uint64(uintptr(unsafe.Pointer(&bufs[i][0])))
		*(*uint32)(unsafe.Add(sqe, 24)) = uint32(len(bufs[i]))
		*(*uint32)(unsafe.Add(sqe, 28)) = unix.MSG_DONTWAIT | unix.MSG_NOSIGNAL
		*(*uint64)(unsafe.Add(sqe, 32)) = uint64(i)
		*(*uint32)(unsafe.Add(r.sqArray, uintptr(idx)*4)) = idx
	}
	atomic.StoreUint32(r.sqTail, tail+n)
	// each send runs within the call (MSG_DONTWAIT), so no runtime
	// system-call bookkeeping (RawRead says why that matters with one P)
	var err error
	for {
		left := tail + n - atomic.LoadUint32(r.sqHead)
		_, _, e := syscall.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(left), 0, 0, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			err = e
		}
		break
	}
	taken := atomic.LoadUint32(r.sqHead) - tail
	atomic.StoreUint32(r.sqTail, tail+taken)
	return taken, err
}

// reap stores the completions posted so far in res (by user data) and
// returns their count; a send the ring cannot make on its descriptor
// (not the connection's fault) is NotSent, with an error.
func (r *SendRing) reap(res []int32) (uint32, error) {
	var err error
	got := uint32(0)
	head := *r.cqHead
	ctail := atomic.LoadUint32(r.cqTail)
	for ; head != ctail; head++ {
		cqe := unsafe.Add(r.cqes, uintptr(head&*r.cqMask)*cqeSize)
		i := *(*uint64)(cqe)
		v := *(*int32)(unsafe.Add(cqe, 8))
		switch v {
		case -int32(unix.EINVAL), -int32(unix.EOPNOTSUPP), -int32(unix.ENOTSOCK):
			v, err = NotSent, unix.EOPNOTSUPP
		}
		res[i] = v
		got++
	}
	atomic.StoreUint32(r.cqHead, head)
	return got, err
}

// dontWaitCompletes checks that a MSG_DONTWAIT send to a full socket
// completes within its submission with EAGAIN, as the loop needs (a
// kernel that waited for writability instead would stop the loop behind
// a client that does not read): once, on a socket pair filled with
// write(2). On failure the pending send is ended by shutting the pair.
func (r *SendRing) dontWaitCompletes() bool {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	fill := make([]byte, 64<<10)
	for i := 0; i < 1024; i++ { // a few MB at most
		if _, err := unix.Write(pair[0], fill); err != nil {
			break
		}
	}
	res := []int32{NotSent}
	taken, err := r.submit([]int32{int32(pair[0])}, [][]byte{fill[:1]})
	if err != nil || taken != 1 {
		return false
	}
	if n, _ := r.reap(res); n == 1 {
		return res[0] == -int32(unix.EAGAIN)
	}
	unix.Shutdown(pair[0], unix.SHUT_RDWR)
	unix.Shutdown(pair[1], unix.SHUT_RDWR)
	r.wait(1)
	r.reap(res)
	return false
}
