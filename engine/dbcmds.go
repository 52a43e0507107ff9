package engine

import "strconv"

const (
	errInvalidFirstDB  = "ERR invalid first DB index"
	errInvalidSecondDB = "ERR invalid second DB index"
)

func init() {
	Register(
		&Command{Name: "dbsize", Arity: 1, Flags: "readonly fast", Group: "server", Since: "1.0.0", Summary: "Returns the number of keys in the database.", Run: cmdDBSize},
		&Command{Name: "flushdb", Arity: -1, Flags: "write", Group: "server", Since: "1.0.0", Summary: "Removes all keys from the current database.", Run: cmdFlushDB},
		&Command{Name: "flushall", Arity: -1, Flags: "write", Group: "server", Since: "1.0.0", Summary: "Removes all keys from all databases.", Run: cmdFlushAll},
		&Command{Name: "swapdb", Arity: 3, Flags: "write fast", Group: "server", Since: "4.0.0", Summary: "Swaps two Redis databases.", Run: cmdSwapDB},
		&Command{Name: "time", Arity: 1, Flags: "loading stale fast", Group: "server", Since: "2.6.0", Summary: "Returns the server time.", Run: cmdTime},
	)
}

// cmdDBSize: DBSIZE — the number of keys in the current database (keys
// past their deadline that were not yet reclaimed included, as Redis).
func cmdDBSize(c *Ctx, argv [][]byte) { c.W.Int(int64(c.DB.Len())) }

// flushOK checks FLUSHDB/FLUSHALL's optional ASYNC|SYNC argument and
// writes the syntax error when it is anything else.
func (c *Ctx) flushOK(argv [][]byte) bool {
	if len(argv) > 2 || (len(argv) == 2 && !isOpt(argv[1], "sync") && !isOpt(argv[1], "async")) {
		c.W.Error(ErrSyntax)
		return false
	}
	return true
}

// flush empties db. WATCHes on keys it held are dirtied (Redis's
// touchAllWatchedKeysInDb: only keys present in the table).
func (c *Ctx) flush(db *DB) {
	touchWatched(db, nil, 0)
	c.E.Stats.Dirty += int64(db.Len())
	db.dict.clear()
	db.expires = 0
	db.expCur = 0
}

// touchWatched dirties the WATCHes of db's keys that exist in db or in
// other (SWAPDB's other database). A key that had already expired when
// watched and is not in other is not a change (Redis 7.0); neither is a
// key of other that has already expired at now.
func touchWatched(db, other *DB, now int64) {
	for key, ws := range db.watched {
		inDB := db.dict.find(key) != nil
		inOther := false
		if other != nil {
			oe := other.dict.find(key)
			inOther = oe != nil && !oe.expired(now)
		}
		if !inDB && !inOther {
			continue
		}
		for _, w := range ws {
			if !w.WasAlive && !inOther {
				continue
			}
			w.Dirty = true
		}
	}
}

// cmdFlushDB: FLUSHDB [ASYNC|SYNC] — delete every key of the current
// database; +OK. Anything else as argument is a syntax error.
func cmdFlushDB(c *Ctx, argv [][]byte) {
	if !c.flushOK(argv) {
		return
	}
	c.flush(c.DB)
	c.ForcePropagation() // also when the database was empty, as Redis
	c.W.OK()
}

// cmdFlushAll: FLUSHALL [ASYNC|SYNC] — delete every key of every
// database; +OK.
func cmdFlushAll(c *Ctx, argv [][]byte) {
	if !c.flushOK(argv) {
		return
	}
	for _, db := range c.E.DBs {
		c.flush(db)
	}
	c.ForcePropagation() // also when every database was empty, as Redis
	c.W.OK()
}

// dbIndex parses a DB index argument as getIntFromObjectOrReply does.
func dbIndex(b []byte) (int64, bool) {
	n, ok := ParseIntB(b)
	if !ok || n < -1<<31 || n > 1<<31-1 {
		return 0, false
	}
	return n, true
}

// cmdSwapDB: SWAPDB index1 index2 — exchange the contents of two
// databases: clients connected to one see the other's keys. WATCHes are
// dirtied as Redis does (keys that exist in either database). Errors:
// "invalid first/second DB index", "DB index is out of range".
func cmdSwapDB(c *Ctx, argv [][]byte) {
	a, ok := dbIndex(argv[1])
	if !ok {
		c.W.Error(errInvalidFirstDB)
		return
	}
	b, ok := dbIndex(argv[2])
	if !ok {
		c.W.Error(errInvalidSecondDB)
		return
	}
	if a < 0 || a >= NumDBs || b < 0 || b >= NumDBs {
		c.W.Error(ErrDBIndex)
		return
	}
	if a != b {
		x, y := c.E.DBs[a], c.E.DBs[b]
		touchWatched(x, y, c.Now)
		touchWatched(y, x, c.Now)
		// The DB structs keep their ID and watchers (both are bound to the
		// index); only the keyspaces move.
		x.dict, y.dict = y.dict, x.dict
		x.expires, y.expires = y.expires, x.expires
		x.expCur, y.expCur = 0, 0
		// clients blocked on a key that the swap brought in are served
		// (Redis's scanDatabaseForReadyKeys)
		c.E.scanReady(x)
		c.E.scanReady(y)
	}
	c.E.Stats.Dirty++
	c.W.OK()
}

// cmdTime: TIME — the command's time (c.Now; a script's time inside a
// script) as [unix seconds, microseconds] bulk strings.
func cmdTime(c *Ctx, argv [][]byte) {
	var buf [20]byte
	c.W.Array(2)
	c.W.Bulk(strconv.AppendInt(buf[:0], c.Now/1000, 10))
	c.W.Bulk(strconv.AppendInt(buf[:0], (c.Now%1000)*1000, 10))
}
