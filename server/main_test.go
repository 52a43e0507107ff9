package server

import (
	"fmt"
	"os"
	"testing"
)

// scratchDir is the dir of the package's test servers: a command a fuzz
// input or a test sends (FLUSHALL under save rules, DEBUG RELOAD) may
// write dump.rdb, and the package's own directory is not the place.
var scratchDir string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "limitdb-server-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	scratchDir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}
