package tests

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"limitdb/server"
)

// TestConfigFileErrorsMatchRedis: for bad config files and command-line
// options, limitdb's fatal report is byte for byte what redis-server
// 7.0.15 prints on stderr before exiting with status 1.
func TestConfigFileErrorsMatchRedis(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed")
	}
	dir := t.TempDir()
	cases := []struct {
		file string
		opts []string
	}{
		{"# comment\nport 0\nfoo bar\n", nil},
		{"port 0\n", []string{"--hz", "abc"}},
		{"port 0\n", []string{"--port", `"ab`}},
		{"port 0\nmaxmemory 1xb\n", nil},
		{"port 0\nmaxmemory-policy lru\n", nil},
		{"port 0\nport 1 2\n", nil},
		{"port 0\nrequirepass \"abc\n", nil},
		{"port 0\nrequirepass \"abc\"def\n", nil},
		{"port 0\nsave 0 1\n", nil},
		{"port 0\nsave 900\n", nil},
		{"port 0\nprotected-mode maybe\n", nil},
		{"port 0\ntimeout -1\n", nil},
		{"port 0\n", []string{"--tls-auth-clients", "sometimes"}},
		{"port 0\nunixsocketperm 999\n", nil},
		{"port 0\nunixsocketperm 1000\n", nil},
		{"port 0\ninclude\n", nil},
		{"port 0\nuser\n", nil},
		{"port 0\n", []string{"--notify-keyspace-events", "Q"}},
		{"port 0\ninclude " + filepath.Join(dir, "inc.conf") + "\n", nil},
		{"port 0\ninclude " + filepath.Join(dir, "missing.conf") + "\n", nil},
	}
	if err := os.WriteFile(filepath.Join(dir, "inc.conf"), []byte("\n\nhz x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		p := filepath.Join(dir, fmt.Sprintf("c%d.conf", i))
		if err := os.WriteFile(p, []byte(c.file), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, append([]string{p}, c.opts...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Stdout = &stderr // the can't-open error is logged on stdout
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 {
			t.Fatalf("case %d: redis-server did not fail: %v", i, err)
		}
		want := stderr.String()
		if j := strings.Index(want, "Fatal error, can't open"); j >= 0 {
			want = want[j:] // Redis logs this one with its log prefix
		}
		srv := server.New(server.Config{}, nil)
		got := srv.LoadConfig(p, server.ArgsToOptions(c.opts))
		if got == nil || got.Error() != want {
			t.Errorf("case %d (%q %q):\nlimitdb %q\nredis   %q", i, c.file, c.opts, got, want)
		}
	}
}

// TestConfigRewriteMatchesRedis: the same file, the same CONFIG SETs and
// CONFIG REWRITE on redis-server and limitdb give the same file: comments
// and blank lines kept, values replaced in their lines (an alias line under
// the canonical name), duplicates blanked, requirepass "" removed, a
// deprecated directive commented out ("# ??? "), new values appended after
// the signature. Redis appends in its hash table's
// order, so the appended lines are compared as a set, without the lines
// for what limitdb does not have (latency-tracking-info-percentiles, and
// user lines until ACLs are wired).
func TestConfigRewriteMatchesRedis(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.Mkdir(data, 0o755)
	body := strings.Join([]string{
		"# top comment",
		"bind 127.0.0.1",
		"",
		"",
		"# memory",
		"maxmemory 100mb",
		"maxmemory 200mb",
		`save ""`,
		"appendonly no",
		"dir " + data,
		"timeout 0",
		"lua-time-limit 100",
		`requirepass "old pass"`,
		"hz 10",
		"list-max-ziplist-entries 5",
		"   # indented comment",
		"# end",
		"",
	}, "\n")
	sets := [][]string{
		{"CONFIG", "SET", "maxmemory", "1gb", "timeout", "30", "maxmemory-policy", "allkeys-lru",
			"hz", "12", "busy-reply-threshold", "5000", "tcp-keepalive", "300", "save", "",
			"protected-mode", "no", "maxmemory-samples", "7"},
		{"CONFIG", "SET", "requirepass", ""},
	}
	rewrite := func(addr, path string) string {
		c := mustDial(t, addr)
		defer c.Close()
		c.Do("AUTH", "old pass")
		for _, s := range sets {
			if r := mustDo(t, c, s...); string(r) != "+OK\r\n" {
				t.Fatalf("%q: %q", s, r)
			}
		}
		if r := mustDo(t, c, "CONFIG", "REWRITE"); string(r) != "+OK\r\n" {
			t.Fatalf("CONFIG REWRITE: %q", r)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	rp := filepath.Join(dir, "redis.conf")
	lp := filepath.Join(dir, "limitdb.conf")
	os.WriteFile(rp, []byte(body), 0o644)
	os.WriteFile(lp, []byte(body), 0o644)
	rAddr := mustRedisBare(t, rp)
	_, rPort, _ := net.SplitHostPort(rAddr)
	lPort, _ := freePort()
	mustLimitdbConfig(t, server.Config{}, lp, "--port", strconv.Itoa(lPort))
	lc, _ := Dial(fmt.Sprintf("127.0.0.1:%d", lPort))
	mustDo(t, lc, "AUTH", "old pass") // the file's requirepass
	if info := mustDo(t, lc, "INFO", "server"); !bytes.Contains(info, []byte("config_file:"+lp+"\r\n")) {
		t.Fatalf("INFO config_file: %q", info)
	}
	lc.Close()
	want := normRewrite(rewrite(rAddr, rp), rPort)
	got := normRewrite(rewrite(fmt.Sprintf("127.0.0.1:%d", lPort), lp), strconv.Itoa(lPort))
	if got != want {
		t.Fatalf("rewritten files differ\nlimitdb:\n%s\nredis:\n%s", got, want)
	}
	// with nothing changed, rewriting is stable (the second rewrite adds
	// one trailing blank line, as Redis's does; the third nothing)
	c := mustDial(t, fmt.Sprintf("127.0.0.1:%d", lPort))
	mustDo(t, c, "CONFIG", "REWRITE")
	before, _ := os.ReadFile(lp)
	mustDo(t, c, "CONFIG", "REWRITE")
	after, _ := os.ReadFile(lp)
	if !bytes.Equal(before, after) {
		t.Fatalf("second rewrite changed the file:\n%s\n---\n%s", before, after)
	}
}

// normRewrite puts the port in a neutral form, drops the lines for
// settings limitdb does not have, and sorts the appended lines.
func normRewrite(s, port string) string {
	s = strings.ReplaceAll(s, "port "+port+"\n", "port PORT\n")
	head, tail, found := strings.Cut(s, "# Generated by CONFIG REWRITE\n")
	var keep []string
	for _, l := range strings.Split(tail, "\n") {
		if l == "" || strings.HasPrefix(l, "latency-tracking-info-percentiles ") || strings.HasPrefix(l, "user ") {
			continue
		}
		keep = append(keep, l)
	}
	sort.Strings(keep)
	if !found {
		return head
	}
	return head + "# Generated by CONFIG REWRITE\n" + strings.Join(keep, "\n")
}

// TestConfigRewriteNoFile: without a config file CONFIG REWRITE is
// refused as by Redis.
func TestConfigRewriteNoFile(t *testing.T) {
	r, l := mustBoth(t)
	rc, lc := mustDial(t, r.Addr), mustDial(t, l.Addr().String())
	want, got := mustDo(t, rc, "CONFIG", "REWRITE"), mustDo(t, lc, "CONFIG", "REWRITE")
	if !bytes.Equal(want, got) {
		t.Fatalf("limitdb %q, redis %q", got, want)
	}
}

// TestConfigRewriteErrorMatchesRedis: when the file's directory is gone
// CONFIG REWRITE fails with the same error on both servers.
func TestConfigRewriteErrorMatchesRedis(t *testing.T) {
	base := t.TempDir()
	conf := func(name string) string {
		d := filepath.Join(base, name)
		os.Mkdir(d, 0o755)
		p := filepath.Join(d, "x.conf")
		os.WriteFile(p, []byte("save \"\"\nappendonly no\n"), 0o644)
		return p
	}
	rp, lp := conf("r"), conf("l")
	rAddr := mustRedisBare(t, rp)
	lPort, _ := freePort()
	mustLimitdbConfig(t, server.Config{}, lp, "--port", strconv.Itoa(lPort), "--bind", "127.0.0.1")
	var replies [][]byte
	for _, x := range []struct{ addr, path string }{{rAddr, rp}, {fmt.Sprintf("127.0.0.1:%d", lPort), lp}} {
		os.RemoveAll(filepath.Dir(x.path))
		c := mustDial(t, x.addr)
		replies = append(replies, mustDo(t, c, "CONFIG", "REWRITE"))
		c.Close()
	}
	if !bytes.Equal(replies[0], replies[1]) || !bytes.HasPrefix(replies[0], []byte("-ERR Rewriting config file: ")) {
		t.Fatalf("limitdb %q, redis %q", replies[1], replies[0])
	}
}

// TestConfigFileUserBeatsRequirepass: a config file's "user default" line
// decides the default user's password whether it comes before or after
// requirepass (Redis applies requirepass first, the user lines after the
// whole file); the AUTH replies match redis-server's.
func TestConfigFileUserBeatsRequirepass(t *testing.T) {
	for _, conf := range []string{
		"user default on >pw1 ~* &* +@all\nrequirepass pw2\n",
		"requirepass pw2\nuser default on >pw1 ~* &* +@all\n",
		"requirepass pw2\nuser default on nopass ~* &* +@all\n",
	} {
		path := filepath.Join(t.TempDir(), "limitdb.conf")
		if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{}
		for side, addr := range map[string]string{"redis": mustRedisBare(t, path), "limitdb": mustLimitdbConfig(t, server.Config{}, path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1").Addr().String()} {
			var got []string
			for _, pw := range []string{"", "pw1", "pw2"} {
				c := mustDial(t, addr)
				if pw != "" {
					got = append(got, do(t, c, "AUTH", pw))
				}
				got = append(got, do(t, c, "PING"))
				c.Close()
			}
			want[side] = strings.Join(got, " | ")
		}
		if want["redis"] != want["limitdb"] {
			t.Errorf("%q:\n redis   %s\n limitdb %s", conf, want["redis"], want["limitdb"])
		}
	}
}
