package main

import (
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// The publish workload: -subscribers connections (50) per server
// SUBSCRIBE to one channel, each read by a goroutine that counts and
// discards what arrives; the measured connections PUBLISH a 16-byte
// payload to it. An operation is one PUBLISH, whose reply counts the
// receivers; the table's throughput is publishes per second, each of
// which the server writes to every subscriber. After the case the tool
// waits for the subscribers to stop receiving and prints how many of the
// messages each server delivered (none may be missing: a subscriber over
// the pubsub output limit would be closed).

const pubChannel = "bench:pubsub"

// pubMsgLen is the size of one message as a subscriber receives it:
// *3 $7 message $12 bench:pubsub $16 <payload>.
var pubMsgLen = len("*3\r\n$7\r\nmessage\r\n$12\r\n" + pubChannel + "\r\n$16\r\n" + string(value16) + "\r\n")

// subscribers is the state of one side's subscribers during a case.
type subscribers struct {
	conns     []net.Conn
	bytes     atomic.Int64
	published atomic.Int64 // PUBLISH commands sent during the case
	wg        sync.WaitGroup
}

var subsOf = map[*side]*subscribers{}

func publishBuilder(c *conn, s *side, b []byte, now int64) []byte {
	if ss := subsOf[s]; ss != nil {
		ss.published.Add(1)
	}
	b = appendArrayHdr(b, 3)
	b = appendBulkStr(b, "PUBLISH")
	b = appendBulkStr(b, pubChannel)
	return appendBulk(b, value16)
}

// startSubscribers opens n subscribed connections to s (once per case).
func startSubscribers(s *side, n int) error {
	if subsOf[s] != nil {
		return nil
	}
	ss := &subscribers{}
	for i := 0; i < n; i++ {
		c, err := dial(s.addr, s.auth, uint64(i))
		if err != nil {
			return err
		}
		r, err := c.do("SUBSCRIBE", pubChannel)
		if err != nil {
			return err
		}
		if r[0] == '-' {
			return fmt.Errorf("SUBSCRIBE: %s", short(r[1:]))
		}
		ss.conns = append(ss.conns, c.nc)
		ss.wg.Add(1)
		go func(nc net.Conn) {
			defer ss.wg.Done()
			buf := make([]byte, 256<<10)
			for {
				m, err := nc.Read(buf)
				ss.bytes.Add(int64(m))
				if err != nil {
					return
				}
			}
		}(c.nc)
	}
	subsOf[s] = ss
	return nil
}

// stopSubscribers waits (at most 5 s) for the messages in flight, closes
// the subscribers and returns the messages delivered and expected.
func stopSubscribers(s *side) (got, want int64) {
	ss := subsOf[s]
	if ss == nil {
		return 0, 0
	}
	delete(subsOf, s)
	want = ss.published.Load() * int64(len(ss.conns))
	deadline := time.Now().Add(5 * time.Second)
	for last := int64(-1); time.Now().Before(deadline); {
		b := ss.bytes.Load()
		if b >= want*int64(pubMsgLen) || b == last {
			break
		}
		last = b
		time.Sleep(200 * time.Millisecond)
	}
	for _, nc := range ss.conns {
		nc.Close()
	}
	ss.wg.Wait()
	return ss.bytes.Load() / int64(pubMsgLen), want
}

// reportDelivery prints each side's delivery count after a publish case.
func reportDelivery(ref, cand *side) {
	for _, s := range []*side{ref, cand} {
		got, want := stopSubscribers(s)
		if want == 0 {
			continue
		}
		note := ""
		if got != want {
			note = "  MISSING MESSAGES"
		}
		fmt.Fprintf(os.Stderr, "publish: %s delivered %d of %d messages%s\n", s.name, got, want, note)
	}
}
