package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// startACLPair starts a fresh redis-server and limitdb for one ACL
// scenario, so users, passwords and the ACL LOG never leak into the
// shared servers of the other differential tests. aclfile, when set, is
// copied for each server and configured as its aclfile.
func startACLPair(t *testing.T, aclfile string) (refAddr, candAddr string, refFile, candFile string) {
	t.Helper()
	var rargs []string
	dir := t.TempDir()
	if aclfile != "" {
		b, err := os.ReadFile(aclfile)
		if err != nil {
			t.Fatal(err)
		}
		refFile, candFile = filepath.Join(dir, "redis.acl"), filepath.Join(dir, "limitdb.acl")
		for _, f := range []string{refFile, candFile} {
			if err := os.WriteFile(f, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		rargs = append(rargs, "--aclfile", refFile)
	}
	r := mustRedis(t, rargs...)
	return r.Addr, mustLimitdbACL(t, candFile), refFile, candFile
}

// TestACLScenarios runs the scenarios of scenarios/acl/ (ported from
// Redis 7.0.15's tests/unit/acl.tcl, acl-v2.tcl and auth.tcl), each on a
// fresh pair of servers, in RESP2 and RESP3 unless the file says.
func TestACLScenarios(t *testing.T) {
	for _, f := range scenarioFiles(t, "scenarios/acl") {
		if !strings.HasSuffix(f, ".txt") {
			continue
		}
		lines := readScenario(t, f)
		protos := []int{2, 3}
		aclfile := ""
		for _, l := range lines {
			if p, ok := strings.CutPrefix(l.text, "@proto "); ok {
				protos = []int{int(p[0] - '0')}
			}
			if a, ok := strings.CutPrefix(l.text, "@aclfile "); ok {
				aclfile = filepath.Join(filepath.Dir(f), strings.TrimSpace(a))
			}
		}
		for _, p := range protos {
			name := strings.TrimPrefix(f, "scenarios/acl/") + "/resp" + string(rune('0'+p))
			t.Run(name, func(t *testing.T) {
				ref, cand, _, _ := startACLPair(t, aclfile)
				runScenarioOn(t, ref, cand, f, lines, p)
			})
		}
	}
}
