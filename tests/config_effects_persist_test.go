package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"limitdb/server"
)

// Effect tests of the RDB parameters (save, dbfilename, rdbcompression,
// rdbchecksum, stop-writes-on-bgsave-error). They write files, so each
// runs on a server of its own with a temporary dir: an in-process one
// when CONFIG SET can change the value, a process when it is a start-up
// setting.

// persistServer is an in-process limitdb whose dir is a fresh temporary
// directory, configured with opts; it returns the dir and a connection.
func persistServer(t *testing.T, opts ...string) (string, *Conn) {
	t.Helper()
	dir := t.TempDir()
	srv := mustLimitdbConfig(t, server.Config{Addr: "127.0.0.1:0", Dir: dir}, "", opts...)
	c := mustDial(t, srv.Addr().String())
	return dir, c
}

// infoInt reads one INFO persistence field as a number.
func infoInt(t *testing.T, c *Conn, field string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(infoSection(t, c, "persistence")[field], 10, 64)
	if err != nil {
		t.Fatalf("INFO %s: %v", field, err)
	}
	return n
}

// effectSave: the save rules start BGSAVEs from the cron. Under "" nothing
// is saved in 2.5 s after a write; CONFIG SET save "1 1" (one change, more
// than a second since the last save) saves within a few seconds: dump.rdb
// appears, rdb_saves counts it, rdb_changes_since_last_save restarts and
// LASTSAVE moves; back at "" the next write stays unsaved. Redis's
// validation (seconds ≥ 1) comes first.
func effectSave(t *testing.T, c *Conn, addr, name string) {
	r := mustDo(t, c, "CONFIG", "SET", name, "0 1")
	if !strings.Contains(string(r), "Invalid save parameters") {
		t.Fatalf("CONFIG SET save \"0 1\": %q", r)
	}
	dir, p := persistServer(t, "--save", "")
	expectDo(t, p, "+OK\r\n", "SET", "k", "1")
	time.Sleep(2500 * time.Millisecond)
	if n := infoInt(t, p, "rdb_saves"); n != 0 {
		t.Fatalf("save \"\": %d saves", n)
	}
	last := mustDoValue(t, p, "LASTSAVE").(int64)
	configSet(t, p, name, "1 1")
	if !eventually(6*time.Second, func() bool { return infoInt(t, p, "rdb_saves") >= 1 }) {
		t.Fatal("save 1 1: no BGSAVE within 6 s of a change")
	}
	waitBgsave(t, p, "ok")
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err != nil {
		t.Fatal(err)
	}
	if n := infoInt(t, p, "rdb_changes_since_last_save"); n != 0 {
		t.Fatalf("rdb_changes_since_last_save %d after the save", n)
	}
	if now := mustDoValue(t, p, "LASTSAVE").(int64); now <= last {
		t.Fatalf("LASTSAVE %d, was %d", now, last)
	}
	configSet(t, p, name, "")
	expectDo(t, p, "+OK\r\n", "SET", "k", "2")
	time.Sleep(2500 * time.Millisecond)
	if n := infoInt(t, p, "rdb_saves"); n != 1 {
		t.Fatalf("save \"\" again: %d saves", n)
	}
	if n := infoInt(t, p, "rdb_changes_since_last_save"); n != 1 {
		t.Fatalf("rdb_changes_since_last_save %d", n)
	}
}

// effectRdbcompression: a 1000-byte run of one letter is written as LZF
// (tens of bytes) under yes and verbatim under no, in the file SAVE
// writes and in DUMP's payload (Redis's rdb_compression covers both).
func effectRdbcompression(t *testing.T, c *Conn, addr, name string) {
	dir, p := persistServer(t)
	expectDo(t, p, "+OK\r\n", "SET", "run", strings.Repeat("a", 1000))
	size := func() (file, dump int) {
		expectDo(t, p, "+OK\r\n", "SAVE")
		st, err := os.Stat(filepath.Join(dir, "dump.rdb"))
		if err != nil {
			t.Fatal(err)
		}
		return int(st.Size()), len(mustDoValue(t, p, "DUMP", "run").(string))
	}
	if f, d := size(); f > 500 || d > 100 {
		t.Fatalf("rdbcompression yes: file %d bytes, DUMP %d", f, d)
	}
	configSet(t, p, name, "no")
	if f, d := size(); f < 1000 || d < 1000 {
		t.Fatalf("rdbcompression no: file %d bytes, DUMP %d", f, d)
	}
	configSet(t, p, name, "yes")
	if f, _ := size(); f > 500 {
		t.Fatalf("rdbcompression yes again: file %d bytes", f)
	}
}

