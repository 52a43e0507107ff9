package server

import (
	"slices"
	"testing"

	"limitdb/engine"
)

// TestMigrationHelpers: the pure parts of CLUSTER MIGRATION — Redis's
// range errors, the slots string STATUS shows, the batch ids.
func TestMigrationHelpers(t *testing.T) {
	args := func(ss ...string) [][]byte {
		out := make([][]byte, len(ss))
		for i, s := range ss {
			out[i] = []byte(s)
		}
		return out
	}
	if r, msg := parseMigrationRanges(args("0", "99", "200", "200")); msg != "" || !slices.Equal(r, [][2]int{{0, 99}, {200, 200}}) {
		t.Errorf("parse: %v %q", r, msg)
	}
	if _, msg := parseMigrationRanges(args("0", "16384")); msg != engine.ErrSlotInvalid {
		t.Errorf("out of range: %q", msg)
	}
	if _, msg := parseMigrationRanges(args("9", "1")); msg != engine.ErrSlotOrder(9, 1) {
		t.Errorf("reversed: %q", msg)
	}
	var r [][2]int
	for _, s := range []int{1, 2, 3, 7, 9, 10} {
		r = addSlotRange(r, s)
	}
	if got := rangesString(r); got != "1-3 7-7 9-10" {
		t.Errorf("rangesString: %q", got)
	}
	id := "0123456789abcdef0123456789abcdef01234567-12"
	if taskOf(id) != id[:40] || batchNo(id) != 12 {
		t.Errorf("taskOf %q, batchNo %d", taskOf(id), batchNo(id))
	}
}
