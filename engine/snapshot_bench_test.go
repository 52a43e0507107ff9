package engine

import (
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"limitdb/resp"
)

// BenchmarkSnapshotMillionLimiters: 1,000,000 GCRA limiters with 10-byte
// keys (the DESIGN.md figures); one iteration captures the state under
// the lock and writes it to a file while another goroutine keeps
// executing RL.ALLOW under the lock. Reported: capture-ms (the lock hold),
// write-ms (Capture to the end of WriteTo), MB written, the data set's
// RSS and the peak extra RSS during capture and write (VmHWM after
// resetting it), and the longest lock wait the writing goroutine saw.
//
//	go test ./engine -run XXX -bench SnapshotMillion -benchtime 1x
func BenchmarkSnapshotMillionLimiters(b *testing.B) {
	const n = 1_000_000
	runtime.GC()
	debug.FreeOSMemory()
	rss0 := rss()
	e := New()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: t0}
	argv := [][]byte{[]byte("RL.ALLOW"), nil, []byte("10"), []byte("1000")}
	for i := 0; i < n; i++ {
		argv[1] = []byte("rl:" + strconv.Itoa(1_000_000+i))
		c.W.Reset()
		cmdRLAllow(c, argv)
	}
	runtime.GC()
	debug.FreeOSMemory()
	data := rss() - rss0
	f, err := os.CreateTemp(b.TempDir(), "snap")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.Run("quiet", func(b *testing.B) { snapshotRound(b, e, f, data, false) })
	b.Run("traffic", func(b *testing.B) { snapshotRound(b, e, f, data, true) })
}

func snapshotRound(b *testing.B, e *Engine, f *os.File, data int64, traffic bool) {
	const n = 1_000_000
	for b.Loop() {
		f.Seek(0, io.SeekStart)
		runtime.GC()
		debug.FreeOSMemory()
		base := rss()
		os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // resets VmHWM
		stop := make(chan struct{})
		var maxWait atomic.Int64
		var mu sync.Mutex // the engine lock (a server's door holds one)
		done := make(chan struct{})
		go func() { // traffic while the snapshot is written
			defer close(done)
			if !traffic {
				<-stop
				return
			}
			w := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: t0 + 5}
			a := [][]byte{[]byte("RL.ALLOW"), nil, []byte("10"), []byte("1000")}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				a[1] = []byte("rl:" + strconv.Itoa(1_000_000+i%n))
				t := time.Now()
				mu.Lock()
				if d := time.Since(t).Nanoseconds(); d > maxWait.Load() {
					maxWait.Store(d)
				}
				w.W.Reset()
				cmdRLAllow(w, a)
				mu.Unlock()
			}
		}()
		time.Sleep(10 * time.Millisecond)
		t0 := time.Now()
		mu.Lock()
		s := e.Capture()
		mu.Unlock()
		capture := time.Since(t0)
		written, err := s.WriteTo(f)
		if err != nil {
			b.Fatal(err)
		}
		total := time.Since(t0)
		s.Release()
		close(stop)
		<-done
		peak := vmHWM() - base
		b.ReportMetric(float64(capture.Microseconds())/1000, "capture-ms")
		b.ReportMetric(float64(total.Microseconds())/1000, "write-ms")
		b.ReportMetric(float64(written)/1e6, "MB-written")
		b.ReportMetric(float64(data)/1e6, "data-MB")
		b.ReportMetric(float64(peak)/1e6, "peak-extra-MB")
		b.ReportMetric(float64(maxWait.Load())/1e6, "max-lock-wait-ms")
	}
}

// vmHWM is the process's peak RSS (since the last reset).
func vmHWM() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			f := strings.Fields(l)
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkCapture1M: Capture alone (the lock hold) over 1,000,000
// limiter keys: fresh (new arrays: allocated and zeroed under the lock)
// and again (into the arrays the previous capture left, cow.go's spare).
func BenchmarkCapture1M(b *testing.B) {
	e := New()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: t0}
	argv := [][]byte{[]byte("RL.ALLOW"), nil, []byte("10"), []byte("1000")}
	for i := 0; i < 1_000_000; i++ {
		argv[1] = []byte("rl:" + strconv.Itoa(1_000_000+i))
		c.W.Reset()
		cmdRLAllow(c, argv)
	}
	runtime.GC()
	for _, again := range []bool{false, true} {
		name := "fresh"
		if again {
			name = "again"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if !again {
					e.AgeCaptureSpare()
					e.AgeCaptureSpare()
				}
				s := e.Capture()
				s.Release()
			}
		})
	}
}

// BenchmarkWriteTo1M: WriteTo alone (to io.Discard) over 1,000,000
// limiter keys.
func BenchmarkWriteTo1M(b *testing.B) {
	e := New()
	c := &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: t0}
	argv := [][]byte{[]byte("RL.ALLOW"), nil, []byte("10"), []byte("1000")}
	for i := 0; i < 1_000_000; i++ {
		argv[1] = []byte("rl:" + strconv.Itoa(1_000_000+i))
		c.W.Reset()
		cmdRLAllow(c, argv)
	}
	s := e.Capture()
	defer s.Release()
	runtime.GC()
	for b.Loop() {
		if _, err := s.WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
