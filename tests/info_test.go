package tests

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// limitdbOnlyFields are INFO fields limitdb adds that Redis does not have.
var limitdbOnlyFields = map[string]bool{"limitdb_version": true, "go_version": true}

// parseInfo splits an INFO reply into section -> field -> value.
func parseInfo(t *testing.T, raw []byte) map[string]map[string]string {
	t.Helper()
	s := string(raw)
	if !strings.HasPrefix(s, "$") && !strings.HasPrefix(s, "=") {
		t.Fatalf("INFO reply is not a bulk/verbatim string: %q", firstLine(raw))
	}
	body := s[strings.Index(s, "\r\n")+2:]
	body = strings.TrimPrefix(body, "txt:")
	out := map[string]map[string]string{}
	cur := ""
	for _, line := range strings.Split(body, "\r\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "# "):
			cur = strings.ToLower(line[2:])
			out[cur] = map[string]string{}
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok || cur == "" {
				t.Fatalf("bad INFO line %q", line)
			}
			out[cur][k] = v
		}
	}
	return out
}

// TestInfoFields checks that every INFO section and field limitdb reports
// also exists in the same section of Redis 7.0's INFO, in both protocols,
// for the default, all and everything selections.
func TestInfoFields(t *testing.T) {
	for _, proto := range []int{2, 3} {
		p := dialPair(t, proto)
		// make commandstats, errorstats and keyspace non-empty on both
		for _, c := range []*Conn{p.ref, p.cand} {
			c.Do("INCR", "info:counter")
			c.Do("GET", "info:counter")
			c.Do("NOSUCHCMD")
		}
		for _, sel := range [][]string{{"INFO"}, {"INFO", "all"}, {"INFO", "everything"}, {"INFO", "default"}} {
			ref, err := p.ref.Do(sel...)
			if err != nil {
				t.Fatal(err)
			}
			cand, err := p.cand.Do(sel...)
			if err != nil {
				t.Fatal(err)
			}
			if ref[0] != cand[0] {
				t.Errorf("%v resp%d: reply type %q, redis %q", sel, proto, cand[0], ref[0])
			}
			ri, ci := parseInfo(t, ref), parseInfo(t, cand)
			for sec, fields := range ci {
				rf, ok := ri[sec]
				if !ok {
					t.Errorf("%v resp%d: section %q not in redis", sel, proto, sec)
					continue
				}
				for f := range fields {
					if _, ok := rf[f]; !ok && !limitdbOnlyFields[f] && !perCommandField(f) {
						t.Errorf("%v resp%d: field %s:%s not in redis", sel, proto, sec, f)
					}
				}
			}
			for sec := range ri {
				if _, ok := ci[sec]; !ok {
					t.Errorf("%v resp%d: redis section %q missing", sel, proto, sec)
				}
			}
			for _, must := range []string{"redis_version", "tcp_port", "uptime_in_seconds"} {
				if _, ok := ci["server"][must]; !ok {
					t.Errorf("%v: server:%s missing", sel, must)
				}
			}
			if ci["server"]["redis_version"] != "7.0.15" {
				t.Errorf("redis_version %q", ci["server"]["redis_version"])
			}
			if _, ok := ci["keyspace"]["db0"]; !ok {
				t.Errorf("%v: keyspace db0 missing", sel)
			}
			if len(sel) > 1 && sel[1] != "default" {
				if _, ok := ci["commandstats"]["cmdstat_incr"]; !ok {
					t.Errorf("%v: cmdstat_incr missing", sel)
				}
				if !strings.HasPrefix(ci["commandstats"]["cmdstat_incr"], "calls=") {
					t.Errorf("cmdstat_incr = %q", ci["commandstats"]["cmdstat_incr"])
				}
				// the same percentiles as Redis's, in the same order
				pct := regexp.MustCompile(`p[0-9.]+=`)
				r, c := ri["latencystats"]["latency_percentiles_usec_incr"], ci["latencystats"]["latency_percentiles_usec_incr"]
				if rp, cp := pct.FindAllString(r, -1), pct.FindAllString(c, -1); r == "" || strings.Join(rp, ",") != strings.Join(cp, ",") {
					t.Errorf("latency_percentiles_usec_incr = %q, redis %q", c, r)
				}
			}
			if _, ok := ci["errorstats"]["errorstat_ERR"]; !ok {
				t.Errorf("%v: errorstat_ERR missing", sel)
			}
		}
		p.ref.Close()
		p.cand.Close()
	}
}

