package tests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Persistence commands against a real redis-server: the same commands on
// both, replies compared byte for byte. Each side writes into a temporary
// dir of its own.

// persistPair is a redis-server and an in-process limitdb, both with
// save rules (3600 1), and a connection to each.
type persistPair struct {
	r                *Redis
	rdir, ldir       string
	ref, cand        *Conn
	refAddr, candAdd string
}

func mustPersistPair(t *testing.T) *persistPair {
	t.Helper()
	r, ref := mustRedisConn(t, "--save", "3600 1")
	ldir, cand := persistServer(t, "--save", "3600 1")
	return &persistPair{r: r, rdir: r.dir, ldir: ldir, ref: ref, cand: cand}
}

// same sends args to both and fails unless the replies are equal.
func (p *persistPair) same(t *testing.T, args ...string) string {
	t.Helper()
	want, got := mustDo(t, p.ref, args...), mustDo(t, p.cand, args...)
	if string(got) != string(want) {
		t.Fatalf("%q: limitdb %q, redis %q", args, got, want)
	}
	return string(want)
}

// pipeline sends the commands at once to both and compares the replies.
func (p *persistPair) pipeline(t *testing.T, cmds ...[]string) {
	t.Helper()
	var b []byte
	for _, c := range cmds {
		b = append(b, Encode(c...)...)
	}
	var replies [2][]string
	for i, c := range []*Conn{p.ref, p.cand} {
		if err := c.Send(b); err != nil {
			t.Fatal(err)
		}
		for range cmds {
			r, err := c.ReadReply()
			if err != nil {
				t.Fatal(err)
			}
			replies[i] = append(replies[i], string(r))
		}
	}
	for i := range cmds {
		if replies[0][i] != replies[1][i] {
			t.Fatalf("%q: limitdb %q, redis %q", cmds[i], replies[1][i], replies[0][i])
		}
	}
}

// TestPersistCommandsDiff: SAVE, BGSAVE [SCHEDULE], SHUTDOWN's argument
// errors and ABORT, the no_multi refusals, COMMAND INFO.
func TestPersistCommandsDiff(t *testing.T) {
	p := mustPersistPair(t)
	p.same(t, "SET", "k", "v")
	p.same(t, "SAVE")
	p.same(t, "BGSAVE", "x")
	p.same(t, "BGSAVE", "SCHEDULE", "x")
	// the second BGSAVE and the SAVE find the first still running: one
	// batch on limitdb, one event-loop turn on Redis
	p.pipeline(t, []string{"BGSAVE"}, []string{"BGSAVE"}, []string{"SAVE"}, []string{"BGSAVE", "SCHEDULE"})
	waitBgsave(t, p.ref, "ok")
	waitBgsave(t, p.cand, "ok")
	p.same(t, "BGSAVE", "SCHEDULE")
	waitBgsave(t, p.ref, "ok")
	waitBgsave(t, p.cand, "ok")
	// inside MULTI a BGSAVE is scheduled; SAVE and SHUTDOWN are refused
	p.same(t, "MULTI")
	p.same(t, "BGSAVE")
	p.same(t, "SAVE")
	p.same(t, "SHUTDOWN", "NOSAVE")
	p.same(t, "EXEC")
	p.same(t, "MULTI")
	p.same(t, "BGSAVE")
	p.same(t, "EXEC")
	for _, args := range [][]string{
		{"SHUTDOWN", "foo"}, {"SHUTDOWN", "SAVE", "NOSAVE"}, {"SHUTDOWN", "ABORT", "NOW"},
		{"SHUTDOWN", "NOSAVE", "ABORT"}, {"SHUTDOWN", "ABORT"}, {"LASTSAVE", "x"}, {"SAVE", "x"},
		{"COMMAND", "INFO", "save", "bgsave", "shutdown"}, // LASTSAVE: limitdb has no tips (commands.md)
	} {
		p.same(t, args...)
	}
	// the scheduled BGSAVE starts from the cron after EXEC, on both
	if !eventually(5*time.Second, func() bool {
		return infoInt(t, p.cand, "rdb_saves") == 4 && infoInt(t, p.ref, "rdb_saves") == 4
	}) {
		t.Fatalf("rdb_saves: limitdb %d, redis %d, want 4", infoInt(t, p.cand, "rdb_saves"), infoInt(t, p.ref, "rdb_saves"))
	}
}

