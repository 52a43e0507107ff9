package engine

// Rand is the engine's deterministic random source (splitmix64). Its state is
// part of the engine state: replaying the same commands from the same state
// draws the same numbers, which a replicated keyspace needs for RANDOMKEY,
// SPOP, SRANDMEMBER and the like. Nothing in the engine's state or replies
// comes from math/rand: the one use, rdb-key-save-delay's "one key in N"
// sleep (snapshot.go), is node-local timing.
type Rand struct{ s uint64 }

// Seed sets the generator's state.
func (r *Rand) Seed(s uint64) { r.s = s }

// State returns the generator's state (for snapshots).
func (r *Rand) State() uint64 { return r.s }

// Uint64 returns the next number.
func (r *Rand) Uint64() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Intn returns a number in [0, n). n must be > 0.
func (r *Rand) Intn(n int) int { return int(r.Uint64() % uint64(n)) }

// Float64 returns a number in [0, 1).
func (r *Rand) Float64() float64 { return float64(r.Uint64()>>11) / (1 << 53) }
