package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"limitdb/acl"
)

// TestApplyUserDirective: config-file "user" lines (the words after
// "user") create users with Redis's rules and errors, and protected mode's
// question "does the default user need a password" follows them.
func TestApplyUserDirective(t *testing.T) {
	s := New(Config{Addr: "127.0.0.1:0"}, nil)
	if !s.defaultUserNoPass() {
		t.Fatal("fresh server: default user should be nopass")
	}
	if err := applyUserDirective(s, strings.Fields("alice on >pw ~k:* +@read")); err != nil {
		t.Fatal(err)
	}
	if got, want := s.auth.acl.User("alice").Describe(), "on #"+acl.HashPassword([]byte("pw"))+" ~k:* resetchannels -@all +@read"; got != want {
		t.Fatalf("alice: %q", got)
	}
	err := applyUserDirective(s, []string{"bob", "+nosuchcommand"})
	if err == nil || err.Error() != "Error loading ACL rule '+nosuchcommand' for the user named 'bob': Unknown command or category name in ACL" {
		t.Fatalf("bad rule: %v", err)
	}
	err = applyUserDirective(s, []string{"bob", "on", "badrule"})
	if err == nil || err.Error() != "Error in user declaration 'bob': Syntax error" {
		t.Fatalf("bad rule: %v", err)
	}
	err = applyUserDirective(s, []string{"alice", "on"})
	if err == nil || err.Error() != "Error in user declaration 'alice': Duplicate user found. A user can only be defined once in config files" {
		t.Fatalf("duplicate: %v", err)
	}
	if s.auth.acl.User("bob") != nil {
		t.Fatal("bob created despite the error")
	}
	if err := applyUserDirective(s, []string{"default", "on", ">secret"}); err != nil {
		t.Fatal(err)
	}
	if s.defaultUserNoPass() {
		t.Fatal("default user with a password still reported nopass")
	}
	s.setRequirePass("")
	if !s.defaultUserNoPass() {
		t.Fatal("requirepass \"\" should make the default user nopass")
	}
	if _, err := s.auth.acl.SetUser("default", []string{"off"}); err != nil {
		t.Fatal(err)
	}
	s.syncAuth()
	if !s.defaultUserNoPass() || !s.auth.needAuth.Load() {
		t.Fatal("a disabled nopass default user: still nopass (protected mode), but connections must authenticate")
	}
}

// TestLoadACLFileStartup: the aclfile loads at start-up; a missing or
// invalid one is an error with Redis's text.
func TestLoadACLFileStartup(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "users.acl")
	s := New(Config{Addr: "127.0.0.1:0"}, nil)
	err := s.LoadACLFile(f)
	if err == nil || err.Error() != "Error loading ACLs, opening file '"+f+"': No such file or directory" {
		t.Fatalf("missing file: %v", err)
	}
	os.WriteFile(f, []byte("user default on >pw ~* &* +@all\nuser app on nopass -@all +@ratelimit ~rl:*\n"), 0o644)
	if err := s.LoadACLFile(f); err != nil {
		t.Fatal(err)
	}
	if s.defaultUserNoPass() || s.auth.acl.User("app") == nil {
		t.Fatal("aclfile not applied")
	}
	os.WriteFile(f, []byte("user x on +nosuch\n"), 0o644)
	if err := s.LoadACLFile(f); err == nil || !strings.Contains(err.Error(), f+":1: Error in applying operation '+nosuch'") {
		t.Fatalf("bad file: %v", err)
	}
}
