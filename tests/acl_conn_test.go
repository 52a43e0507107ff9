package tests

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"limitdb/engine"
)

// aclPair is a fresh redis-server and limitdb (see startACLPair) with a
// helper that sends the same command to both and compares the replies.
type aclPair struct {
	t                 *testing.T
	ref, cand         string
	refFile, candFile string
	n                 int // assertions compared
}

func newACLPair(t *testing.T, aclfile string) *aclPair {
	r, c, rf, cf := startACLPair(t, aclfile)
	return &aclPair{t: t, ref: r, cand: c, refFile: rf, candFile: cf}
}

func (p *aclPair) dial() *pair { return dialPairOn(p.t, p.ref, p.cand, 2) }

// same sends args on both connections and requires equal raw replies.
func (p *aclPair) same(c *pair, args ...string) []byte {
	p.t.Helper()
	a, errA := c.ref.Do(args...)
	b, errB := c.cand.Do(args...)
	if (errA == nil) != (errB == nil) {
		p.t.Fatalf("%q: redis err %v, limitdb err %v", args, errA, errB)
	}
	if !bytes.Equal(a, b) {
		p.t.Fatalf("%q:\n redis:   %q\n limitdb: %q", args, a, b)
	}
	p.n++
	return a
}

// raw sends raw bytes on fresh connections and compares the replies:
// replies of them, or when replies is 0 everything read until the server
// closes the connection.
func (p *aclPair) raw(replies int, data string) {
	p.t.Helper()
	c := p.dial()
	defer c.ref.Close()
	defer c.cand.Close()
	var got [2][]byte
	for i, conn := range []*Conn{c.ref, c.cand} {
		if err := conn.Send([]byte(data)); err != nil {
			p.t.Fatal(err)
		}
		var buf bytes.Buffer
		for j := 0; j < replies; j++ {
			r, err := conn.ReadReply()
			buf.Write(r)
			if err != nil {
				break
			}
		}
		conn.nc.SetReadDeadline(time.Now().Add(2 * time.Second))
		tmp := make([]byte, 4096)
		for replies == 0 {
			n, err := conn.nc.Read(tmp)
			buf.Write(tmp[:n])
			if err != nil {
				break
			}
		}
		got[i] = buf.Bytes()
	}
	if !bytes.Equal(got[0], got[1]) {
		p.t.Fatalf("raw %q:\n redis:   %q\n limitdb: %q", data, got[0], got[1])
	}
	p.n++
}

// closed requires both connections of c to be closed by the server.
func (p *aclPair) closed(c *pair) {
	p.t.Helper()
	for _, conn := range []*Conn{c.ref, c.cand} {
		if r, err := conn.Do("PING"); err == nil {
			p.t.Fatalf("connection still open: PING answered %q", r)
		}
	}
	p.n++
}

