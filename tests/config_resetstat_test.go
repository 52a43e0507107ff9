package tests

import (
	"regexp"
	"sort"
	"strings"
	"testing"
)

// infoFields picks "name:value" lines of INFO out of a raw reply.
func infoFields(raw []byte, names *regexp.Regexp) []string {
	var out []string
	for _, l := range strings.Split(string(raw), "\r\n") {
		if names.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// TestConfigResetstatMatchesRedis: after traffic, errors, hits and misses,
// CONFIG RESETSTAT zeroes the same INFO statistics as Redis (stats,
// commandstats, errorstats), counting from the RESETSTAT call itself.
// (CONFIG RESETSTAT predates this issue; this checks it for part 4.)
func TestConfigResetstatMatchesRedis(t *testing.T) {
	r, l := mustBoth(t)
	fields := regexp.MustCompile(`^(total_connections_received|total_commands_processed|rejected_connections|expired_keys|evicted_keys|keyspace_hits|keyspace_misses|total_error_replies|cmdstat_[^:]*|errorstat_[^:]*):`)
	usec := regexp.MustCompile(`usec=\d+,usec_per_call=[\d.]+`)
	run := func(addr string) string {
		c := mustDial(t, addr)
		defer c.Close()
		for _, cmd := range [][]string{{"SET", "k", "1"}, {"GET", "k"}, {"GET", "missing"}, {"INCR", "k", "x"},
			{"NOSUCH"}, {"LPUSH", "k", "v"}, {"SET", "e", "1", "PX", "1"}} {
			c.Do(cmd...)
		}
		mustDo(t, c, "CONFIG", "RESETSTAT")
		mustDo(t, c, "GET", "k")
		got := infoFields(mustDo(t, c, "INFO", "stats", "commandstats", "errorstats"), fields)
		sort.Strings(got) // commandstats come in hash-table order in Redis
		return usec.ReplaceAllString(strings.Join(got, "\n"), "usec=N")
	}
	want, got := run(r.Addr), run(l.Addr().String())
	if got != want {
		t.Fatalf("limitdb:\n%s\nredis:\n%s", got, want)
	}
}
