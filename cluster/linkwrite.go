package cluster

import (
	"net"
	"runtime"
	"sync"
)

// linkWriter writes a link connection's frames from one goroutine: the
// goroutines that send (a follower's clients, the leader's units) append
// their frame and wake it; it yields once before taking what is queued, so
// that the goroutines made runnable together with it (the units one
// commit answers, the clients one poll woke) queue theirs first, and
// writes them in one system call.
//
// Why a goroutine of its own and the yield: with one P (procs/DESIGN.md)
// a sender that writes itself holds the P through its system call, so the
// others never overlap it and every frame took its own write (1.1–1.2
// writes per forwarded INCR on the leader, 1.9 on the follower, 50
// clients; measured with perf's syscall counters, bench/RESULTS.md
// "Follower writes").
type linkWriter struct {
	c    net.Conn
	mu   sync.Mutex
	buf  []byte // frames queued
	wake chan struct{}
	done chan struct{}
	once sync.Once
}

func newLinkWriter(c net.Conn) *linkWriter {
	w := &linkWriter{c: c, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go w.run()
	return w
}

// send queues a frame. A write that fails closes the connection: its
// reader sees that and fails what waits on it.
func (w *linkWriter) send(typ byte, id uint64, body []byte) {
	w.mu.Lock()
	w.buf = appendFrame(w.buf, typ, id, body)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// stop ends the writer; what is queued is not written.
func (w *linkWriter) stop() { w.once.Do(func() { close(w.done) }) }

func (w *linkWriter) run() {
	var spare []byte
	for {
		select {
		case <-w.wake:
		case <-w.done:
			return
		}
		runtime.Gosched()
		w.mu.Lock()
		b := w.buf
		w.buf = spare[:0]
		w.mu.Unlock()
		if len(b) == 0 {
			continue
		}
		if _, err := w.c.Write(b); err != nil {
			w.c.Close()
			w.stop()
			return
		}
		if cap(b) <= maxSpare {
			spare = b
		} else {
			spare = nil
		}
	}
}

// maxSpare bounds the buffer kept between writes: a burst of large
// frames (a forwarded MULTI of megabytes) is not held for the link's life.
const maxSpare = 256 << 10
