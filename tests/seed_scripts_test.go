package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"limitdb/luavm"
)

// seedDir is where the seed scripts (the rate limiters users send) are: LIMITDB_SEED_DIR,
// or else ../shared/seed-scripts from the repository root (seen from
// tests/). They are read in place, never copied into the project.
func seedDir() string {
	if d := os.Getenv("LIMITDB_SEED_DIR"); d != "" {
		return d
	}
	return "../../shared/seed-scripts"
}

// readSeed reads one seed script; a test without the folder skips.
func readSeed(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(seedDir(), name))
	if err != nil {
		t.Skipf("seed scripts not found (../shared/seed-scripts from the repository root, or LIMITDB_SEED_DIR): %v", err)
	}
	return string(b)
}

// seedRun sends the same commands to both servers and compares every reply.
type seedRun struct {
	t *testing.T
	p *pair
}

func (s *seedRun) do(args ...string) []byte {
	s.t.Helper()
	ref, err := s.p.ref.Do(args...)
	if err != nil {
		s.t.Fatalf("redis: %v", err)
	}
	cand, err := s.p.cand.Do(args...)
	if err != nil {
		s.t.Fatalf("limitdb: %v", err)
	}
	if !bytes.Equal(ref, cand) {
		short := strings.Join(args, " ")
		if len(short) > 120 {
			short = short[:60] + " … " + short[len(short)-50:]
		}
		s.t.Errorf("replies differ\n  command: %s\n  redis:   %q\n  limitdb: %q", short, ref, cand)
	}
	return ref
}

// ttl sends a TTL-like command and accepts replies that differ by the
// wall-clock skew between the two servers: each key was set on one server a
// few milliseconds after the other (more on a loaded machine), so TTL may
// differ by 1 s and PTTL by up to 50 ms — still far below any unit or
// window error the comparison is there to catch.
func (s *seedRun) ttl(args ...string) {
	s.t.Helper()
	ref, _ := s.p.ref.Do(args...)
	cand, _ := s.p.cand.Do(args...)
	tol := int64(1)
	if strings.EqualFold(args[0], "PTTL") {
		tol = 50
	}
	if msg := compareReplies("tol", tol, ref, cand); msg != "" {
		s.t.Errorf("%s: %s\n  redis:   %q\n  limitdb: %q", strings.Join(args, " "), msg, ref, cand)
	}
}

func newSeedRun(t *testing.T, proto int) *seedRun {
	p := dialPair(t, proto)
	t.Cleanup(func() { p.ref.Close(); p.cand.Close() })
	s := &seedRun{t: t, p: p}
	s.p.ref.Do("FLUSHALL")
	s.p.cand.Do("FLUSHALL")
	return s
}

