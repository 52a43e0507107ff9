package engine

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
)

// TestLZFRoundTrip: whatever compress returns decompresses to the input,
// it never returns more than the room it was given, and inputs Redis
// compresses well do compress. (Byte equality with Redis's lzf_compress
// is checked through DUMP against redis-server in tests/.)
func TestLZFRoundTrip(t *testing.T) {
	var z lzfCompressor
	r := rand.New(rand.NewSource(7))
	inputs := [][]byte{
		[]byte(strings.Repeat("a", 100)),
		[]byte(strings.Repeat("abc", 1000)),
		[]byte(strings.Repeat("hello world ", 50)),
	}
	for i := 0; i < 300; i++ {
		n := r.Intn(3000) + 21
		b := make([]byte, n)
		alpha := 1 + r.Intn(20)
		for j := range b {
			if j > 8 && r.Intn(4) == 0 {
				b[j] = b[j-1-r.Intn(8)]
			} else {
				b[j] = byte('a' + r.Intn(alpha))
			}
		}
		inputs = append(inputs, b)
	}
	compressed := 0
	for _, in := range inputs {
		c := z.compress(in, len(in)-4)
		if c == nil {
			continue
		}
		compressed++
		if len(c) > len(in)-4 {
			t.Fatalf("output %d > room %d", len(c), len(in)-4)
		}
		out := make([]byte, len(in))
		if !lzfDecompress(c, out) || !bytes.Equal(out, in) {
			t.Fatalf("round trip failed for %q", in[:min(40, len(in))])
		}
		// a shorter or longer target is refused
		if lzfDecompress(c, make([]byte, len(in)-1)) || lzfDecompress(c, make([]byte, len(in)+1)) {
			t.Fatal("wrong size accepted")
		}
	}
	if compressed < len(inputs)/2 {
		t.Fatalf("only %d of %d compressed", compressed, len(inputs))
	}
	// random bytes do not compress
	b := make([]byte, 1000)
	r.Read(b)
	if z.compress(b, len(b)-4) != nil {
		t.Fatal("random bytes compressed")
	}
}

// TestLZFBaseWrap: the table's position base wrapping around behaves as
// a zeroed table.
func TestLZFBaseWrap(t *testing.T) {
	var a, b lzfCompressor
	in := []byte(strings.Repeat("abcdefgh", 40))
	want := a.compress(in, len(in)-4)
	b.htab = make([]uint32, lzfHSize)
	b.base = 1<<32 - 100
	for i := 0; i < 3; i++ {
		if got := b.compress(in, len(in)-4); !bytes.Equal(got, want) {
			t.Fatalf("pass %d differs", i)
		}
	}
}
