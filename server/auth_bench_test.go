package server

import (
	"strconv"
	"testing"
)

// asLimitedUser logs the client in as a user with key patterns (the
// permission check runs in full on every command).
func asLimitedUser(b *testing.B) func(s *Server, cl *client) {
	return func(s *Server, cl *client) {
		if err := applyUserDirective(s, []string{"app", "on", ">pw", "-@all", "+@string", "+@ratelimit", "+incr", "~k:*", "~rl:*", "%R~cfg:*"}); err != nil {
			b.Fatal(err)
		}
		if !s.authenticate(cl, []byte("AUTH"), []byte("app"), []byte("pw")) {
			b.Fatal("AUTH app failed")
		}
	}
}

func getCmd(i int) []string { return []string{"GET", "k:" + strconv.Itoa(i%100)} }
func rlCmd(i int) []string {
	return []string{"RL.ALLOW", "rl:" + strconv.Itoa(i%100), "1000000", "60000"}
}

// The same batches as the default user (free: one field read) and as an
// ACL user with key patterns; both must stay at 0 allocs/op.
func BenchmarkBatchGetDefaultUser(b *testing.B) { benchBatch(b, getCmd) }
func BenchmarkBatchGetACLUser(b *testing.B)     { benchBatchWith(b, asLimitedUser(b), getCmd) }
func BenchmarkBatchRLDefaultUser(b *testing.B)  { benchBatch(b, rlCmd) }
func BenchmarkBatchRLACLUser(b *testing.B)      { benchBatchWith(b, asLimitedUser(b), rlCmd) }
