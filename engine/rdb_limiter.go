package engine

import (
	"fmt"
	"unsafe"

	"limitdb/ratelimit"
)

// A native limiter in RDB: Redis has no such type, so it is written as a
// value of a module type (RDB_TYPE_MODULE_2, the form redis-check-rdb can
// walk without the module): the 64-bit module id, then annotated fields,
// each an opcode and a value, then the EOF opcode.
//
//	id    "limitdbRL" in Redis's 6-bit module-name charset, encoding version 1
//	UINT  algorithm (ratelimit.Algo)
//	UINT  limit, period, burst
//	SINT  state word A, state word B (0 for gcra and cell, which have none)
//	      sliding-log only: UINT ring size n, then n × SINT logged times
//	EOF
//
// Redis refuses the whole file ("no matching module type 'limitdbRL'"),
// and RESTORE of such a payload with "Bad data format": a snapshot with
// limiters is for limitdb only. A newer encoding version is refused here.

const (
	limiterModuleName   = "limitdbRL"
	limiterModuleEncVer = 1

	moduleOpEOF  = 0
	moduleOpSInt = 1
	moduleOpUInt = 2
)

const moduleNameCharset = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// moduleTypeID is Redis's moduleTypeEncodeId(name, encver).
func moduleTypeID(name string, encver uint64) uint64 {
	var id uint64
	for i := 0; i < 9; i++ {
		id = id<<6 | uint64(indexByte(moduleNameCharset, name[i]))
	}
	return id<<10 | encver
}

// moduleTypeName is Redis's moduleTypeNameByID (the 9 characters).
func moduleTypeName(id uint64) string {
	var b [9]byte
	id >>= 10
	for i := 8; i >= 0; i-- {
		b[i] = moduleNameCharset[id&63]
		id >>= 6
	}
	return string(b[:])
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return 0
}

var limiterModuleID = moduleTypeID(limiterModuleName, limiterModuleEncVer)

func (w *rdbWriter) limiter(e *entry) {
	p := limParams(e)
	st := limLoad(e)
	w.length(limiterModuleID)
	field := func(op byte, v uint64) {
		w.byte1(op)
		w.length(v)
	}
	field(moduleOpUInt, uint64(p.Algo))
	field(moduleOpUInt, uint64(p.Limit))
	field(moduleOpUInt, uint64(p.Period))
	field(moduleOpUInt, uint64(p.Burst))
	field(moduleOpSInt, uint64(st.A))
	field(moduleOpSInt, uint64(st.B))
	if p.Algo == ratelimit.SlidingLog {
		field(moduleOpUInt, uint64(len(st.Log)))
		for _, t := range st.Log {
			field(moduleOpSInt, uint64(t))
			w.maybeFlush()
		}
	}
	w.byte1(moduleOpEOF)
}

// loadModule reads a module value (after its type byte): a limiter, or an
// error naming the module type limitdb cannot load.
func (r *rdbReader) loadModule(typ byte) (rdbValue, error) {
	id, err := r.length()
	if err != nil {
		return rdbValue{}, err
	}
	name := moduleTypeName(id)
	if typ != rdbTypeModule2 || name != limiterModuleName {
		return rdbValue{}, fmt.Errorf("the RDB file contains module data limitdb can't load: module type '%s'", name)
	}
	if v := id & 1023; v > limiterModuleEncVer {
		return rdbValue{}, fmt.Errorf("the limiter encoding version %d is newer than this limitdb supports (%d)", v, limiterModuleEncVer)
	}
	field := func(op byte) (uint64, error) {
		b, err := r.byte1()
		if err != nil {
			return 0, err
		}
		if b != op {
			return 0, errLimiterFormat
		}
		return r.length()
	}
	var u [6]uint64
	for i, op := range [6]byte{moduleOpUInt, moduleOpUInt, moduleOpUInt, moduleOpUInt, moduleOpSInt, moduleOpSInt} {
		if u[i], err = field(op); err != nil {
			return rdbValue{}, err
		}
	}
	if u[0] >= uint64(ratelimit.Cell)+1 || u[1] > 1<<62 || u[2] > 1<<62 || u[3] > 1<<62 {
		return rdbValue{}, errLimiterFormat
	}
	prm := ratelimit.Params{Algo: ratelimit.Algo(u[0]), Limit: int64(u[1]), Period: int64(u[2]), Burst: int64(u[3])}
	if prm.Validate() != "" {
		return rdbValue{}, errLimiterFormat
	}
	a, b := int64(u[4]), int64(u[5])
	v := rdbValue{kind: KindLimiter, n: a}
	switch {
	case sharedAlgo(prm.Algo):
		if b != 0 {
			return rdbValue{}, errLimiterFormat
		}
		v.p = unsafe.Pointer(internParams(&prm))
	case prm.Algo == ratelimit.SlidingLog:
		n, err := field(moduleOpUInt)
		if err != nil {
			return rdbValue{}, err
		}
		// the ring holds the current limit's slots, or more after the
		// limit was lowered; A is its head, B how many are used
		if n == 0 || n > ratelimit.MaxLogLimit || a < 0 || uint64(a) >= n || b < 0 || uint64(b) > n {
			return rdbValue{}, errLimiterFormat
		}
		l := &limLog{limObj: limObj{prm: prm, b: b}}
		l.log = make([]int64, 0, min(n, 1024))
		for i := uint64(0); i < n; i++ {
			t, err := field(moduleOpSInt)
			if err != nil {
				return rdbValue{}, err
			}
			l.log = append(l.log, int64(t))
		}
		v.p = unsafe.Pointer(l)
	default:
		v.p = unsafe.Pointer(&limObj{prm: prm, b: b})
	}
	if op, err := r.length(); err != nil {
		return rdbValue{}, err
	} else if op != moduleOpEOF {
		return rdbValue{}, errLimiterFormat
	}
	return v, nil
}
