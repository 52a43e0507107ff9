package tests

import (
	"bytes"
	"testing"
)

// Function libraries in dump.rdb (RDB_OPCODE_FUNCTION2, as Redis 7.0
// writes them): a file Redis writes loads into limitdb with its libraries,
// and a snapshot limitdb writes loads into redis-server with them; the
// libraries answer the same FUNCTION LIST, FUNCTION DUMP and FCALL on both
// sides, and a limitdb snapshot reloads with the same strict digest.

var rdbLibraries = []string{
	"#!lua name=rdblib1\nredis.register_function('rf1', function(keys, args) return redis.call('incr', keys[1]) end)",
	"#!lua name=rdblib2\nlocal function twice(x) return x * 2 end\nredis.register_function{function_name='rf2', callback=function(keys, args) return twice(tonumber(args[1])) end, flags={'no-writes'}, description='doubles'}",
}

// libraryChecks are the replies compared on both sides.
var libraryChecks = [][]string{
	{"FUNCTION", "LIST", "LIBRARYNAME", "rdblib1", "WITHCODE"},
	{"FUNCTION", "LIST", "LIBRARYNAME", "rdblib2", "WITHCODE"},
	{"FUNCTION", "STATS"},
	{"FCALL", "rf1", "1", "rdbcnt"},
	{"FCALL_RO", "rf2", "0", "21"},
	{"FUNCTION", "DELETE", "rdblib2"},
	{"FUNCTION", "DUMP"},
}

func TestRDBFunctionsFromRedis(t *testing.T) {
	r, rc := mustRedisConn(t)
	for _, code := range rdbLibraries {
		redisDo(t, rc, "FUNCTION", "LOAD", code)
	}
	redisDo(t, rc, "SET", "rdbcnt", "5")
	c := reloadIntoEngine(t, r, rc)
	for _, cmd := range libraryChecks {
		a := redisDo(t, rc, cmd...)
		if b := engineRun(c, cmd...); !bytes.Equal(a, b) {
			t.Errorf("%v: Redis %q, limitdb %q", cmd, a, b)
		}
	}
}

func TestRDBFunctionsToRedis(t *testing.T) {
	c := newEngineCtx()
	for _, code := range rdbLibraries {
		if rep := engineRun(c, "FUNCTION", "LOAD", code); rep[0] == '-' {
			t.Fatalf("FUNCTION LOAD: %s", rep)
		}
	}
	engineRun(c, "SET", "rdbcnt", "5")
	var buf bytes.Buffer
	if err := c.E.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	// a limitdb snapshot reloads into limitdb with the same strict state
	re := newEngineCtx()
	if err := re.E.LoadSnapshot(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if a, b := c.E.StrictDigest(), re.E.StrictDigest(); a != b {
		t.Fatalf("strict digest %s after reload, %s before", b.Hex(), a.Hex())
	}
	rc := redisOnSnapshot(t, buf.Bytes())
	for _, cmd := range libraryChecks {
		a := redisDo(t, rc, cmd...)
		if b := engineRun(c, cmd...); !bytes.Equal(a, b) {
			t.Errorf("%v: Redis %q, limitdb %q", cmd, a, b)
		}
	}
}