// TestMISCONFDiff: after a BGSAVE that cannot write (read-only dirs),
// both servers refuse the same commands with the same errors (writes,
// PING, a script's first write, MULTI blocks), SHUTDOWN fails without
// FORCE and leaves the server running, stop-writes-on-bgsave-error no and
// save "" lift the refusal, and a successful BGSAVE ends it.
func TestMISCONFDiff(t *testing.T) {
	p := mustPersistPair(t)
	p.same(t, "SET", "k", "v")
	p.same(t, "HSET", "h", "f", "1")
	undoR, undoL := readOnlyDir(t, p.rdir), readOnlyDir(t, p.ldir)
	p.same(t, "BGSAVE")
	waitBgsave(t, p.ref, "err")
	waitBgsave(t, p.cand, "err")
	for _, args := range [][]string{
		{"SET", "k", "v2"}, {"PING"}, {"GET", "k"}, {"HGET", "h", "f"}, {"DEL", "k"},
		{"EVAL", "return redis.call('set', KEYS[1], 'x')", "1", "k"},
		{"EVAL", "return redis.call('get', KEYS[1])", "1", "k"},
		{"EVAL", "return redis.pcall('incr', KEYS[1])", "1", "n"},
		{"MULTI"}, {"GET", "k"}, {"SET", "k", "v3"}, {"EXEC"},
		{"MULTI"}, {"GET", "k"}, {"EXEC"},
		{"SHUTDOWN"}, {"SHUTDOWN", "SAVE"}, {"GET", "k"},
		{"CONFIG", "SET", "stop-writes-on-bgsave-error", "no"}, {"SET", "k", "v4"}, {"PING"},
		{"CONFIG", "SET", "stop-writes-on-bgsave-error", "yes"}, {"SET", "k", "v5"},
		{"CONFIG", "SET", "save", ""}, {"SET", "k", "v6"},
		{"CONFIG", "SET", "save", "3600 1"}, {"SET", "k", "v7"},
	} {
		p.same(t, args...)
	}
	if s := infoSection(t, p.cand, "persistence"); s["rdb_last_bgsave_status"] != "err" {
		t.Fatalf("rdb_last_bgsave_status %q", s["rdb_last_bgsave_status"])
	}
	undoR()
	undoL()
	p.same(t, "BGSAVE")
	waitBgsave(t, p.ref, "ok")
	waitBgsave(t, p.cand, "ok")
	p.same(t, "SET", "k", "v8")
	p.same(t, "GET", "k")
}

// TestInfoPersistenceFields: INFO persistence lists Redis 7.0.15's fields
// in Redis's order (appendonly no on both), before and during a save.
func TestInfoPersistenceFields(t *testing.T) {
	p := mustPersistPair(t)
	names := func(c *Conn) string {
		s, _ := mustDoValue(t, c, "INFO", "persistence").(string)
		var n []string
		for _, l := range strings.Split(s, "\r\n") {
			if k, _, ok := strings.Cut(l, ":"); ok {
				n = append(n, k)
			}
		}
		return strings.Join(n, " ")
	}
	if r, l := names(p.ref), names(p.cand); r != l {
		t.Fatalf("INFO persistence fields:\nlimitdb %s\nredis   %s", l, r)
	}
	p.same(t, "SAVE")
	l := infoSection(t, p.cand, "persistence")
	if l["rdb_changes_since_last_save"] != "0" || l["rdb_saves"] != "1" || l["rdb_last_bgsave_time_sec"] != "-1" {
		t.Fatalf("after SAVE: %v", l)
	}
}

