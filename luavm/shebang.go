package luavm

import (
	"strings"

	"limitdb/engine"
	"limitdb/resp"
)

// Script flags (Redis 7.0's scripts_flags_def): declared on an EVAL
// script's shebang line (#!lua flags=no-writes,allow-oom) or by
// redis.register_function's flags. Listed in Redis's order, which is the
// order FUNCTION LIST shows them in.
type scriptFlags uint8

const (
	flagNoWrites scriptFlags = 1 << iota
	flagAllowOOM
	flagAllowStale
	flagNoCluster
	flagAllowCrossSlot
	// flagEvalCompat: an EVAL script without a shebang line (Redis's
	// SCRIPT_FLAG_EVAL_COMPAT_MODE): the command's own flags apply and the
	// first write decides OOM and MISCONF, as before Redis 7.
	flagEvalCompat
)

var scriptFlagNames = []struct {
	f    scriptFlags
	name string
}{
	{flagNoWrites, "no-writes"}, {flagAllowOOM, "allow-oom"}, {flagAllowStale, "allow-stale"},
	{flagNoCluster, "no-cluster"}, {flagAllowCrossSlot, "allow-cross-slot-keys"},
}

// Shebang errors (evalExtractShebangFlags).
const (
	errShebangInvalid = "ERR Invalid script shebang"
	errShebangEngine  = "ERR Invalid engine in script shebang"
	errShebangUnknown = "ERR Unexpected engine in script shebang: "
	errShebangFlag    = "ERR Unexpected flag in script shebang: "
	errShebangOption  = "ERR Unknown lua shebang option: "
)

// shebangLine returns the first line of body when body starts with "#!":
// the bytes up to the first newline, as C's strchr finds it (a NUL first
// means none). ok is false when body has no shebang; found is false when
// it has one but no newline.
func shebangLine(body string) (line string, ok, found bool) {
	if !strings.HasPrefix(body, "#!") {
		return "", false, false
	}
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '\n':
			return body[:i], true, true
		case 0:
			return "", true, false
		}
	}
	return "", true, false
}

// splitShebang splits a shebang line as sdssplitargs does; false on
// unbalanced quotes.
func splitShebang(line string) ([]string, bool) {
	args, ok := resp.SplitArgs([]byte(line), nil)
	if !ok {
		return nil, false
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out, true
}

// evalShebang is Redis's evalExtractShebangFlags: the script's flags and
// the length of its shebang line (the body compiles from there, keeping
// the newline so that line numbers stay the user's), or flagEvalCompat and
// 0 without one, or Redis's error text.
func evalShebang(body string) (scriptFlags, int, string) {
	line, ok, found := shebangLine(body)
	if !ok {
		return flagEvalCompat, 0, ""
	}
	if !found {
		return 0, 0, errShebangInvalid
	}
	parts, ok := splitShebang(line)
	if !ok || len(parts) == 0 {
		return 0, 0, errShebangEngine
	}
	if parts[0] != "#!lua" {
		return 0, 0, errShebangUnknown + parts[0]
	}
	var f scriptFlags
	for _, p := range parts[1:] {
		list, isFlags := strings.CutPrefix(p, "flags=")
		if !isFlags {
			return 0, 0, errShebangOption + p
		}
		if list == "" {
			continue // sdssplitlen of nothing: no flags
		}
	next:
		for _, name := range strings.Split(list, ",") {
			for _, d := range scriptFlagNames {
				if d.name == name {
					f |= d.f
					continue next
				}
			}
			return 0, 0, errShebangFlag + name
		}
	}
	return f, len(line), ""
}

// cmdFlags is Redis's scriptFlagsToCmdFlags: a script that declared flags
// replaces the command's write, deny-oom, stale and may-replicate flags by
// what it declared (no-writes implies allow-oom).
func (f scriptFlags) cmdFlags(cmd engine.Flag) engine.Flag {
	cmd &^= engine.FlagStale | engine.FlagDenyOOM | engine.FlagWrite | engine.FlagMayReplicate
	if f&(flagAllowOOM|flagNoWrites) == 0 {
		cmd |= engine.FlagDenyOOM
	}
	if f&flagNoWrites == 0 {
		cmd |= engine.FlagWrite
	}
	if f&flagAllowStale != 0 {
		cmd |= engine.FlagStale
	}
	return cmd
}
