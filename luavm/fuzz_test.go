package luavm

import (
	"strconv"
	"strings"
	"testing"

	"limitdb/engine"
	"limitdb/resp"
)

// The fuzz targets run in the test command for a few seconds each (see
// scripts/test.sh); crashers are kept under testdata/fuzz/<FuzzName>/.
// Every target checks that nothing panics (neither through the interpreter,
// which would turn a Go panic into a "runtime error" script error, nor
// through luavm's containment, "internal error") and that the reply is
// exactly one well-formed RESP value.

// fuzzEngine runs scripts by SHA with ARGV on one engine.
type fuzzEngine struct {
	e   *engine.Engine
	w   *resp.Writer
	c   *engine.Ctx
	sha map[string][]byte
}

func newFuzzEngine() *fuzzEngine {
	e := engine.New()
	e.Guard.MemLimit.Store(64 << 20)
	w := resp.NewWriter()
	return &fuzzEngine{e: e, w: w, c: &engine.Ctx{E: e, DB: e.DBs[0], W: w, Now: 1700000000000}, sha: map[string][]byte{}}
}

// eval runs src with ARGV args (RESP2 or RESP3) and returns the raw reply.
func (f *fuzzEngine) eval(t *testing.T, proto int, src string, args ...[]byte) []byte {
	f.w.Reset()
	f.w.Proto = proto
	sha, ok := f.sha[src]
	if !ok {
		f.c.Exec([][]byte{[]byte("script"), []byte("load"), []byte(src)})
		sha = []byte(string(f.w.B[len(f.w.B)-42 : len(f.w.B)-2]))
		f.sha[src] = sha
		f.w.Reset()
	}
	argv := append([][]byte{[]byte("evalsha"), sha, []byte("0")}, args...)
	f.c.Exec(argv)
	out := append([]byte(nil), f.w.B...)
	checkReply(t, out)
	return out
}

// checkReply fails t unless b is one well-formed RESP value and no panic
// reached the reply.
func checkReply(t *testing.T, b []byte) {
	t.Helper()
	n, ok := respValue(b, 0, 0)
	if !ok || n != len(b) {
		t.Fatalf("not one RESP value: %q", b)
	}
	if s := string(b); strings.Contains(s, "runtime error") || strings.Contains(s, "internal error") {
		t.Fatalf("panic in reply: %.300q", b)
	}
}

// respValue parses one RESP2/RESP3 value at b[i:] and returns its end.
func respValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) || depth > 10000 {
		return 0, false
	}
	end := strings.Index(string(b[i:]), "\r\n")
	if end < 1 {
		return 0, false
	}
	line := string(b[i+1 : i+end])
	next := i + end + 2
	if strings.ContainsAny(line, "\r\n") {
		return 0, false
	}
	switch b[i] {
	case '+', '-', ',', '(':
		return next, true
	case ':':
		_, err := strconv.ParseInt(line, 10, 64)
		return next, err == nil
	case '_':
		return next, line == ""
	case '#':
		return next, line == "t" || line == "f"
	case '$', '=':
		n, err := strconv.Atoi(line)
		if err != nil || n < -1 || (n == -1 && b[i] == '=') {
			return 0, false
		}
		if n == -1 {
			return next, true
		}
		if next+n+2 > len(b) || string(b[next+n:next+n+2]) != "\r\n" {
			return 0, false
		}
		return next + n + 2, true
	case '*', '~', '%', '>':
		n, err := strconv.Atoi(line)
		// every element takes at least 3 bytes: a larger count is not a
		// complete value (and %'s doubling of a count near 2^62
		// overflowed to a negative, an "empty" map: parseReply then
		// read 5.5e18 pairs, the crasher kept in testdata)
		if err != nil || n < -1 || n > len(b) {
			return 0, false
		}
		if b[i] == '%' {
			n *= 2
		}
		for k := 0; k < n; k++ {
			var ok bool
			if next, ok = respValue(b, next, depth+1); !ok {
				return 0, false
			}
		}
		return next, true
	}
	return 0, false
}

// FuzzReplyToLua: a command reply (any well-formed RESP value, as a
// command could answer) → Lua value (redis.call's conversion) → the
// script's reply. Replies come from the engine, which only writes
// well-formed values, so malformed input is skipped.
func FuzzReplyToLua(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "-ERR x\r\n", ":-12\r\n", "$3\r\nabc\r\n", "$-1\r\n", "*-1\r\n",
		"*3\r\n:1\r\n$1\r\na\r\n*1\r\n+x\r\n", "%1\r\n$1\r\nk\r\n,1.5\r\n", "~2\r\n:1\r\n:2\r\n", "_\r\n", "#t\r\n",
		",inf\r\n", ",-nan\r\n", "(12345678901234567890\r\n", "=7\r\ntxt:abc\r\n", ">2\r\n$1\r\na\r\n$1\r\nb\r\n"} {
		f.Add([]byte(s), uint8(2))
		f.Add([]byte(s), uint8(3))
	}
	fe := newFuzzEngine()
	f.Fuzz(func(t *testing.T, in []byte, proto uint8) {
		if n, ok := respValue(in, 0, 0); !ok || n != len(in) {
			t.Skip()
		}
		p := 2 + int(proto%2)
		v := fe.e.Scripts
		_ = v
		st := StateOf(fe.e)
		m := st.getVM()
		L := m.L
		m.proto = p
		lv, next, _ := m.parseReply(L, in, 0)
		if next != len(in) {
			t.Fatalf("parseReply stopped at %d of %d: %q", next, len(in), in)
		}
		w := resp.NewWriter()
		w.Proto = p
		m.writeResult(w, lv, resultSlots)
		checkReply(t, w.B)
	})
}

