package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The expected replies of a scenario's @expect lines: a reply is written on
// one line in a notation that keeps every RESP type apart, and a reply
// read from limitdb is rendered the same way and compared with it, with
// `_` in the expectation standing for any one scalar (a time, a version
// that depends on the order the files ran in).
//
//	+OK              simple string        -ERR text     error (to the end)
//	:5               integer              ,1.5          double
//	"text"           bulk string (Go quoting)            nil   null / nil bulk / nil array
//	#t #f            boolean              (123          big number
//	[a b]            array                {k v}         map
//	~[a b]           set                  >[a b]        push
//	=txt:"…"         verbatim string
//
// An error on its own is written as it is, to the end of the line
// (`-ERR no such policy 'x'`); inside an aggregate it is quoted
// (`[+OK -"ERR …"]`), so that the brackets after it still count.

// renderReply renders one raw RESP reply in the notation above.
func renderReply(raw []byte) (string, error) {
	var b strings.Builder
	br := bufio.NewReader(bytes.NewReader(raw))
	if err := renderValue(br, &b, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func renderValue(br *bufio.Reader, b *strings.Builder, depth int) error {
	var sink bytes.Buffer
	line, err := readLine(br, &sink)
	if err != nil {
		return err
	}
	body := line[1:]
	n := 0 // the length of a string, aggregate or attribute
	if strings.IndexByte("$=!*~>%|", line[0]) >= 0 {
		if n, err = strconv.Atoi(body); err != nil {
			return err
		}
		if n < 0 {
			b.WriteString("nil")
			return nil
		}
	}
	switch line[0] {
	case '-':
		writeError(b, body, depth)
	case '+', ':', ',', '#', '(':
		b.WriteString(line)
	case '_':
		b.WriteString("nil")
	case '$', '=', '!':
		buf := make([]byte, n+2)
		if _, err := ioReadFull(br, buf); err != nil {
			return err
		}
		s := string(buf[:n])
		switch line[0] {
		case '$':
			b.WriteString(strconv.Quote(s))
		case '=':
			b.WriteString("=" + s[:min(3, len(s))] + ":" + strconv.Quote(s[min(4, len(s)):]))
		case '!':
			writeError(b, s, depth)
		}
	case '*', '~', '>', '%':
		open, close := "[", "]"
		switch line[0] {
		case '~':
			open = "~["
		case '>':
			open = ">["
		case '%':
			open, close, n = "{", "}", 2*n
		}
		b.WriteString(open)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			if err := renderValue(br, b, depth+1); err != nil {
				return err
			}
		}
		b.WriteString(close)
	case '|': // an attribute: shown as nothing, the reply follows
		var skip strings.Builder
		for i := 0; i < 2*n; i++ {
			if err := renderValue(br, &skip, depth+1); err != nil {
				return err
			}
		}
		return renderValue(br, b, depth)
	default:
		return fmt.Errorf("unknown reply type %q", line)
	}
	return nil
}

func writeError(b *strings.Builder, text string, depth int) {
	b.WriteByte('-')
	if depth == 0 {
		b.WriteString(text)
	} else {
		b.WriteString(strconv.Quote(text))
	}
}

// expectTokens splits a rendering into its scalars and brackets; a quoted
// string, with its escapes, is one token, and an error is one token to the
// end of the line.
func expectTokens(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ' ':
			i++
		case c == '-' && !strings.HasPrefix(s[i:], `-"`):
			out = append(out, s[i:])
			return out
		case c == '[' || c == ']' || c == '{' || c == '}':
			out = append(out, s[i:i+1])
			i++
		case (c == '~' || c == '>') && i+1 < len(s) && s[i+1] == '[':
			out = append(out, s[i:i+2])
			i += 2
		case c == '"' || ((c == '=' || c == '-') && strings.IndexByte(s[i:], '"') > 0):
			j := strings.IndexByte(s[i:], '"') + i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(s))
			out = append(out, s[i:j])
			i = j
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" []{}", rune(s[j])) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		}
	}
	return out
}

// errorMatches compares an error's text with an expected one in which a
// `_` standing alone (after a space, before a space, a punctuation mark
// or the end) matches one word or number: the version an IFVERSION
// error names, a deadline.
func errorMatches(want, got string) bool {
	var re strings.Builder
	re.WriteByte('^')
	for i := 0; i < len(want); i++ {
		alone := want[i] == '_' && (i == 0 || want[i-1] == ' ') &&
			(i+1 == len(want) || !isWordByte(want[i+1]))
		if alone {
			re.WriteString(`[^ ,.;:()']+`)
		} else {
			re.WriteString(regexp.QuoteMeta(want[i : i+1]))
		}
	}
	re.WriteByte('$')
	return regexp.MustCompile(re.String()).MatchString(got)
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// matchExpect reports whether the rendering got matches want, where each
// `_` token of want matches any one scalar token of got, and a `_` word
// of an expected error any one word of got's (errorMatches).
func matchExpect(want, got string) bool {
	w, g := expectTokens(want), expectTokens(got)
	if len(w) != len(g) {
		return false
	}
	for i := range w {
		if w[i] == g[i] {
			continue
		}
		if w[i][0] == '-' && g[i][0] == '-' && errorMatches(w[i], g[i]) {
			continue
		}
		if w[i] != "_" || strings.Contains("[]{}~[>[", g[i]) {
			return false
		}
	}
	return true
}
