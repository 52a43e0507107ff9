package server

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"limitdb/engine"
	"limitdb/resp"
)

// BenchmarkMetricsScrape: one scrape's engine-lock hold (view: the copy
// and a census step) and the whole collection, over 200000 limiter keys
// and 100 policies (server/DESIGN.md, "Metrics").
func BenchmarkMetricsScrape(b *testing.B) {
	eng := engine.New()
	ctx := &engine.Ctx{E: eng, DB: eng.DBs[0], W: resp.NewWriter(), Now: 1_700_000_000_000}
	do := func(line string) {
		ctx.W.Reset()
		ctx.Exec(bytes.Fields([]byte(line)))
	}
	for i := 0; i < 100; i++ {
		do("RL.POLICY SET p" + strconv.Itoa(i) + " LIMIT 10 PERIOD 60000")
	}
	for i := 0; i < 200000; i++ {
		do("RL.ALLOW k" + strconv.Itoa(i) + " 10 60000")
	}
	if n := eng.DBs[0].Len(); n != 200000 {
		b.Fatalf("%d keys", n)
	}
	s := New(Config{}, eng)
	c := newMetricsCollector(s)
	b.Run("view", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s.door.Lock()
			c.view()
			s.door.Unlock()
		}
	})
	b.Run("collect", func(b *testing.B) {
		reg := prometheus.NewRegistry()
		reg.MustRegister(c)
		for i := 0; i < b.N; i++ {
			if _, err := reg.Gather(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
