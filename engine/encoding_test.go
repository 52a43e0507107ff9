package engine

import (
	"testing"

	"limitdb/resp"
)

// TestEncodingLimits checks that the configured thresholds decide the
// encoding the engine emulates (and reports for OBJECT ENCODING).
func TestEncodingLimits(t *testing.T) {
	e := New()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1}
	for _, kv := range []struct {
		name string
		v    int64
	}{
		{"hash-max-ziplist-entries", 2}, {"hash-max-listpack-value", 3},
		{"set-max-intset-entries", 2}, {"zset-max-ziplist-entries", 2}, {"zset-max-listpack-value", 3},
	} {
		if !e.SetEncodingLimit(kv.name, kv.v) {
			t.Fatalf("%s not an encoding limit", kv.name)
		}
	}
	if e.SetEncodingLimit("maxmemory", 1) {
		t.Fatal("maxmemory taken as an encoding limit")
	}
	for _, cmd := range [][]string{
		{"hset", "h1", "a", "1", "b", "2"}, {"hset", "h2", "a", "1", "b", "2", "c", "3"}, {"hset", "h3", "a", "1234"},
		{"sadd", "s1", "1", "2"}, {"sadd", "s2", "1", "2", "3"},
		{"zadd", "z1", "1", "a", "2", "b"}, {"zadd", "z2", "1", "a", "2", "b", "3", "c"}, {"zadd", "z3", "1", "abcd"},
		{"zadd", "z4", "1", "a"}, {"zadd", "z4", "2", "b"}, {"zadd", "z4", "3", "c"},
	} {
		c.Exec(toArgv(cmd))
	}
	for key, want := range map[string]string{
		"h1": "listpack", "h2": "hashtable", "h3": "hashtable",
		"s1": "intset", "s2": "hashtable",
		"z1": "listpack", "z2": "skiplist", "z3": "skiplist", "z4": "skiplist",
	} {
		if got, _ := c.DB.dict.find(key).collEncoding(); got != want {
			t.Errorf("%s: %s, want %s", key, got, want)
		}
	}
}
