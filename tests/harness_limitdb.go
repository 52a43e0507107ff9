package tests

import (
	"os"
	"testing"
	"time"

	"limitdb/engine"
	"limitdb/server"
)

// scratchDir is the dir of StartLimitdb's servers (TestMain makes and
// removes it): scenarios SAVE, DEBUG RELOAD and FLUSHALL under save rules,
// and their dump.rdb belongs nowhere in the tree.
var scratchDir string

// StartLimitdb starts an in-process limitdb server on a free loopback port.
func StartLimitdb() (*server.Server, error) {
	srv := server.New(server.Config{Addr: "127.0.0.1:0", Dir: scratchDir}, engine.New())
	// as StartRedis does, so that scenarios can use DEBUG on both servers
	// (not through LoadConfig: applying the whole configuration makes
	// TestScriptBusyKill hang)
	srv.SetDebugCommand("yes")
	if err := srv.Listen(); err != nil {
		return nil, err
	}
	go srv.Serve()
	if v := os.Getenv("LIMITDB_IO_MODEL"); v != "" {
		// for the connections the test opens from here on
		c, err := Dial(srv.Addr().String())
		if err != nil {
			return nil, err
		}
		_, err = c.Do("CONFIG", "SET", "io-model", v)
		c.Close()
		if err != nil {
			return nil, err
		}
	}
	return srv, nil
}

// mustLimitdb is StartLimitdb for one test: the server stops when the
// test ends.
func mustLimitdb(t testing.TB) *server.Server {
	t.Helper()
	srv, err := StartLimitdb()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeLimitdb(srv) })
	return srv
}

// mustLimitdbConn is mustLimitdb and a connection to it, with the
// server's address.
func mustLimitdbConn(t testing.TB) (string, *Conn) {
	t.Helper()
	addr := mustLimitdb(t).Addr().String()
	return addr, mustDial(t, addr)
}

// mustLimitdbConfig starts an in-process limitdb with cfg, configured
// from the file at path ("" for none) and the command-line style opts, as
// cmd/limitdb does; the test stops it.
func mustLimitdbConfig(t testing.TB, cfg server.Config, path string, opts ...string) *server.Server {
	t.Helper()
	srv := server.New(cfg, nil)
	if err := srv.LoadConfig(path, server.ArgsToOptions(opts)); err != nil {
		t.Fatal(err)
	}
	serveLimitdb(t, srv)
	return srv
}

// mustLimitdbACL starts an in-process limitdb with aclfile (when set)
// and returns its address; the test stops it.
func mustLimitdbACL(t testing.TB, aclfile string) string {
	t.Helper()
	srv := server.New(server.Config{Addr: "127.0.0.1:0"}, engine.New())
	if aclfile != "" {
		if err := srv.LoadACLFile(aclfile); err != nil {
			t.Fatal(err)
		}
	}
	serveLimitdb(t, srv)
	return srv.Addr().String()
}

// mustBoth starts a redis-server (StartRedis) and an in-process limitdb
// (StartLimitdb), both stopped when the test ends.
func mustBoth(t testing.TB) (*Redis, *server.Server) {
	t.Helper()
	return mustRedis(t), mustLimitdb(t)
}

// serveLimitdb listens and serves srv until the test ends.
func serveLimitdb(t testing.TB, srv *server.Server) {
	t.Helper()
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { closeLimitdb(srv) })
}

// closeLimitdb stops a script still running on srv before closing it: a
// test that failed while its script looped would leave Close waiting for
// the engine lock for ever (TestConfigEffects hung the package to its
// 20 min timeout, its failure unprinted).
func closeLimitdb(srv *server.Server) {
	if a := srv.Addr(); a != nil { // nil: no TCP listener left
		killScript(a.String())
	}
	srv.Close()
}

// killScript stops a script running on addr, if any (SCRIPT KILL, then
// FUNCTION KILL; NOTBUSY at once when none runs).
func killScript(addr string) {
	k, err := Dial(addr)
	if err != nil {
		return
	}
	defer k.Close()
	k.ReplyTimeout = 10 * time.Second
	k.Do("SCRIPT", "KILL")
	k.Do("FUNCTION", "KILL")
}
