package resp

import (
	"bytes"
	"testing"
)

// BenchmarkReaderTrickle feeds a request a byte per read, as a client
// sending one byte per packet does: the reader must not rescan the partial
// line on every read.
func BenchmarkReaderTrickle(b *testing.B) {
	for _, c := range []struct{ name, req string }{
		{"inline-60KB", string(bytes.Repeat([]byte("a"), 60000)) + "\r\n"},
		{"bulk-header", "*1\r\n$" + string(bytes.Repeat([]byte("0"), 60000)) + "1\r\nx\r\n"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.req)))
			for b.Loop() {
				reqs, err, _ := readAll(b, []byte(c.req), 1)
				if len(reqs) != 1 && err == nil {
					b.Fatalf("got %d requests, %v", len(reqs), err)
				}
			}
		})
	}
}
