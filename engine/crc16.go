package engine

// crc16 is Redis Cluster's key hash (crc16.c): CRC-16/XMODEM, polynomial
// 0x1021, not reflected, initial value 0, no final xor; crc16("123456789")
// is 0x31c3 (Redis's cluster specification). One table lookup a byte:
// keys are short, and the slot of a key is computed once per keyed
// command in cluster mode and once per insert and delete of a db 0 key
// while the slot index is on.
const crc16Poly = 0x1021

var crc16Tab = func() (t [256]uint16) {
	for i := range 256 {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ crc16Poly
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return
}()

// crc16 returns the CRC16 of s.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crc16Tab[byte(crc>>8)^s[i]]
	}
	return crc
}
