package engine

import (
	"strings"
	"testing"
)

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
