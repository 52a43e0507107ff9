package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Restart tests on real processes: what clients wrote — keys of every
// type and encoding, their deadlines (absolute: PEXPIRETIME before and
// after), limiters part way through their window (the next decisions
// continue from where they were), the script cache (EVALSHA) — survives a
// SIGTERM, a SHUTDOWN, and a BGSAVE followed by SIGKILL, with appendonly
// no (the RDB file carries it) and with the default appendonly yes (the
// Raft log carries it, so a SIGKILL without any save loses nothing
// acknowledged either: appendfsync everysec leaves the log in the page
// cache, which a process crash does not lose).

// restartWays are the ways a process ends before its restart.
var restartWays = map[string]func(t *testing.T, p *proc){
	"sigterm":     stopSignal(syscall.SIGTERM),
	"sigint":      stopSignal(syscall.SIGINT),
	"shutdown":    stopShutdown,
	"bgsave-kill": stopBgsaveKill,
	"kill":        func(t *testing.T, p *proc) { p.kill() },
}

func TestRestart(t *testing.T) {
	modes := []struct {
		name string
		args []string
		ways []string
	}{
		{"appendonly-no", []string{"--appendonly", "no"}, []string{"sigterm", "sigint", "shutdown", "bgsave-kill"}},
		{"appendonly-yes", nil, []string{"sigterm", "sigint", "shutdown", "bgsave-kill", "kill"}},
	}
	for _, m := range modes {
		for _, way := range m.ways {
			t.Run(m.name+"/"+way, func(t *testing.T) {
				p := mustProc(t, "", m.args...)
				raft := m.args == nil
				if raft {
					p.waitServing()
				}
				c := mustDial(t, p.addr())
				sha := fillAllTypes(t, c)
				before := stateOf(t, c)
				c.Close()
				restartWays[way](t, p)
				p.start()
				if raft {
					p.waitServing()
				}
				c = mustDial(t, p.addr())
				after := stateOf(t, c)
				if before.digest != after.digest {
					t.Errorf("digest %s before, %s after", before.digest, after.digest)
				}
				if len(before.deadlines) != len(after.deadlines) {
					t.Errorf("%d keys before, %d after", len(before.deadlines), len(after.deadlines))
				}
				for k, v := range before.deadlines {
					if after.deadlines[k] != v {
						t.Errorf("PEXPIRETIME %s: %s before, %s after", k, v, after.deadlines[k])
					}
				}
				checkContinues(t, c, sha)
			})
		}
	}
}

// limiterAlgos get 3 of their 5 units consumed before the restart; the
// period is a week, so nothing drains meanwhile.
var limiterAlgos = []string{"gcra", "token-bucket", "leaky-bucket", "fixed-window", "sliding-window", "sliding-log"}

const limiterPeriod = "604800000"

// restartScript increments its key; it is loaded (SCRIPT LOAD) before the
// restart and called by its SHA1 after it.
const restartScript = "return redis.call('incrby', KEYS[1], ARGV[1])"

