package engine

// maxRandReply bounds the reply of SRANDMEMBER, HRANDFIELD and ZRANDMEMBER
// with a negative count (repetitions allowed): the only replies whose size
// is not bounded by the data set's, so that `SRANDMEMBER k -1000000000000`
// cannot make the server allocate without bound (Redis 7.0 would fill its
// output buffer until the process runs out of memory). The reply is built
// under the engine lock, so the bound is also a bound on how long others
// wait: 64 MB of one-byte members (9.6 M elements) took 0.3–0.5 s here,
// where 512 MB starved PING for over a second (TestHostileInputs).
const maxRandReply = 64 << 20

// ErrRandReplyTooLarge is limitdb's own error for such a count.
const ErrRandReplyTooLarge = "ERR count too large: the reply would exceed 64 MB"

// minRandElem is the fewest bytes one element of such a reply takes (an
// empty bulk string, "$0\r\n\r\n").
const minRandElem = 6

// randCountTooLarge refuses, before building anything, a count whose reply
// cannot fit in maxRandReply whatever the members: `SRANDMEMBER k
// -1000000000000` built 64 MB under the engine lock before the error, 0.3–0.5
// s on a quiet machine and over 1 s on a loaded one (PING waited past
// TestHostileInputs' 1 s); now it answers at once. The reply is the same.
func (c *Ctx) randCountTooLarge(count int64) bool {
	if -count <= maxRandReply/minRandElem {
		return false
	}
	c.W.Error(ErrRandReplyTooLarge)
	return true
}

// randReplyTooLarge is checked every 1024 elements by the with-repetition
// loops: past maxRandReply the reply started at start is dropped and
// replaced by the error.
func (c *Ctx) randReplyTooLarge(start int) bool {
	if len(c.W.B)-start <= maxRandReply {
		return false
	}
	c.W.B = c.W.B[:start]
	c.W.Error(ErrRandReplyTooLarge)
	return true
}
