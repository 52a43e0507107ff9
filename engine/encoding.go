package engine

// EncodingLimits are Redis's encoding thresholds (CONFIG SET
// hash-max-listpack-entries etc.). limitdb keeps one representation per
// type, but where Redis's reply order depends on the encoding (a hash in
// insertion order while it is a listpack, a set sorted while it is an
// intset, a small sorted set's ZSCAN and -0 handling) the engine emulates
// the encoding Redis would have chosen under these limits, and OBJECT
// ENCODING reports it. Changing a limit affects only later conversions:
// like Redis, a value never converts back.
type EncodingLimits struct {
	HashMaxListpackEntries int64
	HashMaxListpackValue   int64
	SetMaxIntsetEntries    int64
	ZsetMaxListpackEntries int64
	ZsetMaxListpackValue   int64
	// ProtoMaxBulkLen (proto-max-bulk-len) is also the largest string value
	// and SETBIT/BITFIELD offset, as in Redis (checkStringLength).
	ProtoMaxBulkLen int64
}

// defaultLimits are Redis 7.0's defaults.
var defaultLimits = EncodingLimits{
	HashMaxListpackEntries: 512, // Redis 7.0.15 built-in default (the sample redis.conf says 128)
	HashMaxListpackValue:   64,
	SetMaxIntsetEntries:    512,
	ZsetMaxListpackEntries: 128,
	ZsetMaxListpackValue:   64,
	ProtoMaxBulkLen:        512 << 20,
}

// SetEncodingLimit sets the threshold named by its CONFIG parameter name
// (the ziplist aliases included, and proto-max-bulk-len) and reports
// whether name is one of them.
func (e *Engine) SetEncodingLimit(name string, v int64) bool {
	switch name {
	case "hash-max-listpack-entries", "hash-max-ziplist-entries":
		e.Enc.HashMaxListpackEntries = v
	case "hash-max-listpack-value", "hash-max-ziplist-value":
		e.Enc.HashMaxListpackValue = v
	case "set-max-intset-entries":
		e.Enc.SetMaxIntsetEntries = v
	case "zset-max-listpack-entries", "zset-max-ziplist-entries":
		e.Enc.ZsetMaxListpackEntries = v
	case "zset-max-listpack-value", "zset-max-ziplist-value":
		e.Enc.ZsetMaxListpackValue = v
	case "proto-max-bulk-len":
		e.Enc.ProtoMaxBulkLen = v
	case "notify-keyspace-events": // as its Notify* bits (LIMITDB.CONFIG carries integers)
		e.Notify = int(v)
	default:
		return false
	}
	return true
}
