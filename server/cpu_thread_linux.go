package server

import (
	"os"
	"strconv"
	"strings"
)

// mainThreadCPU returns the system and user CPU seconds of the process's
// first OS thread (Linux: /proc/self/task/<pid>/stat, in USER_HZ ticks,
// 100 a second on every Linux architecture Go supports). Go runs
// goroutines on any of its threads, so this is the share of used_cpu_*
// the scheduler happened to put on that thread, not the time spent
// executing commands (there is no thread that does only that).
func mainThreadCPU() (sys, user float64, ok bool) {
	pid := strconv.Itoa(os.Getpid())
	b, err := os.ReadFile("/proc/self/task/" + pid + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// the fields after the command name, which is in parentheses and
	// may hold spaces: state is field 3, utime 14, stime 15
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return float64(st) / 100, float64(ut) / 100, true
}
