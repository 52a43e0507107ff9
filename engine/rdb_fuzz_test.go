package engine

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"strings"
	"testing"

	"limitdb/resp"
)

// FuzzRDBLoad: any bytes given to LoadSnapshot, or parsed as a DUMP
// payload, give an error or a state — never a panic, never unbounded
// memory — and a state that loaded writes out and reloads to itself.
// Seeds (testdata/fuzz/FuzzRDBLoad): a limitdb snapshot with every type,
// a redis-server 7.0 dump.rdb, DUMP payloads.
//
//	go test ./engine -run XXX -fuzz FuzzRDBLoad -fuzztime 20000x
func FuzzRDBLoad(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		e := New()
		if err := e.LoadSnapshot(bytes.NewReader(data)); err == nil {
			var buf bytes.Buffer
			if err := e.WriteSnapshot(&buf); err != nil {
				t.Fatal(err)
			}
			e2 := New()
			if err := e2.LoadSnapshot(bytes.NewReader(buf.Bytes())); err != nil {
				t.Fatalf("rewritten snapshot does not load: %v", err)
			}
			if a, b := strictState(e), strictState(e2); a != b {
				t.Fatalf("reload differs: %s", firstDiff(a, b))
			}
		}
		// as a payload: with its own footer, and behind RESTORE
		p := append(append([]byte(nil), data...), rdbVersion, 0)
		p = binary.LittleEndian.AppendUint64(p, crc64Update(0, p))
		if v, err := loadDumpPayload(p, &defaultLimits); err == nil {
			en := e.DBs[1].dict.insert("k")
			v.install(en)
			e.dumpPayload(en)
		}
		c := &Ctx{E: e, DB: e.DBs[2], W: resp.NewWriter(), Now: 1}
		c.Exec([][]byte{[]byte("RESTORE"), []byte("k"), []byte("0"), p, []byte("REPLACE")})
	})
}

// TestRDBHostile: every truncation of a snapshot is an error; corrupted
// bytes never panic; huge claimed lengths and counts fail without
// allocating what they claim.
func TestRDBHostile(t *testing.T) {
	c := newTestCtx()
	fillEveryEncoding(t, c)
	var buf bytes.Buffer
	if err := c.E.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	step := max(1, len(good)/3000)
	for n := 0; n < len(good); n += step {
		if err := New().LoadSnapshot(bytes.NewReader(good[:n])); err == nil {
			t.Fatalf("truncated to %d bytes: loaded", n)
		}
	}
	bad := append([]byte(nil), good...)
	for i := 9; i < len(bad); i += 97 {
		bad[i] ^= 0x5a
		New().LoadSnapshot(bytes.NewReader(bad)) // must not panic
		bad[i] ^= 0x5a
	}
	// a checksum error is reported as such
	bad[len(bad)-1] ^= 1
	if err := New().LoadSnapshot(bytes.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("bad checksum: %v", err)
	}
	huge := [][]byte{
		// a string value of 2^62 bytes
		[]byte("REDIS0010\x00\x01k\x81\x40\x00\x00\x00\x00\x00\x00\x00abc"),
		// a list of 2^32 nodes
		[]byte("REDIS0010\x12\x01k\x80\xff\xff\xff\xff\x02\x01a"),
		// LZF claiming a 4 GB result from 3 bytes
		[]byte("REDIS0010\x00\x01k\xc3\x03\x80\xff\xff\xff\xff\x01ab"),
		// a set of 2^60 members
		[]byte("REDIS0010\x02\x01k\x81\x10\x00\x00\x00\x00\x00\x00\x00\x01a"),
		// a sliding log of 2^40 slots
		append([]byte("REDIS0010\x07\x01k"), limiterSeed(1<<40)...),
	}
	for i, h := range huge {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		err := New().LoadSnapshot(bytes.NewReader(h))
		runtime.ReadMemStats(&m1)
		if err == nil {
			t.Fatalf("huge %d loaded", i)
		}
		if d := m1.TotalAlloc - m0.TotalAlloc; d > 8<<20 {
			t.Fatalf("huge %d: allocated %d bytes", i, d)
		}
	}
}

// limiterSeed is a sliding-log limiter value whose ring claims n slots.
func limiterSeed(n uint64) []byte {
	w := &rdbWriter{}
	w.length(limiterModuleID)
	for _, f := range []struct {
		op byte
		v  uint64
	}{{moduleOpUInt, 5}, {moduleOpUInt, 10}, {moduleOpUInt, 1000}, {moduleOpUInt, 0}, {moduleOpSInt, 0}, {moduleOpSInt, 0}, {moduleOpUInt, n}} {
		w.byte1(f.op)
		w.length(f.v)
	}
	return w.buf
}
