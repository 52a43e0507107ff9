package engine

import (
	"strconv"
	"testing"

	"limitdb/resp"
)

func benchCtx() *Ctx {
	e := New()
	return &Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: 1_700_000_000_000}
}

func benchRun(b *testing.B, c *Ctx, argv [][]byte) {
	cmd := c.Resolve(argv)
	for i := 0; i < b.N; i++ {
		c.W.Reset()
		c.Call(cmd, argv)
	}
}

// Steady-state SET/GET/EXPIRE/TTL on an existing key: SET of an integer
// value and the read paths must not allocate.
func TestHotPathAllocs(t *testing.T) {
	c := benchCtx()
	c.Exec([][]byte{[]byte("set"), []byte("k"), []byte("v")})
	for _, argv := range [][][]byte{
		{[]byte("get"), []byte("k")},
		{[]byte("set"), []byte("k"), []byte("12345")},
		{[]byte("get"), []byte("k")},
		{[]byte("incr"), []byte("k")},
		{[]byte("pexpire"), []byte("k"), []byte("100000")},
		{[]byte("pttl"), []byte("k")},
		{[]byte("exists"), []byte("k")},
		{[]byte("strlen"), []byte("k")},
		{[]byte("mget"), []byte("k"), []byte("k")},
	} {
		cmd := c.Resolve(argv)
		n := testing.AllocsPerRun(100, func() {
			c.W.Reset()
			c.Call(cmd, argv)
		})
		if n != 0 {
			t.Errorf("%s allocates %.1f times per call", argv[0], n)
		}
	}
}

func BenchmarkSetString(b *testing.B) {
	c := benchCtx()
	benchRun(b, c, [][]byte{[]byte("set"), []byte("key:1"), []byte("some value")})
}

func BenchmarkSetEX(b *testing.B) {
	c := benchCtx()
	benchRun(b, c, [][]byte{[]byte("set"), []byte("key:1"), []byte("123"), []byte("EX"), []byte("100")})
}

func BenchmarkGet(b *testing.B) {
	c := benchCtx()
	c.Exec([][]byte{[]byte("set"), []byte("key:1"), []byte("some value")})
	benchRun(b, c, [][]byte{[]byte("get"), []byte("key:1")})
}

func BenchmarkSetNewKeys(b *testing.B) {
	c := benchCtx()
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i))
	}
	argv := [][]byte{[]byte("set"), nil, []byte("1")}
	cmd := c.Resolve(argv)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		argv[1] = keys[i&(1<<16-1)]
		c.W.Reset()
		c.Call(cmd, argv)
	}
}
