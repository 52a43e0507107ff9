//go:build !linux

package server

// setOOMScoreAdj fails as Redis's does where there is no
// /proc/self/oom_score_adj (CONFIG SET of either parameter is refused).
func setOOMScoreAdj(mode string, val int) string {
	return "oom_score_adj is not supported on this system"
}
