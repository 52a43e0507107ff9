package engine

import "encoding/binary"

// crc64 is Redis's checksum of RDB files and DUMP payloads (crc64.c):
// CRC-64/Jones, reflected, polynomial 0xad93d23594c935a9 (0x95ac9329ac4bc9b5
// reversed), initial value 0, no final xor; crc64("123456789") is
// 0xe9c6d914c4b8d9ca. Go's hash/crc64 inverts the register before and
// after, and only its ISO and ECMA tables get the sliced loop, so this is
// its own slicing-by-8 implementation (BenchmarkCRC64: 1.2–1.8 GB/s against
// 0.1–0.25 GB/s a byte at a time, so the ~45 MB of a 1M-limiter snapshot
// cost ~30 ms instead of ~300).
const crc64Poly = 0x95ac9329ac4bc9b5

var crc64Tab = func() (t [8][256]uint64) {
	for i := range 256 {
		c := uint64(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ crc64Poly
			} else {
				c >>= 1
			}
		}
		t[0][i] = c
	}
	for k := 1; k < 8; k++ {
		for i := range 256 {
			c := t[k-1][i]
			t[k][i] = c>>8 ^ t[0][c&0xff]
		}
	}
	return
}()

// crc64Update extends crc with p.
func crc64Update(crc uint64, p []byte) uint64 {
	t := &crc64Tab
	for len(p) >= 8 {
		crc ^= binary.LittleEndian.Uint64(p)
		crc = t[7][crc&0xff] ^ t[6][crc>>8&0xff] ^ t[5][crc>>16&0xff] ^ t[4][crc>>24&0xff] ^
			t[3][crc>>32&0xff] ^ t[2][crc>>40&0xff] ^ t[1][crc>>48&0xff] ^ t[0][crc>>56]
		p = p[8:]
	}
	for _, b := range p {
		crc = t[0][byte(crc)^b] ^ crc>>8
	}
	return crc
}
