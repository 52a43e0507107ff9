package engine

import (
	"crypto/sha1"
	"encoding/binary"
	"slices"
	"strconv"

	"limitdb/ratelimit"
	"limitdb/resp"
)

// DEBUG DIGEST and DEBUG DIGEST-VALUE (Redis 7.0 debug.c): a SHA1-based
// signature of the data set that two servers holding the same data agree
// on whatever their internal layout. Aggregates whose order does not
// matter (keys, set members, hash fields, sorted-set members) are XORed
// together; lists feed the running digest back into SHA1 so that order
// counts. Pure: no clock (logically expired keys still in the table count,
// as in Redis, which uses dictFind), no map iteration (xor is
// order-independent anyway, but the walk is the dict's bucket order).

// Digest is a 20-byte SHA1-sized signature.
type Digest [20]byte

// Hex is the digest as Redis prints it: 40 lowercase hex digits.
func (d *Digest) Hex() string { return hexDigits(d[:]) }

func hexDigits(b []byte) string {
	const hx = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i], out[2*i+1] = hx[c>>4], hx[c&15]
	}
	return string(out)
}

// xor is Redis's xorDigest: d ^= SHA1(p).
func (d *Digest) xor(p []byte) {
	h := sha1.Sum(p)
	for i := range d {
		d[i] ^= h[i]
	}
}

// mix is Redis's mixDigest: d = SHA1(d ^ SHA1(p)), so what follows
// depends on what came before.
func (d *Digest) mix(p []byte) {
	d.xor(p)
	*d = sha1.Sum(d[:])
}

func (d *Digest) mixString(s string) { d.mix([]byte(s)) }

// redisType is Redis's OBJ_* number of a kind (server.h), which the
// digest mixes in as a 4-byte big-endian word.
var redisType = [...]uint32{KindString: 0, KindList: 1, KindSet: 2, KindZSet: 3, KindHash: 4}

// DatasetDigest is Redis's computeDatasetDigest over every database: per
// non-empty database its id (4 bytes, big-endian) is mixed into the
// result, then each key's digest (key mixed, then its value) is XORed in.
// An empty data set gives all zeros.
func (e *Engine) DatasetDigest() Digest {
	var final Digest
	var aux [4]byte
	for _, db := range e.DBs {
		if db.dict.len() == 0 {
			continue
		}
		binary.BigEndian.PutUint32(aux[:], uint32(db.ID))
		final.mix(aux[:])
		db.dict.each(func(en *entry) bool {
			var d Digest
			d.mixString(en.keyStr())
			en.digest(&d)
			final.xor(d[:])
			return true
		})
	}
	return final
}

// ValueDigest is DEBUG DIGEST-VALUE of key in db: the value's digest
// (type, contents, expire presence), all zeros when the key is absent. A
// logically expired key not yet deleted still counts, as in Redis.
func (db *DB) ValueDigest(key string) Digest {
	var d Digest
	if en := db.dict.find(key); en != nil {
		en.digest(&d)
	}
	return d
}

// digest is Redis's xorObjectDigest of the entry's value into d.
func (en *entry) digest(d *Digest) {
	if en.kind == KindLimiter {
		limiterDigest(en, d)
	} else {
		var aux [4]byte
		binary.BigEndian.PutUint32(aux[:], redisType[en.kind])
		d.mix(aux[:])
		var buf []byte
		switch en.kind {
		case KindString:
			d.mixString(en.str())
		case KindList:
			l := en.list()
			if n := l.Len(); n > 0 {
				it := l.iter(0, false)
				for i := 0; i < n; i++ {
					d.mixString(it.next().String())
				}
			}
		case KindSet:
			s := en.set()
			if s.ht {
				for _, m := range s.members {
					d.xor([]byte(m))
				}
			} else {
				for _, n := range s.ints {
					buf = strconv.AppendInt(buf[:0], n, 10)
					d.xor(buf)
				}
			}
		case KindZSet:
			var v zskip
			z := en.zset().view(&v)
			for x := z.zsl.first(); x != nil; x = x.lv(0).forward {
				var el Digest
				el.mixString(x.member)
				buf = resp.AppendDouble(buf[:0], x.score) // Redis: "%.17g"
				el.mix(buf)
				d.xor(el[:])
			}
		case KindHash:
			var v hashView
			for _, p := range en.hash().pairs(&v) {
				var el Digest
				el.mixString(p.f)
				el.mixString(p.v.String())
				d.xor(el[:])
			}
		}
	}
	if en.exp != 0 {
		d.xor([]byte("!!expire!!"))
	}
}