// TestACLUnauthenticatedLimits: auth.tcl's "For unauthenticated clients
// multibulk and bulk length are limited", byte for byte, plus the limits'
// edges and an authenticated connection that is not limited.
func TestACLUnauthenticatedLimits(t *testing.T) {
	p := newACLPair(t, "")
	c := p.dial()
	p.same(c, "CONFIG", "SET", "requirepass", "foobar")
	p.raw(0, "*100\r\n")
	p.raw(0, "*1\r\n$100000000\r\n")
	p.raw(0, "*11\r\n")
	p.raw(1, "*10\r\n$4\r\nPING\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n")
	p.raw(0, "*2\r\n$4\r\nAUTH\r\n$16385\r\n")
	p.raw(1, "*2\r\n$4\r\nECHO\r\n$16384\r\n"+strings.Repeat("x", 16384)+"\r\n")
	// an inline request is not limited by count
	p.raw(1, "PING a b c d e f g h i j k l\r\n")
	// authenticated: no limit
	big := strings.Repeat("y", 20000)
	a := p.dial()
	p.same(a, "AUTH", "foobar")
	p.same(a, "ECHO", big)
	p.same(a, "DEL", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11")
	// a connection that authenticates in a pipeline gets the big request
	p.raw(2, string(Encode("AUTH", "foobar"))+string(Encode("ECHO", big)))
	p.same(c, "CONFIG", "SET", "requirepass", "")
	t.Logf("%d comparisons", p.n)
}

// TestACLDeleteKillsClients: acl.tcl's "Delete a user that the client is
// using" / "doesn't use", ACL LOAD dropping replaced users, CLIENT KILL
// USER and CLIENT LIST's user= field.
func TestACLDeleteKillsClients(t *testing.T) {
	p := newACLPair(t, "")
	admin := p.dial()
	p.same(admin, "ACL", "SETUSER", "not_used", "on", ">passwd")
	p.same(admin, "ACL", "DELUSER", "not_used")
	p.same(admin, "PING")

	p.same(admin, "ACL", "SETUSER", "using", "on", "+acl", "+client", ">passwd")
	u := p.dial()
	p.same(u, "AUTH", "using", "passwd")
	// the reply comes, then the connection is closed
	p.same(u, "ACL", "DELUSER", "using")
	p.closed(u)

	// another client's connection is closed too
	p.same(admin, "ACL", "SETUSER", "other", "on", "+@all", "~*", ">pw")
	o1, o2 := p.dial(), p.dial()
	p.same(o1, "AUTH", "other", "pw")
	p.same(o2, "AUTH", "other", "pw")
	for _, c := range []*pair{o1, o2} {
		for i, conn := range []*Conn{c.ref, c.cand} {
			info, err := conn.Do("CLIENT", "INFO")
			if err != nil || !bytes.Contains(info, []byte(" user=other ")) {
				t.Fatalf("server %d CLIENT INFO: %q %v", i, info, err)
			}
		}
	}
	p.same(admin, "CLIENT", "KILL", "USER", "nosuchuser")
	p.same(admin, "CLIENT", "KILL", "USER", "other")
	p.closed(o1)
	p.closed(o2)
	o3 := p.dial()
	p.same(o3, "AUTH", "other", "pw")
	p.same(admin, "ACL", "DELUSER", "other", "nobody")
	p.closed(o3)
	// a user turned off keeps its sessions (acl.c: off only stops new logins)
	p.same(admin, "ACL", "SETUSER", "offuser", "on", "+@all", "~*", ">pw")
	o4 := p.dial()
	p.same(o4, "AUTH", "offuser", "pw")
	p.same(admin, "ACL", "SETUSER", "offuser", "off")
	p.same(o4, "ACL", "WHOAMI")
	p.same(admin, "ACL", "DELUSER", "offuser")
	p.closed(o4)
	t.Logf("%d comparisons", p.n)
}

// TestACLFileLoadSave: acl.tcl's "ACL load and save", "Test loading an
// ACL file with duplicate users" and the aclfile error texts. Both
// servers use the same file path (the path is part of the error texts);
// commands reach redis first, then limitdb, and both hold the same users,
// so each SAVE writes the same text.
func TestACLFileLoadSave(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "users.acl")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("user alice on allcommands allkeys &* >alice\nuser bob on -@all +@set +acl ~set* &* >bob\nuser default on nopass ~* &* +@all\n")
	r := mustRedis(t, "--aclfile", file)
	p := &aclPair{t: t, ref: r.Addr, cand: mustLimitdbACL(t, file)}
	c := p.dial()
	p.same(c, "ACL", "LIST")
	p.same(c, "CONFIG", "GET", "aclfile")
	p.same(c, "CONFIG", "SET", "aclfile", "x")
	// Alice: can execute all command; Bob: just @set and acl
	a := p.dial()
	p.same(a, "AUTH", "alice", "alice")
	p.same(a, "ACL", "WHOAMI")
	p.same(a, "SET", "k", "v")
	b := p.dial()
	p.same(b, "AUTH", "bob", "bob")
	p.same(b, "SADD", "set:1", "a")
	p.same(b, "SADD", "other", "a")
	p.same(b, "SET", "set:2", "a")
	// ACL load and save
	p.same(c, "ACL", "SETUSER", "eve", "+get", "allkeys", ">eve", "on")
	p.same(c, "ACL", "SAVE")
	saved, _ := os.ReadFile(file)
	// edit the file behind the server's back and reload: eve comes back
	p.same(c, "ACL", "DELUSER", "eve")
	p.same(c, "ACL", "LOAD")
	p.same(c, "ACL", "LIST")
	e := p.dial()
	p.same(e, "AUTH", "eve", "eve")
	p.same(e, "GET", "foo")
	p.same(e, "SET", "foo", "bar")
	// users replaced by LOAD lose their connections; default's stay
	p.closed(a)
	p.closed(b)
	p.same(c, "PING")
	// errors: nothing changes and the text lists every problem
	bad := []string{
		"user alice on allcommands allkeys >alice\nuser alice on allcommands allkeys >alice\n",
		"user default on nopass ~* +@all\nuser default on nopass ~* +@all\n",
		"usr bob on\n",
		"user\n",
		"user bob on +nosuchcmd -@nosuchcat\nuser carl on %X~k\nuser dan on ~a ~* nosuchrule\n",
		// (an unclosed selector, "user bob on (+get ~x", crashes Redis
		// 7.0.15: its loader reads the merged arguments after failing
		// to merge them; limitdb reports "Unmatched parenthesis")
		"user bob on #abc\n",
		"user bob on <nopassword\n",
		"\n\n   \nuser bob on +get\r\nuser carl\tfoo\n",
	}
	for _, s := range bad {
		write(s)
		p.same(c, "ACL", "LOAD")
		p.same(c, "ACL", "LIST")
	}
	// a file without a default user gets the standard one
	write("user zed on nopass +@all ~*\n")
	p.same(c, "ACL", "LOAD")
	p.same(c, "ACL", "LIST")
	os.Remove(file)
	p.same(c, "ACL", "LOAD")
	write(string(saved))
	p.same(c, "ACL", "LOAD")
	p.same(c, "ACL", "LIST")
	t.Logf("%d comparisons", p.n)
}

