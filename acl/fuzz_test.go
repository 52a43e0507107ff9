package acl

import (
	"strings"
	"testing"
)

// FuzzSetUser: any rules either fail with an error or give a user whose
// description loads back to the same description (rules without control
// whitespace); nothing panics.
func FuzzSetUser(f *testing.F) {
	for _, s := range []string{"on >pw ~k* %R~r* &ch +get (+incr ~x)", "%", "(", ")", "()", "( )", "~", "&", ">", "<", "#", "!",
		"+@", "-@", "+|", "+get|", "+config|", "+|x", "+config|get|x", "-select|0", "+select|0 +select|1", "%RW~", "%W~a %R~a",
		"reset", "clearselectors", "allkeys ~x", "(~a", "(~a (~b c)", "+@all -get +get|x", "nopass resetpass", "<nosuch"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rules string) {
		a := New()
		u, err := a.SetUser("u", strings.Split(rules, " "))
		if err != nil {
			return
		}
		d := u.Describe()
		if strings.ContainsAny(rules, "\t\r\n\v\f\x00") {
			// Redis's loader trims \t\r\n from rules and first args keep
			// them: such users do not round-trip in Redis either
			return
		}
		for _, w := range strings.Fields(rules) {
			if strings.ContainsAny(strings.TrimSuffix(strings.TrimPrefix(w, "("), ")"), "()") {
				return // a pattern with a parenthesis reads as a selector end in Redis too
			}
		}
		b, err := Load("user u "+d+"\n", "f")
		if err != nil {
			t.Fatalf("%q: description %q does not load: %v", rules, d, err)
		}
		if got := b.User("u").Describe(); got != d {
			t.Fatalf("%q: %q loads back as %q", rules, d, got)
		}
	})
}

// FuzzLoad: any aclfile text loads or fails with an error; nothing panics.
func FuzzLoad(f *testing.F) {
	f.Add("user default on nopass ~* &* +@all\nuser a on >p (~x +get) %R~y\n")
	f.Add("user\nusr x\nuser b (~a\nuser c\tfoo\r\n")
	f.Fuzz(func(t *testing.T, text string) {
		if a, err := Load(text, "f"); err == nil && a.Default() == nil {
			t.Fatal("loaded without a default user")
		}
	})
}
