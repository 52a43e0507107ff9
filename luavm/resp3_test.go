package luavm

import (
	"testing"

	"limitdb/engine"
	"limitdb/resp"
)

// TestRESP3Conversions checks script results for a RESP3 client, with and
// without redis.setresp(3). Expected bytes were taken from redis-server
// 7.0.15 after HELLO 3 (the differential harness needs HELLO, which lives
// in another branch).
func TestRESP3Conversions(t *testing.T) {
	cases := []struct{ script, want string }{
		{"return nil", "_\r\n"},
		{"return false", "_\r\n"},
		{"return true", ":1\r\n"},
		{"return {1, false, 'a'}", "*3\r\n:1\r\n_\r\n$1\r\na\r\n"},
		{"return {double=1.5}", ",1.5\r\n"},
		{"return {big_number='123'}", "(123\r\n"},
		{"redis.setresp(3) return {map={a=1}}", "%1\r\n$1\r\na\r\n:1\r\n"},
		{"redis.setresp(3) return {set={a=true}}", "~1\r\n$1\r\na\r\n"},
		{"redis.setresp(3) return true", "#t\r\n"},
		{"redis.setresp(3) return false", "#f\r\n"},
		{"redis.setresp(3) return {false, true}", "*2\r\n#f\r\n#t\r\n"},
		{"redis.setresp(3) return redis.call('get', 'nokey')", "_\r\n"},
		{"redis.setresp(3) return type(redis.call('get', 'nokey'))", "$3\r\nnil\r\n"},
		{"return redis.call('get', 'nokey')", "_\r\n"},
		{"return type(redis.call('get', 'nokey'))", "$7\r\nboolean\r\n"},
		{"return {map={a=1}}", "%1\r\n$1\r\na\r\n:1\r\n"},
		{"return {set={a=true}}", "~1\r\n$1\r\na\r\n"},
		{"redis.setresp(3) return {double=0.5}", ",0.5\r\n"},
		{"return {verbatim_string={format='txt', string='hi'}}", "=6\r\ntxt:hi\r\n"},
	}
	e := engine.New()
	w := &resp.Writer{Proto: 3}
	c := &engine.Ctx{E: e, DB: e.DBs[0], W: w, Now: 1700000000000}
	for _, tc := range cases {
		w.Reset()
		c.Exec([][]byte{[]byte("eval"), []byte(tc.script), []byte("0")})
		if got := string(w.B); got != tc.want {
			t.Errorf("%s:\n got  %q\n want %q", tc.script, got, tc.want)
		}
	}
}

// TestRandomSequence checks redisLrand48 against values read from
// redis-server 7.0.15 (math.randomseed(1700000000000) then four draws).
func TestRandomSequence(t *testing.T) {
	e := engine.New()
	w := resp.NewWriter()
	c := &engine.Ctx{E: e, DB: e.DBs[0], W: w}
	c.Exec([][]byte{[]byte("eval"), []byte("math.randomseed(1700000000000) return {math.random(1000,9999), math.random(1000,9999), math.random(), math.random(10)}"), []byte("0")})
	if got, want := string(w.B), "*4\r\n:7041\r\n:9828\r\n:0\r\n:7\r\n"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	w.Reset()
	c.Exec([][]byte{[]byte("eval"), []byte("return {math.random(1000,9999), math.random(1000,9999)}"), []byte("0")})
	if got, want := string(w.B), "*2\r\n:3933\r\n:3747\r\n"; got != want {
		t.Fatalf("state kept between scripts: got %q want %q", got, want)
	}
}

// TestRandomFreshState: the first draws of a fresh server without a seed
// (redis-server 7.0.15 answers 396465 then 840486).
func TestRandomFreshState(t *testing.T) {
	e := engine.New()
	w := resp.NewWriter()
	c := &engine.Ctx{E: e, DB: e.DBs[0], W: w}
	c.Exec([][]byte{[]byte("eval"), []byte("return {math.random(1,1000000), math.random(1,1000000)}"), []byte("0")})
	if got, want := string(w.B), "*2\r\n:396465\r\n:840486\r\n"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
}
