package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
)

// TestIncarnation: Raft state that exists keeps its incarnation (none for
// a dir from before incarnations); a dir without Raft state gets a new
// one, even if an old file survived.
func TestIncarnation(t *testing.T) {
	dir := t.TempDir()
	a, err := incarnation(dir, false)
	if err != nil || len(a) != 16 {
		t.Fatalf("a new dir: %q %v", a, err)
	}
	if b, err := incarnation(dir, true); err != nil || b != a {
		t.Fatalf("a restart: %q %v, want %q", b, err, a)
	}
	if c, err := incarnation(dir, false); err != nil || c == a || len(c) != 16 {
		t.Fatalf("Raft state gone, the file left: %q %v (was %q)", c, err, a)
	}
	os.Remove(filepath.Join(dir, incarnationFile))
	if d, err := incarnation(dir, true); err != nil || d != "" {
		t.Fatalf("older Raft state: %q %v", d, err)
	}
	id := raftID("n2", a)
	if string(id) != "n2@"+a || nodeName(id) != "n2" || nodeName(raftID("n2", "")) != "n2" || nodeName(raft.ServerID("a@b")) != "a@b" {
		t.Fatalf("raft IDs: %q %q", id, nodeName(id))
	}
}