// TestShutdownBusyNosave: while a script runs past busy-reply-threshold,
// SHUTDOWN gets Redis's BUSY text and SHUTDOWN NOSAVE stops the server
// (status 0) without saving; what the script wrote does not persist (the
// Raft node stops proposing before the script is killed), what was
// acknowledged before does.
func TestShutdownBusyNosave(t *testing.T) {
	p := mustProc(t, "", "--busy-reply-threshold", "100")
	p.waitServing()
	ctx := context.Background()
	if err := p.cli.Set(ctx, "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	script := mustDial(t, p.addr())
	if err := script.Send(Encode("EVAL", "redis.call('set', 'during', '1') while true do end", "0")); err != nil {
		t.Fatal(err)
	}
	c := mustDial(t, p.addr())
	time.Sleep(300 * time.Millisecond)
	expectDo(t, c, "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n", "SHUTDOWN")
	expectDo(t, c, "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n", "SHUTDOWN", "SAVE")
	expectDo(t, c, "-ERR syntax error\r\n", "SHUTDOWN", "NOSAVE", "SAVE")
	if r, err := c.Do("SHUTDOWN", "NOSAVE"); err == nil {
		t.Fatalf("SHUTDOWN NOSAVE answered %q", r)
	}
	p.waitExit(0)
	p.start()
	p.waitServing()
	if v, _ := p.cli.Get(ctx, "before").Result(); v != "1" {
		t.Fatalf("GET before = %q\n%s", v, p.output())
	}
	if n, _ := p.cli.Exists(ctx, "during").Result(); n != 0 {
		t.Fatalf("the killed script's write persisted\n%s", p.output())
	}
}

// TestSignalSaveFails: SIGTERM with save rules and a dir the final save
// cannot be written to leaves the server running (Redis's "can't exit"),
// serving clients; once the dir is writable again SIGTERM saves and exits
// with status 0, and the restart finds the data. SHUTDOWN NOSAVE, and
// SHUTDOWN FORCE when the save fails, exit 0 without it.
func TestSignalSaveFails(t *testing.T) {
	dir := t.TempDir()
	p := mustProc(t, dir, "--appendonly", "no")
	ctx := context.Background()
	p.cli.Set(ctx, "k", "v", 0)
	undo := readOnlyDir(t, dir)
	p.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(time.Second)
	if v, err := p.cli.Get(ctx, "k").Result(); v != "v" {
		t.Fatalf("after a SIGTERM whose save failed: GET k = %q %v\n%s", v, err, p.output())
	}
	if !strings.Contains(p.output(), "Error trying to save the DB, can't exit.") {
		t.Fatalf("log:\n%s", p.output())
	}
	undo()
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.waitExit(0)
	p.start()
	if v, _ := p.cli.Get(ctx, "k").Result(); v != "v" {
		t.Fatalf("after the restart GET k = %q", v)
	}
	p.cli.Set(ctx, "k", "w", 0)
	readOnlyDir(t, dir)
	c := mustDial(t, p.addr())
	expectDo(t, c, "-ERR Errors trying to SHUTDOWN. Check logs.\r\n", "SHUTDOWN")
	if r, err := c.Do("SHUTDOWN", "FORCE"); err == nil {
		t.Fatalf("SHUTDOWN FORCE answered %q", r)
	}
	p.waitExit(0)
}

// TestSaveRaftSnapshot: with a Raft node, SAVE and BGSAVE also take a Raft
// snapshot (raft_snapshot_index moves to the applied index), besides
// writing dump.rdb.
func TestSaveRaftSnapshot(t *testing.T) {
	p := mustProc(t, "")
	p.waitServing()
	ctx := context.Background()
	for _, cmd := range []string{"BGSAVE", "SAVE"} {
		for i := 0; i < 20; i++ {
			p.cli.Incr(ctx, "n")
		}
		m, _ := p.raftInfo()
		before := m["raft_snapshot_index"]
		if err := p.cli.Do(ctx, cmd).Err(); err != nil {
			t.Fatal(err)
		}
		if !eventually(5*time.Second, func() bool {
			m, _ := p.raftInfo()
			return m["raft_snapshot_index"] != before && m["raft_snapshot_index"] == m["raft_applied_index"]
		}) {
			m, _ := p.raftInfo()
			t.Fatalf("%s: raft_snapshot_index %s (was %s), applied %s", cmd, m["raft_snapshot_index"], before, m["raft_applied_index"])
		}
	}
	// the file BGSAVE copies out of the Raft snapshot is the state: a
	// server without a node loads it to the same digest
	c := mustDial(t, p.addr())
	fillAllTypes(t, c)
	expectDo(t, c, "+Background saving started\r\n", "BGSAVE")
	waitBgsave(t, c, "ok")
	want := stateOf(t, c)
	b, err := os.ReadFile(filepath.Join(p.dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "dump.rdb"), b, 0o644)
	q := mustProc(t, dir, "--appendonly", "no")
	if got := stateOf(t, mustDial(t, q.addr())); got.digest != want.digest {
		t.Fatalf("dump.rdb of a Raft-mode BGSAVE loads to digest %s, want %s", got.digest, want.digest)
	}
}
