package server

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestSplitArgs: Redis's sdssplitargs rules (quotes, escapes, the closing
// quote followed by a blank, unbalanced quotes).
func TestSplitArgs(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		ok   bool
	}{
		{`save 900 1 300 10`, []string{"save", "900", "1", "300", "10"}, true},
		{`  requirepass   "a b\"c\n\x41\q" `, []string{"requirepass", "a b\"c\nAq"}, true},
		{`requirepass 'it\'s "x"'`, []string{"requirepass", `it's "x"`}, true},
		{`save ""`, []string{"save", ""}, true},
		{`a"b c"`, []string{`ab c`}, true},
		{`"abc"def`, nil, false},
		{`'abc`, nil, false},
		{`"abc`, nil, false},
		{`x "\x4"`, []string{"x", `x4`}, true},
		{"\t", nil, true},
	}
	for _, c := range cases {
		got, ok := SplitArgs(c.in)
		if ok != c.ok || c.ok && !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	// quoteArg round-trips through SplitArgs
	for _, s := range []string{"", "plain", "sp ace", "q\"uo\\te", "\x00\x01\xff\n\r\t\a\b", "'"} {
		got, ok := SplitArgs("k " + quoteArg(s))
		if !ok || len(got) != 2 || got[1] != s {
			t.Errorf("quoteArg(%q) = %s reads back as %q %v", s, quoteArg(s), got, ok)
		}
	}
}

