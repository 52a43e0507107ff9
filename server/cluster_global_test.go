package server

import (
	"testing"

	"limitdb/engine"
)

// TestClusterWideCommands: every name of clusterWideCmds is a registered
// command the ID table marks (a renamed command would silently stay
// group-local), and no other write is marked.
func TestClusterWideCommands(t *testing.T) {
	n := 0
	for _, c := range engine.Commands() {
		for _, sub := range c.Subs {
			if mayBeClusterWide(sub) {
				n++
				if !clusterWideCmds[sub.Name] && sub.Name != "config|set" {
					t.Errorf("%s marked cluster-wide", sub.Name)
				}
			}
		}
	}
	if n != len(clusterWideCmds)+1 {
		t.Fatalf("%d commands marked, want the %d of clusterWideCmds and CONFIG SET", n, len(clusterWideCmds))
	}
	set := engine.Lookup([]byte("config")).Sub([]byte("set"))
	if clusterWide(set, [][]byte{[]byte("CONFIG"), []byte("SET"), []byte("maxmemory"), []byte("1")}) ||
		!clusterWide(set, [][]byte{[]byte("CONFIG"), []byte("SET"), []byte("requirepass"), []byte("x")}) {
		t.Fatal("CONFIG SET is cluster-wide for the cluster-wide parameters only")
	}
}
