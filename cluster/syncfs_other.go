//go:build !linux

package cluster

import "syscall"

// startWriteback: without sync_file_range the fsync does all the work.
func startWriteback(fd int, off, n int64) {}

// pwrite is pwrite(2) (pwriteAll).
func pwrite(fd int, p []byte, off int64) (int, error) { return syscall.Pwrite(fd, p, off) }
