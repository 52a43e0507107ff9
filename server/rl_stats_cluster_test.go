package server

import (
	"reflect"
	"testing"

	"limitdb/engine"
)

// The rows another node sends back decode to what it encoded, and a
// truncated or padded answer is refused (the asker then names the node
// missing instead of summing garbage).
func TestRLStatsEncoding(t *testing.T) {
	rows := []engine.RLStat{
		{Policy: "", SinceMs: 1, RLCounters: engine.RLCounters{Requests: 5, Units: 9, Allowed: 4, Denied: 1, Errors: 2}},
		{Policy: "api\x00\xff", SinceMs: 1700000000000, RLCounters: engine.RLCounters{Requests: 1 << 40, ShadowDenied: 3, NearLimit: 7}},
	}
	b := encodeRLStats(rows)
	got, ok := decodeRLStats(b)
	if !ok || !reflect.DeepEqual(got, rows) {
		t.Fatalf("decoded %+v %v", got, ok)
	}
	for _, bad := range [][]byte{b[:len(b)-1], append(append([]byte(nil), b...), 0), {0xff}, nil} {
		if _, ok := decodeRLStats(bad); ok {
			t.Errorf("accepted %q", bad)
		}
	}
	if rows, ok := decodeRLStats(encodeRLStats(nil)); !ok || len(rows) != 0 {
		t.Errorf("no rows: %v %v", rows, ok)
	}
}
