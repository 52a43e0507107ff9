package server

import (
	"strconv"
	"strings"
)

// oom-score-adj and oom-score-adj-values: Redis's setOOMScoreAdj, which
// writes the process's /proc/self/oom_score_adj (oom_score_adj_linux.go; elsewhere
// it fails, as Redis built without HAVE_PROC_OOM_SCORE_ADJ). limitdb is
// always a primary with no forked child, so of the three values (primary,
// replica, background child) only the first is ever applied.

const (
	errOOMValues  = "Invalid oom-score-adj-values, elements must be between -2000 and 2000."
	errOOMArgs    = "wrong number of arguments"
	errOOMApply   = "Failed to set current oom_score_adj. Check server logs."
	oomValuesDef  = "0 200 800"
	warnOOMValues = "The oom-score-adj-values configuration may not work for non-privileged processes! Please consult the documentation."
)

// checkOOMValues is Redis's setConfigOOMScoreAdjValuesOption: three values
// split on single spaces, each as strtoll reads it (leading blanks, a
// sign; an empty one is 0) within ±2000. It returns them as CONFIG GET
// shows them.
func checkOOMValues(v string) (string, string) {
	f := strings.Split(v, " ")
	if v == "" || len(f) != 3 {
		return "", errOOMArgs
	}
	out := make([]string, 3)
	for i, x := range f {
		n, ok := strtoll(x)
		if !ok || n < -2000 || n > 2000 {
			return "", errOOMValues
		}
		out[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(out, " "), ""
}

// strtoll is C's strtoll(s, &end, 10) with *end == '\0' required: leading
// white space, an optional sign, digits (none at all only for "", which
// is 0); past the int64 range it saturates.
func strtoll(s string) (int64, bool) {
	if s == "" {
		return 0, true
	}
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	if t == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n < 1<<62 {
			n = n*10 + int64(c-'0')
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

// applyOOM runs setOOMScoreAdj for the primary's class as CONFIG SET of
// either parameter (and a config file) does; a failure is logged with
// the OS error and refuses the CONFIG SET, whose values are then restored
// (and applied again), as Redis's updateOOMScoreAdj.
var applyOOM = &applyFn{atLoad: true, run: func(s *Server) string {
	vals := strings.Fields(s.conf.params["oom-score-adj-values"])
	if len(vals) == 3 {
		r, _ := strconv.Atoi(vals[1])
		c, _ := strconv.Atoi(vals[2])
		if p, _ := strconv.Atoi(vals[0]); r < p || c < r {
			s.log.Warn(warnOOMValues)
		}
	}
	master, _ := strconv.Atoi(vals[0])
	if err := setOOMScoreAdj(s.conf.params["oom-score-adj"], master); err != "" {
		s.log.Warn(err)
		return errOOMApply
	}
	return ""
}}

func init() {
	paramApply["oom-score-adj"] = applyOOM
	paramApply["oom-score-adj-values"] = applyOOM
}
