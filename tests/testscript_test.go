package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTestScriptStages runs scripts/test.sh with stand-ins for go, gofmt,
// git, redis-server, node and npm on PATH, which log their arguments: a
// failing `go test` must not skip the fuzz targets (one failure would
// hide another), a failing fuzz target must not skip the next ones, and
// the script exits non-zero when either stage failed.
func TestTestScriptStages(t *testing.T) {
	script, err := os.ReadFile("../scripts/test.sh")
	if err != nil {
		t.Fatal(err)
	}
	fuzzTargets := strings.Count(string(script), "\nfuzz ")
	if fuzzTargets == 0 {
		t.Fatal("no fuzz targets found in scripts/test.sh")
	}
	// the node packages the script npm-installs (its `for d in …` over
	// tests/node/$d): the fake tree needs their directories
	m := regexp.MustCompile(`for d in ([a-z ]+); do\n\s*\(cd tests/node/\$d`).FindSubmatch(script)
	if m == nil {
		t.Fatal("scripts/test.sh's loop over tests/node/<package> not found")
	}
	var nodeDirs []string
	for _, d := range strings.Fields(string(m[1])) {
		nodeDirs = append(nodeDirs, "tests/node/"+d)
	}
	for _, tc := range []struct {
		name               string
		failTest, failFuzz bool
		wantExitZero       bool
	}{
		{"all pass", false, false, true},
		{"go test fails", true, false, false},
		{"a fuzz target fails", false, true, false},
		{"both fail", true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, d := range append([]string{"scripts", "bin"}, nodeDirs...) {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(root, "scripts/test.sh"), script, 0o755); err != nil {
				t.Fatal(err)
			}
			log := filepath.Join(root, "calls.log")
			// go: `go test -count=1 …` is the suite, `go test … -fuzz X` a
			// fuzz target (the first one fails with failFuzz)
			fake := map[string]string{
				"go": `echo "go $*" >> "$LOG"
case "$*" in
  *"-count=1"*) [ -n "$FAIL_TEST" ] && exit 1 ;;
  *"-fuzz ^FuzzCommandArgs\$"*) [ -n "$FAIL_FUZZ" ] && exit 1 ;;
esac
exit 0`,
				"gofmt":        "exit 0",
				"git":          "exit 0",
				"redis-server": `echo "Redis server v=7.0.15"`,
				"node":         "exit 0",
				"npm":          "exit 0",
			}
			for name, body := range fake {
				if err := os.WriteFile(filepath.Join(root, "bin", name), []byte("#!/usr/bin/env bash\n"+body+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("bash", filepath.Join(root, "scripts/test.sh"))
			cmd.Env = append(os.Environ(), "PATH="+filepath.Join(root, "bin")+":"+os.Getenv("PATH"), "LOG="+log,
				"FAIL_TEST="+envFlag(tc.failTest), "FAIL_FUZZ="+envFlag(tc.failFuzz))
			out, err := cmd.CombinedOutput()
			if (err == nil) != tc.wantExitZero {
				t.Fatalf("exit error %v, want exit 0: %v\n%s", err, tc.wantExitZero, out)
			}
			calls, _ := os.ReadFile(log)
			if n := strings.Count(string(calls), " -fuzz "); n != fuzzTargets {
				t.Fatalf("%d fuzz targets ran, want all %d\n%s\n%s", n, fuzzTargets, calls, out)
			}
		})
	}
}

func envFlag(b bool) string {
	if b {
		return "1"
	}
	return ""
}
