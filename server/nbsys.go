package server

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// nbRead, nbWrite and nbEpollPoll are read(2), write(2) and a zero-wait
// epoll_pwait(2) on descriptors that never block (non-blocking sockets,
// the loop's epoll set polled without waiting), made without the
// runtime's system-call bookkeeping (entersyscall/exitsyscall). With
// one P (procs/DESIGN.md) and that bookkeeping, a socket write the
// kernel preempted (the client it woke took the CPU) left the only P in
// a system call long enough for sysmon to take it back and hand it to
// another thread, and sysmon, finding such Ps, polled every 20 µs
// instead of backing off: 8.8 % of the CPU of a BLPOP/LPUSH ping-pong.
// Without it, CPU per exchange fell from 21.5 to 18.8 µs.
func nbRead(fd int, b []byte) (int, error) { return nbRW(syscall.SYS_READ, fd, b) }

func nbWrite(fd int, b []byte) (int, error) { return nbRW(syscall.SYS_WRITE, fd, b) }

func nbRW(trap uintptr, fd int, b []byte) (int, error) {
	var p unsafe.Pointer
	if len(b) != 0 {
		p = unsafe.Pointer(&b[0])
	}
	n, _, e := syscall.RawSyscall(trap, uintptr(fd), uintptr(p), uintptr(len(b)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

// nbEpollPoll is epoll_pwait(2) with a zero timeout: the loop's ready
// events now, never waiting.
func nbEpollPoll(ep int, events []unix.EpollEvent) (int, error) {
	n, _, e := syscall.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
