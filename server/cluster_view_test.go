package server

import (
	"reflect"
	"testing"

	"limitdb/engine"
)

// The view's encoding round-trips, and every cut of it is refused.
func TestViewCodec(t *testing.T) {
	v := groupView{
		self:     "n1@a",
		shard:    engine.ShardRecord{Index: 2, DirSeeds: []string{"127.0.0.1:17000", "127.0.0.1:17001"}},
		members:  []viewMember{{raftID: "n1@a", clientAddr: "127.0.0.1:7000", raftAddr: "127.0.0.1:17000", leader: true, applied: 42}, {raftID: "n2@b", raftAddr: "127.0.0.1:17001"}},
		owned:    [][2]int{{0, 5460}, {16000, 16383}},
		slotsGen: 7, dirGen: 3,
		groups: []engine.DirGroup{{Index: 0, Seeds: []string{"a:1"}}, {Index: 1, Seeds: []string{"b:2", "c:3"}}},
	}
	b := encodeView(&v)
	got, ok := decodeView(b)
	if !ok || !reflect.DeepEqual(got, v) {
		t.Fatalf("round trip: ok=%v\n got %+v\nwant %+v", ok, got, v)
	}
	for i := range b {
		if _, ok := decodeView(b[:i]); ok {
			t.Fatalf("a view cut at %d of %d bytes decoded", i, len(b))
		}
	}
	if _, ok := decodeView(append(b, 0)); ok {
		t.Fatal("a view with a trailing byte decoded")
	}
}
