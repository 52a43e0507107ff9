package tests

import (
	"strings"
	"testing"

	"limitdb/server"
)

// Parameters limitdb accepts and shows but does not use (commands.md,
// "Inert parameters"): their effect test checks that CONFIG SET takes a
// valid value, CONFIG GET shows it, and the default comes back. Their
// validation is compared with redis-server's by the scenario
// server/config_inert.txt.
var inertParams = map[string][2]string{ // name: a value, the default
	"list-max-listpack-size":        {"4", "-2"},
	"list-max-ziplist-size":         {"4", "-2"},
	"list-compress-depth":           {"1", "0"},
	"repl-ping-replica-period":      {"3600", "10"},
	"repl-timeout":                  {"5", "60"},
	"repl-backlog-size":             {"2048", "1048576"},
	"replica-serve-stale-data":      {"no", "yes"},
	"replica-read-only":             {"no", "yes"},
	"replica-lazy-flush":            {"yes", "no"},
	"aof-use-rdb-preamble":          {"no", "yes"},
	"auto-aof-rewrite-percentage":   {"50", "100"},
	"active-defrag-ignore-bytes":    {"1024", "104857600"},
	"active-defrag-threshold-lower": {"5", "10"},
	"active-defrag-threshold-upper": {"50", "100"},
	"active-defrag-cycle-min":       {"2", "1"},
	"active-defrag-cycle-max":       {"50", "25"},
	"active-defrag-max-scan-fields": {"10", "1000"},
	"stream-node-max-entries":       {"10", "100"},
	"stream-node-max-bytes":         {"100", "4096"},
	"hll-sparse-max-bytes":          {"100", "3000"},
	"tracking-table-max-keys":       {"10", "1000000"},
	"cluster-node-timeout":          {"5000", "15000"},
}

func init() {
	for name := range inertParams {
		configEffects[name] = effectInert
	}
	// the aliases CONFIG GET * lists as names of their own
	for _, alias := range []string{"repl-ping-slave-period", "slave-serve-stale-data", "slave-read-only", "slave-lazy-flush"} {
		configEffects[alias] = effectInert
	}
	for _, name := range []string{"min-replicas-to-write", "min-slaves-to-write", "min-replicas-max-lag", "min-slaves-max-lag"} {
		configEffects[name] = effectMinReplicas
	}
	configEffects["enable-protected-configs"] = effectProtectedConfigs
	configEffects["enable-module-command"] = effectInert
	// Redis built without its jemalloc (as the redis-server of
	// config_inert.txt); a config file's refusal: TestActiveDefragStartup
	configEffects["activedefrag"] = refusedWith("yes", "Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc", "no")
	configEffects["latency-monitor-threshold"] = effectLatencyThreshold
	configEffects["latency-tracking"] = effectLatencyTracking
	configEffects["maxmemory-eviction-tenacity"] = effectEvictionTenacity // config_effects_memory_test.go
}

// effectLatencyThreshold: a command slower than the threshold is a
// "command" event of LATENCY LATEST; none without a threshold.
func effectLatencyThreshold(t *testing.T, c *Conn, addr, name string) {
	mustDo(t, c, "LATENCY", "RESET")
	mustDo(t, c, "DEBUG", "SLEEP", "0.02")
	expectDo(t, c, "*0\r\n", "LATENCY", "LATEST")
	configSet(t, c, name, "10")
	mustDo(t, c, "DEBUG", "SLEEP", "0.02")
	if r := string(mustDo(t, c, "LATENCY", "LATEST")); !strings.HasPrefix(r, "*1\r\n*4\r\n$7\r\ncommand\r\n") {
		t.Fatalf("LATENCY LATEST after a 20 ms command at threshold 10: %q", r)
	}
	configSet(t, c, name, "0")
	mustDo(t, c, "LATENCY", "RESET")
}