// FuzzScriptResult: a script returning an arbitrary Lua expression (built
// from the fuzz input) → RESP, in RESP2 and RESP3.
func FuzzScriptResult(f *testing.F) {
	for _, s := range []string{"1", "'x'", "{1, 2, {3}}", "{ok='OK'}", "{err='bad'}", "{double=1.5}", "{map={a=1}}",
		"{set={a=true}}", "{big_number='123'}", "{verbatim_string={format='txt', string='x'}}", "nil", "true", "false",
		"{1, nil, 3}", "3.99", "-0.5", "1/0", "0/0", "2^63", "{ok=1}", "{err={}}", "(function() local t = {} t[1] = t return t end)()"} {
		f.Add(s, uint8(2))
		f.Add(s, uint8(3))
	}
	fe := newFuzzEngine()
	f.Fuzz(func(t *testing.T, expr string, proto uint8) {
		if len(expr) > 512 || strings.ContainsAny(expr, "\x00") || strings.Contains(expr, "while") || strings.Contains(expr, "repeat") ||
			strings.Contains(expr, "for") || strings.Contains(expr, "function") && strings.Contains(expr, "return") && strings.Count(expr, "(") > 8 {
			t.Skip() // bounded work: no loops
		}
		fe.eval(t, 2+int(proto%2), "redis.setresp("+strconv.Itoa(2+int(proto%2))+") return "+expr)
	})
}

// FuzzCjsonDecode: cjson.decode of any input, and encode of what it
// decoded.
func FuzzCjsonDecode(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}],"c":"\u00e9\n"}`, `[1e400, -0, 0.1]`, `"\ud800"`, `[[[[[]]]]]`, `{"a":1,"a":2}`,
		`tru`, `[1,]`, `{"a" 1}`, strings.Repeat("[", 1100), `"\x"`, `123abc`, `[` + strings.Repeat("1,", 100) + `1]`} {
		f.Add([]byte(s))
	}
	fe := newFuzzEngine()
	f.Fuzz(func(t *testing.T, in []byte) {
		fe.eval(t, 2, "local ok, v = pcall(cjson.decode, ARGV[1]) if not ok then return {err=v} end return cjson.encode(v)", in)
	})
}

// FuzzCmsgpackUnpack: cmsgpack.unpack of any input, and pack of what it
// decoded.
func FuzzCmsgpackUnpack(f *testing.F) {
	for _, s := range []string{"\x93\x01\xa1a\xc0", "\x82\xa1a\x01\xa1b\xcb\x3f\xf8\x00\x00\x00\x00\x00\x00", "\xdd\xff\xff\xff\xff",
		"\xdf\xff\xff\xff\xff", "\xdb\xff\xff\xff\xff", "\xc1", "\xd3\x80\x00\x00\x00\x00\x00\x00\x00", "\xca\x7f\xc0\x00\x00",
		strings.Repeat("\x91", 5000), strings.Repeat("\x01", 9000)} {
		f.Add([]byte(s))
	}
	fe := newFuzzEngine()
	f.Fuzz(func(t *testing.T, in []byte) {
		fe.eval(t, 2, "local r = {pcall(cmsgpack.unpack, ARGV[1])} if not r[1] then return {err=r[2]} end table.remove(r, 1) return cmsgpack.pack(unpack(r))", in)
		fe.eval(t, 2, "local r = {pcall(cmsgpack.unpack_limit, ARGV[1], 2, 1)} return #r", in)
	})
}

// FuzzStructUnpack: struct.unpack with any format and data, and
// struct.pack of the format with what it decoded.
func FuzzStructUnpack(f *testing.F) {
	for _, s := range [][2]string{{">I2", "\x01\x02"}, {"<i4 h b B", "\xfe\xff\xff\xff\xfd\xff\xfc\xfa"}, {"!4 b i", "\x01\x00\x00\x00\x02\x00\x00\x00"},
		{"d f", "\x00\x00\x00\x00\x00\x00\xf8\x3f\x00\x00\x80\x3e"}, {"c3 s", "abcxy\x00"}, {"c0", "\x03abcd"}, {"b c0", "\x03abcd"},
		{"i40", "x"}, {"c2147483647", "x"}, {"!3 i", ""}, {"s", "abc"}, {"x", ""}, {"=<>!", ""}} {
		f.Add(s[0], []byte(s[1]))
	}
	fe := newFuzzEngine()
	f.Fuzz(func(t *testing.T, format string, data []byte) {
		fe.eval(t, 2, "local r = {pcall(struct.unpack, ARGV[1], ARGV[2])} if not r[1] then return {err=r[2]} end table.remove(r, 1) table.remove(r) local ok, s = pcall(struct.pack, ARGV[1], unpack(r)) return {tostring(ok), s}", []byte(format), data)
		fe.eval(t, 2, "local ok, n = pcall(struct.size, ARGV[1]) return {tostring(ok), n}", []byte(format))
	})
}
