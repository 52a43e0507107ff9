package engine

// Per-policy decision counters (RL.STATS) and the most-refused keys
// (RL.TOP). This file holds the API the server's metrics collector and
// status page read; the counting itself is being built (issue 21).

// RLCounters are one policy's decision counters since SinceMs.
type RLCounters struct {
	Requests     int64 // calls decided (RL.ALLOW, RL.PEEK, each limit of RL.ALLOWALL)
	Units        int64 // the cost those calls asked for
	Allowed      int64
	Denied       int64 // refused and enforced
	ShadowDenied int64 // refused, answered allowed (shadow)
	NearLimit    int64 // allowed with the used share at or above NEAR
	Errors       int64 // calls that named the policy and got an error reply
}

// RLStat is one row of RL.STATS: Policy "" counts calls with inline numbers.
type RLStat struct {
	Policy string
	RLCounters
	SinceMs int64
}

// RLStats returns the counters of every policy that has any, and of the
// inline calls (Policy ""), in byte order of the name. Caller holds the
// engine lock.
func (e *Engine) RLStats() []RLStat { return nil }

// RLTopEntry is one key of RL.TOP: Count is its estimated number of
// refusals (or requests) in the window, Err the most it may be overcounted.
type RLTopEntry struct {
	Key   string
	Count int64
	Err   int64
}

// RLTop returns at most n keys of the policy with the most refusals
// (requested: the most requests) over the last windowMs before nowMs,
// most first. Caller holds the engine lock.
func (e *Engine) RLTop(policy string, n int, windowMs int64, requested bool, nowMs int64) []RLTopEntry {
	return nil
}
