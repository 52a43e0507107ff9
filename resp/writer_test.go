package resp

import (
	"math"
	"testing"

	"github.com/tidwall/redcon"
)

// The hot reply methods must encode exactly as redcon does and not allocate.
func TestHotWriterMatchesRedcon(t *testing.T) {
	w := &Writer{Proto: 2}
	for _, n := range []int64{0, 1, 9, 10, -1, -9, -10, 12345, math.MaxInt64, math.MinInt64} {
		w.Reset()
		w.Int(n)
		if got, want := string(w.B), string(redcon.AppendInt(nil, n)); got != want {
			t.Errorf("Int(%d) = %q, want %q", n, got, want)
		}
		w.Reset()
		w.BulkInt(n)
		if got, want := string(w.B), string(redcon.AppendBulkInt(nil, n)); got != want {
			t.Errorf("BulkInt(%d) = %q, want %q", n, got, want)
		}
	}
	for _, s := range []string{"", "a", "0123456789", string(make([]byte, 1000))} {
		w.Reset()
		w.BulkString(s)
		if got, want := string(w.B), string(redcon.AppendBulkString(nil, s)); got != want {
			t.Errorf("BulkString(%q) = %q, want %q", s, got, want)
		}
		w.Reset()
		w.Bulk([]byte(s))
		if got, want := string(w.B), string(redcon.AppendBulk(nil, []byte(s))); got != want {
			t.Errorf("Bulk(%q) = %q, want %q", s, got, want)
		}
	}
	w.B = make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(1000, func() {
		w.B = w.B[:0]
		w.Int(123456)
		w.BulkInt(-987654321)
		w.BulkString("hello")
		w.Bulk([]byte("v"))
		w.Null()
	})
	if allocs != 0 {
		t.Errorf("hot writer methods allocate %.1f times per run", allocs)
	}
}
