package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"limitdb/engine"
)

// TestRDBSlotsToRedis: a cluster-mode snapshot (owned slots in the aux
// field limitdb-slots, which Redis skips: Redis keeps ownership in
// nodes.conf) loads in a redis-server with cluster-enabled yes, whose
// CLUSTER COUNTKEYSINSLOT and GETKEYSINSLOT then agree with limitdb's
// slot index slot by slot, and loads back into limitdb with the same
// owned slots.
func TestRDBSlotsToRedis(t *testing.T) {
	c := newEngineCtx()
	c.E.EnableSlots()
	for i := range 300 {
		k := fmt.Sprintf("k%d", i)
		if i%3 == 0 {
			k = fmt.Sprintf("{tag%d}.%d", i%5, i)
		}
		engineRun(c, "SET", k, "v")
	}
	engineRun(c, "DEL", "k1", "k2", "{tag0}.0")
	if r := string(engineRun(c, "LIMITDB.SLOTS", "ADD", "0", "5460", "16000", "16383")); r != "+OK\r\n" {
		t.Fatalf("LIMITDB.SLOTS ADD: %q", r)
	}
	file, rc := loadInRedisCluster(t, c.E)
	seen := 0
	for slot := range 16384 {
		n := c.E.CountKeysInSlot(slot)
		s := strconv.Itoa(slot)
		if r := string(redisDo(t, rc, "CLUSTER", "COUNTKEYSINSLOT", s)); r != fmt.Sprintf(":%d\r\n", n) {
			t.Fatalf("slot %d: Redis %q, limitdb %d", slot, r, n)
		}
		if n == 0 {
			continue
		}
		seen += int(n)
		want := bulks(redisDo(t, rc, "CLUSTER", "GETKEYSINSLOT", s, "1000"))
		var got []string
		for _, k := range c.E.KeysInSlot(slot, 1000) {
			got = append(got, string(k))
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("slot %d: Redis lists %q, limitdb %q", slot, want, got)
		}
	}
	if seen != c.DB.Len() {
		t.Fatalf("%d keys over the slots, %d in db 0", seen, c.DB.Len())
	}
	back := newEngineCtx()
	back.E.EnableSlots()
	if err := back.E.LoadSnapshot(bytes.NewReader(file)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.E.OwnedSlots(), [][2]int{{0, 5460}, {16000, 16383}}) || back.E.StrictDigest() != c.E.StrictDigest() {
		t.Fatalf("owned slots after loading: %v", back.E.OwnedSlots())
	}
}

// loadInRedisCluster writes e's snapshot, starts a redis-server with
// cluster-enabled yes on it and checks that it holds the same data (DEBUG
// DIGEST); it returns the file and a connection to that server.
func loadInRedisCluster(t *testing.T, e *engine.Engine) ([]byte, *Conn) {
	t.Helper()
	var buf bytes.Buffer
	if err := e.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "limitdb.rdb"), buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	_, rc := mustRedisConn(t, "--dir", dir, "--dbfilename", "limitdb.rdb", "--cluster-enabled", "yes")
	want := e.DatasetDigest()
	if got := bulk(t, redisDo(t, rc, "DEBUG", "DIGEST")); got != want.Hex() {
		t.Fatalf("Redis digest %s, limitdb %s", got, want.Hex())
	}
	return buf.Bytes(), rc
}
