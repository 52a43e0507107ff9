package engine

// Placeholder for Apply (branch h/effects), replaced when that branch
// merges. (The snapshot API is engine/snapshot.go.)
func (e *Engine) Apply(rec []byte) error { return nil }
