package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"limitdb/server"
)

// TestUnixSocketMatchesRedis: unixsocket and unixsocketperm (octal) at
// start-up on redis-server and limitdb: the socket file gets the mode,
// clients over it are served (local for protected mode), CLIENT LIST shows
// addr=<path>:0 laddr=<path>:0 and flag U, CONFIG GET shows the values
// and CONFIG SET refuses them (immutable).
func TestUnixSocketMatchesRedis(t *testing.T) {
	dir := t.TempDir()
	rSock, lSock := filepath.Join(dir, "r.sock"), filepath.Join(dir, "l.sock")
	opts := func(p string) []string {
		return []string{"--unixsocket", p, "--unixsocketperm", "700", "--save", "", "--appendonly", "no"}
	}
	mustRedisBare(t, opts(rSock)...)
	mustLimitdbConfig(t, server.Config{Addr: "127.0.0.1:0"}, "", opts(lSock)...)
	pick := regexp.MustCompile(` (addr|laddr|flags)=[^ ]*`)
	run := func(sock string) string {
		c := mustDialUnix(t, sock)
		st, err := os.Stat(sock)
		if err != nil {
			t.Fatal(err)
		}
		out := fmt.Sprintf("mode %v\n", st.Mode().Perm())
		for _, cmd := range [][]string{{"PING"}, {"CONFIG", "GET", "unixsocketperm"},
			{"CONFIG", "SET", "unixsocket", "/tmp/x"}, {"CONFIG", "SET", "unixsocketperm", "777"}} {
			out += string(mustDo(t, c, cmd...))
		}
		for _, f := range pick.FindAllString(string(mustDo(t, c, "CLIENT", "LIST")), -1) {
			out += strings.ReplaceAll(f, sock, "SOCK")
		}
		return out
	}
	want, got := run(rSock), run(lSock)
	if got != want {
		t.Fatalf("limitdb:\n%s\nredis:\n%s", got, want)
	}
}