// TestACLCategoriesMatchRedis: every command limitdb shares with Redis
// has Redis's categories (COMMAND INFO), and ACL CAT <category> lists,
// of limitdb's commands, exactly those Redis lists.
func TestACLCategoriesMatchRedis(t *testing.T) {
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: redisAddr, Protocol: 2})
	lc := redis.NewClient(&redis.Options{Addr: limitAddr, Protocol: 2})
	defer rc.Close()
	defer lc.Close()
	// list runs a command answering names, sorted
	list := func(c *redis.Client, args ...any) []string {
		v, err := c.Do(ctx, args...).StringSlice()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		sort.Strings(v)
		return v
	}
	// both keeps the names that both servers have as commands
	ours, theirs := list(lc, "COMMAND", "LIST"), list(rc, "COMMAND", "LIST")
	both := func(v []string) string {
		var out []string
		for _, x := range v {
			i, j := sort.SearchStrings(ours, x), sort.SearchStrings(theirs, x)
			if i < len(ours) && ours[i] == x && j < len(theirs) && theirs[j] == x {
				out = append(out, x)
			}
		}
		return strings.Join(out, " ")
	}
	n := 0
	for _, cat := range list(lc, "ACL", "CAT") {
		got := list(lc, "ACL", "CAT", cat)
		if cat == "ratelimit" {
			if strings.Join(got, " ") != "cl.throttle rl.allow rl.allowall rl.info rl.peek rl.refund rl.reset rl.set rl.stats rl.top" {
				t.Fatalf("ACL CAT ratelimit: %q", got)
			}
			continue
		}
		if cat == "rlpolicy" {
			if strings.Join(got, " ") != "rl.policy|apply rl.policy|del rl.policy|dump rl.policy|get rl.policy|history rl.policy|list rl.policy|override rl.policy|overrides rl.policy|restore rl.policy|set rl.policy|unoverride" {
				t.Fatalf("ACL CAT rlpolicy: %q", got)
			}
			continue
		}
		if w, g := both(list(rc, "ACL", "CAT", cat)), both(got); w != g {
			t.Errorf("ACL CAT %s:\n redis:   %v\n limitdb: %v", cat, w, g)
		}
		n++
	}
	t.Logf("%d categories compared", n)
}

// TestGoRedisACLUser: go-redis logs in as an ACL user with key patterns
// (Username/Password: HELLO 3 AUTH), runs what the user may, and gets
// NOPERM for the rest.
func TestGoRedisACLUser(t *testing.T) {
	p := newACLPair(t, "")
	admin := p.dial()
	p.same(admin, "SET", "cfg:limit", "100")
	p.same(admin, "CONFIG", "SET", "requirepass", "adminpw")
	// @ratelimit is limitdb's: this part talks to limitdb only
	admin.cand.Do("ACL", "SETUSER", "app", "on", ">s3cret", "-@all", "+@ratelimit", "+@string", "+ping", "~rl:*", "%R~cfg:*")
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: p.cand, Username: "app", Password: "s3cret"})
	defer c.Close()
	if v, err := c.Ping(ctx).Result(); err != nil || v != "PONG" {
		t.Fatalf("PING: %q %v", v, err)
	}
	if v, err := c.Do(ctx, "ACL", "WHOAMI").Result(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Fatalf("ACL WHOAMI: %v %v", v, err)
	}
	if v, err := c.Get(ctx, "cfg:limit").Result(); err != nil || v != "100" {
		t.Fatalf("GET cfg:limit: %q %v", v, err)
	}
	if err := c.Set(ctx, "cfg:limit", "1", 0).Err(); err == nil || err.Error() != "NOPERM this user has no permissions to access one of the keys used as arguments" {
		t.Fatalf("SET cfg:limit: %v", err)
	}
	res, err := c.Do(ctx, "RL.ALLOW", "rl:user:1", "10", "60000").Result()
	if err != nil || res == nil {
		t.Fatalf("RL.ALLOW: %v %v", res, err)
	}
	if err := c.Do(ctx, "RL.ALLOW", "other:1", "10", "60000").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Fatalf("RL.ALLOW other: %v", err)
	}
	if err := c.Do(ctx, "CL.THROTTLE", "rl:cell", "15", "30", "60").Err(); err != nil {
		t.Fatalf("CL.THROTTLE: %v", err)
	}
	bad := redis.NewClient(&redis.Options{Addr: p.cand, Username: "app", Password: "wrong", MaxRetries: -1})
	defer bad.Close()
	if err := bad.Ping(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGPASS") {
		t.Fatalf("wrong password: %v", err)
	}
	anon := redis.NewClient(&redis.Options{Addr: p.cand, MaxRetries: -1})
	defer anon.Close()
	if err := anon.Ping(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOAUTH") {
		t.Fatalf("no password: %v", err)
	}
	def := redis.NewClient(&redis.Options{Addr: p.cand, Password: "adminpw"})
	defer def.Close()
	if v, err := def.Do(ctx, "ACL", "WHOAMI").Text(); err != nil || v != "default" {
		t.Fatalf("requirepass login: %q %v", v, err)
	}
}