// effectLatencyTracking: under no, commands add nothing to LATENCY
// HISTOGRAM.
func effectLatencyTracking(t *testing.T, c *Conn, addr, name string) {
	configSet(t, c, name, "no")
	mustDo(t, c, "CONFIG", "RESETSTAT")
	mustDo(t, c, "PING")
	expectDo(t, c, "*0\r\n", "LATENCY", "HISTOGRAM", "ping")
	configSet(t, c, name, "yes")
	mustDo(t, c, "PING")
	if r := string(mustDo(t, c, "LATENCY", "HISTOGRAM", "ping")); !strings.HasPrefix(r, "*2\r\n$4\r\nping\r\n") {
		t.Fatalf("LATENCY HISTOGRAM ping under yes: %q", r)
	}
}

var inertAliases = map[string]string{
	"repl-ping-slave-period": "repl-ping-replica-period",
	"slave-serve-stale-data": "replica-serve-stale-data",
	"slave-read-only":        "replica-read-only",
	"slave-lazy-flush":       "replica-lazy-flush",
}

// effectInert: the value is stored and shown, the default restored;
// enable-module-command is immutable (limitdb has no MODULE command).
func effectInert(t *testing.T, c *Conn, addr, name string) {
	if name == "enable-module-command" {
		refusedWith("yes", "can't set immutable config")(t, c, addr, name)
		return
	}
	vals, ok := inertParams[name]
	if !ok {
		vals = inertParams[inertAliases[name]]
	}
	configSet(t, c, name, vals[0])
	if got := mustDoValue(t, c, "CONFIG", "GET", name).([]any); len(got) != 2 || got[1] != vals[0] {
		t.Fatalf("CONFIG GET %s after setting %q: %v", name, vals[0], got)
	}
	configSet(t, c, name, vals[1])
}

// effectProtectedConfigs: under the default (no) CONFIG SET refuses the
// protected parameters; a server started with yes sets dbfilename, and
// dir only to its current value (the Raft log and RDB file live there).
func effectProtectedConfigs(t *testing.T, c *Conn, addr, name string) {
	refusedWith("x.rdb", "can't set protected config")(t, c, addr, "dbfilename")
	refusedWith("yes", "can't set immutable config")(t, c, addr, name)
	dir := t.TempDir()
	srv := mustLimitdbConfig(t, server.Config{Addr: "127.0.0.1:0"}, "", "--enable-protected-configs", "yes", "--dir", dir)
	c2 := mustDial(t, srv.Addr().String())
	configSet(t, c2, "dbfilename", "other.rdb")
	configSet(t, c2, "dbfilename", "dump.rdb")
	refusedWith("/tmp", "limitdb sets it at start-up only")(t, c2, addr, "dir")
}

// effectMinReplicas: with min-replicas-to-write and -max-lag both above 0
// a write gets NOREPLICAS (a single node has no good replica) and INFO
// replication shows min_slaves_good_slaves:0; with name at 0 the write is
// served and the field is gone. tests/scenarios/server/min_replicas.txt
// compares the replies (MULTI, scripts) with redis-server.
func effectMinReplicas(t *testing.T, c *Conn, addr, name string) {
	other := map[string]string{
		"min-replicas-to-write": "min-replicas-max-lag", "min-slaves-to-write": "min-replicas-max-lag",
		"min-replicas-max-lag": "min-replicas-to-write", "min-slaves-max-lag": "min-replicas-to-write",
	}[name]
	def := map[bool]string{true: "0", false: "10"}[strings.HasSuffix(name, "to-write")]
	configSet(t, c, other, "1")
	configSet(t, c, name, "1")
	expectDo(t, c, "-NOREPLICAS Not enough good replicas to write.\r\n", "SET", "mr", "1")
	if f := infoSection(t, c, "replication"); f["min_slaves_good_slaves"] != "0" {
		t.Fatalf("INFO replication with %s 1: %v", name, f)
	}
	configSet(t, c, name, "0")
	expectDo(t, c, "+OK\r\n", "SET", "mr", "1")
	if f, ok := infoSection(t, c, "replication")["min_slaves_good_slaves"]; ok {
		t.Fatalf("INFO replication with %s 0 shows min_slaves_good_slaves:%s", name, f)
	}
	mustDo(t, c, "DEL", "mr")
	configSet(t, c, name, def)
	configSet(t, c, other, map[string]string{"min-replicas-max-lag": "10", "min-replicas-to-write": "0"}[other])
}
