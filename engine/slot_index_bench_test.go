package engine

import (
	"strconv"
	"testing"
)

// BenchmarkSlotIndex measures what the slot index adds to a key's
// creation and deletion: SET of b.N new keys, then DEL of each, with the
// index off (every database outside cluster mode) and on (db 0 in
// cluster mode). The keys are prepared first so formatting them is not
// timed.
func BenchmarkSlotIndex(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		for _, op := range []string{"SET-new", "DEL"} {
			b.Run(name+"/"+op, func(b *testing.B) {
				c := benchCtx()
				if on {
					c.E.EnableSlots()
				}
				keys := make([][]byte, b.N)
				for i := range keys {
					keys[i] = []byte("user:" + strconv.Itoa(i) + ":rate")
				}
				set := [][]byte{[]byte("set"), nil, []byte("v")}
				del := [][]byte{[]byte("del"), nil}
				setCmd, delCmd := c.Resolve(set), c.Resolve(del)
				if op == "DEL" {
					for _, k := range keys {
						set[1] = k
						c.W.Reset()
						c.Call(setCmd, set)
					}
				}
				b.ResetTimer()
				for _, k := range keys {
					c.W.Reset()
					if op == "DEL" {
						del[1] = k
						c.Call(delCmd, del)
					} else {
						set[1] = k
						c.Call(setCmd, set)
					}
				}
			})
		}
	}
}

// BenchmarkKeySlotOwns is what cluster mode adds before a keyed command:
// the key's slot and the ownership test.
func BenchmarkKeySlotOwns(b *testing.B) {
	e := New()
	e.owned.set(KeySlot([]byte("user:12345:rate")))
	key := []byte("user:12345:rate")
	n := 0
	for i := 0; i < b.N; i++ {
		if e.OwnsSlot(KeySlot(key)) {
			n++
		}
	}
	if n != b.N {
		b.Fatal("slot not owned")
	}
}