// effectStopWritesOnBgsaveError: after a BGSAVE that cannot write its file
// (a read-only dir), yes refuses SET with Redis's MISCONF text and no
// serves it; a BGSAVE that succeeds lifts the refusal.
func effectStopWritesOnBgsaveError(t *testing.T, c *Conn, addr, name string) {
	dir, p := persistServer(t, "--save", "3600 1")
	undo := readOnlyDir(t, dir)
	expectDo(t, p, "+Background saving started\r\n", "BGSAVE")
	waitBgsave(t, p, "err")
	misconf := "-" + errMISCONFText + "\r\n"
	expectDo(t, p, misconf, "SET", "k", "v")
	configSet(t, p, name, "no")
	expectDo(t, p, "+OK\r\n", "SET", "k", "v")
	configSet(t, p, name, "yes")
	expectDo(t, p, misconf, "SET", "k", "v")
	undo()
	expectDo(t, p, "+Background saving started\r\n", "BGSAVE")
	waitBgsave(t, p, "ok")
	expectDo(t, p, "+OK\r\n", "SET", "k", "v")
}

// errMISCONFText is Redis 7.0's shared.bgsaveerr (without the dash).
const errMISCONFText = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."

// readOnlyDir makes dir refuse new files, as a read-only mount would:
// chmod when not root; as root (which chmod does not stop) the immutable
// attribute (chattr +i). It returns the undo, also run at cleanup.
func readOnlyDir(t *testing.T, dir string) func() {
	t.Helper()
	var undo func()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		undo = func() { os.Chmod(dir, 0o755) }
	} else {
		if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
			t.Skipf("cannot make a directory read-only as root: chattr +i: %v %s", err, out)
		}
		undo = func() { exec.Command("chattr", "-i", dir).Run() }
	}
	done := false
	once := func() {
		if !done {
			done = true
			undo()
		}
	}
	t.Cleanup(once)
	return once
}

// effectDbfilename: protected (CONFIG SET refuses it, as Redis by
// default); a server started with another name saves to that file and
// loads it at the next start, and a path is refused at start-up.
func effectDbfilename(t *testing.T, c *Conn, addr, name string) {
	refusedWith("x.rdb", "can't set protected config")(t, c, addr, name)
	dir := t.TempDir()
	p := mustProc(t, dir, "--appendonly", "no", "--dbfilename", "other.rdb")
	if err := p.cli.Set(context.Background(), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := p.cli.Save(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "other.rdb")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err == nil {
		t.Fatal("dump.rdb written")
	}
	p.kill()
	p.start()
	if v, _ := p.cli.Get(context.Background(), "k").Result(); v != "v" {
		t.Fatalf("after a restart GET k = %q", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, limitdbBinary(t), "--port", "0", "--dbfilename", "a/b.rdb").CombinedOutput()
	if cmdExit(err) != 1 || !strings.Contains(string(out), "dbfilename can't be a path, just a filename") {
		t.Fatalf("--dbfilename a/b.rdb: %v %s", err, out)
	}
}

// effectRdbchecksum: immutable (as in Redis 7.0). Under yes a saved file
// ends with its CRC64 and a file whose checksum is wrong stops the start;
// under no the trailer is zero and the same damaged file loads (Redis
// does not check the checksum then).
func effectRdbchecksum(t *testing.T, c *Conn, addr, name string) {
	refusedWith("no", immutable)(t, c, addr, name)
	for _, v := range []string{"yes", "no"} {
		dir := t.TempDir()
		p := mustProc(t, dir, "--appendonly", "no", "--rdbchecksum", v)
		ctx := context.Background()
		p.cli.Set(ctx, "k", "v", 0)
		if err := p.cli.Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		p.kill()
		path := filepath.Join(dir, "dump.rdb")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		trailer := b[len(b)-8:]
		zero := string(trailer) == string(make([]byte, 8))
		if zero != (v == "no") {
			t.Fatalf("rdbchecksum %s: trailer %x", v, trailer)
		}
		// damage the checksum (under no: make it non-zero and wrong)
		b[len(b)-1] ^= 0xff
		os.WriteFile(path, b, 0o644)
		ctx2, cancel := context.WithTimeout(ctx, 10*time.Second)
		port, _ := freePort()
		cmd := exec.CommandContext(ctx2, limitdbBinary(t), append(p.args, "--port", strconv.Itoa(port))...)
		if v == "yes" {
			out, err := cmd.CombinedOutput()
			if cmdExit(err) != 1 || !strings.Contains(string(out), "Wrong RDB checksum") {
				t.Fatalf("rdbchecksum yes, damaged checksum: %v %s", err, out)
			}
		} else {
			p.start()
			if got, _ := p.cli.Get(ctx, "k").Result(); got != "v" {
				t.Fatalf("rdbchecksum no, damaged checksum: GET k = %q\n%s", got, p.output())
			}
		}
		cancel()
	}
}
