package engine

import (
	"math/rand"
	"testing"
)

// TestCRC64 checks Redis's test vector (crc64.c: crc64(0, "123456789"))
// and the sliced loop against the byte-at-a-time one, whole and split.
func TestCRC64(t *testing.T) {
	if got := crc64Update(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %x", got)
	}
	r := rand.New(rand.NewSource(1))
	for n := 0; n < 200; n++ {
		b := make([]byte, n)
		r.Read(b)
		slow := crc64Bytewise(0, b)
		if got := crc64Update(0, b); got != slow {
			t.Fatalf("len %d: %x != %x", n, got, slow)
		}
		k := n / 3
		if got := crc64Update(crc64Update(0, b[:k]), b[k:]); got != slow {
			t.Fatalf("split %d/%d", k, n)
		}
	}
}

func crc64Bytewise(crc uint64, b []byte) uint64 {
	for _, c := range b {
		crc = crc64Tab[0][byte(crc)^c] ^ crc>>8
	}
	return crc
}

var crcSink uint64

func BenchmarkCRC64(b *testing.B) {
	buf := make([]byte, 1<<20)
	rand.New(rand.NewSource(1)).Read(buf)
	b.Run("sliced", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		for i := 0; i < b.N; i++ {
			crcSink ^= crc64Update(0, buf)
		}
	})
	b.Run("bytewise", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		for i := 0; i < b.N; i++ {
			crcSink ^= crc64Bytewise(0, buf)
		}
	})
}
