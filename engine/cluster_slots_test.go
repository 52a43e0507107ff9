package engine

import "testing"

// TestKeySlot checks the CRC16 vector of Redis's cluster specification
// and the hash-tag rule on the examples of Redis's documentation
// (CLUSTER KEYSLOT, the specification's "Hash tags").
func TestKeySlot(t *testing.T) {
	if got := crc16("123456789"); got != 0x31c3 {
		t.Fatalf("crc16(123456789) = %#x", got)
	}
	for _, c := range []struct {
		key  string
		slot int
	}{
		{"foo", 12182},
		{"somekey", 11058},
		{"", 0},
		{"123456789", 0x31c3 & (NumSlots - 1)},
	} {
		if got := KeySlot([]byte(c.key)); got != c.slot {
			t.Errorf("KeySlot(%q) = %d, want %d", c.key, got, c.slot)
		}
	}
	same := func(a, b string) {
		t.Helper()
		if KeySlot([]byte(a)) != KeySlot([]byte(b)) {
			t.Errorf("KeySlot(%q) = %d != KeySlot(%q) = %d", a, KeySlot([]byte(a)), b, KeySlot([]byte(b)))
		}
	}
	same("{user1000}.following", "{user1000}.followers")
	same("{user1000}.following", "user1000")
	same("foo{}{bar}", "foo{}{bar}")
	if KeySlot([]byte("foo{}{bar}")) != int(crc16("foo{}{bar}")&(NumSlots-1)) {
		t.Error("foo{}{bar} must hash the whole key")
	}
	same("foo{{bar}}zap", "{bar")
	same("foo{bar}{zap}", "bar")
	same("{unclosed", "{unclosed")
	if KeySlot([]byte("{unclosed")) != int(crc16("{unclosed")&(NumSlots-1)) {
		t.Error("an unclosed tag must hash the whole key")
	}
}
