package engine

import "io"

// Placeholders for Apply (branch h/effects) and the snapshot API (branch
// h/snapshot), replaced when those branches merge.
func (e *Engine) Apply(rec []byte) error { return nil }

type Snapshot struct{}

func (e *Engine) Capture() *Snapshot                   { return &Snapshot{} }
func (s *Snapshot) WriteTo(w io.Writer) (int64, error) { return 0, nil }
func (s *Snapshot) Release()                           {}
func (e *Engine) Reset(r io.Reader) error              { return nil }
