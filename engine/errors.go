package engine

import "strings"

// Redis 7.0's error replies, defined once. Handlers write them with
// c.W.Error(Err…). Texts that take an argument are functions below.
const (
	ErrWrongType        = "WRONGTYPE Operation against a key holding the wrong kind of value"
	ErrNotInt           = "ERR value is not an integer or out of range"
	ErrNotFloat         = "ERR value is not a valid float"
	ErrHashNotInt       = "ERR hash value is not an integer"
	ErrHashNotFloat     = "ERR hash value is not a float"
	ErrSyntax           = "ERR syntax error"
	ErrNoSuchKey        = "ERR no such key"
	ErrOverflow         = "ERR increment or decrement would overflow"
	ErrIncrNaN          = "ERR increment would produce NaN or Infinity"
	ErrIndexOutOfRange  = "ERR index out of range"
	ErrOffsetOutOfRange = "ERR offset is out of range"
	ErrStringTooLong    = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	ErrDBIndex          = "ERR DB index is out of range"
	ErrInvalidDBIndex   = "ERR invalid DB index"
	ErrSameObject       = "ERR source and destination objects are the same"
	ErrNotPositive      = "ERR value is out of range, must be positive"
	ErrMinMaxNotFloat   = "ERR min or max is not a float"
	ErrMinMaxNotString  = "ERR min or max not valid string range item"
	ErrZAddNaN          = "ERR resulting score is not a number (NaN)"
	ErrZAddXXNX         = "ERR XX and NX options at the same time are not compatible"
	ErrZAddGTLTNX       = "ERR GT, LT, and/or NX options at the same time are not compatible"
	ErrZAddIncrPair     = "ERR INCR option supports a single increment-element pair"
	ErrInvalidCursor    = "ERR invalid cursor"
	ErrExecAbort        = "EXECABORT Transaction discarded because of previous errors."
	ErrMultiNested      = "ERR MULTI calls can not be nested"
	ErrExecNoMulti      = "ERR EXEC without MULTI"
	ErrDiscardNoMulti   = "ERR DISCARD without MULTI"
	ErrWatchInMulti     = "ERR WATCH inside MULTI is not allowed"
	ErrNoScript         = "NOSCRIPT No matching script. Please use EVAL."
	ErrExpireNXXXGTLT   = "ERR NX and XX, GT or LT options at the same time are not compatible"
	ErrExpireGTLT       = "ERR GT and LT options at the same time are not compatible"
	ErrTimeout          = "ERR timeout is not a float or out of range"
	ErrNumKeys          = "ERR numkeys should be greater than 0" // SINTERCARD, LMPOP, ZMPOP and their blocking forms
	ErrCountPositive    = "ERR count should be greater than 0"   // LMPOP, ZMPOP and their blocking forms
	ErrBitNotInt        = "ERR bit offset is not an integer or out of range"
	ErrReadOnlyScript   = "ERR Write commands are not allowed from read-only scripts."
	ErrLimitWithoutBy   = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
	ErrWithScoresByLex  = "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
)

// ErrWrongArgs is the arity error: the command's name in lower case
// ("config|get" for a subcommand).
func ErrWrongArgs(name string) string {
	return "ERR wrong number of arguments for '" + name + "' command"
}

// ErrInvalidExpire is SET/GETEX/EXPIRE's error for a time that is not
// positive or would overflow.
func ErrInvalidExpire(cmd string) string {
	return "ERR invalid expire time in '" + cmd + "' command"
}

// ErrUnknownCommand is Redis 7.0's reply to a command it does not have:
// the name (at most 128 bytes) and the first arguments, each quoted and
// followed by a space, until 128 bytes of them are written.
func ErrUnknownCommand(argv [][]byte) string {
	name := argv[0]
	if len(name) > 128 {
		name = name[:128]
	}
	args := make([]byte, 0, 64)
	for i := 1; i < len(argv) && len(args) < 128; i++ {
		a := argv[i]
		if room := 128 - len(args); len(a) > room {
			a = a[:room]
		}
		args = append(args, '\'')
		args = append(args, a...)
		args = append(args, '\'', ' ')
	}
	return "ERR unknown command '" + string(name) + "', with args beginning with: " + string(args)
}

// ErrSubcommandSyntax is Redis's addReplySubcommandSyntaxError: argv[1]
// as given (at most 128 bytes), the container upper-cased.
func ErrSubcommandSyntax(argv [][]byte) string {
	sub := argv[1]
	if len(sub) > 128 {
		sub = sub[:128]
	}
	return "ERR unknown subcommand or wrong number of arguments for '" + string(sub) + "'. Try " + strings.ToUpper(string(argv[0])) + " HELP."
}

// ErrUnknownSubcommand is the reply to an unknown CONTAINER subcommand.
func ErrUnknownSubcommand(sub []byte, container string) string {
	if len(sub) > 128 {
		sub = sub[:128]
	}
	return "ERR unknown subcommand '" + string(sub) + "'. Try " + container + " HELP."
}
