package engine

import (
	"strconv"
	"sync"
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
	// SerializedLen is the size of the value in RDB form, as DUMP and
	// snapshots write it (Redis's serializedlength): equal to Redis's but
	// for lists Redis split into other quicklist nodes and intsets Redis
	// keeps wider than their members need (commands.md).
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

// rdbLen is Redis's rdbSavedObjectLen: the size of the value as the RDB
// writer encodes it (rdb.go: integer and LZF strings, listpacks, intsets,
// quicklist nodes), the type byte excluded.
func (en *entry) rdbLen() int64 {
	w := rdbLenWriters.Get().(*rdbWriter)
	w.buf = w.buf[:0]
	w.value(en)
	n := len(w.buf)
	if cap(w.buf) > 1<<20 {
		w.buf = nil // do not keep a big value's buffer
	}
	rdbLenWriters.Put(w)
	return int64(n)
}

// rdbLenWriters keep their LZF tables between DEBUG OBJECTs.
var rdbLenWriters = sync.Pool{New: func() any { return &rdbWriter{} }}

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
