package engine

import (
	"strings"
	"testing"
)

// The expectations below were recorded from Redis 7.0.15's KEYS against a
// database holding matchStrings (KEYS "*" lists "" through its all-keys
// shortcut; the matcher itself does not match "" against "*").
var matchCases = []struct {
	pat  string
	want []string
}{
	{"*", []string{"", "-", "A", "[", "[a-", "\\", "]", "^", "a", "a*b", "a-", "a?b", "aXc", "a\\b", "a]", "aa", "ab", "abc", "b", "ba", "foo.bar", "h[llo", "hallo", "heeeello", "hello", "hllo", "hxllo", "x^y", "z"}},
	{"?", []string{"-", "A", "[", "\\", "]", "^", "a", "b", "z"}},
	{"a*", []string{"a", "a*b", "a-", "a?b", "aXc", "a\\b", "a]", "aa", "ab", "abc"}},
	{"*a", []string{"a", "aa", "ba"}},
	{"*?", []string{"-", "A", "[", "[a-", "\\", "]", "^", "a", "a*b", "a-", "a?b", "aXc", "a\\b", "a]", "aa", "ab", "abc", "b", "ba", "foo.bar", "h[llo", "hallo", "heeeello", "hello", "hllo", "hxllo", "x^y", "z"}},
	{"?*", []string{"-", "A", "[", "[a-", "\\", "]", "^", "a", "a*b", "a-", "a?b", "aXc", "a\\b", "a]", "aa", "ab", "abc", "b", "ba", "foo.bar", "h[llo", "hallo", "heeeello", "hello", "hllo", "hxllo", "x^y", "z"}},
	{"**", []string{"-", "A", "[", "[a-", "\\", "]", "^", "a", "a*b", "a-", "a?b", "aXc", "a\\b", "a]", "aa", "ab", "abc", "b", "ba", "foo.bar", "h[llo", "hallo", "heeeello", "hello", "hllo", "hxllo", "x^y", "z"}},
	{"a?c", []string{"aXc", "abc"}},
	{"[a-", []string{"-", "a"}},
	{"[a-]", []string{"]", "^", "a"}},
	{"[a-c]", []string{"a", "b"}},
	{"[c-a]", []string{"a", "b"}},
	{"[^a]", []string{"-", "A", "[", "\\", "]", "^", "b", "z"}},
	{"[^a]*", []string{"-", "A", "[", "[a-", "\\", "]", "^", "b", "ba", "foo.bar", "h[llo", "hallo", "heeeello", "hello", "hllo", "hxllo", "x^y", "z"}},
	{"[!a]", []string{"a"}},
	{"\\", []string{"\\"}},
	{"a\\", []string{}},
	{"a\\b", []string{"ab"}},
	{"a\\\\b", []string{"a\\b"}},
	{"a\\*b", []string{"a*b"}},
	{"a\\?b", []string{"a?b"}},
	{"[", []string{}},
	{"[]", []string{}},
	{"[]]", []string{}},
	{"[^]", []string{"-", "A", "[", "\\", "]", "^", "a", "b", "z"}},
	{"[\\]]", []string{"]"}},
	{"[a\\-c]*", []string{"-", "a", "a*b", "a-", "a?b", "aXc", "a\\b", "a]", "aa", "ab", "abc"}},
	{"h[ae]llo", []string{"hallo", "hello"}},
	{"h[^e]llo", []string{"h[llo", "hallo", "hxllo"}},
	{"h*llo", []string{"h[llo", "hallo", "heeeello", "hello", "hllo", "hxllo"}},
	{"h?llo", []string{"h[llo", "hallo", "hello", "hxllo"}},
	{"h\\[llo", []string{"h[llo"}},
	{"h[[]llo", []string{"h[llo"}},
	{"*\\", []string{"\\"}},
	{"[a-]*", []string{"]", "^", "a"}},
	{"[-a]", []string{"-", "a"}},
	{"a[-]", []string{"a-"}},
	{"[z-a]", []string{"a", "b", "z"}},
	{"x[^^]y", []string{}},
	{"foo*bar", []string{"foo.bar"}},
	{"*.*", []string{"foo.bar"}},
	{"[ab][ab]", []string{"aa", "ab", "ba"}},
	{"[^ab]*", []string{"-", "A", "[", "[a-", "\\", "]", "^", "foo.bar", "h[llo", "hallo", "heeeello", "hello", "hllo", "hxllo", "x^y", "z"}},
	{"\\a", []string{"a"}},
	{"a[", []string{}},
	{"a[b", []string{"ab"}},
	{"*[", []string{}},
	{"[a", []string{"a"}},
	{"[^", []string{"-", "A", "[", "\\", "]", "^", "a", "b", "z"}},
	{"[*]", []string{}},
	{"?\\", []string{}},
}
var matchStrings = []string{"", "a", "b", "ab", "abc", "aXc", "a-", "[a-", "a]", "\\", "a\\b", "a*b", "a?b", "[", "]", "^", "hello", "hallo", "hxllo", "hllo", "heeeello", "h[llo", "-", "z", "A", "foo.bar", "x^y", "ba", "aa"}

func TestMatchAgainstRedis(t *testing.T) {
	for _, tc := range matchCases {
		want := map[string]bool{}
		for _, s := range tc.want {
			want[s] = true
		}
		if tc.pat == "*" {
			want[""] = false
		}
		for _, s := range matchStrings {
			if got := Match(tc.pat, s, false); got != want[s] {
				t.Errorf("Match(%q, %q) = %v, Redis says %v", tc.pat, s, got, want[s])
			}
		}
	}
}

func TestMatchNoCase(t *testing.T) {
	cases := []struct {
		pat, s string
		want   bool
	}{
		{"HELLO", "hello", true}, {"h[A-C]llo", "hbllo", true}, {"h[^A]llo", "hallo", false},
		{"*O", "hello", true}, {"?ELLO", "hello", true}, {"x", "X", true},
	}
	for _, tc := range cases {
		if got := Match(tc.pat, tc.s, true); got != tc.want {
			t.Errorf("Match(%q, %q, nocase) = %v, want %v", tc.pat, tc.s, got, tc.want)
		}
	}
}

// The Redis suite's "Regression for pattern matching long nested loops":
// without skipLongerMatches this takes exponential time.
func TestMatchNestedStarsLinear(t *testing.T) {
	s := strings.Repeat("a", 40)
	p := strings.Repeat("a*", 20) + "b"
	if Match(p, s, false) {
		t.Fatal("should not match")
	}
	if !Match(strings.Repeat("a*", 20), s, false) {
		t.Fatal("should match")
	}
	if !Match("*a*b*c", "xxaxxbxxc", false) || Match("*a*b*c", "xxaxxbxx", false) {
		t.Fatal("basic star matching broken")
	}
}
