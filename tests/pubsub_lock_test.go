package tests

import (
	"bytes"
	"net"
	"os/exec"
	"testing"
	"time"
)

// lockDir holds the lock library check (Node: simple-redis-mutex on
// node-redis, pinned in package-lock.json). scripts/test.sh installs it
// (npm ci); the test installs it itself when a targeted run finds it
// missing.
const lockDir = "node/lock"

// TestPubsubLockLibrary runs a lock library that waits on Pub/Sub
// (simple-redis-mutex: SET NX PX, a release script that PUBLISHes from
// Lua, waiters woken by the message; polling pushed to 60 s so that every
// hand-over goes through Pub/Sub) against redis-server and limitdb, in
// RESP2 and RESP3, and compares the outcomes: 30 acquisitions by 6
// clients without overlap, fencing tokens, tryLock, expiry, failAfter, the
// release message a plain subscriber sees. Node.js is on the project's
// machines (and CI's); without it the test is skipped, except under CI.
func TestPubsubLockLibrary(t *testing.T) {
	node := mustNodePackage(t, lockDir, "simple-redis-mutex")
	port := func(addr string) string {
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// limitdb twice: the in-process server (no log) and the binary as
	// shipped (a durable cluster of one: the release's message waits for
	// its DEL to be committed)
	durable, _ := mustLimitdbProcess(t)
	names := []string{"redis", "limitdb", "limitdb (durable)"}
	for _, proto := range []string{"2", "3"} {
		var outs [3][]byte
		for i, addr := range []string{redisAddr, limitAddr, durable} {
			cmd := exec.Command(node, "lock.js", port(addr), proto)
			cmd.Dir = lockDir
			out, err := runBounded(cmd, 2*time.Minute)
			if err != nil {
				t.Fatalf("RESP%s, %s: %v\n%s", proto, names[i], err, out)
			}
			outs[i] = bytes.TrimSpace([]byte(out))
		}
		for i := 1; i < len(outs); i++ {
			if !bytes.Equal(outs[0], outs[i]) {
				t.Errorf("RESP%s: outcomes differ\n  redis:   %s\n  %s: %s", proto, outs[0], names[i], outs[i])
			}
		}
		if !bytes.Contains(outs[1], []byte(`"acquired":30,"overlaps":0,"failures":0,"handedOverByPubSub":true`)) {
			t.Errorf("RESP%s: %s", proto, outs[1])
		}
		t.Logf("RESP%s: %s", proto, outs[1])
	}
}
