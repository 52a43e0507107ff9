package cluster

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// startWriteback starts writing the range's dirty pages to disk without
// waiting for them (a later fsync still makes them durable). An error
// only means the fsync will have more to do.
func startWriteback(fd int, off, n int64) {
	_ = unix.SyncFileRange(fd, off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// pwriteAll is os.File.WriteAt without the runtime's system-call
// bookkeeping: under everysec a segment write only copies into the page
// cache. With one P (procs/DESIGN.md), each write entered as a system
// call woke sysmon or was taken for a retake, and the P moved to
// another thread: sysmon polled every 20 µs, 6 % of the CPU of a
// BLPOP/LPUSH ping-pong, and CPU per exchange fell 5 % without it. A
// write the kernel does block (dirty-page throttling) holds the P,
// which the commit waits for anyway.
func pwriteAll(fd int, p []byte, off int64) (int, error) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		return pwriteLoop(fd, p, off) // the offset takes two words there
	}
	done := 0
	for done < len(p) {
		r, _, e := unix.RawSyscall6(unix.SYS_PWRITE64, uintptr(fd), uintptr(unsafe.Pointer(&p[done])), uintptr(len(p)-done), uintptr(off+int64(done)), 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return done, e
		}
		done += int(r)
	}
	return done, nil
}
