package server

import (
	"strconv"
	"testing"
)

// benchMaxmemory is benchBatch with maxmemory 1gb and allkeys-lru, so the
// per-command check (a heap sample at most once per ms, the comparison)
// is on the path; nothing is evicted.
func benchMaxmemory(b *testing.B, cmd func(i int) []string) {
	b.Cleanup(func() {
		s := New(Config{}, nil)
		s.conf.params["maxmemory"] = "0"
		s.applyMaxmemory() // restores the Go memory limit
	})
	benchBatchWith(b, func(s *Server) {
		s.conf.params["maxmemory"] = strconv.Itoa(1 << 30)
		s.conf.params["maxmemory-policy"] = "allkeys-lru"
		s.applyMaxmemory()
	}, cmd)
}

func BenchmarkBatchIncrMaxmemory(b *testing.B) {
	benchMaxmemory(b, func(int) []string { return []string{"INCR", "counter"} })
}

func BenchmarkBatchGetMaxmemory(b *testing.B) {
	benchMaxmemory(b, func(int) []string { return []string{"GET", "counter"} })
}

func BenchmarkBatchSet(b *testing.B) {
	benchBatch(b, func(i int) []string { return []string{"SET", "k" + strconv.Itoa(i), "value"} })
}

func BenchmarkBatchSetMaxmemory(b *testing.B) {
	benchMaxmemory(b, func(i int) []string { return []string{"SET", "k" + strconv.Itoa(i), "value"} })
}