// TestInfoEvictionExceededAndBacklog: total_ and
// current_eviction_exceeded_time count the time memory stays over
// maxmemory (from the eviction that could not bring it under to the one
// that did, or CONFIG RESETSTAT), and the backlog fields show Redis's
// values for a primary that never made a backlog (repl_backlog_size is
// the parameter), on both servers.
func TestInfoEvictionExceededAndBacklog(t *testing.T) {
	p := dialPair(t, 2)
	defer p.ref.Close()
	defer p.cand.Close()
	field := func(c *Conn, sec, f string) string {
		r, err := c.Do("INFO", sec)
		if err != nil {
			t.Fatal(err)
		}
		return parseInfo(t, r)[sec][f]
	}
	ms := func(c *Conn, f string) int64 {
		v, err := strconv.ParseInt(field(c, "stats", f), 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		return v
	}
	for _, c := range []*Conn{p.ref, p.cand} {
		expectDo(t, c, "+OK\r\n", "CONFIG", "RESETSTAT")
		if cur, tot := ms(c, "current_eviction_exceeded_time"), ms(c, "total_eviction_exceeded_time"); cur != 0 || tot != 0 {
			t.Fatalf("%s: after RESETSTAT current %d total %d", c.nc.RemoteAddr(), cur, tot)
		}
		expectDo(t, c, "+OK\r\n", "CONFIG", "SET", "maxmemory", "1")
		r, _ := c.Do("SET", "exceeded:k", "v")
		expectDo(t, c, "+OK\r\n", "CONFIG", "SET", "maxmemory", "0")
		if !strings.HasPrefix(string(r), "-OOM ") {
			t.Fatalf("%s: SET over maxmemory: %q", c.nc.RemoteAddr(), r)
		}
	}
	time.Sleep(100 * time.Millisecond)
	for _, c := range []*Conn{p.ref, p.cand} {
		// maxmemory 0 runs no eviction, so the spell goes on (Redis too)
		cur, tot := ms(c, "current_eviction_exceeded_time"), ms(c, "total_eviction_exceeded_time")
		if cur < 90 || tot < cur || cur > 60_000 {
			t.Errorf("%s: current %d total %d, want 100 ms or so and total >= current", c.nc.RemoteAddr(), cur, tot)
		}
		expectDo(t, c, "+OK\r\n", "CONFIG", "RESETSTAT")
		if cur, tot := ms(c, "current_eviction_exceeded_time"), ms(c, "total_eviction_exceeded_time"); cur != 0 || tot != 0 {
			t.Errorf("%s: after RESETSTAT current %d total %d", c.nc.RemoteAddr(), cur, tot)
		}
	}
	for _, c := range []*Conn{p.ref, p.cand} {
		expectDo(t, c, "+OK\r\n", "CONFIG", "SET", "repl-backlog-size", "2mb")
	}
	for _, f := range []string{"repl_backlog_active", "repl_backlog_size", "repl_backlog_first_byte_offset", "repl_backlog_histlen"} {
		if a, b := field(p.ref, "replication", f), field(p.cand, "replication", f); a != b {
			t.Errorf("%s: redis %q, limitdb %q", f, a, b)
		}
	}
	for _, c := range []*Conn{p.ref, p.cand} {
		expectDo(t, c, "+OK\r\n", "CONFIG", "SET", "repl-backlog-size", "1mb")
	}
}

// TestInfoExporterFields: the fields redis_exporter reads that limitdb
// answers since issue 21 (server/DESIGN.md, "Metrics") are in the same
// section and format as Redis 7.0's, latencystats among them (in all and
// everything, not in default), and limitdb's hold together.
func TestInfoExporterFields(t *testing.T) {
	p := dialPair(t, 2)
	defer p.ref.Close()
	defer p.cand.Close()
	intRe := regexp.MustCompile(`^-?\d+$`)
	floatRe := regexp.MustCompile(`^-?\d+\.\d+$`)
	percRe := regexp.MustCompile(`^\d+\.\d\d%$`)
	latRe := regexp.MustCompile(`^p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}$`)
	fields := map[string]map[string]*regexp.Regexp{
		"memory": {"used_memory_overhead": intRe, "used_memory_startup": intRe, "used_memory_dataset": intRe,
			"used_memory_dataset_perc": percRe, "allocator_allocated": intRe, "allocator_active": intRe,
			"allocator_resident": intRe, "allocator_frag_ratio": floatRe, "allocator_frag_bytes": intRe,
			"allocator_rss_ratio": floatRe, "allocator_rss_bytes": intRe, "rss_overhead_ratio": floatRe,
			"rss_overhead_bytes": intRe, "mem_fragmentation_bytes": intRe, "mem_replication_backlog": intRe,
			"mem_total_replication_buffers": intRe, "mem_clients_slaves": intRe, "mem_clients_normal": intRe,
			"mem_aof_buffer": intRe, "active_defrag_running": intRe},
		"stats": {"total_net_repl_output_bytes": intRe, "sync_full": intRe, "expired_stale_perc": floatRe,
			"expired_time_cap_reached_count": intRe, "expire_cycle_cpu_milliseconds": intRe,
			"active_defrag_hits": intRe, "active_defrag_misses": intRe, "active_defrag_key_hits": intRe,
			"active_defrag_key_misses": intRe, "total_reads_processed": intRe, "total_writes_processed": intRe},
		"cpu":          {"used_cpu_sys_main_thread": floatRe, "used_cpu_user_main_thread": floatRe},
		"latencystats": {"latency_percentiles_usec_incr": latRe},
	}
	var got [2]map[string]map[string]string
	for i, c := range []*Conn{p.ref, p.cand} {
		for j := 0; j < 3; j++ {
			mustDo(t, c, "INCR", "info:exporter")
		}
		r, err := c.Do("INFO", "everything")
		if err != nil {
			t.Fatal(err)
		}
		got[i] = parseInfo(t, r)
		def, err := c.Do("INFO")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := parseInfo(t, def)["latencystats"]; ok {
			t.Errorf("%s: latencystats in INFO default", c.nc.RemoteAddr())
		}
	}
	for sec, fs := range fields {
		for f, re := range fs {
			for i, who := range []string{"redis", "limitdb"} {
				v, ok := got[i][sec][f]
				if !ok || !re.MatchString(v) {
					t.Errorf("%s: %s:%s = %q (present %v), want %s", who, sec, f, v, ok, re)
				}
			}
		}
	}
	m := got[1]["memory"]
	used, _ := strconv.ParseInt(m["used_memory"], 10, 64)
	over, _ := strconv.ParseInt(m["used_memory_overhead"], 10, 64)
	data, _ := strconv.ParseInt(m["used_memory_dataset"], 10, 64)
	if over+data != used && data != 0 {
		t.Errorf("limitdb: overhead %d + dataset %d != used_memory %d", over, data, used)
	}
	if n, _ := strconv.Atoi(got[1]["stats"]["total_reads_processed"]); n < 3 {
		t.Errorf("limitdb: total_reads_processed %d after 3 commands", n)
	}
}

// perCommandField: the fields named after a command, an error or a
// database, which depend on what each server was sent (go-redis's CLIENT
// SETINFO, which Redis 7.0 refuses, is a command limitdb knows)
func perCommandField(f string) bool {
	for _, p := range []string{"cmdstat_", "errorstat_", "db", "latency_percentiles_usec_"} {
		if strings.HasPrefix(f, p) {
			return true
		}
	}
	return false
}
