package engine

import (
	"limitdb/resp"
)

// RL.STATS and RL.TOP: reading the node-local counters and sketches
// (rl_stats.go, rl_top.go). Neither writes replicated state, so neither
// is proposed to the log nor has an effect; RL.STATS RESET changes only
// this node's counters.

const (
	errRLTopCount  = "ERR count must be a positive integer"
	errRLTopWindow = "ERR window must be 1 to 60000 ms"
)

// rlTopCountDefault is RL.TOP's COUNT when it is left out.
const rlTopCountDefault = 10

func init() {
	Register(
		&Command{Name: "rl.stats", Arity: -1, Flags: "readonly", Group: "ratelimit", Since: "1.0.0", Summary: "Returns the per-policy decision counters of this node (or of the cluster), or resets them.", Run: cmdRLStats},
		&Command{Name: "rl.top", Arity: -2, Flags: "readonly", Group: "ratelimit", Since: "1.0.0", Summary: "Returns the keys of a policy refused (or requested) most over a recent window.", Run: cmdRLTop},
	)
}

// cmdRLStats: RL.STATS [name …] | RL.STATS RESET [name …] | RL.STATS
// CLUSTER [name …]. The first: a map policy name → map requests, units,
// allowed, denied, shadow_denied, near_limit, errors, since_ms, of every
// policy with counters and of the inline calls (name ""), or of the
// policies named ("" names the inline calls; a policy not counted yet
// has zeros and since_ms 0). RESET: zeroes the counters named (all
// without names) and restarts their since_ms; +OK. CLUSTER: the server
// sums every node (server/rl_stats_cluster.go); without a cluster it is
// this node's, in the same shape: map nodes 1, nodes_missing [],
// policies (the first form's map). An unknown policy name is an error.
func cmdRLStats(c *Ctx, argv [][]byte) {
	if len(argv) > 1 && EqualFold(argv[1], "reset") {
		names := argv[2:]
		if len(names) == 0 {
			c.E.rlStatsReset("", c.Now)
			for name := range c.E.Policies.m {
				c.E.rlStatsReset(name, c.Now)
			}
			c.W.OK()
			return
		}
		for _, n := range names {
			if n := string(n); n != "" && c.E.Policies.m[n] == nil {
				c.W.Error(errNoSuchPolicy([]byte(n)))
				return
			}
		}
		for _, n := range names {
			c.E.rlStatsReset(string(n), c.Now)
		}
		c.W.OK()
		return
	}
	clusterForm := len(argv) > 1 && EqualFold(argv[1], "cluster")
	names := argv[1:]
	if clusterForm {
		names = argv[2:]
	}
	rows, msg := c.E.RLStatsOf(names)
	if msg != "" {
		c.W.Error(msg)
		return
	}
	if clusterForm {
		WriteRLStatsCluster(c.W, rows, 1, nil)
		return
	}
	WriteRLStats(c.W, rows)
}

// IsRLStatsCluster reports whether argv is RL.STATS CLUSTER …, the form
// the server answers itself in a cluster.
func IsRLStatsCluster(argv [][]byte) bool {
	return len(argv) > 1 && EqualFold(argv[0], "rl.stats") && EqualFold(argv[1], "cluster")
}

// RLStatsOf returns the rows RL.STATS names …answers: with no names,
// RLStats; else one per name, in the order given (a name given twice
// once). msg is the error when a name is no policy. Caller holds the
// engine lock.
func (e *Engine) RLStatsOf(names [][]byte) (rows []RLStat, msg string) {
	if len(names) == 0 {
		return e.RLStats(), ""
	}
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[string(n)] {
			continue
		}
		seen[string(n)] = true
		r, ok := e.rlStat(string(n))
		if !ok {
			return nil, errNoSuchPolicy(n)
		}
		rows = append(rows, r)
	}
	return rows, ""
}

// WriteRLStats writes rows as RL.STATS's map.
func WriteRLStats(w *resp.Writer, rows []RLStat) {
	w.Map(len(rows))
	for i := range rows {
		r := &rows[i]
		w.BulkString(r.Policy)
		w.Map(8)
		w.BulkString("requests")
		w.Int(r.Requests)
		w.BulkString("units")
		w.Int(r.Units)
		w.BulkString("allowed")
		w.Int(r.Allowed)
		w.BulkString("denied")
		w.Int(r.Denied)
		w.BulkString("shadow_denied")
		w.Int(r.ShadowDenied)
		w.BulkString("near_limit")
		w.Int(r.NearLimit)
		w.BulkString("errors")
		w.Int(r.Errors)
		w.BulkString("since_ms")
		w.Int(r.SinceMs)
	}
}

// WriteRLStatsCluster writes RL.STATS CLUSTER's reply: nodes (how many
// answered, this one included), nodes_missing (those that did not) and
// policies (rows summed over them).
func WriteRLStatsCluster(w *resp.Writer, rows []RLStat, nodes int, missing []string) {
	writeNodesAsked(w, nodes, missing)
	w.BulkString("policies")
	WriteRLStats(w, rows)
}

