package engine

import (
	"strings"
	"testing"
)

// Lookup through the direct-mapped cache agrees with the map for every
// registered command in any letter case, and misses unknown names.
func TestLookupFastTable(t *testing.T) {
	for name, cmd := range table {
		for _, n := range []string{name, strings.ToUpper(name), strings.ToUpper(name[:1]) + name[1:]} {
			if got := Lookup([]byte(n)); got != cmd {
				t.Errorf("Lookup(%q) = %v, want %s", n, got, name)
			}
		}
	}
	for _, n := range []string{"", "nosuchcmd", "get2", "ge", "incrx", strings.Repeat("x", 40)} {
		if got := Lookup([]byte(n)); got != nil {
			t.Errorf("Lookup(%q) = %s, want nil", n, got.Name)
		}
	}
	if a := testing.AllocsPerRun(100, func() { Lookup([]byte("INCR")) }); a != 0 {
		t.Errorf("Lookup allocates %.0f", a)
	}
}
