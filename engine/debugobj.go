package engine

import (
	"strconv"
	"unsafe"
)

// ObjectInfo is what DEBUG OBJECT shows of a key's value (Redis 7.0
// debug.c), with the fields limitdb can give.
type ObjectInfo struct {
	// Addr is the address of the key's entry, which holds the value or
	// points to it (Redis shows its robj's address): node-local, for
	// telling values apart only.
	Addr     uintptr
	Encoding string // as OBJECT ENCODING names it
	Refcount int64  // as OBJECT REFCOUNT gives it
	// SerializedLen is the size of the value in Redis's RDB format in its
	// plain form (length-prefixed strings, integers in 2/3/5 bytes,
	// sorted-set scores as 8-byte doubles), without LZF compression and
	// without the listpack blobs Redis writes for small collections: an
	// estimate of Redis's serializedlength, exact for strings LZF does not
	// shrink (all of at most 20 bytes) and for hashtable-encoded sets.
	SerializedLen int64
	LRU           int64 // the access byte (seconds mod 256, or the LFU counter)
	IdleSeconds   int64 // now − last access, wrapping at 256 s (OBJECT IDLETIME)
}

// DebugObject describes the value at key in db, or reports false when
// there is none. Like Redis it looks the key up without expiring it.
func (db *DB) DebugObject(key string, now int64) (ObjectInfo, bool) {
	en := db.dict.find(key)
	if en == nil {
		return ObjectInfo{}, false
	}
	info := ObjectInfo{Addr: uintptr(unsafe.Pointer(en)), Encoding: en.encoding(), Refcount: 1, LRU: int64(en.lru), IdleSeconds: int64(uint8(now/1000) - en.lru)}
	if en.kind == KindString && en.enc == encInt && en.n >= 0 && en.n < 10000 {
		info.Refcount = sharedRefcount
	}
	info.SerializedLen = en.rdbLen()
	return info, true
}

// rdbLenLen is the size of Redis's rdbSaveLen encoding of n.
func rdbLenLen(n int) int64 {
	switch {
	case n < 1<<6:
		return 1
	case n < 1<<14:
		return 2
	case n <= 1<<32-1:
		return 5
	}
	return 9
}

// rdbStrLen is the size of rdbSaveRawString of s without compression:
// a canonical integer of at most 11 characters that fits 8/16/32 bits is
// written as 2/3/5 bytes.
func rdbStrLen(s string) int64 {
	if len(s) <= 11 {
		if n, ok := ParseInt(s); ok && strconv.FormatInt(n, 10) == s {
			switch {
			case n >= -1<<7 && n < 1<<7:
				return 2
			case n >= -1<<15 && n < 1<<15:
				return 3
			case n >= -1<<31 && n < 1<<31:
				return 5
			}
		}
	}
	return rdbLenLen(len(s)) + int64(len(s))
}

// rdbLen is the plain RDB size of e's value (see ObjectInfo).
func (en *entry) rdbLen() int64 {
	var n int64
	switch en.kind {
	case KindString:
		return rdbStrLen(en.str())
	case KindList:
		l := en.list()
		n = rdbLenLen(l.n)
		for i := 0; i < l.n; i++ {
			n += rdbStrLen(l.at(i).String())
		}
	case KindSet:
		s := en.set()
		n = rdbLenLen(s.Len())
		for _, m := range s.members {
			n += rdbStrLen(m)
		}
		for _, x := range s.ints {
			n += rdbStrLen(strconv.FormatInt(x, 10))
		}
	case KindZSet:
		z := (*zset)(en.p)
		n = rdbLenLen(z.len())
		for x := z.zsl.header.lv(0).forward; x != nil; x = x.lv(0).forward {
			n += rdbStrLen(x.member) + 8
		}
	case KindHash:
		h := en.hash()
		n = rdbLenLen(len(h.kv))
		for _, p := range h.kv {
			n += rdbStrLen(p.f) + rdbStrLen(p.v.String())
		}
	case KindLimiter:
		// no RDB form: its algorithm name and five state/parameter words
		p, st := limParams(en), limLoad(en)
		n = rdbStrLen(p.Algo.String())
		for _, w := range [...]int64{p.Limit, p.Period, p.Burst, st.A, st.B} {
			n += rdbStrLen(strconv.FormatInt(w, 10))
		}
		n += 8 * int64(len(st.Log))
	}
	return n
}

// AppendDebugObject appends DEBUG OBJECT's status text for info, in Redis
// 7.0's field order ("%p" prints 0x and lowercase hex).
func AppendDebugObject(b []byte, info ObjectInfo) []byte {
	b = append(b, "Value at:0x"...)
	b = strconv.AppendUint(b, uint64(info.Addr), 16)
	b = append(b, " refcount:"...)
	b = strconv.AppendInt(b, info.Refcount, 10)
	b = append(b, " encoding:"...)
	b = append(b, info.Encoding...)
	b = append(b, " serializedlength:"...)
	b = strconv.AppendInt(b, info.SerializedLen, 10)
	b = append(b, " lru:"...)
	b = strconv.AppendInt(b, info.LRU, 10)
	b = append(b, " lru_seconds_idle:"...)
	b = strconv.AppendInt(b, info.IdleSeconds, 10)
	return b
}
