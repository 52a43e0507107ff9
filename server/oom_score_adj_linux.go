package server

import (
	"os"
	"strconv"
	"strings"
	"sync"
)

// oomState is Redis's statics in setOOMScoreAdj: the score is the
// process's, shared by every Server in it.
var oomState struct {
	sync.Mutex
	adjusted bool // the score is ours: base holds the one before
	base     int
}

const oomFile = "/proc/self/oom_score_adj"

// setOOMScoreAdj is Redis's for the primary's class: under relative (yes)
// the base read when first taking control plus val, under absolute val
// (clamped to ±1000); under no the base is written back if it had been
// changed. It returns the log line of a failure, or "".
func setOOMScoreAdj(mode string, val int) string {
	oomState.Lock()
	defer oomState.Unlock()
	if mode != "no" {
		if !oomState.adjusted {
			b, err := os.ReadFile(oomFile)
			if err != nil {
				return "Unable to read oom_score_adj: " + errnoText(err)
			}
			oomState.adjusted = true
			oomState.base, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if mode != "absolute" {
			val += oomState.base
		}
		val = max(-1000, min(val, 1000))
	} else if oomState.adjusted {
		oomState.adjusted = false
		val = oomState.base
	} else {
		return ""
	}
	f, err := os.OpenFile(oomFile, os.O_WRONLY, 0)
	if err == nil {
		_, err = f.Write([]byte(strconv.Itoa(val) + "\n"))
		f.Close()
	}
	if err != nil {
		return "Unable to write oom_score_adj: " + errnoText(err)
	}
	return ""
}
