package server

import (
	"strings"

	"limitdb/engine"
)

// execArityAbort reproduces a Redis 7.0 quirk: EXEC with arguments is
// rejected as "-EXECABORT Transaction discarded because of: wrong number
// of arguments for 'exec' command", in or out of MULTI, and a transaction
// in progress is discarded. Called after Resolve has written the plain
// arity error, which is replaced.
func (cl *client) execArityAbort(argv [][]byte) {
	if len(argv) == 1 || !strings.EqualFold(string(argv[0]), "exec") {
		return
	}
	msg := engine.ErrWrongArgs("exec")
	if n := len(msg) + 3; len(cl.w.B) >= n {
		cl.w.B = cl.w.B[:len(cl.w.B)-n]
	}
	cl.w.Error("EXECABORT Transaction discarded because of: " + strings.TrimPrefix(msg, "ERR "))
	if cl.tx.Active {
		cl.tx.Reset()
	} else {
		cl.tx.Unwatch()
	}
}
