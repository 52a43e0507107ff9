package cluster

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// startWriteback starts writing the range's dirty pages to disk without
// waiting for them (a later fsync still makes them durable). An error
// only means the fsync will have more to do.
func startWriteback(fd int, off, n int64) {
	_ = unix.SyncFileRange(fd, off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// pwrite is pwrite(2) without the runtime's system-call bookkeeping
// (pwriteAll, as os.File.WriteAt): under everysec a segment write only
// copies into the page cache. With one P (procs/DESIGN.md), each write
// entered as a system call woke sysmon or was taken for a retake, and
// the P moved to another thread: sysmon polled every 20 µs, 6 % of the
// CPU of a BLPOP/LPUSH ping-pong, and CPU per exchange fell 5 % without
// it. A write the kernel does block (dirty-page throttling) holds the
// P, which the commit waits for anyway.
func pwrite(fd int, p []byte, off int64) (int, error) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		return syscall.Pwrite(fd, p, off) // the offset takes two words there
	}
	r, _, e := unix.RawSyscall6(unix.SYS_PWRITE64, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), uintptr(off), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
