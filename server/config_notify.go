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

// checkNotify validates a value and returns the form it is kept in: every
// class it names ("KEAn" is kept as "AnKE"), since Redis's own form, which
// CONFIG GET and REWRITE show (shownParam), drops n beside A while the
// setting keeps it.
func checkNotify(v string) (string, string) {
	fl, ok := engine.ParseNotifyFlags(v)
	if !ok {
		return "", errNotifyClass
	}
	return notifyKept(fl), ""
}

// notifyKept is the lossless letter form of flags.
func notifyKept(fl int) string {
	s := engine.NotifyFlagsString(fl)
	if fl&engine.NotifyAll == engine.NotifyAll && fl&engine.NotifyNew != 0 {
		s = "An" + s[1:]
	}
	return s
}

// shownParam is a parameter's value as CONFIG GET and CONFIG REWRITE write
// it: notify-keyspace-events in Redis's form ("AnKE" shows "AKE").
func shownParam(p *param, v string) string {
	if p.kind == pEvents {
		fl, _ := engine.ParseNotifyFlags(v)
		return engine.NotifyFlagsString(fl)
	}
	return v
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
	return notifyKept(n)
}
