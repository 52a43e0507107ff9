package tests

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	"limitdb/engine"
)

// TestKeySlotRedis compares engine.KeySlot with CLUSTER KEYSLOT of a
// redis-server in cluster mode (which answers it with no slot assigned)
// over random binary keys, keys with well-formed, empty, nested and
// unclosed hash tags, and the documentation's examples.
func TestKeySlotRedis(t *testing.T) {
	_, rc := mustRedisConn(t, "--cluster-enabled", "yes")
	r := rand.New(rand.NewSource(22))
	keys := []string{"", "foo", "123456789", "{user1000}.following", "{user1000}.followers",
		"foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}", "{", "}", "{}", "}{", "a{b", "a}b{c}"}
	pieces := []string{"{", "}", "a", "user", "\x00", "\xff", "{}", "é"}
	for i := 0; i < 4000; i++ {
		var b []byte
		if i%2 == 0 {
			b = make([]byte, r.Intn(40))
			r.Read(b)
		} else {
			for n := r.Intn(8); n >= 0; n-- {
				b = append(b, pieces[r.Intn(len(pieces))]...)
			}
		}
		keys = append(keys, string(b))
	}
	// pipelined in batches: 4,000 round trips would be most of the test
	const batch = 500
	for lo := 0; lo < len(keys); lo += batch {
		hi := min(lo+batch, len(keys))
		var req bytes.Buffer
		for _, k := range keys[lo:hi] {
			req.Write(Encode("CLUSTER", "KEYSLOT", k))
		}
		if err := rc.Send(req.Bytes()); err != nil {
			t.Fatal(err)
		}
		for _, k := range keys[lo:hi] {
			got, err := rc.ReadReply()
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf(":%d\r\n", engine.KeySlot([]byte(k))); string(got) != want {
				t.Fatalf("key %q: redis-server %q, KeySlot %q", k, got, want)
			}
		}
	}
}
