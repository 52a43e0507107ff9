package tests

import (
	"bytes"
	"strings"
	"testing"
)

// TestRDBPoliciesToRedis: the policy registry is in a snapshot as aux
// fields, which redis-server 7.0 skips: a dump.rdb holding policies (and
// keys, but no limiter key) loads in Redis with the same dataset digest,
// and loads back into limitdb with every policy, its history, overrides
// and version (RL.POLICY DUMP byte for byte).
func TestRDBPoliciesToRedis(t *testing.T) {
	c := newEngineCtx()
	for _, cmd := range [][]string{
		{"RL.POLICY", "SET", "api", "LIMIT", "100", "PERIOD", "60000", "DESC", "public API, per key"},
		{"RL.POLICY", "SET", "api", "LIMIT", "200", "PERIOD", "60000", "BURST", "20", "NEAR", "0.9", "IFVERSION", "1"},
		{"RL.POLICY", "SET", "login", "LIMIT", "5", "PERIOD", "900000", "ALGO", "sliding-log", "SHADOW"},
		{"RL.POLICY", "OVERRIDE", "api", "SUBJECT", "vip", "LIMIT", "1000"},
		{"SET", "plain", "value"},
		{"HSET", "h", "f", "v"},
	} {
		if r := engineRun(c, cmd...); r[0] == '-' {
			t.Fatalf("%v: %s", cmd, r)
		}
	}
	var buf bytes.Buffer
	if err := c.E.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("limitdb-policy")) {
		t.Fatal("no limitdb-policy aux field in the snapshot")
	}
	rc := redisOnSnapshot(t, buf.Bytes())
	want := c.E.DatasetDigest()
	if got := bulk(t, redisDo(t, rc, "DEBUG", "DIGEST")); got != want.Hex() {
		t.Fatalf("Redis digest %s, limitdb %s", got, want.Hex())
	}
	if r := redisDo(t, rc, "DBSIZE"); string(r) != ":2\r\n" {
		t.Fatalf("Redis DBSIZE %q", r)
	}
	back := newEngineCtx()
	if err := back.E.LoadSnapshot(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if back.E.StrictDigest() != c.E.StrictDigest() {
		t.Fatal("strict digest changed across the snapshot")
	}
	for _, cmd := range [][]string{{"RL.POLICY", "GET", "api"}, {"RL.POLICY", "HISTORY", "api"}, {"RL.POLICY", "GET", "login"}, {"RL.POLICY", "LIST"}, {"RL.POLICY", "OVERRIDES", "api"}, {"RL.POLICY", "DUMP"}} {
		if a, b := engineRun(c, cmd...), engineRun(back, cmd...); !bytes.Equal(a, b) {
			t.Fatalf("%v: %q after loading, %q before", cmd, b, a)
		}
	}
	if r := string(engineRun(back, "RL.POLICY", "SET", "login", "LIMIT", "5", "PERIOD", "1000", "ALGO", "sliding-log")); r != ":5\r\n" {
		t.Fatalf("the next change after loading: %q (the version counter was not restored)", r)
	}
	if !strings.Contains(string(engineRun(back, "RL.ALLOW", "u", "POLICY", "api")), "policy") {
		t.Fatal("RL.ALLOW … POLICY api after loading")
	}
}
