package tests

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// The fault suite's checkers: pure functions of what the workloads
// recorded and read at the end, so that TestFaultsCheckers can feed each
// one a history with a known violation and see it found.

// checkPorcupine checks a history for linearizability; an illegal one is
// drawn as porcupine's HTML visualization at viz (when viz is set).
func checkPorcupine(name string, m porcupine.Model, ops []porcupine.Operation, timeout time.Duration, viz string) checkResult {
	res, info := porcupine.CheckOperationsVerbose(m, ops, timeout)
	r := checkResult{ops: len(ops), ok: res != porcupine.Illegal}
	switch res {
	case porcupine.Ok:
		r.verdict = fmt.Sprintf("%s: %d operations linearizable", name, len(ops))
	case porcupine.Unknown:
		r.inconclu = true
		r.verdict = fmt.Sprintf("%s: %d operations, porcupine timed out after %v (inconclusive)", name, len(ops), timeout)
	default:
		r.verdict = fmt.Sprintf("%s: %d operations NOT LINEARIZABLE", name, len(ops))
		if viz != "" {
			if err := porcupine.VisualizePath(m, info, viz); err == nil {
				r.verdict += " (visualization: " + viz + ")"
			}
		}
	}
	return r
}

// checkCounter: every acknowledged INCR is in the final value, none was
// applied twice. acked holds the values acknowledged INCRs returned,
// unknowns the INCRs whose outcome is unknown (possibly applied).
func checkCounter(acked []int64, unknowns int, final int64) checkResult {
	r := checkResult{ops: len(acked) + unknowns, ok: true}
	var bad []string
	seen := map[int64]bool{}
	for _, v := range acked {
		if seen[v] {
			bad = append(bad, fmt.Sprintf("two acknowledged INCRs returned %d", v))
		}
		seen[v] = true
		if v > final {
			bad = append(bad, fmt.Sprintf("an INCR returned %d but the final value is %d (acknowledged increment lost)", v, final))
		}
	}
	if final < int64(len(acked)) {
		bad = append(bad, fmt.Sprintf("final %d < %d acknowledged INCRs (lost)", final, len(acked)))
	}
	if final > int64(len(acked)+unknowns) {
		bad = append(bad, fmt.Sprintf("final %d > %d acknowledged + %d uncertain INCRs (applied twice)", final, len(acked), unknowns))
	}
	r.verdict = fmt.Sprintf("counter: final %d, %d acknowledged, %d uncertain", final, len(acked), unknowns)
	if len(bad) > 0 {
		r.ok = false
		r.verdict += ": VIOLATION: " + strings.Join(firstN(bad, 10), "; ")
	}
	return r
}

// checkQueue: every acknowledged element is delivered exactly once or
// left in the list; an element is never delivered twice, nor both
// delivered and left; nothing appears that was not pushed. An
// acknowledged element neither delivered nor left is lost unless a pop
// whose outcome is unknown may have taken it: each such pop takes at most
// one, and only one pushed before the pop's latest possible effect
// (uncertain holds those times), so the lost elements must have a
// matching (Hall's condition, checked over the lost sorted by push time).
func checkQueue(pushed map[string]pushRec, delivered map[string]int, uncertain []time.Duration, left []string) checkResult {
	r := checkResult{ops: len(pushed), ok: true}
	var bad []string
	inList := map[string]int{}
	for _, e := range left {
		inList[e]++
	}
	for e, n := range delivered {
		if _, ok := pushed[e]; !ok {
			bad = append(bad, "delivered "+e+", never pushed")
		}
		if n > 1 {
			bad = append(bad, fmt.Sprintf("%s delivered %d times", e, n))
		}
		if inList[e] > 0 {
			bad = append(bad, e+" delivered and still in the list")
		}
	}
	for e, n := range inList {
		if _, ok := pushed[e]; !ok {
			bad = append(bad, "in the list: "+e+", never pushed")
		}
		if n > 1 {
			bad = append(bad, fmt.Sprintf("%s in the list %d times", e, n))
		}
	}
	var lost []string
	acked := 0
	for e, p := range pushed {
		if p.out == done {
			acked++
			if delivered[e] == 0 && inList[e] == 0 {
				lost = append(lost, e)
			}
		}
		if p.out == refused && (delivered[e] > 0 || inList[e] > 0) {
			bad = append(bad, e+"'s LPUSH was refused, yet it was pushed")
		}
	}
	// the latest-pushed lost element first: the k-th needs k+1 uncertain
	// pops that may have taken effect after its push
	sort.Slice(lost, func(a, b int) bool { return pushed[lost[a]].call > pushed[lost[b]].call })
	ends := append([]time.Duration(nil), uncertain...)
	sort.Slice(ends, func(a, b int) bool { return ends[a] > ends[b] })
	for k, e := range lost {
		t := pushed[e].call
		n := sort.Search(len(ends), func(j int) bool { return ends[j] <= t }) // pops ending after t
		if n < k+1 {
			var names []string
			for _, x := range lost[:k+1] {
				names = append(names, fmt.Sprintf("%s@%.3fs", x, pushed[x].call.Seconds()))
			}
			bad = append(bad, fmt.Sprintf("%d acknowledged elements pushed from %.3fs on are lost (%s) and only %d uncertain pops may have taken effect after that (%d uncertain in all)",
				k+1, t.Seconds(), strings.Join(firstN(names, 10), " "), n, len(uncertain)))
			break
		}
	}
	nd := 0
	for _, n := range delivered {
		nd += n
	}
	r.verdict = fmt.Sprintf("queue: %d pushed (%d acknowledged), %d delivered, %d left, %d unaccounted, %d uncertain pops", len(pushed), acked, nd, len(left), len(lost), len(uncertain))
	if len(bad) > 0 {
		r.ok = false
		r.verdict += ": VIOLATION: " + strings.Join(firstN(bad, 10), "; ")
	}
	return r
}

