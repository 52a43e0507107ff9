package tests

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestClusterMetrics: on the nodes of a cluster of two, /metrics has the
// Raft series with RAFT INFO's values: leadership, term, indexes,
// members, the log's fsyncs, the follower's forwarded units, and a leader
// change after RAFT TRANSFER; lint-clean; and the dashboard's Raft panels
// have data in a real Prometheus scraping both.
func TestClusterMetrics(t *testing.T) {
	ports := make([]int, 2)
	for i := range ports {
		p, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = p
	}
	c := mustClusterWith(t, 2, func(i int) []string { return []string{"--metrics-port", strconv.Itoa(ports[i])} })
	l := c.waitLeader(10 * time.Second)
	f := 1 - l
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := 0; i < 10; i++ {
		if err := c.cli(l).Set(ctx, "k"+strconv.Itoa(i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.cli(f).Set(ctx, "via-follower", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	c.waitCaughtUp(10 * time.Second)
	addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(ports[i]) }
	body := scrape(t, addr(l))
	lintMetrics(t, body)
	lm, fm := series(body), series(scrape(t, addr(f)))
	li := c.info(l)
	if lm["limitdb_raft_leader"] != 1 || fm["limitdb_raft_leader"] != 0 || lm[`limitdb_raft_state{state="leader"}`] != 1 ||
		fm[`limitdb_raft_state{state="follower"}`] != 1 {
		t.Errorf("leadership: leader %v %v, follower %v %v", lm["limitdb_raft_leader"], lm[`limitdb_raft_state{state="leader"}`],
			fm["limitdb_raft_leader"], fm[`limitdb_raft_state{state="follower"}`])
	}
	if term, _ := strconv.ParseFloat(li["raft_term"], 64); lm["limitdb_raft_term"] != term || fm["limitdb_raft_term"] != term {
		t.Errorf("term: RAFT INFO %v, metrics %v and %v", term, lm["limitdb_raft_term"], fm["limitdb_raft_term"])
	}
	if lm["limitdb_raft_members"] != 2 || lm["limitdb_raft_voters"] != 2 || lm["limitdb_connected_replicas"] != 1 {
		t.Errorf("members %v voters %v replicas %v", lm["limitdb_raft_members"], lm["limitdb_raft_voters"], lm["limitdb_connected_replicas"])
	}
	if lm["limitdb_raft_commit_index"] < 11 || lm["limitdb_raft_applied_index"] > lm["limitdb_raft_commit_index"] || lm["limitdb_raft_apply_lag_entries"] < 0 {
		t.Errorf("indexes: commit %v applied %v lag %v", lm["limitdb_raft_commit_index"], lm["limitdb_raft_applied_index"], lm["limitdb_raft_apply_lag_entries"])
	}
	if fm["limitdb_raft_forwarded_units_total"] < 1 {
		t.Errorf("follower forwarded %v units", fm["limitdb_raft_forwarded_units_total"])
	}
	if lm["limitdb_raft_log_fsync_duration_seconds_count"] < 1 || lm["limitdb_raft_clock_max_skew_seconds"] != 0.5 {
		t.Errorf("fsyncs %v, max skew %v", lm["limitdb_raft_log_fsync_duration_seconds_count"], lm["limitdb_raft_clock_max_skew_seconds"])
	}
	if err := c.cli(l).Do(ctx, "RAFT", "TRANSFER", c.nodes[f].id).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if series(scrape(t, addr(l)))["limitdb_raft_leader_changes_total"] >= 1 && series(scrape(t, addr(f)))["limitdb_raft_leader_changes_total"] >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no leader change counted after RAFT TRANSFER")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// the dashboard's Raft panels have data in a real Prometheus
	query, wait := mustPrometheus(t, addr(0), addr(1))
	wait(func(round int) {
		for i := 0; i < 10; i++ {
			c.cli(i%2).Set(ctx, "p:"+strconv.Itoa(round*10+i), "v", 0)
		}
	})
	for _, q := range dashboardEmpty(t, query) {
		if strings.Contains(q, "raft_") {
			t.Errorf("Raft dashboard query without data: %s", q)
		}
	}
}
