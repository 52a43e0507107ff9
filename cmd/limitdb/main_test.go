package main

import (
	"reflect"
	"testing"

	"limitdb/server"
)

// parseArgs: a first argument without "-" is the config file; the flag
// forms the earlier command line took (--name=value, -name value) still
// work; --pprof and --version are not config options.
func TestParseArgs(t *testing.T) {
	cases := []struct {
		in   []string
		want cmdLine
	}{
		{[]string{"/etc/l.conf", "--port", "7000", "--requirepass", "x"}, cmdLine{file: "/etc/l.conf", options: []string{"--port", "7000", "--requirepass", "x"}}},
		{[]string{"--bind=0.0.0.0", "-port", "7000", "--dir", "/tmp", "--loglevel=warn"}, cmdLine{options: []string{"--bind", "0.0.0.0", "--port", "7000", "--dir", "/tmp", "--loglevel", "warn"}}},
		{[]string{"--pprof", "127.0.0.1:6060", "--slowlog-log-slower-than", "-1"}, cmdLine{pprof: "127.0.0.1:6060", options: []string{"--slowlog-log-slower-than", "-1"}}},
		{[]string{"--pprof=127.0.0.1:1"}, cmdLine{pprof: "127.0.0.1:1"}},
		{[]string{"--version"}, cmdLine{version: true}},
		{[]string{"-v"}, cmdLine{version: true}},
		{[]string{"--save", "", "--port", "1"}, cmdLine{options: []string{"--save", "", "--port", "1"}}},
		{[]string{"--bind", "127.0.0.1", "-::1", "--requirepass", "-pw"}, cmdLine{options: []string{"--bind", "127.0.0.1", "-::1", "--requirepass", "-pw"}}},
	}
	for _, c := range cases {
		if got := parseArgs(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("parseArgs(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

// TestLegacyFlags: today's flags give the settings they always gave.
func TestLegacyFlags(t *testing.T) {
	c := parseArgs([]string{"--bind", "127.0.0.1", "--port", "7001", "--dir", "/tmp", "--loglevel", "error"})
	s := server.New(server.Config{}, nil)
	if err := s.LoadConfig(c.file, server.ArgsToOptions(c.options)); err != nil {
		t.Fatal(err)
	}
	s.Door().Lock()
	defer s.Door().Unlock()
	for k, v := range map[string]string{"bind": "127.0.0.1", "port": "7001", "dir": "/tmp", "loglevel": "warning"} {
		if got := s.ConfigValue(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}
