package tests

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func newGoRedis(t *testing.T, opt *redis.Options) *redis.Client {
	t.Helper()
	if opt == nil {
		opt = &redis.Options{}
	}
	opt.Addr = limitAddr
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestGoRedisBasics(t *testing.T) {
	ctx := context.Background()
	c := newGoRedis(t, &redis.Options{ClientName: "gotest"})
	if v, err := c.Ping(ctx).Result(); err != nil || v != "PONG" {
		t.Fatalf("PING: %q %v", v, err)
	}
	// go-redis v9 speaks RESP3 (HELLO 3) by default
	info, err := c.Do(ctx, "CLIENT", "INFO").Text()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info, " resp=3 ") || !strings.Contains(info, " name=gotest ") {
		t.Fatalf("CLIENT INFO: %q", info)
	}
	if n, err := c.Do(ctx, "CLIENT", "GETNAME").Text(); err != nil || n != "gotest" {
		t.Fatalf("CLIENT GETNAME: %q %v", n, err)
	}
	key := "goredis:" + strconv.FormatInt(time.Now().UnixNano(), 10)
	if n, err := c.Incr(ctx, key).Result(); err != nil || n != 1 {
		t.Fatalf("INCR: %d %v", n, err)
	}
	if v, err := c.Get(ctx, key).Result(); err != nil || v != "1" {
		t.Fatalf("GET: %q %v", v, err)
	}
	if _, err := c.Get(ctx, key+":missing").Result(); err != redis.Nil {
		t.Fatalf("GET missing: %v", err)
	}
	// pipeline
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := 0; i < 100; i++ {
			p.Incr(ctx, key)
		}
		p.Get(ctx, key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if v := cmds[len(cmds)-1].(*redis.StringCmd).Val(); v != "101" {
		t.Fatalf("after pipeline GET = %q", v)
	}
	// transaction pipeline
	cmds, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.IncrBy(ctx, key, 10)
		p.Get(ctx, key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if v := cmds[1].(*redis.StringCmd).Val(); v != "111" {
		t.Fatalf("TxPipelined GET = %q", v)
	}
	// a runtime error inside a transaction is returned for that command only
	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Do(ctx, "INCRBY", key, "abc")
		p.Incr(ctx, key)
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "not an integer") {
		t.Fatalf("TxPipelined with error: %v", err)
	}
	// SET exists once the strings branch is merged
	if cmd, _ := c.Do(ctx, "COMMAND", "INFO", "set").Slice(); len(cmd) == 1 && cmd[0] != nil {
		if err := c.Set(ctx, key+":s", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if v, _ := c.Get(ctx, key+":s").Result(); v != "v" {
			t.Fatalf("GET after SET = %q", v)
		}
	}
}

func TestGoRedisRESP2(t *testing.T) {
	ctx := context.Background()
	c := newGoRedis(t, &redis.Options{Protocol: 2})
	info, err := c.Do(ctx, "CLIENT", "INFO").Text()
	if err != nil || !strings.Contains(info, " resp=2 ") {
		t.Fatalf("CLIENT INFO: %q %v", info, err)
	}
	if v, err := c.Ping(ctx).Result(); err != nil || v != "PONG" {
		t.Fatalf("PING: %q %v", v, err)
	}
}

// TestGoRedisWatchRetries: concurrent optimistic increments with WATCH and
// retries end with the exact count.
func TestGoRedisWatchRetries(t *testing.T) {
	ctx := context.Background()
	c := newGoRedis(t, &redis.Options{PoolSize: 16})
	key := "goredis:watch:" + strconv.FormatInt(time.Now().UnixNano(), 10)
	const workers, each = 8, 50
	var wg sync.WaitGroup
	var aborted sync.Map
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				for try := 0; ; try++ {
					if try > 10000 {
						errs <- fmt.Errorf("worker %d: too many retries", w)
						return
					}
					err := c.Watch(ctx, func(tx *redis.Tx) error {
						n, err := tx.Get(ctx, key).Int64()
						if err != nil && err != redis.Nil {
							return err
						}
						_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
							p.IncrBy(ctx, key, 1)
							_ = n
							return nil
						})
						return err
					}, key)
					if errors.Is(err, redis.TxFailedErr) {
						aborted.Store(w, true)
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					break
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n, err := c.Get(ctx, key).Int64()
	if err != nil || n != workers*each {
		t.Fatalf("counter = %d (%v), want %d", n, err, workers*each)
	}
}

// TestBinary builds cmd/limitdb, checks --version, refuses a bad config
// file (status 1), serves a client on a free port given after a config
// file and shuts down cleanly on SIGTERM.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := limitdbBinary(t)
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.Contains(string(out), "limitdb") || !strings.Contains(string(out), "7.0.15") {
		t.Fatalf("--version: %q %v", out, err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	// a config file, then options that override it (port 1 would fail)
	dir := t.TempDir()
	conf := filepath.Join(dir, "limitdb.conf")
	// its own dir: the default, ".", is this package's folder, where the
	// SIGTERM below saved dump.rdb (and the Raft log went to raft/)
	os.WriteFile(conf, []byte("bind 127.0.0.1\nport 1\nloglevel notice\ndir "+dir+"\n"), 0o644)
	bad := filepath.Join(dir, "bad.conf")
	os.WriteFile(bad, []byte("port 0\nno-such-directive 1\n"), 0o644)
	if out, err := exec.Command(bin, bad).CombinedOutput(); !strings.Contains(string(out), "*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***") || cmdExit(err) != 1 {
		t.Fatalf("bad config: %q %v", out, err)
	}
	cmd := exec.Command(bin, conf, "--port", strconv.Itoa(port), "--loglevel", "warn")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	}()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := waitPing(addr); err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	if err := c.Incr(context.Background(), "bin").Err(); err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(context.Background(), "server").Result()
	if err != nil || !strings.Contains(info, "tcp_port:"+strconv.Itoa(port)) {
		t.Fatalf("INFO server: %v %q", err, info)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit 10s after SIGTERM")
	}
}

// TestClientListKill: CLIENT LIST sees other connections (with their name
// and db), CLIENT KILL ID closes one, the caller goes on.
func TestClientListKill(t *testing.T) {
	a := mustDial(t, limitAddr)
	b := mustDial(t, limitAddr)
	b.Do("CLIENT", "SETNAME", "victim")
	b.Do("SELECT", "5")
	idr, _ := b.Do("CLIENT", "ID")
	id := strings.TrimSpace(string(idr[1:]))
	list, _ := a.Do("CLIENT", "LIST")
	if !strings.Contains(string(list), "id="+id+" ") || !strings.Contains(string(list), " name=victim ") || !strings.Contains(string(list), " db=5 ") {
		t.Fatalf("CLIENT LIST: %q", list)
	}
	if r, _ := a.Do("CLIENT", "LIST", "ID", id); strings.Count(string(r), "id=") != 1 {
		t.Fatalf("CLIENT LIST ID: %q", r)
	}
	if r, _ := a.Do("CLIENT", "KILL", "ID", id); string(r) != ":1\r\n" {
		t.Fatalf("CLIENT KILL ID: %q", r)
	}
	if _, err := b.Do("PING"); err == nil {
		t.Fatal("killed client still answered")
	}
	if r, _ := a.Do("PING"); string(r) != "+PONG\r\n" {
		t.Fatalf("PING: %q", r)
	}
	// killing oneself with SKIPME no: the reply, then the connection closes
	if r, _ := a.Do("CLIENT", "KILL", "ADDR", "1.2.3.4:5", "SKIPME", "no"); string(r) != ":0\r\n" {
		t.Fatalf("KILL ADDR: %q", r)
	}
}

// TestGoRedisCommand: go-redis parses COMMAND (cluster clients call it on
// connect) in RESP3 and RESP2.
func TestGoRedisCommand(t *testing.T) {
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := newGoRedis(t, &redis.Options{Protocol: proto})
		cmds, err := c.Command(ctx).Result()
		if err != nil {
			t.Fatalf("resp%d COMMAND: %v", proto, err)
		}
		get := cmds["get"]
		if get == nil || get.Arity != 2 || get.FirstKeyPos != 1 || !get.ReadOnly {
			t.Fatalf("resp%d COMMAND get: %+v", proto, get)
		}
		if incr := cmds["incr"]; incr == nil || incr.ReadOnly || len(incr.ACLFlags) == 0 {
			t.Fatalf("resp%d COMMAND incr: %+v", proto, incr)
		}
		if n, err := c.Do(ctx, "COMMAND", "COUNT").Int64(); err != nil || int(n) != len(cmds) {
			t.Fatalf("resp%d COMMAND COUNT %d (%v), COMMAND has %d", proto, n, err, len(cmds))
		}
		docs, err := c.Do(ctx, "COMMAND", "DOCS", "get").Result()
		if err != nil || docs == nil {
			t.Fatalf("resp%d COMMAND DOCS: %v %v", proto, docs, err)
		}
	}
}

// cmdExit is a finished command's exit status (-1 when it did not run).
func cmdExit(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err == nil {
		return 0
	}
	return -1
}
