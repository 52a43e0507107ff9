package acl

import (
	"testing"

	"limitdb/engine"
)

func argv(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, x := range s {
		out[i] = []byte(x)
	}
	return out
}

func mustSet(t testing.TB, a *ACL, name string, rules ...string) *User {
	u, err := a.SetUser(name, rules)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestDescribe(t *testing.T) {
	a := New()
	mustSet(t, a, "foo")
	mustSet(t, a, "bar", "on", ">pw", "~k*", "%R~r*", "&ch", "+get", "(+incr ~x)")
	want := []string{
		"user bar on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~k* %R~r* resetchannels &ch -@all +get (~x resetchannels -@all +incr)",
		"user default on nopass ~* &* +@all",
		"user foo off resetchannels -@all",
	}
	got := a.Lines()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got %q\nwant %q", i, got[i], want[i])
		}
	}
	b, err := Load(a.Text(), "f")
	if err != nil {
		t.Fatal(err)
	}
	if b.Text() != a.Text() {
		t.Errorf("round trip:\n%s\n%s", b.Text(), a.Text())
	}
}

func TestCheck(t *testing.T) {
	a := New()
	u := mustSet(t, a, "u", "on", "nopass", "+@all", "~obj:*", "%R~ro:*", "%W~wo:*")
	get, set, lmove := engine.Lookup([]byte("get")), engine.Lookup([]byte("set")), engine.Lookup([]byte("lmove"))
	cases := []struct {
		cmd  *engine.Command
		argv [][]byte
		res  Result
		pos  int
	}{
		{get, argv("get", "obj:1"), OK, 0},
		{get, argv("get", "ro:1"), OK, 0},
		{get, argv("get", "wo:1"), DeniedKey, 1},
		{set, argv("set", "wo:1", "v"), OK, 0},
		{set, argv("set", "wo:1", "v", "get"), DeniedKey, 1},
		{set, argv("set", "ro:1", "v"), DeniedKey, 1},
		{lmove, argv("lmove", "obj:a", "ro:b", "left", "right"), DeniedKey, 2},
		{lmove, argv("lmove", "obj:a", "wo:b", "left", "right"), OK, 0},
		{lmove, argv("lmove", "obj:a", "obj:b", "left", "right"), OK, 0},
	}
	for _, c := range cases {
		r, p := u.Check(c.cmd, c.argv)
		if r != c.res || p != c.pos {
			t.Errorf("%q: got %v %d, want %v %d", c.argv, r, p, c.res, c.pos)
		}
	}
	mustSet(t, a, "u", "-get")
	if r, _ := u.Check(get, argv("get", "obj:1")); r != DeniedCmd {
		t.Errorf("-get: got %v", r)
	}
}

// BenchmarkCheckKeyPatterns: a user with key patterns running GET and
// SET; the check must not allocate.
func BenchmarkCheckKeyPatterns(b *testing.B) {
	a := New()
	u := mustSet(b, a, "u", "on", "nopass", "-@all", "+@string", "+@ratelimit", "~obj:*", "%R~ro:*", "~rl:*")
	get, set := engine.Lookup([]byte("get")), engine.Lookup([]byte("set"))
	rl := engine.Lookup([]byte("rl.allow"))
	g, s := argv("get", "obj:12345"), argv("set", "obj:12345", "v")
	r := argv("rl.allow", "rl:user:42", "100", "60000")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if res, _ := u.Check(get, g); res != OK {
			b.Fatal(res)
		}
		if res, _ := u.Check(set, s); res != OK {
			b.Fatal(res)
		}
		if res, _ := u.Check(rl, r); res != OK {
			b.Fatal(res)
		}
	}
}

// BenchmarkCheckDefault: the default user (all commands, all keys).
func BenchmarkCheckDefault(b *testing.B) {
	u := New().Default()
	get := engine.Lookup([]byte("get"))
	g := argv("get", "obj:12345")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if res, _ := u.Check(get, g); res != OK {
			b.Fatal(res)
		}
	}
}
