package door

import "limitdb/engine"

// Serving clients blocked on keys (engine/blocking.go, server/blocked.go).
// After a unit made keys ready, each ready key is looked up (a key found
// past its deadline is a DEL, a unit of its own), and each waiter served
// from it is a unit of its own: its pop is recorded as Redis 7.0
// propagates it (LPOP, LMOVE, ZPOPMIN key count …), after the record of
// the unit that pushed, as Redis's handleClientsBlockedOnKeys propagates
// each served client after the command that made its key ready.

// ReadyKind looks a ready key up, as a unit, and returns its kind. The
// lock is held.
func (d *Door) ReadyKind(c *engine.Ctx, db *engine.DB, key string) engine.Kind {
	d.begin(c)
	k := c.ReadyKind(db, key)
	d.end()
	return k
}

// Serve serves waiter w from key as a unit (engine.Ctx.ServeWaiter): c
// is the waiter's context (its writer, its protocol), c.Now the time of
// the unit that made the key ready. It reports whether the key was
// emptied. The lock is held.
func (d *Door) Serve(c *engine.Ctx, w *engine.Waiter, key string) bool {
	d.begin(c)
	deleted := c.ServeWaiter(w, key)
	d.end()
	return deleted
}
