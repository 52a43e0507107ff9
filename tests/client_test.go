package tests

import (
	"regexp"
	"strings"
	"testing"
)

// TestClientSetinfoNoTouch covers CLIENT SETINFO and CLIENT NO-TOUCH, which
// Redis 7.0.15 lacks (so no scenario can compare them): 7.2 semantics.
func TestClientSetinfoNoTouch(t *testing.T) {
	c := mustDial(t, limitAddr)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"CLIENT", "SETINFO", "lib-name", "mylib"}, "+OK\r\n"},
		{[]string{"CLIENT", "SETINFO", "LIB-VER", "1.2.3"}, "+OK\r\n"},
		{[]string{"CLIENT", "SETINFO", "lib-name", "a b"}, "-ERR lib-name cannot contain spaces, newlines or special characters.\r\n"},
		{[]string{"CLIENT", "SETINFO", "foo", "x"}, "-ERR Unrecognized option 'foo'\r\n"},
		{[]string{"CLIENT", "SETINFO", "lib-name"}, "-ERR wrong number of arguments for 'client|setinfo' command\r\n"},
		{[]string{"CLIENT", "NO-TOUCH", "on"}, "+OK\r\n"},
		{[]string{"CLIENT", "NO-TOUCH", "maybe"}, "-ERR syntax error\r\n"},
	} {
		r, err := c.Do(tc.args...)
		if err != nil || string(r) != tc.want {
			t.Errorf("%v: %q %v, want %q", tc.args, r, err, tc.want)
		}
	}
	r, _ := c.Do("CLIENT", "INFO")
	s := string(r)
	for _, want := range []string{" flags=T ", " lib-name=mylib ", " lib-ver=1.2.3\n", " cmd=client|info "} {
		if !strings.Contains(s, want) {
			t.Errorf("CLIENT INFO %q lacks %q", s, want)
		}
	}
	// another connection sees this one in MULTI with one queued command
	id := strings.TrimSpace(string(mustDo(t, c, "CLIENT", "ID")[1:]))
	c.Do("MULTI")
	c.Do("PING")
	o := mustDial(t, limitAddr)
	r = mustDo(t, o, "CLIENT", "LIST", "ID", id)
	if !strings.Contains(string(r), " flags=xT ") || !strings.Contains(string(r), " multi=1 ") {
		t.Errorf("CLIENT LIST of a client in MULTI: %q", r)
	}
	r, _ = c.Do("RESET")
	if string(r) != "+RESET\r\n" {
		t.Fatalf("RESET: %q", r)
	}
	r, _ = c.Do("CLIENT", "INFO")
	if !strings.Contains(string(r), " flags=N ") {
		t.Errorf("after RESET: %q", r)
	}
}

// TestClientInfoFields: CLIENT INFO has Redis 7.0's fields in Redis's
// order (limitdb appends 7.2's lib-name and lib-ver).
func TestClientInfoFields(t *testing.T) {
	keys := func(addr string) []string {
		c := mustDial(t, addr)
		defer c.Close()
		r := string(mustDo(t, c, "CLIENT", "INFO"))
		line := strings.TrimSpace(r[strings.Index(r, "\r\n")+2:])
		var ks []string
		for _, f := range strings.Fields(line) {
			k, _, _ := strings.Cut(f, "=")
			ks = append(ks, k)
		}
		return ks
	}
	ref, cand := keys(redisAddr), keys(limitAddr)
	want := strings.Join(append(ref, "lib-name", "lib-ver"), " ")
	if got := strings.Join(cand, " "); got != want {
		t.Fatalf("CLIENT INFO fields\n  limitdb: %s\n  want:    %s", got, want)
	}
}

// TestClientQbufSelf: the calling client's qbuf counts the CLIENT LIST or
// CLIENT INFO request it is running, as Redis's (its query buffer is
// trimmed after the command): Redis's introspection suite expects qbuf=26.
func TestClientQbufSelf(t *testing.T) {
	p := dialPair(t, 2)
	defer p.ref.Close()
	defer p.cand.Close()
	qbuf := regexp.MustCompile(`qbuf=\d+ `)
	for _, cmd := range [][]string{{"CLIENT", "INFO"}, {"client", "info"}} {
		want := qbuf.FindString(string(mustDo(t, p.ref, cmd...)))
		got := qbuf.FindString(string(mustDo(t, p.cand, cmd...)))
		if want == "" || got != want {
			t.Fatalf("%q: limitdb %q, redis %q", cmd, got, want)
		}
	}
}
