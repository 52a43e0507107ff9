//go:build !linux

package server

// mainThreadCPU: no per-thread CPU times outside Linux (INFO leaves
// used_cpu_*_main_thread out).
func mainThreadCPU() (sys, user float64, ok bool) { return 0, 0, false }
