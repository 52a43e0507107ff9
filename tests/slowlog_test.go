package tests

import (
	"reflect"
	"strings"
	"testing"
)

// TestSlowlogEntriesDiff: with slowlog-log-slower-than 0 both servers log
// the same commands with the same stored arguments (32 at most, 128 bytes
// each, secrets redacted, MULTI's commands one by one, not EXEC) and the
// same client name; ids, times, durations and peers are not compared.
func TestSlowlogEntriesDiff(t *testing.T) {
	var got [2][]any
	for i, addr := range []string{redisAddr, limitAddr} {
		c := mustDial(t, addr)
		mustDo(t, c, "CONFIG", "SET", "slowlog-log-slower-than", "0")
		mustDo(t, c, "SLOWLOG", "RESET")
		mustDo(t, c, "CLIENT", "SETNAME", "slowpoke")
		mustDo(t, c, "SET", "k", strings.Repeat("v", 200))
		args := []string{"RPUSH", "slowlist"}
		for j := 0; j < 40; j++ {
			args = append(args, "e")
		}
		mustDo(t, c, args...)
		mustDo(t, c, "CONFIG", "SET", "requirepass", "")
		mustDo(t, c, "AUTH", "a", "b", "c")
		mustDo(t, c, "AUTH", "default", "nopass")
		mustDo(t, c, "HELLO", "2", "SETNAME", "slowpoke", "AUTH", "default", "pw")
		mustDo(t, c, "HELLO", "2", "FOO", "AUTH", "default", "pw")
		mustDo(t, c, "MULTI")
		mustDo(t, c, "INCR", "n")
		mustDo(t, c, "EXEC")
		v := mustDoValue(t, c, "SLOWLOG", "GET", "-1")
		mustDo(t, c, "CONFIG", "SET", "slowlog-log-slower-than", "10000")
		mustDo(t, c, "DEL", "k", "slowlist", "n")
		mustDo(t, c, "SLOWLOG", "RESET")
		c.Close()
		for _, e := range v.([]any) {
			f := e.([]any)
			got[i] = append(got[i], []any{f[3], f[5]})
		}
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Fatalf("redis logged\n%v\nlimitdb logged\n%v", got[0], got[1])
	}
}
