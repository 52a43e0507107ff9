package tests

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestClusterBusyFollowers: while a script runs on the leader past
// busy-reply-threshold, a follower's clients get what a Redis client gets
// from a busy Redis. The leader refuses their forwarded units before
// running them, so the refusal comes at once (it waited for the script,
// past the follower's 10 s forwarding timeout, and the client got
// UNCERTAIN): BUSY for a write, a script, a blocking command and WATCH,
// EXECABORT … BUSY for a MULTI block; SCRIPT KILL / FUNCTION KILL sent to
// a follower reach the leader's script (each kills its own kind, BUSY for
// the other, UNKILLABLE once it wrote); reads on followers are served
// (linearizable and READONLY). Afterwards the refused writes are found on
// no node (they were not run once the script ended) and writes through
// the follower work again. Three cases: an EVAL script and a function,
// both killed from a follower, and a script that wrote, which runs to its
// end (calibrated to about 1 s: the checks take 10-150 ms).
func TestClusterBusyFollowers(t *testing.T) {
	c := mustCluster(t, 3, "--busy-reply-threshold", "100")
	ctx := context.Background()
	l := c.waitLeader(10 * time.Second)
	var fs []int
	for i := range c.nodes {
		if i != l {
			fs = append(fs, i)
		}
	}
	lib := "#!lua name=busy\nredis.register_function{function_name='spin', callback=function() while true do end end, flags={'no-writes'}}"
	if err := c.cli(l).FunctionLoad(ctx, lib).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.cli(l).Set(ctx, "busy:seen", "before", 0).Err(); err != nil {
		t.Fatal(err)
	}
	dial := func(i int) *Conn { return mustDial(t, c.addr(i)) }
	runner, poller := dial(l), dial(l)
	f, g, ro := dial(fs[0]), dial(fs[1]), dial(fs[1])
	if r, _ := ro.Do("READONLY"); string(r) != "+OK\r\n" {
		t.Fatalf("READONLY: %q", r)
	}
	const (
		busyEval = "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
		busyFunc = "-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n"
		// Redis checks UNKILLABLE before the kind of KILL
		unkillable = "-UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.\r\n"
	)
	// fatalf fails the test, unless leadership moved meanwhile: starved
	// of CPU, a leader can lose its lease while a script holds it
	// (cluster/DESIGN.md, "Long holds of the engine lock"; what
	// TestClusterBusyLeader checks), and then what is checked here does
	// not apply (a loaded run: the script ran on the next leader, the old
	// one answered PONG). It skips then, saying why.
	term := c.info(fs[0])["raft_term"]
	fatalf := func(format string, args ...any) {
		t.Helper()
		for _, i := range fs {
			if m := c.info(i); m != nil && m["raft_term"] != term {
				t.Skipf("leadership moved (term %s, now %s on %s): the leader lost its lease, starved of CPU; what failed: %s",
					term, m["raft_term"], c.nodes[i].id, fmt.Sprintf(format, args...))
			}
		}
		t.Fatalf(format, args...)
	}
	wrote := strconv.FormatInt(luaIterations(fatalf, runner, time.Second), 10)
	for _, tc := range []struct {
		name   string
		script []string
		busy   string   // what the followers' units get
		other  []string // the other kind's KILL: BUSY (UNKILLABLE once it wrote)
		otherR string
		kill   []string // from a follower
		killed string   // its reply
		reply  string   // the script's reply, a prefix
	}{
		{"eval", []string{"EVAL", "while true do end", "0"}, busyEval,
			[]string{"FUNCTION", "KILL"}, busyEval, []string{"SCRIPT", "KILL"}, "+OK\r\n", "-ERR Script killed by user with SCRIPT KILL"},
		{"function", []string{"FCALL", "spin", "0"}, busyFunc,
			[]string{"SCRIPT", "KILL"}, busyFunc, []string{"FUNCTION", "KILL"}, "+OK\r\n", "-ERR Script killed by user with SCRIPT KILL"}, // Redis 7.0's text for both
		{"wrote", []string{"EVAL", "redis.call('set', KEYS[1], ARGV[1]) local n, m = 0, tonumber(ARGV[1]) while n < m do n=n+1 end return n", "1", "busy:wrote", wrote}, busyEval,
			[]string{"FUNCTION", "KILL"}, unkillable, []string{"SCRIPT", "KILL"}, unkillable, ":" + wrote},
	} {
		// a WATCH taken before: the EXEC refused below drops it, as
		// EXECABORT does on Redis
		if r, _ := f.Do("WATCH", "busy:watched"); string(r) != "+OK\r\n" {
			fatalf("%s: WATCH on a follower: %q", tc.name, r)
		}
		if err := runner.Send(Encode(tc.script...)); err != nil {
			fatalf("%v", err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			r, err := poller.Do("PING")
			if err != nil {
				fatalf("%s: PING the leader: %v", tc.name, err)
			}
			if string(r) == tc.busy {
				break
			}
			if time.Now().After(deadline) {
				fatalf("%s: the leader answers %q, not BUSY, 10 s after the script", tc.name, r)
			}
		}
		key := "busy:refused:" + tc.name
		start := time.Now()
		for _, u := range []struct {
			c    *Conn
			argv []string
			want string
		}{
			{f, []string{"SET", key, "x"}, tc.busy},
			{g, []string{"INCR", key}, tc.busy},
			{f, []string{"EVAL", "return redis.call('set', KEYS[1], 'x')", "1", key}, tc.busy},
			{g, []string{"BLPOP", key, "1"}, tc.busy},
			{f, []string{"WATCH", key}, tc.busy},
			{f, []string{"MULTI"}, "+OK\r\n"},
			{f, []string{"SET", key, "x"}, "+QUEUED\r\n"},
			{f, []string{"EXEC"}, "-EXECABORT Transaction discarded because of: " + tc.busy[1:]},
			{g, []string{"GET", "busy:seen"}, "$6\r\nbefore\r\n"},
			{ro, []string{"GET", "busy:seen"}, "$6\r\nbefore\r\n"},
			{g, tc.other, tc.otherR},
		} {
			t0 := time.Now()
			r, err := u.c.Do(u.argv...)
			if err != nil || string(r) != u.want {
				fatalf("%s: %q on a follower: %q %v, want %q\nleader:\n%s\nfollowers:\n%s\n%s", tc.name, u.argv, r, err, u.want, c.log(l), c.log(fs[0]), c.log(fs[1]))
			}
			// at once: not after the script, nor after a forwarding timeout
			if d := time.Since(t0); d > 2*time.Second {
				fatalf("%s: %q on a follower answered after %v\nleader:\n%s\nfollowers:\n%s\n%s", tc.name, u.argv, d, c.log(l), c.log(fs[0]), c.log(fs[1]))
			}
		}
		t.Logf("%s: 11 commands on followers answered in %v", tc.name, time.Since(start).Round(time.Millisecond))
		if r, err := g.Do(tc.kill...); err != nil || !strings.HasPrefix(string(r), tc.killed) {
			fatalf("%s: %q on a follower: %q %v, want %q", tc.name, tc.kill, r, err, tc.killed)
		}
		runner.ReplyTimeout = 30 * time.Second
		if r, err := runner.ReadReply(); err != nil || !strings.HasPrefix(string(r), tc.reply) {
			fatalf("%s: the script's reply %q %v, want %q\nleader:\n%s\nfollowers:\n%s\n%s", tc.name, r, err, tc.reply, c.log(l), c.log(fs[0]), c.log(fs[1]))
		}
		// the follower's writes work again (a MULTI block no longer
		// watches the key changed meanwhile), and the refused ones ran
		// nowhere
		if err := c.cli(l).Incr(ctx, "busy:watched").Err(); err != nil {
			fatalf("%v", err)
		}
		for _, u := range [][]string{{"MULTI"}, {"SET", "busy:after:" + tc.name, "1"}, {"EXEC"}} {
			f.Send(Encode(u...))
		}
		for _, want := range []string{"+OK\r\n", "+QUEUED\r\n", "*1\r\n+OK\r\n"} {
			if r, err := f.ReadReply(); string(r) != want {
				fatalf("%s: MULTI, SET, EXEC on a follower after the script: %q %v, want %q", tc.name, r, err, want)
			}
		}
		for i := range c.nodes {
			if n, err := c.cli(i).Exists(ctx, key).Result(); err != nil || n != 0 {
				fatalf("%s: EXISTS %s on %s: %d %v: a refused unit ran", tc.name, key, c.nodes[i].id, n, err)
			}
		}
	}
	for i := range c.nodes {
		if v, err := c.cli(i).Get(ctx, "busy:wrote").Result(); err != nil || v != wrote {
			fatalf("GET busy:wrote on %s: %q %v, want %q", c.nodes[i].id, v, err, wrote)
		}
	}
}
