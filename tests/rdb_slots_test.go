package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
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
	buf, rc := snapshotToRedisCluster(t, c.E)
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
	if err := back.E.LoadSnapshot(bytes.NewReader(buf)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.E.OwnedSlots(), [][2]int{{0, 5460}, {16000, 16383}}) || back.E.StrictDigest() != c.E.StrictDigest() {
		t.Fatalf("owned slots after loading: %v", back.E.OwnedSlots())
	}
}

// snapshotToRedisCluster writes e's snapshot, loads it in a redis-server
// with cluster-enabled yes, checks that Redis's digest of the data is
// limitdb's, and returns the file and a connection to that server.
func snapshotToRedisCluster(t *testing.T, e *engine.Engine) ([]byte, *Conn) {
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

// TestRDBDirectoryToRedis: a snapshot of the group that holds a cluster's
// directory (the aux field limitdb-directory beside limitdb-slots) and
// one of a member group (its record only) load in a redis-server with
// cluster-enabled yes, which skips the field, with every key; they load
// back into limitdb with the same directory and record.
func TestRDBDirectoryToRedis(t *testing.T) {
	founder := newEngineCtx()
	founder.E.EnableSlots()
	member := newEngineCtx()
	member.E.EnableSlots()
	for i := range 200 {
		engineRun(founder, "SET", fmt.Sprintf("k%d", i), "v")
		engineRun(member, "SET", fmt.Sprintf("m%d", i), strconv.Itoa(i))
	}
	for _, step := range []struct {
		c    *engine.Ctx
		args []string
		want string
	}{
		{founder, []string{"LIMITDB.SLOTS", "ADD", "0", "5460"}, "+OK\r\n"},
		{founder, []string{"LIMITDB.DIRECTORY", "FOUND", "127.0.0.1:17001,127.0.0.1:17002"}, "+OK\r\n"},
		{founder, []string{"LIMITDB.DIRECTORY", "ADDGROUP", "127.0.0.1:17003", "5461", "10922"}, ":1\r\n"},
		{founder, []string{"LIMITDB.DIRECTORY", "ADDGROUP", "127.0.0.1:17004", "10923", "16383"}, ":2\r\n"},
		{member, []string{"LIMITDB.SLOTS", "ADD", "5461", "10922"}, "+OK\r\n"},
		{member, []string{"LIMITDB.DIRECTORY", "JOINED", "1", "127.0.0.1:17001,127.0.0.1:17002"}, "+OK\r\n"},
	} {
		if r := string(engineRun(step.c, step.args...)); r != step.want {
			t.Fatalf("%q: %q, want %q", step.args, r, step.want)
		}
	}
	for _, c := range []*engine.Ctx{founder, member} {
		buf, rc := snapshotToRedisCluster(t, c.E)
		if !bytes.Contains(buf, []byte("limitdb-directory")) {
			t.Fatal("the snapshot has no limitdb-directory field")
		}
		if r := string(redisDo(t, rc, "DBSIZE")); r != ":200\r\n" {
			t.Fatalf("Redis DBSIZE %q", r)
		}
		back := newEngineCtx()
		if err := back.E.LoadSnapshot(bytes.NewReader(buf)); err != nil {
			t.Fatal(err)
		}
		if back.E.StrictDigest() != c.E.StrictDigest() || !reflect.DeepEqual(back.E.Shard(), c.E.Shard()) || !reflect.DeepEqual(back.E.DirGroups(), c.E.DirGroups()) {
			t.Fatalf("after loading: record %+v groups %v, want %+v %v", back.E.Shard(), back.E.DirGroups(), c.E.Shard(), c.E.DirGroups())
		}
	}
	if founder.E.DirOwner(10923) != 2 || len(founder.E.DirGroups()) != 3 || member.E.Shard().Index != 1 {
		t.Fatal("the directory's state")
	}
}
