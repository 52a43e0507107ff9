package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// linkV1Commit is the last commit whose nodes speak version 1 of the
// follower↔leader link (cluster/forward.go, linkProto): its refusals are
// errors told apart by their text.
const linkV1Commit = "688fb138af5ac2814d861a9607294c5f3dc7edcc"

// binaryAt builds cmd/limitdb as it was at commit, from this
// repository's history (LIMITDB_OLD_BINARY names a built one instead);
// the test skips when git or the commit is not there (a shallow clone).
func binaryAt(t *testing.T, commit string) string {
	t.Helper()
	if p := os.Getenv("LIMITDB_OLD_BINARY"); p != "" {
		return p
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found: cannot build the binary of commit " + commit)
	}
	if err := exec.Command("git", "-C", "..", "cat-file", "-e", commit+"^{commit}").Run(); err != nil {
		t.Skipf("commit %s not in this clone's history (shallow?): set LIMITDB_OLD_BINARY to its binary", commit)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := exec.Command("sh", "-c", `git -C .. archive "$1" | tar -x -C "$2"`, "sh", commit, src)
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("git archive %s: %v\n%s", commit, err, out)
	}
	bin := filepath.Join(dir, "limitdb")
	build := exec.Command("go", "build", "-o", bin, "./cmd/limitdb")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", commit, err, out)
	}
	return bin
}

// TestClusterRollingUpgrade: a cluster of the binary before version 2
// of the link (linkV1Commit) is restarted node by node onto this tree's
// while six clients INCR through every node: first a follower (a new
// follower of an old leader), then the leader (an old follower of a new
// leader: refusals during the leader change reach it as TRYAGAIN text),
// then the last. After each restart writes through every node are
// acknowledged again; at the end no acknowledged increment is lost, none
// is applied twice, and the nodes converge.
func TestClusterRollingUpgrade(t *testing.T) {
	old := binaryAt(t, linkV1Commit)
	c := newTestCluster(t, 3, "n", func(int) []string { return nil })
	for _, nd := range c.nodes {
		nd.bin = old
	}
	c.startAll()
	l := c.waitLeader(10 * time.Second)
	stop := make(chan struct{})
	ld := startCounterLoad(c, "ctr", []int{0, 1, 2, 0, 1, 2}, stop)
	// progress: every node acknowledges increments within 10 s
	progress := func(when string) {
		t.Helper()
		var before [3]int64
		for i := range before {
			before[i] = ld.perNode[i].Load()
		}
		deadline := time.Now().Add(10 * time.Second)
		for i := range before {
			for ld.perNode[i].Load() < before[i]+20 {
				if time.Now().After(deadline) {
					close(stop)
					ld.wg.Wait()
					t.Fatalf("%s: %s acknowledged %d increments in 10 s\n%s", when, c.nodes[i].id, ld.perNode[i].Load()-before[i], c.log(i))
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	progress("all on the old binary")
	for _, i := range []int{(l + 1) % 3, l, (l + 2) % 3} {
		c.terminate(i)
		c.nodes[i].bin = ""
		c.start(i)
		c.waitVoters(3, 20*time.Second)
		progress(c.nodes[i].id + " on the new binary")
		t.Logf("%s restarted on the new binary; leader %s", c.nodes[i].id, c.nodes[c.waitLeader(10*time.Second)].id)
	}
	close(stop)
	ld.wg.Wait()
	checkCounterLoad(t, c, c.waitLeader(10*time.Second), "ctr", ld)
	c.mustConverge(10 * time.Second)
}
