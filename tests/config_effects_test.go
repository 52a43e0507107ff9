package tests

import (
	"net"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// effectTest observes, on a server of its own, that setting the CONFIG
// parameter name changes behaviour (or, for a value limitdb cannot
// honour, that CONFIG SET refuses it while accepting the one it honours).
// name is the name CONFIG GET * listed, so aliases are exercised under
// their own name. Each test restores the default it changed.
type effectTest func(t *testing.T, c *Conn, addr, name string)

// configEffects is the registry: one entry per name CONFIG GET * lists
// (tcp-keepalive's test reads Linux socket options: its file,
// config_effects_keepalive_linux_test.go, adds it). commands.md's
// "Configuration parameters" table mirrors it.
var configEffects = map[string]effectTest{
	"hz":                                effectHz,
	"slowlog-log-slower-than":           effectSlowlogSlower,
	"slowlog-max-len":                   effectSlowlogMaxLen,
	"proto-max-bulk-len":                effectProtoMaxBulk,
	"client-query-buffer-limit":         effectQueryBufferLimit,
	"maxclients":                        effectMaxclients,
	"maxmemory":                         effectMaxmemory,
	"maxmemory-policy":                  effectMaxmemoryPolicy,
	"maxmemory-samples":                 effectMaxmemorySamples,
	"requirepass":                       effectRequirepass,
	"aclfile":                           effectACLFile,
	"acllog-max-len":                    effectACLLogMaxLen,
	"tls-port":                          effectTLSPort,
	"tls-cert-file":                     effectTLSKeyPair,
	"tls-key-file":                      effectTLSKeyPair,
	"tls-ca-cert-file":                  effectTLSCAFile,
	"tls-ca-cert-dir":                   effectTLSCADir,
	"tls-auth-clients":                  effectTLSAuthClients,
	"tls-protocols":                     effectTLSProtocols,
	"port":                              effectPort,
	"bind":                              effectBind,
	"timeout":                           effectTimeout,
	"loglevel":                          effectLoglevel,
	"protected-mode":                    effectProtectedMode,
	"unixsocket":                        effectUnixSocket,
	"unixsocketperm":                    effectUnixSocketPerm,
	"databases":                         effectDatabases,
	"dir":                               refusedWith("/tmp", "can't set protected config"),
	"hash-max-listpack-entries":         encodingEffect("2", "512", "hashtable", "listpack", "HSET", "f1", "1", "f2", "2", "f3", "3"),
	"hash-max-ziplist-entries":          encodingEffect("2", "512", "hashtable", "listpack", "HSET", "f1", "1", "f2", "2", "f3", "3"),
	"hash-max-listpack-value":           encodingEffect("4", "64", "hashtable", "listpack", "HSET", "f", "12345"),
	"hash-max-ziplist-value":            encodingEffect("4", "64", "hashtable", "listpack", "HSET", "f", "12345"),
	"set-max-intset-entries":            encodingEffect("2", "512", "hashtable", "intset", "SADD", "1", "2", "3"),
	"zset-max-listpack-entries":         encodingEffect("2", "128", "skiplist", "listpack", "ZADD", "1", "a", "2", "b", "3", "c"),
	"zset-max-ziplist-entries":          encodingEffect("2", "128", "skiplist", "listpack", "ZADD", "1", "a", "2", "b", "3", "c"),
	"zset-max-listpack-value":           encodingEffect("2", "64", "skiplist", "listpack", "ZADD", "1", "abc"),
	"zset-max-ziplist-value":            encodingEffect("2", "64", "skiplist", "listpack", "ZADD", "1", "abc"),
	"lazyfree-lazy-user-del":            refusedWith("yes", "limitdb does not free values lazily", "no"),
	"appendonly":                        effectAppendonly,
	"appendfsync":                       effectAppendfsync,
	"node-id":                           effectNodeID,
	"cluster-enabled":                   effectClusterEnabled,
	"cluster-config-file":               refusedWith("x.conf", immutable),
	"raft-addr":                         effectRaftAddr,
	"raft-advertise":                    effectRaftAdvertise,
	"cluster-announce-ip":               effectClusterAnnounce,
	"cluster-announce-port":             effectClusterAnnounce,
	"cluster-announce-bus-port":         effectClusterAnnounce,
	"tls-cluster":                       effectLinkTLS,
	"tls-replication":                   effectLinkTLS,
	"join":                              effectJoin,
	"cluster-secret":                    effectClusterSecret,
	"leader-wait-ms":                    effectLeaderWait,
	"max-clock-skew-ms":                 effectMaxClockSkew,
	"debug-clock-offset-ms":             effectDebugClockOffset,
	"raft-snapshot-threshold":           effectSnapshotThreshold,
	"raft-trailing-logs":                effectTrailingLogs,
	"raft-snapshot-interval":            effectSnapshotInterval,
	"save":                              effectSave,
	"dbfilename":                        effectDbfilename,
	"rdbcompression":                    effectRdbcompression,
	"rdbchecksum":                       effectRdbchecksum,
	"stop-writes-on-bgsave-error":       effectStopWritesOnBgsaveError,
	"notify-keyspace-events":            effectNotify, // pubsub_test.go
	"client-output-buffer-limit":        effectObuf,
	"client-output-pause-size":          effectOutputPause,
	"busy-reply-threshold":              effectBusyThreshold,
	"lua-time-limit":                    effectBusyThreshold,
	"lua-memory-limit":                  effectLuaMemoryLimit,
	"enable-debug-command":              effectEnableDebug,
	"io-model":                          effectIOModel,
	"metrics-port":                      effectMetricsPort, // metrics_test.go
	"metrics-bind":                      effectMetricsBind,
	"metrics-policy-labels":             effectMetricsPolicyLabels,
	"latency-tracking-info-percentiles": effectLatencyPercentiles,
}

// TestConfigEffects walks CONFIG GET * and runs each parameter's effect
// test; a listed parameter without an effect test fails.
func TestConfigEffects(t *testing.T) {
	addr, c := mustLimitdbConn(t)
	all := mustDoValue(t, c, "CONFIG", "GET", "*").([]any)
	var names []string
	for i := 0; i < len(all); i += 2 {
		names = append(names, all[i].(string))
	}
	sort.Strings(names)
	listed := map[string]bool{}
	for _, n := range names {
		listed[n] = true
		f, ok := configEffects[n]
		if !ok {
			t.Errorf("%s: CONFIG GET * lists it but it has no effect test", n)
			continue
		}
		t.Run(n, func(t *testing.T) { f(t, c, addr, n) })
	}
	for n := range configEffects {
		if !listed[n] {
			t.Errorf("%s has an effect test but CONFIG GET * does not list it", n)
		}
	}
}

func configSet(t *testing.T, c *Conn, name, v string) {
	t.Helper()
	expectDo(t, c, "+OK\r\n", "CONFIG", "SET", name, v)
}

// refusedWith: CONFIG SET name bad is refused with Redis's error form and
// a reason containing why; each of good is accepted.
func refusedWith(bad, why string, good ...string) effectTest {
	return func(t *testing.T, c *Conn, addr, name string) {
		r := mustDo(t, c, "CONFIG", "SET", name, bad)
		want := "-ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + why
		if !strings.HasPrefix(string(r), want) {
			t.Fatalf("CONFIG SET %s %q: %q, want %q…", name, bad, r, want)
		}
		for _, g := range good {
			configSet(t, c, name, g)
		}
	}
}

// encodingEffect: with name set to small, the command builds a value that
// OBJECT ENCODING reports as big; with name back at def, the same command
// on a new key gives the small encoding.
func encodingEffect(small, def, bigEnc, smallEnc string, cmd ...string) effectTest {
	return func(t *testing.T, c *Conn, addr, name string) {
		run := func(key, enc string) {
			mustDo(t, c, "DEL", key)
			mustDo(t, c, append([]string{cmd[0], key}, cmd[1:]...)...)
			if got := mustDoValue(t, c, "OBJECT", "ENCODING", key); got != enc {
				t.Fatalf("%s = %s: OBJECT ENCODING %v, want %s", name, c.nc.LocalAddr(), got, enc)
			}
			mustDo(t, c, "DEL", key)
		}
		configSet(t, c, name, small)
		run("enc:a", bigEnc)
		configSet(t, c, name, def)
		run("enc:b", smallEnc)
	}
}

// expiryDelay is how long keys that have expired take to leave DBSIZE
// (active expiry only: nothing reads them).
func expiryDelay(t *testing.T, c *Conn) time.Duration {
	for i := 0; i < 50; i++ {
		mustDo(t, c, "SET", "hz:"+strconv.Itoa(i), "v", "PX", "1")
	}
	time.Sleep(5 * time.Millisecond)
	start := time.Now()
	for time.Since(start) < 3*time.Second {
		if n := mustDoValue(t, c, "DBSIZE"); n == int64(0) {
			return time.Since(start)
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatal("expired keys still there after 3 s")
	return 0
}

// effectHz: hz sets how often active expiry runs. At hz 100 expired keys
// go within a tick (10 ms); at hz 1 a tick comes once a second, so over
// four tries at least one waits more than 150 ms (all four under it has
// probability 0.15^4 ≈ 0.05%).
func effectHz(t *testing.T, c *Conn, addr, name string) {
	mustDo(t, c, "FLUSHALL")
	configSet(t, c, name, "100")
	for i := 0; i < 3; i++ {
		if d := expiryDelay(t, c); d > 150*time.Millisecond {
			t.Fatalf("hz 100: expired keys took %v to go", d)
		}
	}
	configSet(t, c, name, "1")
	defer configSet(t, c, name, "10")
	var longest time.Duration
	for i := 0; i < 4; i++ {
		longest = max(longest, expiryDelay(t, c))
	}
	if longest <= 150*time.Millisecond {
		t.Fatalf("hz 1: expired keys always went within %v", longest)
	}
}

func slowlogLen(t *testing.T, c *Conn) int64 {
	return mustDoValue(t, c, "SLOWLOG", "LEN").(int64)
}

func effectSlowlogSlower(t *testing.T, c *Conn, addr, name string) {
	defer configSet(t, c, name, "10000")
	for _, v := range []string{"1000000", "-1"} {
		configSet(t, c, name, v)
		mustDo(t, c, "SLOWLOG", "RESET")
		mustDo(t, c, "SET", "slow:k", "v")
		if n := slowlogLen(t, c); n != 0 {
			t.Fatalf("%s %s: %d entries", name, v, n)
		}
	}
	configSet(t, c, name, "0")
	mustDo(t, c, "SLOWLOG", "RESET")
	mustDo(t, c, "SET", "slow:k", "v")
	if n := slowlogLen(t, c); n != 2 { // RESET and SET
		t.Fatalf("%s 0: %d entries, want 2", name, n)
	}
}

func effectSlowlogMaxLen(t *testing.T, c *Conn, addr, name string) {
	configSet(t, c, "slowlog-log-slower-than", "0")
	defer configSet(t, c, "slowlog-log-slower-than", "10000")
	defer configSet(t, c, name, "128")
	for _, max := range []int64{3, 5} {
		configSet(t, c, name, strconv.FormatInt(max, 10))
		for i := 0; i < 10; i++ {
			mustDo(t, c, "PING")
		}
		if n := slowlogLen(t, c); n != max {
			t.Fatalf("%s %d: %d entries", name, max, n)
		}
	}
	mustDo(t, c, "SLOWLOG", "RESET")
}

// bigBulkHead starts a GET whose key is a 2 MB bulk.
const bigBulkHead = "*2\r\n$3\r\nGET\r\n$2000000\r\n"

func effectProtoMaxBulk(t *testing.T, c *Conn, addr, name string) {
	configSet(t, c, name, "1mb")
	x := mustDial(t, addr)
	x.Send([]byte(bigBulkHead))
	if r, _ := x.ReadReply(); string(r) != "-ERR Protocol error: invalid bulk length\r\n" {
		t.Fatalf("%s 1mb: %q", name, r)
	}
	expectDo(t, c, "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n", "SETRANGE", "pmbl", "1048576", "x")
	configSet(t, c, name, "512mb")
	checkBigGet(t, addr)
	expectDo(t, c, ":1048577\r\n", "SETRANGE", "pmbl", "1048576", "x")
	mustDo(t, c, "DEL", "pmbl")
}

// checkBigGet sends a GET with a 2 MB key and expects its nil reply.
func checkBigGet(t *testing.T, addr string) {
	t.Helper()
	y := mustDial(t, addr)
	defer y.Close()
	y.Send([]byte(bigBulkHead + strings.Repeat("k", 2000000) + "\r\n"))
	if r, err := y.ReadReply(); string(r) != "$-1\r\n" {
		t.Fatalf("GET of a 2 MB key: %q %v", r, err)
	}
}

func effectQueryBufferLimit(t *testing.T, c *Conn, addr, name string) {
	configSet(t, c, name, "1mb")
	x, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	x.SetDeadline(time.Now().Add(5 * time.Second))
	x.Write([]byte(bigBulkHead + strings.Repeat("k", 1500000)))
	if _, err := readUntilEOF(x, 0, -1); err != nil {
		t.Fatalf("%s 1mb: 1.5 MB of query did not close the connection: %v", name, err)
	}
	configSet(t, c, name, "1gb")
	checkBigGet(t, addr)
}

func effectMaxclients(t *testing.T, c *Conn, addr, name string) {
	n := int64(len(strings.Split(strings.TrimSpace(mustDoValue(t, c, "CLIENT", "LIST").(string)), "\n")))
	configSet(t, c, name, strconv.FormatInt(n+1, 10))
	defer configSet(t, c, name, "10000")
	one := mustDial(t, addr)
	expectDo(t, one, "+PONG\r\n", "PING")
	two := mustDial(t, addr)
	if r, _ := two.ReadReply(); string(r) != "-ERR max number of clients reached\r\n" {
		t.Fatalf("client past maxclients %d: %q", n+1, r)
	}
}

// effectDatabases: immutable; its value (16) is the number of databases.
func effectDatabases(t *testing.T, c *Conn, addr, name string) {
	expectDo(t, c, "+OK\r\n", "SELECT", "15")
	expectDo(t, c, "-ERR DB index is out of range\r\n", "SELECT", "16")
	expectDo(t, c, "+OK\r\n", "SELECT", "0")
	refusedWith("32", "can't set immutable config")(t, c, addr, name)
}

// effectOutputPause: a client that pipelines 300 GETs of 100 KB (30 MB of
// replies) and reads nothing holds at most about the pause size of
// pending output (CLIENT LIST omem) when paused at 1 MB, and far more
// with the default 64 MB.
func effectOutputPause(t *testing.T, c *Conn, addr, name string) {
	expectDo(t, c, "+OK\r\n", "SET", "obuf:big", strings.Repeat("x", 100<<10))
	pending := func() int64 {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		req := string(Encode("CLIENT", "SETNAME", "nonreader")) + strings.Repeat(string(Encode("GET", "obuf:big")), 300)
		go nc.Write([]byte(req))
		time.Sleep(500 * time.Millisecond)
		for _, l := range strings.Split(mustDoValue(t, c, "CLIENT", "LIST").(string), "\n") {
			if strings.Contains(l, " name=nonreader ") {
				for _, f := range strings.Fields(l) {
					if v, ok := strings.CutPrefix(f, "omem="); ok {
						n, _ := strconv.ParseInt(v, 10, 64)
						return n
					}
				}
			}
		}
		t.Fatal("non-reading client not in CLIENT LIST")
		return 0
	}
	configSet(t, c, name, "1mb")
	if p := pending(); p > 2<<20 {
		t.Fatalf("%s 1mb: %d bytes pending", name, p)
	}
	configSet(t, c, name, "64mb")
	if p := pending(); p < 8<<20 {
		t.Fatalf("%s 64mb: only %d bytes pending", name, p)
	}
}

// effectObuf: a client that does not read is disconnected under
// normal 1mb 0 0, not under normal 0 0 0.
func effectObuf(t *testing.T, c *Conn, addr, name string) {
	expectDo(t, c, "+OK\r\n", "SET", "obuf:big", strings.Repeat("x", 100<<10))
	expectDo(t, c, "+OK\r\n", "CONFIG", "SET", name, "normal 1mb 0 0")
	defer expectDo(t, c, "+OK\r\n", "CONFIG", "SET", name, "normal 0 0 0")
	if !nonReaderClosed(t, addr, c, time.Second) {
		t.Fatal("not disconnected past the hard limit")
	}
	expectDo(t, c, "+OK\r\n", "CONFIG", "SET", name, "normal 0 0 0")
	if nonReaderClosed(t, addr, c, time.Second) {
		t.Fatal("disconnected with no limit")
	}
}
