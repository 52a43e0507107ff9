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
	// LIMITDB_IO_MODEL=goroutine runs the package's tests with a
	// goroutine per connection (io-model's default changed for every
	// server the tests start)
	if v := os.Getenv("LIMITDB_IO_MODEL"); v != "" {
		for _, p := range params {
			if p.name == "io-model" {
				p.def = v
			}
		}
	}
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}
