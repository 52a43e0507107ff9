package engine

import (
	"encoding/binary"
	"io"
	"math"
	"strconv"
	"unsafe"
)

// The snapshot format is Redis 7.0's RDB, version 10 (rdb.c), so that a
// limitdb snapshot is a dump.rdb Redis tools understand and a dump.rdb
// written by redis-server 7.0 loads into limitdb (rdb_load.go). This file
// writes it: the value encodings (shared with DUMP), the key/value pairs
// and the file around them (snapshot.go drives it).
//
//	"REDIS0010"
//	AUX redis-ver, redis-bits, ctime, aof-base   (as Redis writes them)
//	AUX limitdb-ver, limitdb-clock-ms, limitdb-rand, limitdb-encoding-limits,
//	    lua …, limitdb-acl, limitdb-notify,
//	    limitdb-policy-ver, limitdb-policy …,
//	    limitdb-slots, limitdb-directory         (limitdb-only, skipped by Redis)
//	per non-empty database:
//	  SELECTDB n, RESIZEDB keys expires, AUX limitdb-buckets
//	  per key: [AUX limitdb-key-enc] [EXPIRETIME_MS] [IDLE|FREQ] type key value
//	EOF, CRC64 (8 bytes LE) of everything before
//
// Values are written in the encodings Redis 7.0 gives them: strings as
// integers (8/16/32 bit) when they are canonical ones, LZF-compressed
// above 20 bytes when that saves 4 bytes, else verbatim; lists as
// quicklist 2 of listpack nodes of at most 8 KB (list-max-listpack-size
// -2); small hashes and sorted sets as one listpack; all-integer small
// sets as an intset; larger ones as plain RDB_TYPE_HASH / SET / ZSET_2
// (sorted sets from the highest score down, as Redis). A native limiter
// has no Redis type: it is a module value (RDB_TYPE_MODULE_2) of the
// module type "limitdbRL" (rdb_limiter.go); Redis refuses such a file
// with "The RDB file contains module data I can't load: no matching module
// type 'limitdbRL'" and RESTORE of such a payload with "Bad data format".

// RDB format constants (rdb.h).
const (
	rdbVersion = 10

	rdbTypeString         = 0
	rdbTypeList           = 1
	rdbTypeSet            = 2
	rdbTypeZset           = 3
	rdbTypeHash           = 4
	rdbTypeZset2          = 5
	rdbTypeModule         = 6
	rdbTypeModule2        = 7
	rdbTypeHashZipmap     = 9
	rdbTypeListZiplist    = 10
	rdbTypeSetIntset      = 11
	rdbTypeZsetZiplist    = 12
	rdbTypeHashZiplist    = 13
	rdbTypeListQuicklist  = 14
	rdbTypeStream         = 15
	rdbTypeHashListpack   = 16
	rdbTypeZsetListpack   = 17
	rdbTypeListQuicklist2 = 18
	rdbTypeStream2        = 19

	rdbOpFunction2   = 245
	rdbOpFunction    = 246
	rdbOpModuleAux   = 247
	rdbOpIdle        = 248
	rdbOpFreq        = 249
	rdbOpAux         = 250
	rdbOpResizeDB    = 251
	rdbOpExpireMs    = 252
	rdbOpExpire      = 253
	rdbOpSelectDB    = 254
	rdbOpEOF         = 255
	rdbEncInt8       = 0
	rdbEncInt16      = 1
	rdbEncInt32      = 2
	rdbEncLZF        = 3
	quicklistPlain   = 1 // QUICKLIST_NODE_CONTAINER_PLAIN
	quicklistPacked  = 2 // QUICKLIST_NODE_CONTAINER_PACKED
	quicklistNodeMax = 8192
	// quicklistLarge is packed_threshold: an element this long gets a
	// node of its own, stored plain.
	quicklistLarge = 1 << 30
)

// limitdb's own aux fields.
const (
	// SnapshotVersion is the version of limitdb's additions to RDB 10 (its
	// aux fields and the limiter encoding). A binary that meets a newer
	// version refuses the file. Version 2 adds limitdb-slots and
	// limitdb-directory, which a version-1 binary would skip like any aux
	// field it does not know (losing the group's slots or its cluster
	// without a word), so a snapshot that holds either says 2 and one
	// without says 1, which older binaries
	// still read (snapshotVersion).
	SnapshotVersion = 2

	auxVersion  = "limitdb-ver"
	auxClock    = "limitdb-clock-ms"
	auxRand     = "limitdb-rand"
	auxEncoding = "limitdb-encoding-limits"
	auxBuckets  = "limitdb-buckets"
	auxKeyEnc   = "limitdb-key-enc"
	auxACL      = "limitdb-acl"    // Settings.ACL, the users in aclfile form
	auxNotify   = "limitdb-notify" // Notify: notify-keyspace-events, a cluster-wide setting
)

