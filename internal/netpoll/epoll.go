package netpoll

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Event is one ready descriptor of a poll.
type Event = unix.EpollEvent

// Epoll is a level-triggered epoll set with an eventfd in it that other
// goroutines write to wake its waiter (Wake). Its descriptors' interest
// is input only (Add, Arm) or nothing (Disarm).
type Epoll struct {
	ep  int
	efd int
	// f: the epoll set as a file of Go's poller, where Wait waits when
	// the process has one P
	f  *os.File
	rc syscall.RawConn
}

// NewEpoll creates the set and its eventfd.
func NewEpoll() (*Epoll, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(ep)
		return nil, err
	}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, efd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(efd)}); err != nil {
		unix.Close(ep)
		unix.Close(efd)
		return nil, err
	}
	// non-blocking, so that os.NewFile registers it in Go's poller
	if err := unix.SetNonblock(ep, true); err != nil {
		unix.Close(ep)
		unix.Close(efd)
		return nil, err
	}
	e := &Epoll{ep: ep, efd: efd, f: os.NewFile(uintptr(ep), "epoll")}
	if e.rc, err = e.f.SyscallConn(); err != nil {
		e.f.Close()
		unix.Close(efd)
		return nil, err
	}
	return e, nil
}

// Close closes the set and its eventfd.
func (e *Epoll) Close() {
	e.f.Close()
	unix.Close(e.efd)
}

// Add adds fd with an interest in input.
func (e *Epoll) Add(fd int32) error {
	return unix.EpollCtl(e.ep, unix.EPOLL_CTL_ADD, int(fd), &unix.EpollEvent{Events: unix.EPOLLIN, Fd: fd})
}

// Arm gives fd back its interest in input.
func (e *Epoll) Arm(fd int32) error {
	return unix.EpollCtl(e.ep, unix.EPOLL_CTL_MOD, int(fd), &unix.EpollEvent{Events: unix.EPOLLIN, Fd: fd})
}

// Disarm keeps fd in the set with no interest: no event until Arm.
func (e *Epoll) Disarm(fd int32) error {
	return unix.EpollCtl(e.ep, unix.EPOLL_CTL_MOD, int(fd), &unix.EpollEvent{Fd: fd})
}

// Del takes fd out of the set (closing its last descriptor does too).
func (e *Epoll) Del(fd int32) error {
	return unix.EpollCtl(e.ep, unix.EPOLL_CTL_DEL, int(fd), nil)
}

var one = []byte{1, 0, 0, 0, 0, 0, 0, 0}

// Wake makes the waiter's poll return (the eventfd's event), from any
// goroutine. An eventfd's write never blocks (the counter would have to
// reach 2^64-1), so it is raw (RawRead says why): entered as a system
// call, the wake of a loaded leader's loop at each commit woke sysmon.
func (e *Epoll) Wake() { RawWrite(e.efd, one) }

// IsWake reports whether a ready event is the eventfd's (Wake).
func (e *Epoll) IsWake(ev *Event) bool { return int(ev.Fd) == e.efd }

// Drain clears the wake-ups so far, once the waiter has seen IsWake.
func (e *Epoll) Drain() {
	var buf [8]byte
	unix.Read(e.efd, buf[:])
}

// Poll is epoll_pwait(2) with a zero timeout: the ready events now,
// never waiting, without the runtime's system-call bookkeeping (RawRead
// says why).
func (e *Epoll) Poll(events []Event) (int, error) {
	n, _, en := syscall.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(e.ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if en != 0 {
		return 0, en
	}
	return int(n), nil
}

// Wait returns the ready events, waiting for them when wait is -1
// (epoll_wait's timeout otherwise). The ready set is read first with
// Poll. When there are none: with one P (the binary's default,
// procs.Serve) it waits in Go's poller, the epoll set registered there
// as a file, so the P is free meanwhile and Raft's goroutines, timers
// and off-loop clients run on the same thread; blocked in epoll_wait(2)
// it would hold the only P until sysmon took it back (up to 10 ms:
// BLPOP/LPUSH ping-pong p99 12.7 ms). With more Ps it blocks in
// epoll_wait(2), which measured 7-15 % less CPU per exchange there than
// waiting in the poller (whose waits cost the other Ps' spinning threads
// an extra epoll_wait each).
func (e *Epoll) Wait(events []Event, wait int) (int, error) {
	n, err := e.Poll(events)
	if n != 0 || err != nil || wait == 0 {
		return n, err
	}
	if runtime.GOMAXPROCS(0) == 1 {
		return e.waitGo(events, wait)
	}
	return unix.EpollWait(e.ep, events, wait)
}

// waitGo is Wait's wait in Go's poller. Its own function: the closure's
// results escape to the heap, and declared in Wait they were allocated
// on every call, waiting or not (91 MB of garbage in 300,000 pipelined
// SETs, which maxmemory's figure counts until a collection).
func (e *Epoll) waitGo(events []Event, wait int) (int, error) {
	var n int
	var err error
	rerr := e.rc.Read(func(uintptr) bool {
		n, err = e.Poll(events)
		return n != 0 || err != nil
	})
	if rerr == nil {
		return n, err
	}
	// not in the poller (it refused the descriptor): block instead
	return unix.EpollWait(e.ep, events, wait)
}
