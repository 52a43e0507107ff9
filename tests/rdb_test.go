package tests

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"limitdb/engine"
	_ "limitdb/luavm" // EVAL in the population scripts
	"limitdb/resp"
)

// RDB compatibility with redis-server 7.0: a dump.rdb Redis writes (every
// type and encoding) loads into limitdb with the same DEBUG DIGEST and the
// encodings Redis itself gives after loading it; a snapshot limitdb writes
// loads into Redis with the same digest; a snapshot holding a native
// limiter is refused by Redis with the module-type error commands.md
// names; DUMP payloads cross in both directions.

// rdbPopulate are the commands that build the data set: strings of every
// RDB string encoding, lists of one and many quicklist nodes, hashes,
// sets and sorted sets in both encodings, deadlines, several databases.
var rdbPopulate = [][]string{
	{"SET", "s", "hello"}, {"SET", "n", "12345"}, {"SET", "big", "9000000000000"}, {"SET", "neg", "-7"},
	{"SET", "empty", ""}, {"SET", "bin", "\x00\xff\r\n"},
	{"EVAL", "return redis.call('SET', KEYS[1], string.rep('abcdefgh', 300))", "1", "lz"},
	{"EVAL", "local t={} for i=1,3000 do t[i]=string.char(97+math.random(0,4)) end return redis.call('SET', KEYS[1], table.concat(t))", "1", "lzrand"},
	{"APPEND", "ap", "12"}, {"APPEND", "ap", "34x"}, {"INCRBYFLOAT", "f", "2.5"}, {"SETRANGE", "sr", "2", "ab"},
	{"RPUSH", "l", "a", "1", "-2", "300", "70000", "9000000000", "", "x y"},
	{"EVAL", "for i=1,3000 do redis.call('rpush', KEYS[1], 'element'..i, i) end return 1", "1", "lbig"},
	{"EVAL", "return redis.call('rpush', KEYS[1], string.rep('y', 70000), 'a', string.rep('ab', 5000))", "1", "llong"},
	{"HSET", "h", "f1", "v1", "n", "42", "e", ""},
	{"EVAL", "for i=1,600 do redis.call('hset', KEYS[1], 'field'..i, i*3) end return 1", "1", "hbig"},
	{"HSET", "hlong", "f", strings.Repeat("v", 100)},
	{"SADD", "si", "1", "2", "-3", "70000", "5000000000"}, {"SADD", "ss", "a", "b", "1"},
	{"EVAL", "for i=1,600 do redis.call('sadd', KEYS[1], i*7) end return 1", "1", "sibig"},
	{"EVAL", "for i=1,600 do redis.call('sadd', KEYS[1], 'm'..i) end return 1", "1", "sbig"},
	{"ZADD", "z", "1", "a", "2.5", "b", "-3", "c", "inf", "d", "0.1", "e"},
	{"ZADD", "zb", "1", "a", "-0", "b", "2", strings.Repeat("m", 80)},
	{"EVAL", "for i=1,300 do redis.call('zadd', KEYS[1], i/7, 'm'..i) end return 1", "1", "zbig"},
	{"SET", "e1", "v", "PX", "100000000"}, {"HSET", "e2", "a", "b"}, {"PEXPIREAT", "e2", "4102444800000"},
	{"SELECT", "5"}, {"SET", "other", "db5"}, {"RPUSH", "ol", "1", "2"},
	{"SELECT", "15"}, {"SADD", "last", "x"},
	{"SELECT", "0"},
}

// engineRun executes a command on an engine context the way a client
// would (SELECT switches c.DB) and returns the raw reply.
func engineRun(c *engine.Ctx, args ...string) []byte {
	if strings.EqualFold(args[0], "SELECT") {
		n, _ := strconv.Atoi(args[1])
		c.DB = c.E.DBs[n]
		return []byte("+OK\r\n")
	}
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	c.W.Reset()
	c.Exec(argv)
	return append([]byte(nil), c.W.B...)
}

func newEngineCtx() *engine.Ctx {
	e := engine.New()
	return &engine.Ctx{E: e, DB: e.DBs[0], W: resp.NewWriter(), Now: time.Now().UnixMilli()}
}

// bulk returns the payload of a bulk-string or status reply.
func bulk(t *testing.T, r []byte) string {
	t.Helper()
	switch {
	case len(r) > 0 && r[0] == '+':
		return strings.TrimSuffix(string(r[1:]), "\r\n")
	case len(r) > 0 && r[0] == '$':
		i := bytes.IndexByte(r, '\n')
		return string(r[i+1 : len(r)-2])
	}
	t.Fatalf("not a bulk or status reply: %q", r)
	return ""
}