// rdbWriter writes RDB primitives into buf, handing full buffers to w (nil
// w: everything stays in buf, as for DUMP) and keeping the CRC64 of what
// it handed over.
type rdbWriter struct {
	w     io.Writer
	buf   []byte
	crc   uint64
	n     int64
	err   error
	lzf   lzfCompressor
	lp    lpWriter
	tmp   []byte
	touch byte // WriteTo's prefetching loads end here
	noLZF bool // rdbcompression no: strings verbatim
	noCRC bool // rdbchecksum no: the trailer is 0, nothing to compute
}

const rdbFlushAt = 64 << 10

func (w *rdbWriter) flush() {
	if w.w == nil || len(w.buf) == 0 || w.err != nil {
		return
	}
	if !w.noCRC {
		w.crc = crc64Update(w.crc, w.buf)
	}
	k, err := w.w.Write(w.buf)
	w.n += int64(k)
	w.buf = w.buf[:0]
	if err != nil {
		w.err = err
	}
}

func (w *rdbWriter) maybeFlush() {
	if len(w.buf) >= rdbFlushAt {
		w.flush()
	}
}

func (w *rdbWriter) byte1(b byte) { w.buf = append(w.buf, b) }

func (w *rdbWriter) raw(b []byte) {
	if len(b) > rdbFlushAt {
		w.flush()
		if w.w != nil && w.err == nil {
			if !w.noCRC {
				w.crc = crc64Update(w.crc, b)
			}
			k, err := w.w.Write(b)
			w.n += int64(k)
			if err != nil {
				w.err = err
			}
			return
		}
	}
	w.buf = append(w.buf, b...)
	w.maybeFlush()
}

func (w *rdbWriter) rawStr(s string) { w.raw(unsafe.Slice(unsafe.StringData(s), len(s))) }

// length is rdbSaveLen: 6, 14, 32 or 64 bits, big-endian.
func (w *rdbWriter) length(n uint64) {
	switch {
	case n < 1<<6:
		w.buf = append(w.buf, byte(n))
	case n < 1<<14:
		w.buf = append(w.buf, byte(n>>8)|0x40, byte(n))
	case n <= math.MaxUint32:
		w.buf = append(w.buf, 0x80)
		w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(n))
	default:
		w.buf = append(w.buf, 0x81)
		w.buf = binary.BigEndian.AppendUint64(w.buf, n)
	}
}

