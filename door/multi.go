package door

import "limitdb/engine"

// Tx is one connection's transaction state: the WATCHed keys and, between
// MULTI and EXEC, the queued commands (copied: argv aliases the
// connection's buffer). The connection owns it; the lock guards the
// watches, which the engine dirties when a key changes.
type Tx struct {
	Active  bool // between MULTI and EXEC/DISCARD
	Failed  bool // a command was rejected while queueing: EXEC aborts
	Queue   [][][]byte
	Size    int64 // bytes queued (the query-buffer bound counts them)
	watches []*engine.Watch
}

// Enqueue copies argv into the queue and returns the copy.
func (t *Tx) Enqueue(argv [][]byte) [][]byte {
	q := make([][]byte, len(argv))
	for i, a := range argv {
		q[i] = append([]byte(nil), a...)
		t.Size += int64(len(a)) + 16
	}
	t.Queue = append(t.Queue, q)
	return q
}

// Watch adds WATCHes on keys of db, once per key (the lock is held).
func (t *Tx) Watch(c *engine.Ctx, db *engine.DB, keys [][]byte) {
next:
	for _, k := range keys {
		for _, w := range t.watches {
			if w.DB == db && w.Key == string(k) {
				continue next
			}
		}
		t.watches = append(t.watches, c.AddWatch(db, string(k)))
	}
}

// Watching reports whether any key is watched.
func (t *Tx) Watching() bool { return len(t.watches) > 0 }

// Unwatch forgets every WATCH (the lock is held).
func (t *Tx) Unwatch() {
	for _, w := range t.watches {
		engine.RemoveWatch(w)
	}
	t.watches = t.watches[:0]
}

// Reset ends the transaction: queue and WATCHes dropped (lock held).
func (t *Tx) Reset() {
	t.Active, t.Failed = false, false
	t.ClearQueue()
	t.Unwatch()
}

// ClearQueue drops the queued commands (the connection's own data: no
// lock needed).
func (t *Tx) ClearQueue() {
	for i := range t.Queue {
		t.Queue[i] = nil
	}
	t.Queue = t.Queue[:0]
	if cap(t.Queue) > 1024 {
		t.Queue = nil
	}
	t.Size = 0
}

// ExecTx runs the queued commands of t as one unit, as Redis's EXEC: if a
// watched key changed (or expired) since WATCH it runs nothing and
// returns false; otherwise run is called with each queued command, in
// order, inside one unit (their effects become one record, wrapped in
// MULTI/EXEC when more than one), and the transaction is reset. run
// resolves, checks and calls each (connection commands included); the
// engine ones go through Exec, which joins the unit. The lock is held.
func (d *Door) ExecTx(c *engine.Ctx, t *Tx, run func(argv [][]byte)) bool {
	for _, w := range t.watches {
		if c.WatchChanged(w) {
			t.Reset()
			return false
		}
	}
	t.Active = false
	t.Unwatch()
	d.begin(c)
	c.InMulti = true
	for _, q := range t.Queue {
		run(q)
	}
	c.InMulti = false
	d.end()
	t.ClearQueue()
	return true
}
