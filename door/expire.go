package door

import "limitdb/engine"

// ActiveExpire runs one step of the active expiry cycle as a unit: every
// database walks up to maxBuckets buckets from its cursor and deletes the
// keys past c.Now, each deletion a DEL effect. It returns the number of
// keys deleted. The lock is held.
func (d *Door) ActiveExpire(c *engine.Ctx, maxBuckets int) int {
	d.begin(c)
	n := 0
	for _, db := range d.E.DBs {
		n += c.ActiveExpire(db, maxBuckets)
	}
	d.end()
	return n
}

// Evict deletes keys by the maxmemory policy until their estimated sizes
// reach toFree (at most maxKeys), as a unit of DEL effects
// (engine.Ctx.Evict). The lock is held.
func (d *Door) Evict(c *engine.Ctx, toFree int64, maxKeys int) (int64, engine.EvictResult) {
	d.begin(c)
	freed, res := c.Evict(toFree, maxKeys)
	d.end()
	return freed, res
}
