package engine

import (
	"strconv"
	"testing"
)

// TestRandCountTooLarge: a negative count whose reply cannot fit in
// maxRandReply is refused before any of it is built (the reply buffer
// stays small: building 64 MB under the engine lock made PING wait over
// 1 s on a loaded machine), and a count just under the bound still
// builds its reply until the running check stops it, with the same error.
func TestRandCountTooLarge(t *testing.T) {
	c := newTestCtx()
	for _, setup := range [][]string{{"SADD", "s", "a"}, {"HSET", "h", "a", "b"}, {"ZADD", "z", "1", "a"}} {
		run(c, setup...)
	}
	want := "-" + ErrRandReplyTooLarge + "\r\n"
	for _, cmd := range [][]string{
		{"SRANDMEMBER", "s", "-1000000000000"},
		{"HRANDFIELD", "h", "-1000000000000", "WITHVALUES"},
		{"ZRANDMEMBER", "z", "-1000000000000"},
		{"ZRANDMEMBER", "z", "-1000000000000", "WITHSCORES"},
		{"SRANDMEMBER", "s", strconv.Itoa(-(maxRandReply/minRandElem + 1))},
	} {
		c.W.B = nil
		if got := run(c, cmd...); got != want {
			t.Fatalf("%v: %.80q, want %q", cmd, got, want)
		}
		if cap(c.W.B) > 1<<20 {
			t.Fatalf("%v: the reply buffer grew to %d bytes before the error", cmd, cap(c.W.B))
		}
	}
	// at the bound the count is not refused up front: "$1\r\na\r\n" is 7
	// bytes, so the reply passes 64 MB and the running check refuses it
	if got := run(c, "SRANDMEMBER", "s", strconv.Itoa(-(maxRandReply / minRandElem))); got != want {
		t.Fatalf("SRANDMEMBER at the bound: %.80q, want %q", got, want)
	}
}