// limiterDigest covers a native limiter (no Redis counterpart), in the
// same style: the type name "ratelimit" mixed in where Redis mixes its
// type number, then the algorithm name, limit, period and burst, then the
// state words A and B and, for sliding-log, every logged time in order,
// each as decimal text. Two limiters digest alike exactly when RL.INFO
// would show the same algorithm, parameters and state.
func limiterDigest(en *entry, d *Digest) {
	d.mixString(KindLimiter.String())
	p := limParams(en)
	st := limLoad(en)
	d.mixString(p.Algo.String())
	var buf []byte
	for _, n := range [...]int64{p.Limit, p.Period, p.Burst, st.A, st.B} {
		buf = strconv.AppendInt(buf[:0], n, 10)
		d.mix(buf)
	}
	if p.Algo == ratelimit.SlidingLog {
		for _, t := range st.Log {
			buf = strconv.AppendInt(buf[:0], t, 10)
			d.mix(buf)
		}
	}
}

// ScriptSHAs returns the SHA1s of the scripts cached in e, in any order.
// The scripting package sets it (the engine does not import it); nil
// means no scripting.
var ScriptSHAs func(e *Engine) []string

// FunctionCodes returns the code of every function library loaded in e,
// in any order (set by the scripting package, as ScriptSHAs).
var FunctionCodes func(e *Engine) []string

// StrictDigest extends DatasetDigest to everything two nodes that applied
// the same effects must agree on (DEBUG DIGEST-STRICT): Redis's digest
// (which notes only whether a key has a deadline), then per database
// every key's absolute deadline, the script cache's SHA1s, the function
// libraries' code, the
// encoding thresholds (which decide encodings, and through them the order
// of replies), the policy registry, the owned hash slots, the directory
// (cluster_directory.go) and the handovers in progress. Limiter state is in Redis's part already (limiterDigest).
// Node-local state is left out: access times, the random generators,
// statistics, and the time floor ClockMs, which on the executing node
// also moves with units that change nothing (no record carries those).
func (e *Engine) StrictDigest() Digest {
	d := e.DatasetDigest()
	var buf []byte
	for _, db := range e.DBs {
		if db.expires == 0 {
			continue
		}
		var x Digest
		db.dict.each(func(en *entry) bool {
			if en.exp != 0 {
				var k Digest
				k.mixString(en.keyStr())
				buf = strconv.AppendInt(buf[:0], en.exp, 10)
				k.mix(buf)
				x.xor(k[:])
			}
			return true
		})
		buf = append(strconv.AppendInt(buf[:0], int64(db.ID), 10), " deadlines"...)
		d.mix(buf)
		d.mix(x[:])
	}
	if ScriptSHAs != nil {
		shas := ScriptSHAs(e)
		slices.Sort(shas)
		d.mixString("scripts")
		for _, s := range shas {
			d.mixString(s)
		}
	}
	if FunctionCodes != nil {
		// libraries are replicated state (FUNCTION LOAD … as effects)
		if codes := FunctionCodes(e); len(codes) > 0 {
			slices.Sort(codes)
			d.mixString("functions")
			for _, c := range codes {
				d.mixString(c)
			}
		}
	}
	l := &e.Enc
	for _, n := range [...]int64{l.HashMaxListpackEntries, l.HashMaxListpackValue,
		l.SetMaxIntsetEntries, l.ZsetMaxListpackEntries, l.ZsetMaxListpackValue, l.ProtoMaxBulkLen} {
		buf = strconv.AppendInt(buf[:0], n, 10)
		d.mix(buf)
	}
	// the policy registry (RL.POLICY changes, RL.SET … POLICY's live
	// deadlines), as its snapshot fields
	for _, f := range e.Policies.aux() {
		d.mixString(f.Key)
		d.mixString(f.Value)
	}
	// the owned hash slots, only when there are some, so a state outside
	// cluster mode keeps its digest
	if s := encodeSlotRanges(&e.owned); s != "" {
		d.mixString(auxSlots)
		d.mixString(s)
	}
	// the directory and the group's record, only in a cluster of groups
	if s := encodeDirectory(e.dir); s != "" {
		d.mixString(auxDirectory)
		d.mixString(s)
	}
	// the handovers in progress, as their snapshot fields (none outside
	// a handover, so the digest stays as before)
	for _, f := range e.migrationsAux() {
		d.mixString(f.Key)
		d.mixString(f.Value)
	}
	return d
}
