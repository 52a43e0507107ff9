package door

// Apply applies one unit's record (from the log, or a recovery replay):
// deterministic, no clock, no Lua, no effects recorded (engine.Apply).
// A record that fails to apply is an error the caller must not skip: the
// node stops rather than diverge. The lock is held.
func (d *Door) Apply(rec []byte) error { return d.E.Apply(rec) }