// checkCAS: each committed EXEC wrote what it read plus one, so the
// values written by committed EXECs are distinct (two equal ones: both
// read the same value, a lost update), none is above the final value, and
// the final value (the number of CASes applied) is between the committed
// ones and those plus the uncertain ones.
func checkCAS(wrote []int64, unknowns int, final int64) checkResult {
	r := checkResult{ops: len(wrote) + unknowns, ok: true}
	var bad []string
	seen := map[int64]bool{}
	for _, v := range wrote {
		if seen[v] {
			bad = append(bad, fmt.Sprintf("two committed EXECs wrote %d (lost update)", v))
		}
		seen[v] = true
		if v > final {
			bad = append(bad, fmt.Sprintf("an EXEC wrote %d, the final value is %d", v, final))
		}
	}
	if final < int64(len(wrote)) {
		bad = append(bad, fmt.Sprintf("final %d < %d committed EXECs", final, len(wrote)))
	}
	if final > int64(len(wrote)+unknowns) {
		bad = append(bad, fmt.Sprintf("final %d > %d committed + %d uncertain EXECs", final, len(wrote), unknowns))
	}
	r.verdict = fmt.Sprintf("cas: final %d, %d committed EXECs, %d uncertain", final, len(wrote), unknowns)
	if len(bad) > 0 {
		r.ok = false
		r.verdict += ": VIOLATION: " + strings.Join(firstN(bad, 10), "; ")
	}
	return r
}

// checkLua: the script's INCR and RPUSH are atomic, so the counter equals
// the list's length, the n an acknowledged EVAL returned is its tag's
// position (1-based), every acknowledged tag is in the list once, no tag
// twice, and only tags that were sent.
func checkLua(acked map[string]int64, unknown map[string]bool, finalN int64, list []string) checkResult {
	r := checkResult{ops: len(acked) + len(unknown), ok: true}
	var bad []string
	if finalN != int64(len(list)) {
		bad = append(bad, fmt.Sprintf("counter %d but %d tags in the list (not atomic)", finalN, len(list)))
	}
	pos := map[string]int{}
	for i, tag := range list {
		if _, dup := pos[tag]; dup {
			bad = append(bad, tag+" in the list twice")
		}
		pos[tag] = i + 1
		if _, ok := acked[tag]; !ok && !unknown[tag] {
			bad = append(bad, tag+" in the list, never sent or refused")
		}
	}
	for tag, n := range acked {
		p, ok := pos[tag]
		switch {
		case !ok:
			bad = append(bad, "acknowledged "+tag+" missing from the list")
		case int64(p) != n:
			bad = append(bad, fmt.Sprintf("%s returned %d but sits at %d", tag, n, p))
		}
	}
	sort.Strings(bad)
	r.verdict = fmt.Sprintf("lua: counter %d, %d tags, %d acknowledged, %d uncertain", finalN, len(list), len(acked), len(unknown))
	if len(bad) > 0 {
		r.ok = false
		r.verdict += ": VIOLATION: " + strings.Join(firstN(bad, 10), "; ")
	}
	return r
}

