package engine

// LZF, the compression of Redis's RDB strings (liblzf 3.6 as Redis 7.0
// builds it: lzfP.h's HLOG 16, VERY_FAST, no ULTRA_FAST). DUMP must give
// Redis's bytes, so the compressor follows lzf_compress step by step: the
// same hash (IDX), the same match rules (a reference 1..8192 bytes back,
// never to the input's first byte), the same lengths (at most 264) and the
// same output-size checks that make it give up (Redis keeps a string
// verbatim unless it saves at least 4 bytes).
//
// Redis leaves its hash table uninitialised (INIT_HTAB 0); this one behaves
// as a zeroed table. The output is the same: a slot is only read for a
// 3-byte sequence whose first occurrence in this input, if any, already
// wrote it (the first occurrence is either a literal, which is hashed, or
// one of the last two positions of a match, which VERY_FAST hashes too),
// so stale contents can only be read where a zeroed table finds nothing
// either. Instead of zeroing 256 KB per string, slots hold positions offset
// by a base that grows with every input: a slot below the current base is
// empty.

const (
	lzfHLog   = 16
	lzfHSize  = 1 << lzfHLog
	lzfMaxLit = 1 << 5
	lzfMaxOff = 1 << 13
	lzfMaxRef = 1<<8 + 1<<3
)

// lzfCompressor holds the hash table (256 KB) and the output buffer
// between calls; not safe for concurrent use.
type lzfCompressor struct {
	htab []uint32
	base uint32 // positions of the current input are stored as base+1+off
	out  []byte
}

func lzfIdx(h uint32) uint32 { return ((h >> (3*8 - lzfHLog)) - h*5) & (lzfHSize - 1) }

// compress is lzf_compress(in, out[:outLen]): the compressed bytes (valid
// until the next call), or nil when they would not fit in outLen bytes (or
// in is empty).
func (z *lzfCompressor) compress(in []byte, outLen int) []byte {
	inLen := len(in)
	if inLen == 0 || outLen == 0 {
		return nil
	}
	if z.htab == nil {
		z.htab = make([]uint32, lzfHSize)
	}
	if uint64(z.base)+uint64(inLen)+2 >= 1<<32 {
		clear(z.htab)
		z.base = 0
	}
	base := z.base
	z.base += uint32(inLen) + 1
	htab := z.htab
	// lzf_compress never writes past outLen; the slack only turns a
	// mistake into a refusal below instead of a panic
	if cap(z.out) < outLen+8 || cap(z.out) > 4*(outLen+8)+4096 {
		z.out = make([]byte, outLen+8)
	}
	out := z.out[:outLen+8]
	ip, op := 0, 0
	lit := 0
	op++ // start run
	var hval uint32
	if inLen >= 2 {
		hval = uint32(in[0])<<8 | uint32(in[1])
	}
	for ip < inLen-2 {
		hval = hval<<8 | uint32(in[ip+2])
		slot := &htab[lzfIdx(hval)]
		ref := -1
		if *slot > base {
			ref = int(*slot - base - 1)
		}
		*slot = base + 1 + uint32(ip)
		if ref > 0 && ref < ip && ip-ref-1 < lzfMaxOff &&
			in[ref+2] == in[ip+2] && in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			off := ip - ref - 1
			l := 2
			maxlen := inLen - ip - l
			if maxlen > lzfMaxRef {
				maxlen = lzfMaxRef
			}
			if op+3+1 >= outLen { // first a faster conservative test
				b := 0
				if lit == 0 {
					b = 1
				}
				if op-b+3+1 >= outLen { // second the exact but rare test
					return nil
				}
			}
			out[op-lit-1] = byte(lit - 1) // stop run
			if lit == 0 {
				op-- // undo run if length is zero
			}
			if maxlen > 16 {
				for k := 0; k < 16; k++ {
					l++
					if in[ref+l] != in[ip+l] {
						goto matched
					}
				}
			}
			for {
				l++
				if !(l < maxlen && in[ref+l] == in[ip+l]) {
					break
				}
			}
		matched:
			l -= 2 // now #octets - 1
			ip++
			if l < 7 {
				out[op] = byte(off>>8 + l<<5)
				op++
			} else {
				out[op] = byte(off>>8 + 7<<5)
				out[op+1] = byte(l - 7)
				op += 2
			}
			out[op] = byte(off)
			op++
			lit = 0
			op++ // start run
			ip += l + 1
			if ip >= inLen-2 {
				break
			}
			ip -= 2
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			hval = hval<<8 | uint32(in[ip+2])
			htab[lzfIdx(hval)] = base + 1 + uint32(ip)
			ip++
			hval = hval<<8 | uint32(in[ip+2])
			htab[lzfIdx(hval)] = base + 1 + uint32(ip)
			ip++
		} else {
			if op >= outLen {
				return nil
			}
			lit++
			out[op] = in[ip]
			op++
			ip++
			if lit == lzfMaxLit {
				out[op-lit-1] = byte(lit - 1) // stop run
				lit = 0
				op++ // start run
			}
		}
	}
	if op+3 > outLen { // at most 3 bytes can be missing here
		return nil
	}
	for ip < inLen {
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1) // end run
	if lit == 0 {
		op--
	}
	if op > outLen {
		return nil
	}
	return out[:op]
}

// lzfDecompress is lzf_decompress into out (whose length is the expected
// size); it reports whether in decoded to exactly len(out) bytes.
func lzfDecompress(in, out []byte) bool {
	ip, op := 0, 0
	for ip < len(in) {
		ctrl := int(in[ip])
		ip++
		if ctrl < 1<<5 { // literal run
			ctrl++
			if op+ctrl > len(out) || ip+ctrl > len(in) {
				return false
			}
			copy(out[op:op+ctrl], in[ip:ip+ctrl])
			op += ctrl
			ip += ctrl
			continue
		}
		l := ctrl >> 5
		ref := op - (ctrl&0x1f)<<8 - 1
		if ip >= len(in) {
			return false
		}
		if l == 7 {
			l += int(in[ip])
			ip++
			if ip >= len(in) {
				return false
			}
		}
		ref -= int(in[ip])
		ip++
		l += 2
		if op+l > len(out) || ref < 0 {
			return false
		}
		for ; l > 0; l-- { // may overlap: byte by byte
			out[op] = out[ref]
			op++
			ref++
		}
	}
	return op == len(out)
}
