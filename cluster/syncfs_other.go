//go:build !linux

package cluster

// startWriteback: without sync_file_range the fsync does all the work.
func startWriteback(fd int, off, n int64) {}

func pwriteAll(fd int, p []byte, off int64) (int, error) { return pwriteLoop(fd, p, off) }
