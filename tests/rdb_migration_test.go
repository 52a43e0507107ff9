package tests

import (
	"bytes"
	"strconv"
	"testing"
)

// TestRDBMigrationsToRedis: a snapshot taken in the middle of slot
// handovers (limitdb-migration aux fields: one migrating and one frozen
// handover out, one import with a loaded key) loads in a redis-server
// with cluster-enabled yes, which skips the fields and holds the same
// data, and loads back into limitdb with the same handovers.
func TestRDBMigrationsToRedis(t *testing.T) {
	c := newEngineCtx()
	c.E.EnableSlots()
	for i := range 50 {
		engineRun(c, "SET", "{a}"+strconv.Itoa(i), "v")
		engineRun(c, "SET", "{b}"+strconv.Itoa(i), "w")
	}
	slot := func(k string) string { return strconv.Itoa(testKeySlot(k)) }
	sa, sb, sc := slot("{a}"), slot("{b}"), slot("{c}")
	for _, args := range [][]string{
		{"LIMITDB.SLOTS", "ADD", sa, sa, sb, sb},
		{"LIMITDB.SLOTS", "MIGRATE", "m1", "1", sa, sa},
		{"LIMITDB.SLOTS", "MIGRATE", "m2", "2", sb, sb},
		{"LIMITDB.SLOTS", "FREEZE", "m2", "1700000000000"},
		{"LIMITDB.SLOTS", "IMPORT", "m3", "1", sc, sc},
	} {
		if r := string(engineRun(c, args...)); r != "+OK\r\n" {
			t.Fatalf("%q: %q", args, r)
		}
	}
	src := newEngineCtx()
	src.E.EnableSlots()
	engineRun(src, "SET", "{c}x", "imported", "PX", "100000000")
	for _, ch := range src.E.CaptureSlots([][2]int{{testKeySlot("{c}"), testKeySlot("{c}")}}, 1<<20) {
		if r := string(engineRun(c, "LIMITDB.SLOTS", "LOAD", "m3", string(ch))); r != ":1\r\n" {
			t.Fatalf("LOAD: %q", r)
		}
	}
	file, _ := snapshotToRedisCluster(t, c.E)
	if !bytes.Contains(file, []byte("limitdb-migration")) {
		t.Fatal("no limitdb-migration field")
	}
	back := newEngineCtx()
	back.E.EnableSlots()
	if err := back.E.LoadSnapshot(bytes.NewReader(file)); err != nil {
		t.Fatal(err)
	}
	if len(back.E.Migrations()) != 3 || back.E.StrictDigest() != c.E.StrictDigest() {
		t.Fatalf("handovers after loading: %+v", back.E.Migrations())
	}
}
