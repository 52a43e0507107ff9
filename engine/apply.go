package engine

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"limitdb/resp"
)

// Apply: followers and recovery replay records (effects.go) instead of
// executing what clients sent. Applying is deterministic and reads no
// clock: each effect runs through the command table with Ctx.Now =
// math.MinInt64, so no key counts as expired (a deadline already past is
// stored as data, as on a Redis replica; the executing node sends the DEL
// when it reclaims the key), nothing is deleted lazily and no effect is
// recorded. Only effect forms are accepted: a command flagged noeffect
// (EXPIRE, SPOP, EVAL, RL.ALLOW …), a read, a connection command or an
// unknown one is refused, and so is any error reply, because skipping an
// effect would leave this node's state different from the executor's. The
// caller stops the node on an error; it never skips a record.

// applyState is what Apply reuses from one record to the next.
type applyState struct {
	c    Ctx
	w    resp.Writer
	argv [][]byte
}

// Apply applies one record. The caller holds the engine lock.
func (e *Engine) Apply(rec []byte) error {
	h, body, err := ParseRecordHeader(rec)
	if err != nil {
		return err
	}
	st := &e.apply
	st.w.Proto = 2
	st.c = Ctx{E: e, DB: e.DBs[h.DB], W: &st.w, Now: math.MinInt64, Applying: true, AccessMs: h.ClockMs}
	if h.ClockMs > e.ClockMs {
		e.ClockMs = h.ClockMs
	}
	n := 0
	for len(body) > 0 {
		var argv [][]byte
		argv, body, err = parseEffect(body, st.argv[:0])
		if err != nil {
			return err
		}
		st.argv = argv
		if err := st.applyOne(argv, &n); err != nil {
			return err
		}
	}
	if cap(st.w.B) > 1<<20 {
		st.w.B = nil // one large reply must not pin its buffer
	}
	clear(st.argv[:cap(st.argv)]) // the record's bytes are the caller's
	if n != h.Count {
		return fmt.Errorf("effects record: %d effects, header says %d", n, h.Count)
	}
	return nil
}

// applyOne runs one command of a record; n counts the effects.
func (st *applyState) applyOne(argv [][]byte, n *int) error {
	c := &st.c
	switch {
	case EqualFold(argv[0], "select") && len(argv) == 2:
		id, ok := ParseIntB(argv[1])
		if !ok || id < 0 || id >= NumDBs {
			return fmt.Errorf("apply: SELECT %q: %s", argv[1], ErrDBIndex)
		}
		c.DB = c.E.DBs[id]
		return nil
	case (EqualFold(argv[0], "multi") || EqualFold(argv[0], "exec")) && len(argv) == 1:
		return nil // a unit's wrapper: the record is applied whole anyway
	}
	*n++
	cmd := Lookup(argv[0])
	if cmd != nil && len(cmd.Subs) > 0 && len(argv) >= 2 {
		cmd = cmd.Sub(argv[1])
	}
	if cmd == nil || cmd.Run == nil || !cmd.IsWrite() || cmd.F&(FlagNoEffect|FlagConn) != 0 {
		return fmt.Errorf("apply: %s is not an effect", effectName(argv))
	}
	if !ArityOK(cmd.Arity, len(argv)) {
		return fmt.Errorf("apply: %s: %s", effectName(argv), ErrWrongArgs(cmd.Name))
	}
	c.W.Reset()
	c.Call(cmd, argv)
	if r := c.W.B; len(r) > 0 && r[0] == '-' {
		msg := string(r[1 : len(r)-2])
		return fmt.Errorf("apply: %s: %s", effectName(argv), msg)
	}
	return nil
}

// effectName names an effect in an error: its command (and subcommand)
// and its first key, as "SREM k".
func effectName(argv [][]byte) string {
	var b strings.Builder
	for i, a := range argv {
		if i == 2 || (i == 1 && len(a) > 64) {
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		if i == 0 {
			b.WriteString(strings.ToUpper(string(a)))
		} else {
			b.WriteString(strconv.Quote(string(a)))
		}
	}
	return b.String()
}

var errBadEffect = errors.New("effects record: malformed command")

// parseEffect reads one RESP array of bulk strings from b into argv (its
// arguments alias b) and returns the rest of b.
func parseEffect(b []byte, argv [][]byte) ([][]byte, []byte, error) {
	n, b, ok := parseLen(b, '*')
	if !ok || n < 1 {
		return nil, nil, errBadEffect
	}
	for i := int64(0); i < n; i++ {
		var l int64
		if l, b, ok = parseLen(b, '$'); !ok || l < 0 || int64(len(b)) < l+2 || b[l] != '\r' || b[l+1] != '\n' {
			return nil, nil, errBadEffect
		}
		argv = append(argv, b[:l:l])
		b = b[l+2:]
	}
	return argv, b, nil
}

// parseLen reads "<c><decimal>\r\n" at the start of b.
func parseLen(b []byte, c byte) (int64, []byte, bool) {
	if len(b) < 4 || b[0] != c {
		return 0, nil, false
	}
	i := bytes.IndexByte(b, '\n')
	if i < 3 || b[i-1] != '\r' {
		return 0, nil, false
	}
	n, ok := ParseIntB(b[1 : i-1])
	return n, b[i+1:], ok
}
