package cluster

import (
	"errors"
	"testing"
)

// TestLinkVersions: each outcome of a unit reaches a follower of either
// link version as the same status. Version 2 carries the status itself;
// version 1 has only ok and error, and its follower tells a refusal
// (TRYAGAIN: resend; REBLOCK: block again) by the error's text, which the
// leader still sends. A client's error starting with neither is an error
// on both.
func TestLinkVersions(t *testing.T) {
	cases := []struct {
		err  error
		want byte
	}{
		{nil, statusOK},
		{errNotLeader, statusRetry},
		{errReblock, statusReblock},
		{errDuplicate, statusError},
		{errors.New("ERR wrong number of arguments"), statusError},
	}
	for _, c := range cases {
		for _, proto := range []uint64{1, linkProto} {
			data := []byte(":1\r\n")
			if c.err != nil {
				data = []byte(c.err.Error())
			}
			body := encodeAnswer(nil, wireStatus(statusOf(c.err), proto), 7, data)
			if proto == 1 && body[0] > statusError {
				t.Fatalf("%v: version 1 gets status %d", c.err, body[0])
			}
			a, err := decodeAnswer(body, proto)
			if err != nil || a.status != c.want || a.ok() != (c.want == statusOK) || a.index != 7 || string(a.data) != string(data) {
				t.Fatalf("%v over version %d: %+v %v, want status %d", c.err, proto, a, err, c.want)
			}
		}
	}
}