// TestKeySpecsMatchRedis: for every command limitdb shares with Redis,
// COMMAND GETKEYS (which reads the key specs the ACL check uses) answers
// as Redis for argument lists of several lengths and shapes (plain words,
// a count first, a count second), so %R~/%W~ and ~ see Redis's keys.
func TestKeySpecsMatchRedis(t *testing.T) {
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: redisAddr, Protocol: 2})
	defer rc.Close()
	rnames, err := rc.Do(ctx, "COMMAND", "LIST").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	theirs := map[string]bool{}
	for _, n := range rnames {
		theirs[n] = true
	}
	c := dialPair(t, 2)
	defer c.ref.Close()
	defer c.cand.Close()
	n := 0
	for _, cmd := range engine.Commands() {
		for _, x := range append([]*engine.Command{cmd}, cmd.Subs...) {
			if !theirs[x.Name] || len(x.KeySpecs) == 0 || x.Has(engine.FlagConn) && x.Name != "watch" {
				continue
			}
			name := strings.Split(x.Name, "|")
			arity := max(x.Arity, -x.Arity)
			for extra := 0; extra <= 4; extra++ {
				for shape := 0; shape < 3; shape++ {
					args := append([]string{"COMMAND", "GETKEYS"}, name...)
					for i := len(name); i < arity+extra; i++ {
						a := "k" + strconv.Itoa(i)
						if shape > 0 && i == len(name)+shape-1 {
							a = "2"
						}
						args = append(args, a)
					}
					r, err1 := c.ref.Do(args...)
					l, err2 := c.cand.Do(args...)
					if err1 != nil || err2 != nil {
						t.Fatal(err1, err2)
					}
					if !bytes.Equal(r, l) {
						t.Errorf("%q:\n redis:   %q\n limitdb: %q", args[2:], r, l)
					}
					n++
				}
			}
		}
	}
	t.Logf("%d GETKEYS compared", n)
}

// TestCommandInfoKeySpecsMatchRedis: COMMAND INFO's key specs (notes,
// flags, begin_search, find_keys) and ACL categories are Redis's for every
// command both servers have.
func TestCommandInfoKeySpecsMatchRedis(t *testing.T) {
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: redisAddr, Protocol: 2})
	lc := redis.NewClient(&redis.Options{Addr: limitAddr, Protocol: 2})
	defer rc.Close()
	defer lc.Close()
	n := 0
	for _, cmd := range engine.Commands() {
		for _, x := range append([]*engine.Command{cmd}, cmd.Subs...) {
			ri, err := rc.Do(ctx, "COMMAND", "INFO", x.Name).Slice()
			if err != nil || len(ri) != 1 || ri[0] == nil {
				continue // not a Redis command
			}
			li, err := lc.Do(ctx, "COMMAND", "INFO", x.Name).Slice()
			if err != nil || len(li) != 1 {
				t.Fatalf("%s: %v %v", x.Name, li, err)
			}
			r, l := ri[0].([]any), li[0].([]any)
			for _, field := range []int{6, 8} { // categories, key specs
				if !reflect.DeepEqual(r[field], l[field]) {
					t.Errorf("%s field %d:\n redis:   %v\n limitdb: %v", x.Name, field, r[field], l[field])
				}
				n++
			}
		}
	}
	t.Logf("%d fields compared", n)
}
