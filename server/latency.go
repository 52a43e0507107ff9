package server

import (
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"time"

	"limitdb/engine"
)

// The latency monitor (Redis 7.0 latency.c) and LATENCY HISTOGRAM
// (server.c's per-command histograms).
//
// Events: a command that took latency-monitor-threshold ms or more is a
// "command" sample ("fast-command" for a command flagged fast), measured
// as INFO commandstats charges it (its share of its batch); an
// active-expiry pass of the cron is an "expire-cycle" sample. Each event
// keeps its last 160 samples, one per second (the worst of a second), as
// Redis.
//
// Histograms: every command's durations in power-of-two buckets from
// 1024 ns while latency-tracking is yes; LATENCY HISTOGRAM reports, as
// Redis's hdr_histogram log iteration does, each bucket where the
// cumulative count grows, keyed by the bucket's upper bound in µs.

const (
	latencyBuckets = 40
	latencyTSLen   = 160
)

func init() {
	sub := func(name string, arity int, summary string, h connHandler) connSub {
		return connSub{&engine.Command{Name: name, Arity: arity, Flags: "admin noscript loading stale", Group: "server", Since: "2.8.13", Summary: summary}, h}
	}
	registerConn(&engine.Command{Name: "latency", Arity: -2, Group: "server", Since: "2.8.13", Summary: "A container for latency diagnostics commands"}, nil,
		sub("latest", 2, "Returns the latest latency samples for all events.", cmdLatencyLatest),
		sub("history", 3, "Returns timestamp-latency samples for an event.", cmdLatencyHistory),
		sub("reset", -2, "Resets the latency data for one or more events.", cmdLatencyReset),
		sub("doctor", 2, "Returns a human-readable latency analysis report.", cmdLatencyDoctor),
		connSub{&engine.Command{Name: "histogram", Arity: -2, Flags: "admin noscript loading stale", Group: "server", Since: "7.0.0", Summary: "Returns the cumulative distribution of latencies of a subset or all commands."}, cmdLatencyHistogram},
		connSub{&engine.Command{Name: "help", Arity: 2, Flags: "loading stale", Group: "server", Since: "2.8.13", Summary: "Returns helpful text about the different subcommands."}, cmdLatencyHelp},
	)
}

type latencySample struct{ time, ms int64 }

type latencyEvent struct {
	samples [latencyTSLen]latencySample
	idx     int
	max     int64
}

// latencyBucket is the histogram bucket of a duration: the first whose
// upper bound 1024<<i ns is at least d.
func latencyBucket(d int64) int {
	if d <= 1024 {
		return 0
	}
	return min(bits.Len64(uint64(d-1)>>10), latencyBuckets-1)
}

// latencySample is latencyAddSampleIfNeeded: a sample of ms for event when
// the threshold is set and reached. The engine lock is held.
func (s *Server) latencySample(event string, ms int64) {
	if th := s.latencyMs; th > 0 && ms >= th {
		s.latencyAdd(event, ms)
	}
}

// latencyAdd is latencyAddSample: the worst sample of each second is kept.
func (s *Server) latencyAdd(event string, ms int64) {
	if s.latency == nil {
		s.latency = map[string]*latencyEvent{}
	}
	ev := s.latency[event]
	if ev == nil {
		ev = &latencyEvent{}
		s.latency[event] = ev
	}
	now := time.Now().Unix()
	ev.max = max(ev.max, ms)
	prev := &ev.samples[(ev.idx+latencyTSLen-1)%latencyTSLen]
	if prev.time == now {
		prev.ms = max(prev.ms, ms)
		return
	}
	ev.samples[ev.idx] = latencySample{now, ms}
	ev.idx = (ev.idx + 1) % latencyTSLen
}

