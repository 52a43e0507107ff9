package server

import (
	"strconv"

	"limitdb/engine"
)

// notify-keyspace-events: Redis's flag letters (engine/notify.go), plus
// limitdb's 'r' for the native limiters' events. The engine raises the
// events (Engine.Notify) on the node that executes the unit; the setting
// is cluster-wide (engine.SharedParams), so a CONFIG SET on any node
// applies on every node, carried by LIMITDB.CONFIG as the integer of its
// Notify* bits (configNotifyShared), and snapshots carry it.

const notifyParam = "notify-keyspace-events"

// errNotifyClass is Redis 7.0.15's refusal of an unknown class letter
// (config.c); limitdb accepts 'r' besides.
const errNotifyClass = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."

// checkNotify validates a value and returns its canonical form ("KEA"
// reads back "AKE", as in Redis).
func checkNotify(v string) (string, string) {
	fl, ok := engine.ParseNotifyFlags(v)
	if !ok {
		return "", errNotifyClass
	}
	return engine.NotifyFlagsString(fl), ""
}

func init() {
	paramApply[notifyParam] = &applyFn{atLoad: true, run: func(s *Server) string {
		s.eng.Notify, _ = engine.ParseNotifyFlags(s.conf.params[notifyParam])
		return ""
	}}
}

// configNotifyShared is the parameter's value as LIMITDB.CONFIG carries
// it: the integer of its bits.
func configNotifyShared(v string) string {
	fl, _ := engine.ParseNotifyFlags(v)
	return strconv.Itoa(fl)
}

// adoptNotify is adoptConfig's conversion back to letters.
func adoptNotify(v string) string {
	n, err := strconv.Atoi(v)
	if err != nil {
		return v
	}
	return engine.NotifyFlagsString(n)
}
