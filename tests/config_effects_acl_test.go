package tests

import (
	"limitdb/server"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Effect tests of the access-control parameters.

const (
	noauthReply    = "-NOAUTH Authentication required.\r\n"
	wrongpassReply = "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
)

// effectRequirepass: with a password, a new connection gets -NOAUTH until
// AUTH with it (a wrong one gets -WRONGPASS); open connections stay
// authenticated; "" lets new connections in again.
func effectRequirepass(t *testing.T, c *Conn, addr, name string) {
	configSet(t, c, name, "s3cret")
	defer configSet(t, c, name, "")
	x := mustDial(t, addr)
	expectDo(t, x, noauthReply, "PING")
	expectDo(t, x, noauthReply, "GET", "k")
	expectDo(t, x, wrongpassReply, "AUTH", "nope")
	expectDo(t, x, "+OK\r\n", "AUTH", "s3cret")
	expectDo(t, x, "+PONG\r\n", "PING")
	expectDo(t, c, "+PONG\r\n", "PING")
	configSet(t, c, name, "")
	expectDo(t, mustDial(t, addr), "+PONG\r\n", "PING")
}

// effectACLFile: immutable; at start-up (from a config file) its users can
// AUTH, and ACL SAVE writes the users to it, while a server without one
// refuses ACL SAVE.
func effectACLFile(t *testing.T, c *Conn, addr, name string) {
	refusedWith("/tmp/users.acl", "can't set immutable config")(t, c, addr, name)
	expectDo(t, c, "-ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.\r\n", "ACL", "SAVE")
	dir := t.TempDir()
	acl, conf := filepath.Join(dir, "users.acl"), filepath.Join(dir, "limitdb.conf")
	if err := os.WriteFile(acl, []byte("user alice on >wonder ~* +@all\nuser default on nopass ~* &* +@all\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("bind 127.0.0.1\nport "+strconv.Itoa(port)+"\naclfile "+acl+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := mustLimitdbConfig(t, server.Config{}, conf)
	a := mustDial(t, srv.Addr().String())
	expectDo(t, a, wrongpassReply, "AUTH", "alice", "nope")
	expectDo(t, a, "+OK\r\n", "AUTH", "alice", "wonder")
	expectDo(t, a, "$5\r\nalice\r\n", "ACL", "WHOAMI")
	expectDo(t, a, "+OK\r\n", "ACL", "SETUSER", "bob", "on", ">builder", "+get")
	expectDo(t, a, "+OK\r\n", "ACL", "SAVE")
	saved, err := os.ReadFile(acl)
	if err != nil || !strings.Contains(string(saved), "user bob on ") || !strings.Contains(string(saved), "user alice on ") {
		t.Fatalf("ACL SAVE wrote %q %v", saved, err)
	}
	// the saved file is what the next start-up reads
	srv.Close()
	srv2 := mustLimitdbConfig(t, server.Config{}, conf)
	expectDo(t, mustDial(t, srv2.Addr().String()), "+OK\r\n", "AUTH", "bob", "builder")
}

// effectACLLogMaxLen: ACL LOG keeps at most acllog-max-len entries (five
// failed AUTHs with different user names are five entries).
func effectACLLogMaxLen(t *testing.T, c *Conn, addr, name string) {
	defer mustDo(t, c, "ACL", "LOG", "RESET")
	defer configSet(t, c, name, "128")
	x := mustDial(t, addr)
	for _, max := range []int{2, 10, 0} {
		configSet(t, c, name, strconv.Itoa(max))
		expectDo(t, c, "+OK\r\n", "ACL", "LOG", "RESET")
		for i := 0; i < 5; i++ {
			expectDo(t, x, wrongpassReply, "AUTH", "nobody"+strconv.Itoa(i), "pw")
		}
		if n := len(mustDoValue(t, c, "ACL", "LOG").([]any)); n != min(max, 5) {
			t.Fatalf("%s %d: ACL LOG has %d entries after 5 failed AUTHs", name, max, n)
		}
	}
}
