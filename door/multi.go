package door

import "limitdb/engine"

// Tx is one connection's transaction state: the WATCHed keys and, between
// MULTI and EXEC, the queued commands (copied: argv aliases the
// connection's buffer). The connection owns it; the lock guards the
// watches, which the engine dirties when a key changes.
//
// A WATCH sees the changes made in this engine. The caller names the
// generation of the engine's history each WATCH and EXEC happens in (a
// cluster node's leadership epoch): while it stays the same every write
// goes through this engine; when it changes, writes may have been made
// elsewhere or reverted here unseen, so a WATCH of another generation
// counts as changed.
type Tx struct {
	Active  bool // between MULTI and EXEC/DISCARD
	Failed  bool // a command was rejected while queueing: EXEC aborts
	Queue   [][][]byte
	Size    int64 // bytes queued (the query-buffer bound counts them)
	watches []*engine.Watch
	gen     uint64 // the generation of the newest WATCH
	lost    bool   // WATCHes taken where they cannot be checked (Lose)
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

// Watch adds WATCHes on keys of db, once per key, taken in generation
// gen; the WATCHes of an earlier generation count as changed (the lock is
// held).
func (t *Tx) Watch(c *engine.Ctx, db *engine.DB, keys [][]byte, gen uint64) {
	if t.gen != gen {
		for _, w := range t.watches {
			w.Dirty = true
		}
		t.gen = gen
	}
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
func (t *Tx) Watching() bool { return len(t.watches) > 0 || t.lost }

// Lose records WATCHes that were taken elsewhere and cannot be checked
// here (a cluster leader that did not take them): EXEC aborts, as when
// a watched key changed, until UNWATCH or the end of the transaction.
func (t *Tx) Lose() { t.lost = true }

// Unwatch forgets every WATCH (the lock is held).
func (t *Tx) Unwatch() {
	for _, w := range t.watches {
		engine.RemoveWatch(w)
	}
	t.watches = t.watches[:0]
	t.lost = false
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
// watched key changed (or expired) since WATCH, a WATCH was taken in
// another generation than gen, or WATCHes were lost, it runs nothing and
// returns false; otherwise run is called with each queued command, in
// order, inside one unit (their effects become one record, wrapped in
// MULTI/EXEC when more than one), and the transaction is reset. run
// resolves, checks and calls each (connection commands included); the
// engine ones go through Exec, which joins the unit. The lock is held.
func (d *Door) ExecTx(c *engine.Ctx, t *Tx, gen uint64, run func(argv [][]byte)) bool {
	if t.lost {
		t.Reset()
		return false
	}
	for _, w := range t.watches {
		if t.gen != gen || c.WatchChanged(w) {
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
