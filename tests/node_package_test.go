package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// mustNodePackage returns node's path for a Node check in tests/<dir>
// whose package-lock.json pins its libraries, installing them (npm ci)
// when node_modules/<module> is missing. Without node and npm the test is
// skipped, except under CI (scripts/test.sh installs them).
func mustNodePackage(t *testing.T, dir, module string) string {
	t.Helper()
	node, err1 := exec.LookPath("node")
	npm, err2 := exec.LookPath("npm")
	if err1 != nil || err2 != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node and npm are needed for tests/%s: %v %v", dir, err1, err2)
		}
		t.Skip("node/npm not installed")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", module)); err != nil {
		install := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--silent")
		install.Dir = dir
		if out, err := runBounded(install, 5*time.Minute); err != nil {
			t.Fatalf("npm ci in tests/%s: %v\n%s", dir, err, out)
		}
	}
	return node
}