// TestSeedScripts runs every seed script the way the seed README calls it,
// crossing limits, refill intervals and windows (time passes through ARGV),
// with EVAL then EVALSHA, plus wrong arguments, and compares the replies
// and the data left behind.
func TestSeedScripts(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("resp%d", proto), func(t *testing.T) {
			t.Run("000-incr-expire", func(t *testing.T) {
				s := newSeedRun(t, proto)
				src := readSeed(t, "000-incr-expire.lua")
				s.do("EVAL", src, "1", "10.0.0.1")
				s.do("EVAL", src, "0")
				fixed := readSeed(t, "000-incr-expire-fixed.lua")
				for i := 0; i < 3; i++ {
					s.do("EVAL", fixed, "1", "10.0.0.1")
				}
				s.do("GET", "10.0.0.1")
				s.ttl("PTTL", "10.0.0.1")
				s.do("EVAL", fixed, "0")
				// the key expires after 1 s: the count starts again
				time.Sleep(1100 * time.Millisecond)
				s.do("GET", "10.0.0.1")
				s.do("EVAL", fixed, "1", "10.0.0.1")
				s.do("GET", "10.0.0.1")
			})
			t.Run("001-counter", func(t *testing.T) {
				s := newSeedRun(t, proto)
				src := readSeed(t, "001-counter.lua")
				sha := s.do("SCRIPT", "LOAD", src)
				_ = sha
				for i := 0; i < 7; i++ {
					s.do("EVAL", src, "1", "cnt:a", "5", "10")
				}
				s.do("GET", "cnt:a")
				s.ttl("TTL", "cnt:a")
				s.do("EVAL", src, "1", "cnt:b", "abc", "10")
				s.do("EVAL", src, "1", "cnt:b", "abc", "10")
				s.do("EVAL", src, "1", "cnt:c", "5")
				s.do("EVAL", src, "1", "cnt:d", "5", "1.5")
				s.do("EVAL", src, "0")
			})
			t.Run("001-token-bucket", func(t *testing.T) {
				s := newSeedRun(t, proto)
				src := readSeed(t, "001-token-bucket.lua")
				now := 1700000000
				// capacity 3, 1 token every 2 s
				steps := []int{0, 0, 0, 0, 1, 2, 2, 3, 4, 9, 30, 30}
				for _, d := range steps {
					s.do("EVAL", src, "1", "tb", "3", "1", "2", fmt.Sprint(now+d))
					s.do("GET", "tb")
					s.do("GET", "tb_time")
				}
				s.do("EVAL", src, "1", "tb2", "3", "1", "2")
				s.do("EVAL", src, "1", "tb3", "x", "1", "2", "100")
				s.do("EVAL", src, "1", "tb4", "3", "0", "2", "100")
			})
			t.Run("001-nbsp", func(t *testing.T) {
				s := newSeedRun(t, proto)
				s.do("EVAL", readSeed(t, "001-counter.nbsp.lua"), "1", "k", "5", "10")
				s.do("EVAL", readSeed(t, "001-token-bucket.nbsp.lua"), "1", "k", "3", "1", "2", "100")
				s.do("SCRIPT", "LOAD", readSeed(t, "001-counter.nbsp.lua"))
			})
			t.Run("002-sliding-window", func(t *testing.T) {
				s := newSeedRun(t, proto)
				src := readSeed(t, "002-sliding-window-zset.lua")
				now := int64(1700000000000)
				for _, d := range []int64{0, 10, 20, 30, 40, 500, 999, 1000, 1001, 1500, 2600} {
					s.do("EVAL", src, "1", "sw", "1000", fmt.Sprint(now+d), "3")
				}
				s.do("ZRANGE", "sw", "0", "-1", "WITHSCORES")
				s.ttl("PTTL", "sw")
				// window that is not a whole number of seconds
				s.do("EVAL", src, "1", "sw2", "1500", fmt.Sprint(now), "3")
				s.do("ZRANGE", "sw2", "0", "-1", "WITHSCORES")
				s.do("EVAL", src, "1", "sw3", "1000", fmt.Sprint(now))
				s.do("EVAL", src, "1", "sw3", "abc", fmt.Sprint(now), "3")
			})
			t.Run("003-multi-limit", func(t *testing.T) {
				s := newSeedRun(t, proto)
				src := readSeed(t, "003-multi-limit.lua")
				for i := 0; i < 12; i++ {
					s.do("EVAL", src, "2", "ip:1.2.3.4", "user:7", "[[1,10],[60,125],[3600,250]]", "1700000000.25")
				}
				s.do("GET", "ip:1.2.3.4:1:1700000000")
				s.do("GET", "user:7:60:28333333")
				s.do("EVAL", src, "2", "ip:1.2.3.4", "user:7", "[[1,10],", "1700000000.25")
				s.do("EVAL", src, "2", "ip:1.2.3.4", "user:7", "[[1,10]]")
			})
			t.Run("004-rate-limit", func(t *testing.T) {
				s := newSeedRun(t, proto)
				src := readSeed(t, "004-rate-limit.lua")
				for i := 0; i < 5; i++ {
					s.do("EVAL", src, "1", "1.2.3.4", "3", "60")
				}
				s.do("GET", "rate.limit:1.2.3.4")
				s.ttl("TTL", "rate.limit:1.2.3.4")
				// a 1 s window: refused, then allowed again after expiry
				for i := 0; i < 3; i++ {
					s.do("EVAL", src, "1", "9.9.9.9", "1", "1")
				}
				time.Sleep(1100 * time.Millisecond)
				s.do("EVAL", src, "1", "9.9.9.9", "1", "1")
				s.do("EVAL", src, "1", "5.6.7.8", "3", "abc")
				s.do("EVAL", src, "1", "5.6.7.8", "x", "60")
			})
			t.Run("evalsha-flow", func(t *testing.T) {
				// go-redis's NewScript: EVALSHA, NOSCRIPT, EVAL, EVALSHA
				s := newSeedRun(t, proto)
				src := readSeed(t, "001-counter.lua")
				s.do("SCRIPT", "FLUSH")
				sha := sha1hex(src)
				s.do("EVALSHA", sha, "1", "f", "5", "10")
				s.do("EVAL", src, "1", "f", "5", "10")
				s.do("EVALSHA", sha, "1", "f", "5", "10")
				s.do("EVALSHA", strings.ToUpper(sha), "1", "f", "5", "10")
			})
		})
	}
}

func sha1hex(s string) string { return luavm.SHA1Hex([]byte(s)) }