func (s *Server) latencyEvents() []string {
	names := make([]string, 0, len(s.latency))
	for n := range s.latency {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// cmdLatencyLatest: LATENCY LATEST — per event: name, time of the last
// sample, its latency, the worst ever (ms).
func cmdLatencyLatest(s *Server, cl *client, argv [][]byte) {
	names := s.latencyEvents()
	cl.w.Array(len(names))
	for _, n := range names {
		ev := s.latency[n]
		last := ev.samples[(ev.idx+latencyTSLen-1)%latencyTSLen]
		cl.w.Array(4)
		cl.w.BulkString(n)
		cl.w.Int(last.time)
		cl.w.Int(last.ms)
		cl.w.Int(ev.max)
	}
}

// cmdLatencyHistory: LATENCY HISTORY event — its samples, oldest first,
// as [time, ms] pairs; empty for an unknown event.
func cmdLatencyHistory(s *Server, cl *client, argv [][]byte) {
	ev := s.latency[string(argv[2])]
	if ev == nil {
		cl.w.Array(0)
		return
	}
	var out []latencySample
	for j := 0; j < latencyTSLen; j++ {
		if x := ev.samples[(ev.idx+j)%latencyTSLen]; x.time != 0 {
			out = append(out, x)
		}
	}
	cl.w.Array(len(out))
	for _, x := range out {
		cl.w.Array(2)
		cl.w.Int(x.time)
		cl.w.Int(x.ms)
	}
}

// cmdLatencyReset: LATENCY RESET [event …] — the number of events reset
// (all of them without arguments).
func cmdLatencyReset(s *Server, cl *client, argv [][]byte) {
	n := 0
	if len(argv) == 2 {
		n = len(s.latency)
		s.latency = nil
	} else {
		for _, a := range argv[2:] {
			if _, ok := s.latency[string(a)]; ok {
				delete(s.latency, string(a))
				n++
			}
		}
	}
	cl.w.Int(int64(n))
}

// cmdLatencyDoctor: LATENCY DOCTOR — Redis's report when nothing was
// observed; otherwise one line per event (Redis adds advice on causes).
func cmdLatencyDoctor(s *Server, cl *client, argv [][]byte) {
	if len(s.latency) == 0 {
		cl.w.Verbatim("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sleep a little better.\n")
		return
	}
	var b strings.Builder
	b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
	for i, n := range s.latencyEvents() {
		ev := s.latency[n]
		var count, sum int64
		for _, x := range ev.samples {
			if x.time != 0 {
				count++
				sum += x.ms
			}
		}
		b.WriteString(strconv.Itoa(i+1) + ". " + n + ": " + strconv.FormatInt(count, 10) + " latency spikes (average " +
			strconv.FormatInt(sum/max(count, 1), 10) + "ms). Worst all time event " + strconv.FormatInt(ev.max, 10) + "ms.\n")
	}
	cl.w.Verbatim(b.String())
}

// cmdLatencyHistogram: LATENCY HISTOGRAM [command …] — per command (and
// subcommand: a container names all of its own) with calls: {calls,
// histogram_usec}; unknown names are skipped.
func cmdLatencyHistogram(s *Server, cl *client, argv [][]byte) {
	var names []string
	if len(argv) == 2 {
		for n, st := range s.stats.cmdStats {
			if histCalls(st) > 0 {
				names = append(names, n)
			}
		}
	} else {
		seen := map[string]bool{}
		add := func(n string) {
			if st := s.stats.cmdStats[n]; st != nil && histCalls(st) > 0 && !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
		for _, a := range argv[2:] {
			name, sub, hasSub := strings.Cut(strings.ToLower(string(a)), "|")
			cmd := engine.Lookup([]byte(name))
			switch {
			case cmd == nil:
			case hasSub:
				if sc := cmd.Sub([]byte(sub)); sc != nil {
					add(sc.Name)
				}
			case len(cmd.Subs) > 0:
				for _, sc := range cmd.Subs {
					add(sc.Name)
				}
			default:
				add(cmd.Name)
			}
		}
	}
	sort.Strings(names)
	cl.w.Map(len(names))
	for _, n := range names {
		st := s.stats.cmdStats[n]
		cl.w.BulkString(n)
		cl.w.Map(2)
		cl.w.BulkString("calls")
		cl.w.Int(histCalls(st))
		cl.w.BulkString("histogram_usec")
		var used int
		for _, c := range st.hist {
			if c > 0 {
				used++
			}
		}
		cl.w.Map(used)
		var cum int64
		for i, c := range st.hist {
			if c == 0 {
				continue
			}
			cum += c
			cl.w.Int(int64(1024<<i) / 1000)
			cl.w.Int(cum)
		}
	}
}

func histCalls(st *cmdStat) (n int64) {
	for _, c := range st.hist {
		n += c
	}
	return n
}

func cmdLatencyHelp(s *Server, cl *client, argv [][]byte) {
	help(cl,
		"LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"DOCTOR",
		"    Return a human readable latency analysis report.",
		"HISTORY <event>",
		"    Return time-latency samples for the <event> class.",
		"LATEST",
		"    Return the latest latency samples for all events.",
		"RESET [<event> ...]",
		"    Reset latency data of one or more <event> classes.",
		"    (default: reset all data for all event classes)",
		"HISTOGRAM [COMMAND ...]",
		"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
		"    If no commands are specified then all histograms are replied.",
		"HELP",
		"    Prints this help.",
	)
}