// encInt appends rdbEncodeInteger of v when it fits 32 bits.
func (w *rdbWriter) encInt(v int64) bool {
	switch {
	case v >= -1<<7 && v <= 1<<7-1:
		w.buf = append(w.buf, 0xC0|rdbEncInt8, byte(v))
	case v >= -1<<15 && v <= 1<<15-1:
		w.buf = append(w.buf, 0xC0|rdbEncInt16, byte(v), byte(v>>8))
	case v >= -1<<31 && v <= 1<<31-1:
		w.buf = append(w.buf, 0xC0|rdbEncInt32, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	default:
		return false
	}
	return true
}

// int is rdbSaveLongLongAsStringObject (an int-encoded string value).
func (w *rdbWriter) int(v int64) {
	if !w.encInt(v) {
		var tmp [20]byte
		s := strconv.AppendInt(tmp[:0], v, 10)
		w.length(uint64(len(s)))
		w.buf = append(w.buf, s...)
	}
	w.maybeFlush()
}

// str is rdbSaveRawString: an integer encoding for canonical integers of
// up to 11 characters, LZF for strings over 20 bytes that it shrinks by
// at least 4 (unless rdbcompression is off), else length and bytes.
func (w *rdbWriter) str(s string) {
	if len(s) <= 11 {
		if v, ok := ParseInt(s); ok && w.encInt(v) {
			return
		}
	}
	if len(s) > 20 && !w.noLZF {
		b := unsafe.Slice(unsafe.StringData(s), len(s))
		if c := w.lzf.compress(b, len(s)-4); c != nil {
			w.buf = append(w.buf, 0xC0|rdbEncLZF)
			w.length(uint64(len(c)))
			w.length(uint64(len(s)))
			w.raw(c)
			return
		}
	}
	w.length(uint64(len(s)))
	w.rawStr(s)
}

func (w *rdbWriter) strBytes(b []byte) { w.str(bstr(b)) }

// elem writes a list element or hash value as rdbSaveRawString would
// write its string form.
func (w *rdbWriter) elem(x lelem) {
	if x.p == nil {
		if !w.encInt(x.n) {
			var tmp [20]byte
			w.str(string(strconv.AppendInt(tmp[:0], x.n, 10)))
		}
		return
	}
	w.str(unsafe.String((*byte)(x.p), int(x.n)))
}

func (w *rdbWriter) aux(key, val string) {
	w.byte1(rdbOpAux)
	w.str(key)
	w.str(val)
}

func (w *rdbWriter) auxInt(key string, v int64) {
	w.aux(key, strconv.FormatInt(v, 10))
}

// --- values -------------------------------------------------------------------

// rdbType is the RDB type byte of e's value.
func (e *entry) rdbType() byte {
	switch e.kind {
	case KindString:
		return rdbTypeString
	case KindList:
		return rdbTypeListQuicklist2
	case KindHash:
		if e.hash().ht() {
			return rdbTypeHash
		}
		return rdbTypeHashListpack
	case KindSet:
		if e.set().ht {
			return rdbTypeSet
		}
		return rdbTypeSetIntset
	case KindZSet:
		if e.zset().big() {
			return rdbTypeZset2
		}
		return rdbTypeZsetListpack
	}
	return rdbTypeModule2
}

// value writes e's value (rdbSaveObject).
func (w *rdbWriter) value(e *entry) {
	switch e.kind {
	case KindString:
		if e.enc == encInt {
			w.int(e.n)
		} else {
			w.str(unsafe.String((*byte)(e.p), int(e.n)))
		}
	case KindList:
		w.list(e.list())
	case KindHash:
		h := e.hash()
		if h.isLP() { // the listpack itself
			w.strBytes(h.bytes())
			break
		}
		t := h.table()
		if t.ht {
			w.length(uint64(len(t.kv)))
			for i := range t.kv {
				w.str(t.kv[i].f)
				w.elem(t.kv[i].v)
			}
			return
		}
		w.lp.reset()
		for i := range t.kv {
			w.lp.appendString(t.kv[i].f)
			w.lp.appendElem(t.kv[i].v)
		}
		w.strBytes(w.lp.finish())
	case KindSet:
		s := e.set()
		if s.ht {
			w.length(uint64(len(s.members)))
			for _, m := range s.members {
				w.str(m)
			}
			return
		}
		w.tmp = intsetBlob(w.tmp[:0], s.ints)
		w.strBytes(w.tmp)
	case KindZSet:
		z := e.zset()
		if z.isLP() { // the listpack itself
			w.strBytes(z.bytes())
			break
		}
		sk := z.sk()
		if sk.big {
			w.length(uint64(sk.len()))
			for x := sk.zsl.tail; x != nil; x = x.backward {
				w.str(x.member)
				w.buf = binary.LittleEndian.AppendUint64(w.buf, math.Float64bits(x.score))
			}
			return
		}
		w.strBytes(w.lp.zset(sk))
	case KindLimiter:
		w.limiter(e)
	}
	w.maybeFlush()
}

// list writes a quicklist 2: the nodes a list pushed element by element
// at its tail has in Redis (_quicklistNodeAllowInsert with fill -2: a node
// takes an element while its listpack size plus the element's length plus
// 8 stays within 8 KB; elements of 1 GB and more get a plain node). A list
// Redis built otherwise (LPUSH, LINSERT, LREM …) may be split elsewhere
// there, so its DUMP can differ from Redis's in the node boundaries only.
func (w *rdbWriter) list(l *List) {
	// count the nodes first: the count comes before them
	nodes := 0
	cur := 0 // listpack size of the current node, 0 = none
	n := l.Len()
	it := l.iter(0, false)
	for i := 0; i < n; i++ {
		x := it.next()
		sz := x.Len()
		switch {
		case sz >= quicklistLarge:
			nodes++
			cur = 0
			continue
		case cur == 0 || cur+sz+8 > quicklistNodeMax:
			nodes++
			cur = lpHdrSize + 1
		}
		cur += lpEntrySize(x)
	}
	w.length(uint64(nodes))
	w.lp.reset()
	open := false
	it = l.iter(0, false)
	for i := 0; i < n; i++ {
		x := it.next()
		sz := x.Len()
		if sz >= quicklistLarge {
			if open {
				w.length(quicklistPacked)
				w.strBytes(w.lp.finish())
				open = false
			}
			w.length(quicklistPlain)
			w.str(x.String())
			continue
		}
		if open && w.lp.size()+sz+8 > quicklistNodeMax {
			w.length(quicklistPacked)
			w.strBytes(w.lp.finish())
			open = false
		}
		if !open {
			w.lp.reset()
			open = true
		}
		w.lp.appendElem(x)
	}
	if open {
		w.length(quicklistPacked)
		w.strBytes(w.lp.finish())
	}
}

// dumpPayload is DUMP's reply for en's value (Redis's createDumpPayload):
// the RDB type and value, the RDB version (2 bytes LE), the CRC64 of all
// that (8 bytes LE). The slice is valid until the next call.
func (e *Engine) dumpPayload(en *entry) []byte {
	return dumpInto(e.dumpWriter(), en, e.RDBNoCompression)
}

// dumpInto is dumpPayload with a given writer (a slot capture encodes
// without the engine lock, with its own).
func dumpInto(w *rdbWriter, en *entry, noLZF bool) []byte {
	w.buf = w.buf[:0]
	w.noLZF = noLZF
	w.byte1(en.rdbType())
	w.value(en)
	w.buf = append(w.buf, rdbVersion, 0)
	w.buf = binary.LittleEndian.AppendUint64(w.buf, crc64Update(0, w.buf))
	return w.buf
}

// dumpWriter is the engine's writer for DUMP payloads (its LZF table is
// kept between calls; DUMP runs under the engine lock).
func (e *Engine) dumpWriter() *rdbWriter {
	if e.dumpW == nil {
		e.dumpW = &rdbWriter{}
	}
	return e.dumpW
}