func redisDo(t *testing.T, c *Conn, args ...string) []byte {
	t.Helper()
	r, err := c.Do(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if len(r) > 0 && r[0] == '-' {
		t.Fatalf("%v: %s", args, r)
	}
	return r
}

// allKeys lists the current database's keys as the engine has them.
func allKeys(c *engine.Ctx) []string {
	var keys []string
	for _, line := range strings.Split(string(engineRun(c, "KEYS", "*")), "\r\n")[1:] {
		if line != "" && line[0] != '$' {
			keys = append(keys, line)
		}
	}
	return keys
}

// TestRDBFromRedis: Redis writes dump.rdb (after DEBUG RELOAD, so that
// its live encodings are the ones its loader chose); limitdb loads it:
// same DEBUG DIGEST, same OBJECT ENCODING for every key, same deadlines.
func TestRDBFromRedis(t *testing.T) {
	r, rc := mustRedisConn(t)
	for _, cmd := range rdbPopulate {
		redisDo(t, rc, cmd...)
	}
	c := reloadIntoEngine(t, r, rc)
	want := bulk(t, redisDo(t, rc, "DEBUG", "DIGEST"))
	if got := c.E.DatasetDigest(); got.Hex() != want {
		t.Fatalf("digest %s, Redis %s", got.Hex(), want)
	}
	for _, db := range []string{"0", "5", "15"} {
		redisDo(t, rc, "SELECT", db)
		engineRun(c, "SELECT", db)
		keys := allKeys(c)
		if len(keys) == 0 {
			t.Fatalf("db %s: no keys", db)
		}
		for _, k := range keys {
			for _, cmd := range [][]string{{"OBJECT", "ENCODING", k}, {"PEXPIRETIME", k}, {"TYPE", k}} {
				a, _ := rc.Do(cmd...)
				if b := engineRun(c, cmd...); !bytes.Equal(a, b) {
					t.Errorf("db %s %v: Redis %q, limitdb %q", db, cmd, a, b)
				}
			}
		}
	}
}

// populatedEngine runs rdbPopulate on a fresh engine.
func populatedEngine(t *testing.T) *engine.Ctx {
	c := newEngineCtx()
	for _, cmd := range rdbPopulate {
		if r := engineRun(c, cmd...); len(r) > 0 && r[0] == '-' {
			t.Fatalf("%v: %s", cmd, r)
		}
	}
	return c
}

// reloadIntoEngine has r write its dataset to dump.rdb (DEBUG RELOAD on
// rc) and loads that file into a fresh engine.
func reloadIntoEngine(t *testing.T, r *Redis, rc *Conn) *engine.Ctx {
	t.Helper()
	redisDo(t, rc, "DEBUG", "RELOAD")
	data, err := os.ReadFile(filepath.Join(r.dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	c := newEngineCtx()
	if err := c.E.LoadSnapshot(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	return c
}

// redisOnSnapshot starts a redis-server that loads snap at start-up
// (its dbfilename, in a dir of its own) and connects to it.
func redisOnSnapshot(t *testing.T, snap []byte) *Conn {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "limitdb.rdb"), snap, 0o600); err != nil {
		t.Fatal(err)
	}
	_, rc := mustRedisConn(t, "--dir", dir, "--dbfilename", "limitdb.rdb")
	return rc
}

// TestRDBToRedis: a snapshot limitdb writes is a dump.rdb redis-server
// 7.0 loads, with the same DEBUG DIGEST (limitdb's aux fields skipped).
func TestRDBToRedis(t *testing.T) {
	c := populatedEngine(t)
	var buf bytes.Buffer
	if err := c.E.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	rc := redisOnSnapshot(t, buf.Bytes())
	want := c.E.DatasetDigest()
	if got := bulk(t, redisDo(t, rc, "DEBUG", "DIGEST")); got != want.Hex() {
		t.Fatalf("Redis digest %s, limitdb %s", got, want.Hex())
	}
}

// TestRDBLimiterRefusedByRedis: Redis will not start on a snapshot that
// holds a native limiter, and says why.
func TestRDBLimiterRefusedByRedis(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed")
	}
	c := newEngineCtx()
	engineRun(c, "RL.ALLOW", "lim", "10", "1000")
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := c.E.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir).CombinedOutput()
	// it reports the error (and runs its RDB checker, which walks the
	// limiter as a module value: "RDB looks OK") and exits
	if ctx.Err() != nil || !strings.Contains(string(out), "no matching module type 'limitdbRL'") ||
		!strings.Contains(string(out), "RDB looks OK") {
		t.Fatalf("redis-server: %v\n%s", err, out)
	}
}

// TestDumpRestoreAcross: every value DUMPed by limitdb RESTOREs in Redis
// with the same DEBUG DIGEST-VALUE, and the other way round (hashtable
// encodings included, whose payloads list members in each server's own
// order).
func TestDumpRestoreAcross(t *testing.T) {
	_, rc := mustRedisConn(t)
	c := populatedEngine(t)
	for _, cmd := range rdbPopulate {
		redisDo(t, rc, cmd...)
	}
	for _, k := range allKeys(c) {
		ttl := strings.Trim(string(engineRun(c, "PEXPIRETIME", k)), ":\r\n")
		if ttl == "-1" {
			ttl = "0"
		}
		p := bulk(t, engineRun(c, "DUMP", k))
		redisDo(t, rc, "RESTORE", "from-limitdb", ttl, p, "REPLACE", "ABSTTL")
		want := c.DB.ValueDigest(k)
		if a := redisDo(t, rc, "DEBUG", "DIGEST-VALUE", "from-limitdb"); string(a) != "*1\r\n+"+want.Hex()+"\r\n" {
			t.Errorf("%s: Redis restored %q, limitdb %s", k, a, want.Hex())
		}
		q := bulk(t, redisDo(t, rc, "DUMP", k))
		if out := engineRun(c, "RESTORE", "from-redis", ttl, q, "REPLACE", "ABSTTL"); string(out) != "+OK\r\n" {
			t.Fatalf("%s: RESTORE of Redis's payload: %s", k, out)
		}
		if got := c.DB.ValueDigest("from-redis"); got != want {
			t.Errorf("%s: restored from Redis %s, limitdb %s", k, got.Hex(), want.Hex())
		}
		ra, _ := rc.Do("OBJECT", "ENCODING", k)
		if rb := engineRun(c, "OBJECT", "ENCODING", "from-redis"); !bytes.Equal(ra, rb) && k != "ap" && k != "sr" {
			t.Errorf("%s: encoding after RESTORE %q, Redis's original %q", k, rb, ra)
		}
	}
}
