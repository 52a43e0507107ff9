package engine

import "limitdb/ratelimit"

// The limiter census: how many limiter keys hold each algorithm, for the
// metrics collector (server/metrics_collector.go). Counting on every
// create and delete would touch each path that removes a key (DEL,
// expiry, eviction, FLUSHALL, RDB load, snapshots); instead a scrape walks
// a bounded number of entries from where the last one stopped, with SCAN's
// cursor (a resize in between may count a key twice, never skips one that
// stayed), and the counts of the last complete pass over every database
// are what it reports. A data set smaller than one step is counted exactly
// at every scrape; a larger one is a census some scrapes old.

// LimiterAlgos is the number of algorithms a limiter key can hold, the
// length of LimiterCensus's counts (ratelimit.Algo(i).String() names i).
const LimiterAlgos = int(ratelimit.Cell) + 1

// LimiterCensus is a census in progress and the last complete one.
type LimiterCensus struct {
	db      int
	cursor  uint64
	running [LimiterAlgos]int64
	// Counts are the limiter keys per algorithm of the last complete
	// pass; Passes counts complete passes (0: Counts not yet known).
	Counts [LimiterAlgos]int64
	Passes int64
}

// CensusStep advances c over at most about budget entries (a bucket is
// never split) and reports whether a pass completed. Caller holds the
// engine lock.
func (e *Engine) CensusStep(c *LimiterCensus, budget int) bool {
	for budget > 0 {
		d := &e.DBs[c.db].dict
		if d.len() > 0 {
			seen := 0
			c.cursor = d.scanBucket(c.cursor, func(en *entry) {
				seen++
				if en.kind == KindLimiter {
					if a := int(limParams(en).Algo); a < LimiterAlgos {
						c.running[a]++
					}
				}
			})
			budget -= max(seen, 1)
			if c.cursor != 0 {
				continue
			}
		}
		c.cursor = 0
		c.db++
		if c.db == len(e.DBs) {
			c.db = 0
			c.Counts, c.running = c.running, [LimiterAlgos]int64{}
			c.Passes++
			return true // one pass per step at most: the counts stay those of a whole pass
		}
		budget--
	}
	return false
}
