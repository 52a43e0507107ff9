package server

import (
	"encoding/binary"
	"testing"
)

// A directory request that is cut, has a trailing byte or names no op
// is refused before anything runs (no lock, no node), and a node without
// cluster mode refuses every one.
func TestDirectoryRequestMalformed(t *testing.T) {
	s := &Server{clusterMode: true}
	addGroup := appendQueryRanges(appendQueryStrings([]byte{dirAddGroup}, []string{"127.0.0.1:17000"}), [][2]int{{0, 10}})
	claim := appendQueryRanges(binary.AppendUvarint([]byte{dirClaim}, 1), [][2]int{{5, 5}})
	seeds := appendQueryStrings(binary.AppendUvarint([]byte{dirSeeds}, 1), []string{"a:1", "b:2"})
	meetMe := appendQueryString([]byte{dirMeetMe}, "127.0.0.1:17000")
	for _, req := range [][]byte{addGroup, claim, seeds, meetMe} {
		for i := 1; i < len(req); i++ {
			if st, _ := s.answerDirectory(req[:i]); st != queryMalformedReq {
				t.Fatalf("%q cut at %d: status %d", req, i, st)
			}
		}
		if st, _ := s.answerDirectory(append(req, 0)); st != queryMalformedReq {
			t.Fatalf("%q with a trailing byte: status %d", req, st)
		}
	}
	for _, req := range [][]byte{{dirFound, 0}, appendQueryString([]byte{dirMeetMe}, ""),
		appendQueryRanges(binary.AppendUvarint([]byte{dirRelease}, 1), [][2]int{{10, 5}})} {
		if st, _ := s.answerDirectory(req); st != queryMalformedReq {
			t.Fatalf("%q: status %d", req, st)
		}
	}
	if st, _ := s.answerDirectory(nil); st != queryUnknownKind {
		t.Fatalf("no op: status %d", st)
	}
	if st, _ := s.answerDirectory([]byte{'?'}); st != queryUnknownKind {
		t.Fatalf("unknown op: status %d", st)
	}
	s.clusterMode = false
	if st, body := s.answerDirectory(claim); st != queryRefused || string(body) != errMeetNotCluster {
		t.Fatalf("without cluster mode: %d %q", st, body)
	}
}
