package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestClusterMigrationFormerLeaderTask: the target's leader is stopped
// (SIGSTOP) while its task waits after FREEZE; another member leads,
// resumes the import from its engine and completes it; the stopped node
// is continued (its own driver stops: it leads no more) and is made
// leader again (RAFT TRANSFER). Its table still held its own task as
// "loading": STATUS listed it so and every later IMPORT was refused with
// "another ASM task is already in progress" (found by
// TestFaultsMigrationSmoke). It must settle the task and import again.
func TestClusterMigrationFormerLeaderTask(t *testing.T) {
	s := mustShards(t, 2, 3)
	h := &handoverTest{s: s, t: t, cc: s.clusterClient(), src: 0, dst: 1}
	ctx := context.Background()
	g := s.groups[h.dst]
	for i := range g.nodes {
		g.cli(i).Do(ctx, "DEBUG", "HANDOVER-PAUSE", 2000)
	}
	id := h.importOn(100, 163)
	h.waitState(id, "loading", 20*time.Second)
	old := s.leaderOf(h.dst)
	for i := range g.nodes {
		if i != old {
			g.cli(i).Do(ctx, "DEBUG", "HANDOVER-PAUSE", 0)
		}
	}
	resume := g.pause(old)
	nl := g.waitServing(15*time.Second, old)
	// the new leader completes the task (STATUS asked of it alone: the
	// stopped node would not answer)
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := g.cli(nl).Do(ctx, "CLUSTER", "MIGRATION", "STATUS", "ID", id).Slice()
		if err == nil && len(res) == 1 && strings.Contains(strings.Join(toStrings(res[0]), " "), "state completed") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new leader did not complete %s: %v %v", id, res, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	resume()
	time.Sleep(2500 * time.Millisecond) // the old driver's pause ends, it finds itself deposed
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err := g.cli(nl).Do(tctx, "RAFT", "TRANSFER", g.nodes[old].id).Err()
	cancel()
	if err != nil {
		t.Fatalf("RAFT TRANSFER %s: %v", g.nodes[old].id, err)
	}
	if l := g.waitServing(15 * time.Second); l != old {
		t.Fatalf("leader %d after the transfer, want %d", l, old)
	}
	// settled within a few handover periods: nothing in progress, and a
	// new IMPORT (of more of the source's slots) runs
	deadline = time.Now().Add(5 * time.Second)
	for {
		res, err := g.cli(old).Do(ctx, "CLUSTER", "MIGRATION", "STATUS", "ALL").Slice()
		busy := ""
		for _, row := range res {
			if r := strings.Join(toStrings(row), " "); !strings.Contains(r, "state completed") && !strings.Contains(r, "state canceled") && !strings.Contains(r, "state failed") {
				busy = r
			}
		}
		if err == nil && busy == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the leader again still lists a task in progress: %s (%v)", busy, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	id2, err := g.cli(old).Do(ctx, "CLUSTER", "MIGRATION", "IMPORT", 164, 170).Text()
	if err != nil {
		t.Fatalf("CLUSTER MIGRATION IMPORT after the former leadership's task: %v", err)
	}
	h.waitState(id2, "completed", 20*time.Second)
	h.waitSlotsOn(100, 170, h.dst)
	h.checkDigests()
}

// toStrings is a STATUS row's fields as strings.
func toStrings(row any) []string {
	kv, _ := row.([]any)
	var out []string
	for _, v := range kv {
		out = append(out, fmt.Sprint(v))
	}
	return out
}
