package server

import "strings"

// Reasons CONFIG SET gives for valid values that would need behaviour
// limitdb does not have (yet). Redis's error form is kept:
// "ERR CONFIG SET failed (possibly related to argument '<name>') - <why>".
// Each parameter still accepts the value that describes what limitdb
// does, which is also Redis's default.
const (
	errStartupOnly = "limitdb sets it at start-up only (its Raft log and node are opened then)"
	errNoLazyfree  = "limitdb does not free values lazily in Redis's sense (no lazyfreed_objects; Go's garbage collector frees them)"
	// Redis's isValidActiveDefrag in a build without its jemalloc (as
	// limitdb: Go's allocator), at CONFIG SET and in a config file
	errNoDefrag = "Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc like the one shipped by default with the Redis source distribution"
)

// baseName is Redis's isValidDBfilename (dbfilename).
func baseName(v string) string {
	if strings.ContainsAny(v, `/\`) {
		return "dbfilename can't be a path, just a filename"
	}
	return ""
}

// only returns a cannot check that accepts the one value limitdb honours
// (compared after normalisation by param.check).
func only(ok, why string) func(string) string {
	return func(v string) string {
		if v == ok {
			return ""
		}
		return why
	}
}
