package cluster

import "golang.org/x/sys/unix"

// startWriteback starts writing the range's dirty pages to disk without
// waiting for them (a later fsync still makes them durable). An error
// only means the fsync will have more to do.
func startWriteback(fd int, off, n int64) {
	_ = unix.SyncFileRange(fd, off, n, unix.SYNC_FILE_RANGE_WRITE)
}