// fillAllTypes writes keys of every type and encoding, in two databases,
// with and without deadlines, limiters of every algorithm part used, and
// loads a script; it returns the script's SHA1.
func fillAllTypes(t *testing.T, c *Conn) string {
	t.Helper()
	do := func(args ...string) {
		t.Helper()
		if r := mustDo(t, c, args...); len(r) > 0 && r[0] == '-' {
			t.Fatalf("%q: %q", args, r)
		}
	}
	do("SET", "str", "hello")
	do("SET", "int", "12345")
	do("SET", "long", strings.Repeat("abcdefgh", 40)) // LZF-compressed in the file
	do("SET", "str:ttl", "v", "PX", "3600000")
	do("SETEX", "str:ex", "7200", "v")
	do("INCRBYFLOAT", "float", "1.5")
	do("APPEND", "appended", "xy")
	do("RPUSH", "list", "a", "b", "1", "2", strings.Repeat("z", 100))
	do("HSET", "hash:small", "f1", "v1", "f2", "2")
	do("SADD", "set:int", "1", "2", "3", "-7")
	do("SADD", "set:str", "a", "b", "c")
	do("ZADD", "zset:small", "1", "a", "2.5", "b", "-3", "c")
	big := []string{"HSET", "hash:big"}
	zbig := []string{"ZADD", "zset:big"}
	sbig := []string{"SADD", "set:big"}
	for i := 0; i < 600; i++ {
		big = append(big, "f"+strconv.Itoa(i), strconv.Itoa(i*i))
		sbig = append(sbig, "m"+strconv.Itoa(i))
		if i < 200 {
			zbig = append(zbig, strconv.Itoa(i), "m"+strconv.Itoa(i))
		}
	}
	do(big...)
	do(sbig...)
	do(zbig...)
	do("PEXPIRE", "list", "5400000")
	do("PEXPIRE", "hash:big", "9000000")
	do("EXPIREAT", "zset:small", strconv.FormatInt(time.Now().Unix()+86400, 10))
	do("SELECT", "3")
	do("SET", "db3:key", "x", "EX", "1000")
	do("LPUSH", "db3:list", "q")
	do("SELECT", "0")
	for _, a := range limiterAlgos {
		for i := 0; i < 3; i++ {
			do("RL.ALLOW", "rl:"+a, "5", limiterPeriod, "ALGO", a)
		}
	}
	do("CL.THROTTLE", "cell", "4", "10", "3600")
	sha, ok := mustDoValue(t, c, "SCRIPT", "LOAD", restartScript).(string)
	if !ok {
		t.Fatal("SCRIPT LOAD")
	}
	return sha
}

// persistedState is what must be equal before and after a restart.
type persistedState struct {
	digest    string
	deadlines map[string]string // "db/key" → PEXPIRETIME and OBJECT ENCODING
}

// stateOf reads DEBUG DIGEST (Redis's: every value, whether a key has a
// deadline) and every key's PEXPIRETIME (the absolute deadline) and
// encoding in databases 0 and 3. DEBUG DIGEST-STRICT is not compared
// across a restart: it mixes in the engine's time floor (ClockMs), which
// every unit raises, the cron's expiry steps included, so it changes
// from one second to the next on an idle server.
func stateOf(t *testing.T, c *Conn) persistedState {
	t.Helper()
	st := persistedState{deadlines: map[string]string{}}
	st.digest = string(mustDo(t, c, "DEBUG", "DIGEST"))
	for _, db := range []string{"0", "3"} {
		mustDo(t, c, "SELECT", db)
		for _, k := range mustDoValue(t, c, "KEYS", "*").([]any) {
			st.deadlines[db+"/"+k.(string)] = fmt.Sprint(mustDoValue(t, c, "PEXPIRETIME", k.(string)), " ",
				mustDoValue(t, c, "OBJECT", "ENCODING", k.(string)))
		}
	}
	mustDo(t, c, "SELECT", "0")
	if len(st.deadlines) < 20 {
		t.Fatalf("only %d keys", len(st.deadlines))
	}
	return st
}

// checkContinues: each limiter allows exactly its 2 remaining units and
// refuses the next; the cell limiter continues likewise; EVALSHA of the
// script loaded before the restart runs.
func checkContinues(t *testing.T, c *Conn, sha string) {
	t.Helper()
	for _, a := range limiterAlgos {
		for i, want := range []int64{1, 1, 0} {
			r := mustDoValue(t, c, "RL.ALLOW", "rl:"+a, "5", limiterPeriod, "ALGO", a).([]any)
			if r[1] != want {
				t.Errorf("%s: request %d after the restart: allowed %v, want %d (%v)", a, i+1, r[1], want, r)
			}
		}
	}
	// CL.THROTTLE cell 4 10 3600: capacity 5, 1 used; 4 more pass
	for i, want := range []int64{0, 0, 0, 0, 1} {
		if r := mustDoValue(t, c, "CL.THROTTLE", "cell", "4", "10", "3600").([]any); r[0] != want {
			t.Errorf("CL.THROTTLE request %d after the restart: %v, want limited=%d", i+1, r, want)
		}
	}
	if r := mustDo(t, c, "EVALSHA", sha, "1", "counter", "7"); string(r) != ":7\r\n" {
		t.Errorf("EVALSHA of the script loaded before the restart: %q", r)
	}
}

// stopSignal sends sig and expects a clean exit (status 0) that saved.
func stopSignal(sig syscall.Signal) func(t *testing.T, p *proc) {
	return func(t *testing.T, p *proc) {
		t.Helper()
		p.cmd.Process.Signal(sig)
		p.waitExit(0)
	}
}