// AddRLStats sums b's rows into a's (by policy name; since_ms the
// earliest that counted) and returns the sum in byte order of the name.
func AddRLStats(a, b []RLStat) []RLStat {
	at := make(map[string]int, len(a))
	for i := range a {
		at[a[i].Policy] = i
	}
	for _, r := range b {
		i, ok := at[r.Policy]
		if !ok {
			at[r.Policy] = len(a)
			a = append(a, r)
			continue
		}
		s := &a[i]
		s.Add(&r.RLCounters)
		if r.SinceMs != 0 && (s.SinceMs == 0 || r.SinceMs < s.SinceMs) {
			s.SinceMs = r.SinceMs
		}
	}
	sortRLStats(a)
	return a
}

// RLTopArgs are RL.TOP's arguments.
type RLTopArgs struct {
	Policy    string
	N         int
	WindowMs  int64
	Requested bool
	// Cluster: the CLUSTER option (the server sums every node's)
	Cluster bool
}

// ParseRLTop reads RL.TOP name [COUNT n] [WINDOW ms] [REQUESTED]
// [CLUSTER]; msg is the error ("" when they parse). The policy is not
// looked up.
func ParseRLTop(argv [][]byte) (a RLTopArgs, msg string) {
	n := int64(rlTopCountDefault)
	a = RLTopArgs{Policy: string(argv[1]), WindowMs: RLTopWindowMax}
	for i := 2; i < len(argv); i++ {
		switch {
		case EqualFold(argv[i], "requested"):
			a.Requested = true
		case EqualFold(argv[i], "cluster"):
			a.Cluster = true
		case EqualFold(argv[i], "count") && i+1 < len(argv):
			i++
			var ok bool
			if n, ok = ParseIntB(argv[i]); !ok || n <= 0 {
				return a, errRLTopCount
			}
		case EqualFold(argv[i], "window") && i+1 < len(argv):
			i++
			var ok bool
			if a.WindowMs, ok = ParseIntB(argv[i]); !ok || a.WindowMs <= 0 || a.WindowMs > RLTopWindowMax {
				return a, errRLTopWindow
			}
		default:
			return a, ErrSyntax
		}
	}
	a.N = int(min(n, 1<<20))
	return a, ""
}

// IsRLTopCluster reports whether argv is RL.TOP with the CLUSTER option
// (whatever its other arguments: the server parses them again).
func IsRLTopCluster(argv [][]byte) bool {
	if len(argv) < 3 || !EqualFold(argv[0], "rl.top") {
		return false
	}
	a, msg := ParseRLTop(argv)
	return msg == "" && a.Cluster
}

// cmdRLTop: RL.TOP name [COUNT n] [WINDOW ms] [REQUESTED] — the keys of
// the policy refused most (shadow refusals included; REQUESTED: called
// most) over the last WINDOW ms (default and most RLTopWindowMax, rounded
// up to the sketch's 10 s buckets), at most COUNT (default 10), most
// first: an array of maps key, count, err, where count overestimates the
// key's number by at most err (rl_top.go). An unknown policy is an error.
// CLUSTER (the server's form, which sums every node's) answers this
// node's sketch in the cluster shape here.
func cmdRLTop(c *Ctx, argv [][]byte) {
	a, msg := ParseRLTop(argv)
	if msg != "" {
		c.W.Error(msg)
		return
	}
	if c.E.Policies.Get(argv[1]) == nil {
		c.W.Error(errNoSuchPolicy(argv[1]))
		return
	}
	top := c.E.RLTop(a.Policy, a.N, a.WindowMs, a.Requested, c.Now)
	if a.Cluster {
		WriteRLTopCluster(c.W, top, 1, nil)
		return
	}
	writeRLTop(c.W, top)
}

func writeRLTop(w *resp.Writer, top []RLTopEntry) {
	w.Array(len(top))
	for _, t := range top {
		w.Map(3)
		w.BulkString("key")
		w.BulkString(t.Key)
		w.BulkString("count")
		w.Int(t.Count)
		w.BulkString("err")
		w.Int(t.Err)
	}
}

// WriteRLTopCluster writes RL.TOP CLUSTER's reply: a map of nodes,
// nodes_missing and top (RL.TOP's array).
func WriteRLTopCluster(w *resp.Writer, top []RLTopEntry, nodes int, missing []string) {
	writeNodesAsked(w, nodes, missing)
	w.BulkString("top")
	writeRLTop(w, top)
}

// AddRLTop sums lists of several nodes' entries by key (counts and
// error bounds add: each node counted its own calls) and returns the n
// largest, most first (ties in byte order of the key).
func AddRLTop(n int, lists ...[]RLTopEntry) []RLTopEntry {
	at := map[string]int{}
	var out []RLTopEntry
	for _, l := range lists {
		for _, t := range l {
			if i, ok := at[t.Key]; ok {
				out[i].Count += t.Count
				out[i].Err += t.Err
				continue
			}
			at[t.Key] = len(out)
			out = append(out, t)
		}
	}
	sortRLTop(out)
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// writeNodesAsked starts a CLUSTER form's reply: a map of three, its
// nodes and nodes_missing (the third field is the caller's).
func writeNodesAsked(w *resp.Writer, nodes int, missing []string) {
	w.Map(3)
	w.BulkString("nodes")
	w.Int(int64(nodes))
	w.BulkString("nodes_missing")
	w.Array(len(missing))
	for _, m := range missing {
		w.BulkString(m)
	}
}
