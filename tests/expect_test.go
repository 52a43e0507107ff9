package tests

import "testing"

// TestExpectNotation: the notation of @expect lines keeps every RESP type
// apart, and `_` stands for one scalar, never for an aggregate.
func TestExpectNotation(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{"+OK\r\n", "+OK"},
		{"-ERR no such policy 'x'\r\n", "-ERR no such policy 'x'"},
		{":-5\r\n", ":-5"},
		{"$3\r\na b\r\n", `"a b"`},
		{"$-1\r\n", "nil"},
		{"*-1\r\n", "nil"},
		{"_\r\n", "nil"},
		{",1.5\r\n", ",1.5"},
		{"#t\r\n", "#t"},
		{"*3\r\n:1\r\n-ERR x y\r\n*0\r\n", `[:1 -"ERR x y" []]`},
		{"%1\r\n$1\r\nk\r\n~2\r\n:1\r\n:2\r\n", `{"k" ~[:1 :2]}`},
		{">2\r\n$7\r\nmessage\r\n$2\r\n\"]\r\n", `>["message" "\"]"]`},
		{"=8\r\ntxt:ab c\r\n", `=txt:"ab c"`},
		{"|1\r\n+a\r\n+b\r\n:7\r\n", ":7"},
	} {
		got, err := renderReply([]byte(c.raw))
		if err != nil || got != c.want {
			t.Errorf("render %q = %s, %v; want %s", c.raw, got, err, c.want)
		}
		if !matchExpect(c.want, got) {
			t.Errorf("%s does not match itself", got)
		}
	}
	for _, c := range []struct {
		want, got string
		ok        bool
	}{
		{`["a" _ :3]`, `["a" :1796248520148 :3]`, true},
		{`["a" _ :3]`, `["a" "x y" :3]`, true},
		{`["a" _ :3]`, `["a" [:1] :3]`, false},
		{`["a" _]`, `["a" :1 :3]`, false},
		{`{"k" :1}`, `["k" :1]`, false},
		{`[-"ERR a" :1]`, `[-"ERR a" :2]`, false},
		{`-ERR a`, `-ERR a b`, false},
	} {
		if matchExpect(c.want, c.got) != c.ok {
			t.Errorf("matchExpect(%s, %s) = %v", c.want, c.got, !c.ok)
		}
	}
}

// TestExpectErrorWords: a `_` word of an expected error stands for one
// word or number, never for a word's part.
func TestExpectErrorWords(t *testing.T) {
	for _, c := range []struct {
		want, got string
		ok        bool
	}{
		{"-ERR version mismatch: at version _, IFVERSION 0 (nothing changed)", "-ERR version mismatch: at version 17, IFVERSION 0 (nothing changed)", true},
		{"-ERR live keys until _ (unix ms)", "-ERR live keys until 1796248714415 (unix ms)", true},
		{"-ERR live keys until _ (unix ms)", "-ERR live keys until 1 2 (unix ms)", false},
		{"-ERR shadow_denied _", "-ERR shadowXdenied 1", false},
		{`[-"ERR at _" :1]`, `[-"ERR at 5" :1]`, true},
	} {
		if matchExpect(c.want, c.got) != c.ok {
			t.Errorf("matchExpect(%s, %s) = %v", c.want, c.got, !c.ok)
		}
	}
}