// stopShutdown sends SHUTDOWN: no reply, the connection closes, exit 0.
func stopShutdown(t *testing.T, p *proc) {
	t.Helper()
	c := mustDial(t, p.addr())
	if r, err := c.Do("SHUTDOWN"); err == nil {
		t.Fatalf("SHUTDOWN answered %q", r)
	}
	p.waitExit(0)
}

// stopBgsaveKill runs BGSAVE, waits until it has succeeded, then kills
// the process with SIGKILL.
func stopBgsaveKill(t *testing.T, p *proc) {
	t.Helper()
	c := mustDial(t, p.addr())
	expectDo(t, c, "+Background saving started\r\n", "BGSAVE")
	waitBgsave(t, c, "ok")
	p.kill()
}

// waitBgsave waits until no BGSAVE runs and checks the last one's status.
func waitBgsave(t *testing.T, c *Conn, status string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		info := infoSection(t, c, "persistence")
		if info["rdb_bgsave_in_progress"] == "0" {
			if info["rdb_last_bgsave_status"] != status {
				t.Fatalf("rdb_last_bgsave_status %s, want %s", info["rdb_last_bgsave_status"], status)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("BGSAVE still in progress after 10 s")
}

// infoSection reads one INFO section as a map.
func infoSection(t *testing.T, c *Conn, section string) map[string]string {
	t.Helper()
	s, _ := mustDoValue(t, c, "INFO", section).(string)
	m := map[string]string{}
	for _, l := range strings.Split(s, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// waitExit waits (10 s at most) for the process to exit with status want.
func (p *proc) waitExit(want int) {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.t.Fatalf("the process did not exit\n%s", p.output())
	}
	if got := p.cmd.ProcessState.ExitCode(); got != want {
		p.t.Fatalf("exit status %d, want %d\n%s", got, want, p.output())
	}
	if p.cli != nil {
		p.cli.Close()
	}
	p.cmd, p.cli = nil, nil
}

// TestRestartLoadErrors: a dump.rdb that does not load stops the start
// (status 1, the reason logged); with appendonly yes a store that holds
// data wins over the file, which is imported only into an empty store.
func TestRestartLoadErrors(t *testing.T) {
	bin := limitdbBinary(t)
	dir := t.TempDir()
	// the checksum of an RDB whose end is missing cannot be checked

	if err := os.WriteFile(dir+"/dump.rdb", []byte("REDIS0010garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	port, _ := freePort()
	for _, extra := range [][]string{{"--appendonly", "no"}, nil} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		out, err := exec.CommandContext(ctx, bin, append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir}, extra...)...).CombinedOutput()
		cancel()
		if code := cmdExit(err); code != 1 || !strings.Contains(string(out), "Fatal error loading the DB") {
			t.Errorf("%v with a corrupt dump.rdb: exit %d (%v)\n%s", extra, code, err, out)
		}
	}
}

// TestRestartImport: with appendonly yes, a dump.rdb (written by
// appendonly no here) becomes the state of a new Raft store; once the
// store holds data it wins over the file.
func TestRestartImport(t *testing.T) {
	dir := t.TempDir()
	p := mustProc(t, dir, "--appendonly", "no")
	c := mustDial(t, p.addr())
	sha := fillAllTypes(t, c)
	before := stateOf(t, c)
	stopShutdown(t, p)

	q := mustProc(t, dir) // appendonly yes, empty Raft store: imports
	q.waitServing()
	c = mustDial(t, q.addr())
	if got := stateOf(t, c); got.digest != before.digest {
		t.Fatalf("imported digest %s, want %s\n%s", got.digest, before.digest, q.output())
	}
	expectDo(t, c, "+OK\r\n", "SET", "after-import", "1")
	// the file is now older than the store; the store must win
	q.kill()
	q.start()
	q.waitServing()
	c = mustDial(t, q.addr())
	if r := mustDo(t, c, "GET", "after-import"); string(r) != "$1\r\n1\r\n" {
		t.Fatalf("after a restart on the store: GET after-import %q\n%s", r, q.output())
	}
	checkContinues(t, c, sha)
}
