package cluster

import (
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"limitdb/door"
	"limitdb/engine"
	"limitdb/resp"
)

// BenchmarkTurnCommit is the commit path of a cluster of one as the
// event loop drives it, with one P as the binary runs
// (procs/DESIGN.md): a turn executes one INCR, TurnEnd proposes its
// record as one log entry and the loop yields, Raft's leader loop
// writes the entry (raft-wal, appendfsync everysec: a page-cache write)
// and the log store acknowledges it, and the loop polls its ticket.
// ns/op is the CPU of one entry with one unit in it: what every turn
// that writes pays beside executing its units (DESIGN.md, "The commit
// path"; its figures in ../bench/RESULTS.md, "Cluster measurements").
func BenchmarkTurnCommit(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	e := engine.New()
	d := door.New(e, nil)
	n, err := New(Config{Dir: b.TempDir(), AppendFsync: "everysec",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, d, noExecutor{})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	for deadline := time.Now().Add(10 * time.Second); !n.Serving(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("the node did not start serving")
		}
	}
	c := &engine.Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter()}
	argv := [][]byte{[]byte("INCR"), []byte("k")}
	cmd := c.Resolve(argv)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n.TurnStart()
		d.Lock()
		c.W.B = c.W.B[:0]
		d.Exec(c, cmd, argv)
		t := n.Ticket()
		d.Unlock()
		n.TurnEnd()
		runtime.Gosched()
		for {
			if err, ok := n.Settled(t); ok {
				if err != nil {
					b.Fatal(err)
				}
				break
			}
			runtime.Gosched()
		}
	}
}

// noExecutor: a node no follower forwards to.
type noExecutor struct{}

func (noExecutor) LockForwarded(*Unit) []byte                              { return nil }
func (noExecutor) ExecForwarded(*Unit) ([]byte, BlockedUnit)               { return nil, nil }
func (noExecutor) CancelForwarded(uint64, uint64, uint64, CancelMode) bool { return false }
func (noExecutor) StopServing()                                            {}
func (noExecutor) DropSession(uint64, uint64)                              {}
func (noExecutor) PublishSettings()                                        {}
