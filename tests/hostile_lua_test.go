package tests

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"time"
)

// TestHostileLua sends every case of testdata/hostile/lua.txt (format in
// testdata/hostile/README.md) to an in-process limitdb as EVAL <script> 0.
// "diff" cases are also sent to redis-server and the raw replies must be the
// same bytes; "error" cases are the ones where Redis itself would crash or
// grow without bound, and limitdb's reply must start with the given text.
// After each case PING must answer on another connection within 1 s, and
// within 10 s the process's resident memory must be back under the figure
// before the case plus 256 MB. The server runs in this process, so the test
// calls debug.FreeOSMemory while it waits: Go returns freed heap to the
// system only lazily, and what is measured is whether the server still
// holds the memory, not the runtime's scavenger pace.
func TestHostileLua(t *testing.T) {
	cases := readLuaCases(t, "testdata/hostile/lua.txt")
	addr := mustLimitdb(t).Addr().String()
	var rd *Redis
	for _, c := range cases {
		if c.mode == "diff" {
			rd = mustRedis(t)
			break
		}
	}
	runner := mustDial(t, addr)
	// the wait for a case's reply only tells a hang from an answer: the
	// 1e9-key table of line 76 (stopped by lua-memory-limit) took 4.6–6.7 s
	// with the machine loaded (two CPU burners beside the suite, load
	// average 6–12) and past the default 10 s once, and a case still
	// running after such a failure starved the next test's PINGs
	runner.ReplyTimeout = time.Minute
	var ref *Conn
	if rd != nil {
		ref = mustDial(t, rd.Addr)
		// Redis is the reference, not what is measured: its reply to the
		// 200 MB string.rep case took 4.5 s at load average 4 and passed the
		// default 10 s with the machine loaded (limitdb's: 1.2 s)
		ref.ReplyTimeout = time.Minute
	}
	for _, c := range cases {
		before := vmRSS(t)
		start := time.Now()
		got, err := runner.Do("EVAL", c.script, "0")
		t.Logf("line %d: %v, RSS before %d MB", c.line, time.Since(start).Round(time.Millisecond), before>>20)
		if err != nil {
			t.Fatalf("line %d: %v (limitdb died or hung?)", c.line, err)
		}
		switch c.mode {
		case "diff":
			want, err := ref.Do("EVAL", c.script, "0")
			if err != nil {
				t.Fatalf("line %d: redis: %v", c.line, err)
			}
			if string(got) != string(want) {
				t.Errorf("line %d: %s\nlimitdb: %.300q\nredis:   %.300q", c.line, c.script, got, want)
			}
		case "error":
			if !strings.HasPrefix(string(got), c.want) {
				t.Errorf("line %d: %s\ngot:  %.300q\nwant: %q…", c.line, c.script, got, c.want)
			}
		}
		checkPing(t, addr)
		memoryBack(t, before)
	}
}

type luaCase struct {
	line   int
	mode   string // diff | error
	want   string // error: the reply's expected prefix
	script string
}

func readLuaCases(t *testing.T, path string) []luaCase {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []luaCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if l == "" || l[0] == '#' {
			continue
		}
		f := strings.Split(l, "\t")
		switch {
		case f[0] == "diff" && len(f) == 2:
			out = append(out, luaCase{line: n, mode: "diff", script: f[1]})
		case f[0] == "error" && len(f) == 3:
			out = append(out, luaCase{line: n, mode: "error", want: strings.ReplaceAll(f[1], `\r\n`, "\r\n"), script: f[2]})
		default:
			t.Fatalf("%s:%d: bad case line %q", path, n, l)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	return out
}
