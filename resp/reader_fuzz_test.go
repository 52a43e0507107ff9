package resp

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// chunkReader hands out its data a few bytes at a time, so requests
// arrive split at every possible point.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), c.n, len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// readAll decodes every request in data (copies of the arguments) and the
// error that stopped decoding (io.EOF at a clean end).
func readAll(t testing.TB, data []byte, chunk int) ([][][]byte, error, int) {
	r := NewReader(&chunkReader{data: data, n: chunk})
	var out [][][]byte
	maxBuf := 0
	for {
		for {
			args, err := r.Next()
			if err != nil {
				return out, err, maxBuf
			}
			if args == nil {
				break
			}
			cp := make([][]byte, len(args))
			for i, a := range args {
				cp[i] = append([]byte{}, a...)
			}
			out = append(out, cp)
		}
		if err := r.Fill(); err != nil {
			return out, err, maxBuf
		}
		maxBuf = max(maxBuf, len(r.buf))
	}
}

func encode(req [][]byte) []byte { return AppendCommand(nil, req...) }

// FuzzReader: the reader never panics, never grows its buffer far beyond
// the input it was given (a claimed length allocates nothing), splits at
// any point give the same requests, and the requests it decodes re-encode
// to multibulk that decodes to the same requests.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"*1\r\n$4\r\nPING\r\n",
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
		"PING\r\n", "SET k \"a b\\x41\\n\" 'c\\'d'\r\n", "\r\n\r\nPING\n",
		"*0\r\n", "*-1\r\n", "*1\r\n$0\r\n\r\n",
		"*1\r\n$9223372036854775807\r\nx\r\n", "*9223372036854775807\r\n",
		"*abc\r\n", "*1\r\n$-1\r\n", "*1\r\nx\r\n", "PING \"abc\r\n",
		"*1\r\n$536870913\r\n", "*2\r\n$4\r\nPING\r\n", "*1\r\n$4\r\nPINGxx\r\n",
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		c := int(chunk)%64 + 1
		reqs, err, maxBuf := readAll(t, data, c)
		var pe *ProtocolError
		if err != io.EOF && !errors.As(err, &pe) {
			t.Fatalf("unexpected error %v", err)
		}
		if limit := 2*len(data) + 2*readChunk; maxBuf > limit {
			t.Fatalf("buffer grew to %d for %d bytes of input", maxBuf, len(data))
		}
		whole, err2, _ := readAll(t, data, len(data)+1)
		if len(whole) != len(reqs) || (err2 == io.EOF) != (err == io.EOF) {
			t.Fatalf("chunking changed the result: %d/%v vs %d/%v", len(reqs), err, len(whole), err2)
		}
		var enc []byte
		for i, r := range reqs {
			if len(r) != len(whole[i]) {
				t.Fatalf("request %d differs by chunking", i)
			}
			enc = append(enc, encode(r)...)
		}
		again, err3, _ := readAll(t, enc, c)
		if err3 != io.EOF || len(again) != len(reqs) {
			t.Fatalf("re-encoded requests: %d, %v; want %d", len(again), err3, len(reqs))
		}
		for i := range reqs {
			for j := range reqs[i] {
				if !bytes.Equal(reqs[i][j], again[i][j]) {
					t.Fatalf("round trip changed request %d arg %d", i, j)
				}
			}
		}
	})
}
