//go:build race

package tests

// raceEnabled: the race detector multiplies memory use (shadow memory), so
// memory bounds measured with RSS do not apply.
const raceEnabled = true
