package luavm

import (
	"testing"

	"limitdb/engine"
)

// TestGsubBatches: gsub and gmatch find matches in batches of 4096; results
// across batch boundaries (empty matches, anchors, counts) are Lua's.
func TestGsubBatches(t *testing.T) {
	e := engine.New()
	for src, want := range map[string]string{
		"local s, n = string.rep('ab', 10000):gsub('b', 'c') return {#s, n, s:sub(1, 6)}":         "*3\r\n:20000\r\n:10000\r\n$6\r\nacacac\r\n",
		"local s, n = string.rep('a', 9000):gsub('', '-') return {#s, n, s:sub(1, 5), s:sub(-3)}": "*4\r\n:18001\r\n:9001\r\n$5\r\n-a-a-\r\n$3\r\n-a-\r\n",
		"local s, n = string.rep('a', 9000):gsub('x*', '-') return {#s, n}":                       "*2\r\n:18001\r\n:9001\r\n",
		"local s, n = string.rep('ab', 5000):gsub('^a', 'X') return {s:sub(1, 4), n}":             "*2\r\n$4\r\nXbab\r\n:1\r\n",
		"local s, n = string.rep('ab', 5000):gsub('a', 'X', 4097) return {s:sub(8193, 8198), n}":  "*2\r\n$6\r\nXbabab\r\n:4097\r\n",
		"local s, n = string.rep('aab', 5000):gsub('a+', '%0%0') return {#s, n}":                  "*2\r\n:25000\r\n:5000\r\n",
		"local c = 0 for w in string.rep('ab ', 9000):gmatch('%a+') do c = c + 1 end return c":    ":9000\r\n",
		"local c = 0 for w in string.rep('a', 9000):gmatch('') do c = c + 1 end return c":         ":9001\r\n",
	} {
		if got := evalOnce(t, e, src); got != want {
			t.Errorf("%s:\n got %q\nwant %q", src, got, want)
		}
	}
}
