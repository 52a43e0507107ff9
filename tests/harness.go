// Package tests holds limitdb's differential tests: every scenario is sent
// to a real redis-server and to limitdb, and the raw RESP replies are
// compared byte for byte.
package tests

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"limitdb/resp"
)

func freePort() (int, error) { return pickPort("127.0.0.1") }

// Ports the tests pass to servers they start come from below the
// kernel's ephemeral range (32768-60999 on Linux): a port the kernel
// handed out for a listen on :0 is free again once closed, and any
// outgoing connection from that IP (a node dials its peers from its own
// 127.0.0.x) may take it as its source port before the server binds it.
// CI lost a cluster test to that ("bind: address already in use" on a
// Raft address picked a moment before). Each test process walks the
// range from its own offset, and a port is handed out only once per
// process and only if a listen on it succeeds now.
const (
	pickLow  = 20000
	pickHigh = 32767
)

var pickNext atomic.Int64

func init() { pickNext.Store(int64(os.Getpid()*7919) % (pickHigh - pickLow)) }

func pickPort(ip string) (int, error) {
	for range pickHigh - pickLow {
		port := pickLow + int(pickNext.Add(1)%(pickHigh-pickLow))
		l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
		if err != nil {
			continue
		}
		l.Close()
		return port, nil
	}
	return 0, fmt.Errorf("no free port on %s in %d-%d", ip, pickLow, pickHigh)
}

// SplitLine splits a scenario line like redis-cli does.
func SplitLine(line string) ([]string, error) {
	args, ok := resp.SplitArgs([]byte(line), nil)
	if !ok {
		return nil, fmt.Errorf("unbalanced quotes in %q", line)
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out, nil
}

// scenarioFiles lists the scenario files under dir (recursively).
// ownRunner are the folders of scenarios/ that a test of their own runs
// (scenarios/README.md): a walk of the whole tree leaves them out.
var ownRunner = map[string]bool{
	"scenarios/acl":     true, // TestACLScenarios: servers with an aclfile
	"scenarios/pubsub":  true, // TestPubsubScenarios
	"scenarios/effects": true, // TestEffects only: cases for the effects
	"scenarios/cluster": true, // TestClusterShardsDiff: three masters on each side
}

// scenarioFiles lists the *.txt files under dir.
func scenarioFiles(t *testing.T, dir string) []string {
	var files []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.IsDir() && p != dir && ownRunner[p] {
			return filepath.SkipDir
		}
		if err == nil && !info.IsDir() && strings.HasSuffix(p, ".txt") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		t.Fatalf("no scenarios under %s", dir)
	}
	return files
}

// newStrays notes which of a server's files (dump.rdb, raft/, the AOF's
// folder) are in the working directory, the package's folder; the
// function it returns lists those that appeared since. A server started
// without a dir of its own writes them there (TestBinary did).
func newStrays() func() []string {
	names := []string{"dump.rdb", "raft", "appendonlydir"}
	before := map[string]bool{}
	for _, n := range names {
		if _, err := os.Stat(n); err == nil {
			before[n] = true
		}
	}
	return func() []string {
		var appeared []string
		for _, n := range names {
			if _, err := os.Stat(n); err == nil && !before[n] {
				appeared = append(appeared, n)
			}
		}
		return appeared
	}
}