// checkRateBound: over every window [a, b] that starts at a grant's call
// and ends at a grant's reply, the grants whose call and reply both lie
// inside (their decisions surely do) are at most the algorithm's bound
// for a window of length b-a widened by widen(a, b) (max-clock-skew-ms
// for each leader change and the size of each clock change the nemesis
// made in or around it) and by rateClockGrain. grants are sorted by call.
func checkRateBound(l rlSpec, grants []span, widen func(a, b time.Duration) time.Duration) (bool, string) {
	worst, worstAt := math.Inf(-1), ""
	var bad []string
	for i := range grants {
		a := grants[i].t0
		var ends []time.Duration
		for _, g := range grants[i:] {
			ends = append(ends, g.t1)
		}
		sort.Slice(ends, func(x, y int) bool { return ends[x] < ends[y] })
		for n, b := range ends {
			count := n + 1
			bound := rateBound(l, b-a+widen(a, b)+rateClockGrain)
			if float64(count)-bound > worst {
				worst = float64(count) - bound
				worstAt = fmt.Sprintf("%d in [%v, %v] against %.1f", count, a.Round(time.Millisecond), b.Round(time.Millisecond), bound)
			}
			if float64(count) > bound+1e-9 {
				bad = append(bad, fmt.Sprintf("%d granted in [%v, %v] (%v), bound %.1f", count, a.Round(time.Millisecond), b.Round(time.Millisecond), (b-a).Round(time.Millisecond), bound))
				break
			}
		}
		if len(bad) >= 5 {
			break
		}
	}
	note := fmt.Sprintf("%s %s: %d grants, closest window %s", l.algo, l.key, len(grants), worstAt)
	if len(bad) > 0 {
		return false, note + ": VIOLATION: " + strings.Join(bad, "; ")
	}
	return true, note
}

// rateClockGrain widens every window by the limiters' clock resolution:
// they count time in whole milliseconds, so two decisions 999.2 ms apart
// can be 1000 ms apart on the leader's clock (11 sliding-log grants of 5
// per 500 ms between a call at 9.276 s and a reply at 10.276 s: three
// half-open periods on the leader's clock, two on the test's).
const rateClockGrain = 2 * time.Millisecond

// rateBound is commands.md's promise for a window of length w: gcra (no
// BURST) at most C + w·limit/period with C = limit; sliding-log at most
// limit in any interval of length period, so limit·(⌊w/period⌋+1).
func rateBound(l rlSpec, w time.Duration) float64 {
	ms := float64(w) / float64(time.Millisecond)
	p := float64(l.periodMs)
	switch l.algo {
	case "gcra":
		return float64(l.limit) + ms*float64(l.limit)/p
	case "sliding-log":
		// a closed window of length w meets floor(w/period)+1 half-open
		// intervals of length period
		return float64(l.limit) * (math.Floor(ms/p) + 1)
	}
	panic("no bound for " + l.algo)
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("… %d more", len(s)-n))
	}
	return s
}

// checkTTL: a key set with PX ttl lives, in the leader's time, from the
// SET's execution (between its call and reply) for ttl. A linearizable
// GET (on any node) that answered nil before setCall + ttl, or found the
// key after setRet + ttl had passed when it was sent, disagrees with that
// deadline; both sides are widened by widen (max-clock-skew-ms per leader
// change, clock changes) and by 2 ms of rounding (deadlines are in ms).
func checkTTL(reads []ttlRead, sets int, ttl time.Duration, widen func(a, b time.Duration) time.Duration) checkResult {
	r := checkResult{ops: sets + len(reads), ok: true}
	var bad []string
	early, late := 0, 0
	for _, rd := range reads {
		w := widen(rd.setCall, rd.getRet) + 2*time.Millisecond
		switch {
		case !rd.found && rd.getRet+w < rd.setCall+ttl:
			early++
			bad = append(bad, fmt.Sprintf("GET %s on n%d answered nil at %.3f-%.3fs, its SET (%.3f-%.3fs, PX %v) lives until at least %.3fs",
				rd.key, rd.node+1, rd.getCall.Seconds(), rd.getRet.Seconds(), rd.setCall.Seconds(), rd.setRet.Seconds(), ttl, (rd.setCall+ttl-w).Seconds()))
		case rd.found && rd.getCall > rd.setRet+ttl+w:
			late++
			bad = append(bad, fmt.Sprintf("GET %s on n%d found it at %.3f-%.3fs, its SET (%.3f-%.3fs, PX %v) expired by %.3fs",
				rd.key, rd.node+1, rd.getCall.Seconds(), rd.getRet.Seconds(), rd.setCall.Seconds(), rd.setRet.Seconds(), ttl, (rd.setRet+ttl+w).Seconds()))
		}
	}
	r.verdict = fmt.Sprintf("ttl: %d keys set, %d reads around their deadlines", sets, len(reads))
	if len(bad) > 0 {
		r.ok = false
		r.verdict += fmt.Sprintf(": VIOLATION: %d reads saw a key expired too early, %d too late: %s", early, late, strings.Join(firstN(bad, 5), "; "))
	}
	return r
}
