package engine

import (
	"strconv"
	"testing"
)

// sortBenchList is the RPUSH of n elements: decimals with three places
// (read with strtod, as Redis reads non-integer elements), from a fixed
// xorshift sequence.
func sortBenchList(key string, n int) []string {
	argv := []string{"rpush", key}
	x := uint64(88172645463325252)
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		argv = append(argv, strconv.FormatFloat(float64(x%100000000)/1000, 'f', 3, 64))
	}
	return argv
}

// BenchmarkSort1000: SORT of a 1,000-element list, numeric.
func BenchmarkSort1000(b *testing.B) {
	benchCmd(b, [][]string{sortBenchList("l", 1000)}, []string{"sort", "l"})
}

// BenchmarkSort1000Alpha: the same list, ALPHA.
func BenchmarkSort1000Alpha(b *testing.B) {
	benchCmd(b, [][]string{sortBenchList("l", 1000)}, []string{"sort", "l", "alpha"})
}

// BenchmarkSort1000Ints: 1,000 integers (inline elements, no strtod).
func BenchmarkSort1000Ints(b *testing.B) {
	argv := []string{"rpush", "l"}
	for i := 0; i < 1000; i++ {
		argv = append(argv, strconv.Itoa((i*7919)%100003))
	}
	benchCmd(b, [][]string{argv}, []string{"sort", "l"})
}

// BenchmarkSort100: SORT of a 100-element list (the loadgen workload).
func BenchmarkSort100(b *testing.B) {
	benchCmd(b, [][]string{sortBenchList("l", 100)}, []string{"sort", "l"})
}

// BenchmarkSort1000Store: SORT … STORE of the 1,000 elements.
func BenchmarkSort1000Store(b *testing.B) {
	benchCmd(b, [][]string{sortBenchList("l", 1000)}, []string{"sort", "l", "store", "dst"})
}

// BenchmarkSort1000By: SORT BY a string key per element, LIMIT 0 10.
func BenchmarkSort1000By(b *testing.B) {
	setup := [][]string{sortBenchList("l", 1000)}
	for i, v := range sortBenchList("x", 1000)[2:] {
		setup = append(setup, []string{"set", "w_" + setup[0][2+i], v})
	}
	benchCmd(b, setup, []string{"sort", "l", "by", "w_*", "limit", "0", "10"})
}