// TestArgsToOptions: command-line arguments become config lines as in
// Redis's main (values quoted, --save alone means save "").
func TestArgsToOptions(t *testing.T) {
	cases := []struct {
		in   []string
		want string
	}{
		{[]string{"--port", "7000", "--requirepass", "x y"}, `port "7000" ` + "\n" + `requirepass "x y" `},
		{[]string{"--save", "900", "1", "300", "10"}, `save "900" "1" "300" "10" `},
		{[]string{"--save", "--port", "1"}, `save ""` + "\n" + `port "1" `},
		{[]string{"--port", "1", "--save"}, `port "1" ` + "\n" + `save ""`},
		{[]string{"--port 7000"}, `port 7000 `},
	}
	for _, c := range cases {
		if got := ArgsToOptions(c.in); got != c.want {
			t.Errorf("ArgsToOptions(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadConfig: a redis.conf-style file with comments, quotes, units,
// multi-argument save lines, aliases and includes, then command-line
// options that win over it.
func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "inc1.conf", "hz 20\nmaxmemory-policy allkeys-lru\n")
	writeFile(t, dir, "inc2.conf", "maxmemory-samples 7\n")
	main := writeFile(t, dir, "limitdb.conf", strings.Join([]string{
		"# a comment",
		"   # an indented comment",
		"",
		"MAXMEMORY 1gb",
		`requirepass "s3cret \"quoted\""`,
		// save lines add up in a file; limitdb has no snapshots yet, so a
		// file may only clear them (CONFIG SET refuses the same values)
		`save ""`,
		"lua-time-limit 100",
		"list-max-ziplist-entries 5", // deprecated in 7.0: accepted, ignored
		"include " + filepath.Join(dir, "inc1.conf"),
		"include " + filepath.Join(dir, "inc2*.conf"),
		"include " + filepath.Join(dir, "none*.conf"),
		"port 7001\r",
		"timeout 30",
	}, "\n"))
	s := New(Config{}, nil)
	defer s.Close() // maxmemory 1gb holds a share of the Go memory limit
	err := s.LoadConfig(main, ArgsToOptions([]string{"--port", "7002", "--timeout", "40", "--loglevel", "warn", "--bind", "127.0.0.1 -::1"}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"maxmemory": "1073741824", "requirepass": `s3cret "quoted"`, "save": "",
		"busy-reply-threshold": "100", "hz": "20", "maxmemory-policy": "allkeys-lru",
		"maxmemory-samples": "7", "port": "7002", "timeout": "40", "loglevel": "warning",
		"bind": "127.0.0.1 -::1",
	}
	for k, v := range want {
		if got := s.ConfigValue(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if s.idleLimit.Load() != 40 {
		t.Errorf("timeout not applied: %d", s.idleLimit.Load())
	}
	if s.configFile != main {
		t.Errorf("configFile = %q", s.configFile)
	}
	// save "" on the command line clears the file's save lines
	s = New(Config{}, nil)
	defer s.Close()
	if err := s.LoadConfig(main, ArgsToOptions([]string{"--save"})); err != nil || s.ConfigValue("save") != "" {
		t.Fatalf("--save: %q %v", s.ConfigValue("save"), err)
	}
}

// TestLoadConfigErrors: Redis's fatal report for each kind of bad line
// (texts checked against redis-server 7.0.15 by hand: same line numbers,
// the options counted after the file and a blank line).
func TestLoadConfigErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		file, opts string
		want       string
	}{
		{"# c\nport 0\nfoo bar\n", "", "Reading the configuration file, at line 3\n>>> 'foo bar'\nBad directive or wrong number of arguments\n"},
		{"port 0\n", `hz "abc"`, "Reading the configuration file, at line 3\n>>> 'hz \"abc\"'\nargument couldn't be parsed into an integer\n"},
		{"maxmemory 1xb\n", "", ">>> 'maxmemory 1xb'\nargument must be a memory value\n"},
		{"port 1 2\n", "", ">>> 'port 1 2'\nwrong number of arguments\n"},
		{"requirepass \"abc\n", "", ">>> 'requirepass \"abc'\nUnbalanced quotes in configuration line\n"},
		{"maxmemory-policy lru\n", "", "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction\n"},
		{"save 0 1\n", "", "Invalid save parameters\n"},
		{"protected-mode maybe\n", "", "argument must be 'yes' or 'no'\n"},
		{"include " + filepath.Join(dir, "missing.conf") + "\n", "", "Fatal error, can't open config file '" + filepath.Join(dir, "missing.conf") + "': No such file or directory\n"},
		{"user default on nopass\n", "", "Bad directive or wrong number of arguments\n"},
	}
	for i, c := range cases {
		if _, ok := fileDirectives["user"]; ok && strings.HasPrefix(c.file, "user") {
			continue // the ACL part is wired in
		}
		p := writeFile(t, dir, "bad.conf", c.file)
		s := New(Config{}, nil)
		err := s.LoadConfig(p, c.opts)
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("case %d: error %q, want suffix %q", i, err, c.want)
			continue
		}
		if !ce.Raw && !strings.HasPrefix(err.Error(), "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\n") {
			t.Errorf("case %d: report %q", i, err)
		}
	}
	// a file that includes itself stops at a depth limit instead of
	// recursing without end
	self := filepath.Join(dir, "self.conf")
	writeFile(t, dir, "self.conf", "include "+self+"\n")
	if err := New(Config{}, nil).LoadConfig(self, ""); err == nil || !strings.Contains(err.Error(), "nested deeper than 32 levels") {
		t.Errorf("include loop: %v", err)
	}
	s := New(Config{}, nil)
	if err := s.LoadConfig(filepath.Join(dir, "nope.conf"), ""); err == nil || !strings.Contains(err.Error(), "can't open config file") {
		t.Errorf("missing file: %v", err)
	}
}

// TestFileDirectives: directives that are not parameters go to their
// handler with their arguments; its error is the fatal reason.
func TestFileDirectives(t *testing.T) {
	var got [][]string
	fileDirectives["test-directive"] = func(s *Server, args []string) error {
		got = append(got, args)
		if args[0] == "bad" {
			return errors.New("Error in test directive")
		}
		return nil
	}
	defer delete(fileDirectives, "test-directive")
	dir := t.TempDir()
	s := New(Config{}, nil)
	if err := s.LoadConfig(writeFile(t, dir, "a.conf", "TEST-DIRECTIVE a 'b c'\n"), ""); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, [][]string{{"a", "b c"}}) {
		t.Fatalf("handler got %q", got)
	}
	err := s.LoadConfig(writeFile(t, dir, "b.conf", "test-directive bad\n"), "")
	if err == nil || !strings.HasSuffix(err.Error(), ">>> 'test-directive bad'\nError in test directive\n") {
		t.Fatalf("handler error: %v", err)
	}
}

// TestLoadConfigObuf: client-output-buffer-limit lines in a file take
// Redis's multi-argument form, each naming classes that replace only
// theirs, validated as CONFIG SET validates them.
func TestLoadConfigObuf(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, dir, "obuf.conf", "client-output-buffer-limit normal 1mb 2mb 30\nclient-output-buffer-limit pubsub 0 0 0\n")
	s := New(Config{}, nil)
	defer s.Close()
	if err := s.LoadConfig(f, ""); err != nil {
		t.Fatal(err)
	}
	if got, want := s.ConfigValue("client-output-buffer-limit"), "normal 1048576 2097152 30 slave 268435456 67108864 60 pubsub 0 0 0"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	bad := writeFile(t, dir, "bad.conf", "client-output-buffer-limit master 1 1 1\n")
	if err := New(Config{}, nil).LoadConfig(bad, ""); err == nil || !strings.Contains(err.Error(), "Invalid client class specified in buffer limit configuration.") {
		t.Fatalf("bad class: %v", err)
	}
}
