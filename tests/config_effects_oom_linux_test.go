package tests

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func init() {
	configEffects["oom-score-adj"] = effectOOMScoreAdj
	configEffects["oom-score-adj-values"] = effectOOMScoreAdj
}

// oomScore reads /proc/<pid>/oom_score_adj.
func oomScore(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/oom_score_adj")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// oomSteps: CONFIG SET commands and the score each leaves, relative to
// the process's score at start (want); lower is the step that asks for a
// score below the start, which an unprivileged process may not write
// (the reply then is Redis's "Failed to set current oom_score_adj" and the
// score stays as it was).
var oomSteps = []struct {
	set   []string
	want  int
	abs   bool // want is absolute, not relative to the start
	lower bool
}{
	{set: []string{"oom-score-adj-values", "100 200 800"}},
	{set: []string{"oom-score-adj", "yes"}, want: 100},
	{set: []string{"oom-score-adj-values", "300 400 800"}, want: 300},
	{set: []string{"oom-score-adj", "absolute"}, want: 300, abs: true},
	{set: []string{"oom-score-adj-values", "1500 1600 1700"}, want: 1000, abs: true},
	{set: []string{"oom-score-adj", "relative"}, want: 1000, abs: true},
	{set: []string{"oom-score-adj", "no"}},
	{set: []string{"oom-score-adj", "absolute", "oom-score-adj-values", "-300 200 800"}, want: -300, abs: true, lower: true},
	{set: []string{"oom-score-adj", "no", "oom-score-adj-values", "0 200 800"}},
}

// runOOMSteps runs oomSteps on the server at c (process pid) and returns
// the replies.
func runOOMSteps(t *testing.T, c *Conn, pid int) []string {
	base := oomScore(t, pid)
	var replies []string
	prev := base
	for _, st := range oomSteps {
		r := string(mustDo(t, c, append([]string{"CONFIG", "SET"}, st.set...)...))
		replies = append(replies, r)
		want := st.want
		if !st.abs {
			want += base
		}
		if st.lower && want < base && r != "+OK\r\n" {
			if !strings.Contains(r, "Failed to set current oom_score_adj. Check server logs.") {
				t.Fatalf("CONFIG SET %q: %q", st.set, r)
			}
			want = prev // refused: the values restored, and applied again
		} else if r != "+OK\r\n" {
			t.Fatalf("CONFIG SET %q: %q", st.set, r)
		}
		if got := oomScore(t, pid); got != want {
			t.Fatalf("after CONFIG SET %q (start %d): oom_score_adj %d, want %d", st.set, base, got, want)
		}
		prev = want
	}
	return replies
}

// effectOOMScoreAdj: on a limitdb process of its own, the score
// /proc/<pid>/oom_score_adj shows follows oom-score-adj and the primary's
// oom-score-adj-values as Redis's setOOMScoreAdj writes it (relative to
// the score at start-up, absolute, clamped to ±1000, back to the start
// under no), and as set at start-up; TestOOMScoreAdjDiff runs the same steps on redis-server.
func effectOOMScoreAdj(t *testing.T, c *Conn, addr, name string) {
	a, pid := mustLimitdbProcess(t)
	p := mustDial(t, a)
	runOOMSteps(t, p, pid)
	// set at start-up (command line), as Redis's main applies it
	_, pid = mustLimitdbProcess(t, "--oom-score-adj", "absolute", "--oom-score-adj-values", "500 600 700")
	if got := oomScore(t, pid); got != 500 {
		t.Fatalf("started with absolute 500: oom_score_adj %d", got)
	}
}

// TestOOMScoreAdjDiff: the steps of effectOOMScoreAdj give the same
// replies and scores on redis-server 7.0.15 and a limitdb process.
func TestOOMScoreAdjDiff(t *testing.T) {
	r, ref := mustRedisConn(t)
	want := runOOMSteps(t, ref, r.cmd.Process.Pid)
	a, pid := mustLimitdbProcess(t)
	cand := mustDial(t, a)
	if got := runOOMSteps(t, cand, pid); strings.Join(got, "") != strings.Join(want, "") {
		t.Fatalf("replies:\nlimitdb %q\nredis   %q", got, want)
	}
}
