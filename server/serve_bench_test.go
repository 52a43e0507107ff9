package server

import (
	"bufio"
	"io"
	"net"
	"testing"
)

// BenchmarkServeLoopback measures the whole connection loop (read, run,
// write) over a loopback socket: one client sends 16 pipelined PINGs and
// reads the 16 replies, so each op is a sixteenth of a round trip. It is
// the benchmark for changes to serveClient/flush (output accounting).
func BenchmarkServeLoopback(b *testing.B) {
	s := startTest(b, Config{})
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	req := pipeline(16, func(int) []string { return []string{"PING"} })
	resp := make([]byte, 16*len("+PONG\r\n"))
	br := bufio.NewReader(nc)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += 16 {
		if _, err := nc.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(br, resp); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkServeLoopbackBigReply: one GET of a 4 MB value per op, read in
// full: replies larger than the socket buffer take the output queue's
// slow path (writer goroutine) for their tail.
func BenchmarkServeLoopbackBigReply(b *testing.B) {
	s := startTest(b, Config{})
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	const size = 4 << 20
	br := bufio.NewReader(nc)
	set := pipeline(1, func(int) []string { return []string{"SET", "big", string(make([]byte, size))} })
	nc.Write(set)
	if _, err := br.ReadString('\n'); err != nil {
		b.Fatal(err)
	}
	req := pipeline(1, func(int) []string { return []string{"GET", "big"} })
	resp := make([]byte, len("$4194304\r\n")+size+2)
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := nc.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(br, resp); err != nil {
			b.Fatal(err)
		}
	}
}
