package server

import (
	"sort"
	"strconv"
	"strings"

	"limitdb/engine"
)

// parsePercentiles checks latency-tracking-info-percentiles as Redis 7.0
// does: doubles separated by single spaces, each within [0, 100] ("" is
// none). It returns them, the value as CONFIG GET shows it, and why it is
// refused.
func parsePercentiles(v string) ([]float64, string, string) {
	if v == "" {
		return nil, "", ""
	}
	var out []float64
	var shown []string
	for _, f := range strings.Split(v, " ") {
		x, ok := engine.ParseFloat(f)
		if !ok {
			return nil, "", "Invalid latency-tracking-info-percentiles parameters"
		}
		if x < 0 || x > 100 {
			return nil, "", "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
		}
		out = append(out, x)
		shown = append(shown, strconv.FormatFloat(x, 'f', -1, 64))
	}
	return out, strings.Join(shown, " "), ""
}

// infoLatencystats: INFO latencystats, one
// latency_percentiles_usec_<command>:p50=…,p99=…,p99.9=… line per command
// that has a latency histogram (latency-tracking yes), at the percentiles
// of latency-tracking-info-percentiles, as Redis 7.0's
// fillPercentileDistributionLatencies writes it: µs with three decimals.
// A percentile's value is the upper bound of the LATENCY HISTOGRAM bucket
// (powers of two from 1024 ns, latency.go) it falls in, as hdr_histogram
// answers the highest value equivalent to the one recorded; the
// resolution is a factor of two, where Redis's histogram keeps three
// significant digits.
func infoLatencystats(s *Server, b []byte) []byte {
	names := make([]string, 0, len(s.stats.cmdStats))
	for n, st := range s.stats.cmdStats {
		if histCalls(st) > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		st := s.stats.cmdStats[n]
		b = append(b, "latency_percentiles_usec_"...)
		b = append(b, n...)
		b = append(b, ':')
		for j, p := range s.latencyPercentiles {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, 'p')
			b = strconv.AppendFloat(b, p, 'f', -1, 64)
			b = append(b, '=')
			b = strconv.AppendFloat(b, float64(histPercentile(st, p))/1000, 'f', 3, 64)
		}
		b = append(b, "\r\n"...)
	}
	return b
}

// histPercentile is hdr_value_at_percentile over st's histogram: the upper
// bound (ns) of the first bucket where the cumulative count reaches p% of
// the calls (at least one call).
func histPercentile(st *cmdStat, p float64) int64 {
	total := histCalls(st)
	want := max(int64(p/100*float64(total)+0.5), 1)
	var cum int64
	for i, c := range st.hist {
		cum += c
		if cum >= want {
			return int64(1024) << i
		}
	}
	return int64(1024) << (latencyBuckets - 1)
}
