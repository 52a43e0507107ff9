package door

import (
	"strconv"

	"limitdb/engine"
)

// appendRecord appends the record of a unit's effects to dst: a record is
// self-contained and starts in database 0, so a unit whose first effect is
// elsewhere begins with SELECT; a unit of more than one effect is wrapped
// in MULTI … EXEC as Redis 7.0 wraps a script's or a transaction's writes
// (one effect goes out bare).
func appendRecord(dst []byte, f *engine.Effects) []byte {
	if f.DB > 0 {
		dst = append(dst, "*2\r\n$6\r\nSELECT\r\n$"...)
		db := strconv.AppendInt(nil, int64(f.DB), 10)
		dst = strconv.AppendInt(dst, int64(len(db)), 10)
		dst = append(dst, "\r\n"...)
		dst = append(dst, db...)
		dst = append(dst, "\r\n"...)
	}
	if f.N > 1 {
		dst = append(dst, "*1\r\n$5\r\nMULTI\r\n"...)
	}
	dst = append(dst, f.B...)
	if f.N > 1 {
		dst = append(dst, "*1\r\n$4\r\nEXEC\r\n"...)
	}
	return dst
}
