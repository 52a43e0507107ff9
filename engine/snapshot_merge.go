package engine

import (
	"fmt"
	"io"
	"strings"
)

// MergeSnapshot is DEBUG RELOAD NOFLUSH's load: the snapshot's keys and
// function libraries are added to the current state instead of replacing
// it. A key or library present on both sides is an error unless replace
// (MERGE: Redis's RDBFLAGS_ALLOW_DUP), in which case the snapshot's wins.
// All or nothing: duplicates are found before anything changes. The
// script cache, Rand and the settings stay as they are. The caller holds
// the engine lock.
func (e *Engine) MergeSnapshot(src io.Reader, replace bool) error {
	l := e.loader(src, true)
	if err := l.load(); err != nil {
		return err
	}
	if !replace {
		for i, db := range e.DBs {
			var dup string
			l.dbs[i].each(func(x *entry) bool {
				if db.dict.find(x.keyStr()) != nil {
					dup = x.keyStr()
					return false
				}
				return true
			})
			if dup != "" {
				return fmt.Errorf("duplicate key %q", dup)
			}
		}
	}
	var scripts any
	if scriptsCodec.Load != nil && len(l.libs) > 0 {
		libs, err := mergeLibraries(scriptsCodec.Functions(e.Scripts), l.libs, replace)
		if err != nil {
			return err
		}
		if scripts, err = scriptsCodec.Load(scriptsCodec.Save(e.Scripts), libs); err != nil {
			return err
		}
	}
	for i, db := range e.DBs {
		touchWatched(db, nil, 0)
		l.dbs[i].each(func(x *entry) bool {
			key := x.keyStr()
			if old := db.dict.find(key); old != nil {
				db.removeEntry(old)
			}
			y := db.dict.insert(key)
			y.p, y.n, y.kind, y.enc, y.lru = x.p, x.n, x.kind, x.enc, x.lru
			db.setExpire(y, x.exp)
			return true
		})
		e.scanReady(db)
	}
	if scripts != nil {
		e.Scripts = scripts
	}
	e.ClockMs = max(e.ClockMs, l.clock)
	return nil
}

// mergeLibraries adds the libraries of add to cur (FUNCTION LOAD payloads,
// named by their shebang's name=): a name on both sides is an error
// unless replace.
func mergeLibraries(cur, add []string, replace bool) ([]string, error) {
	at := map[string]int{}
	out := append([]string(nil), cur...)
	for i, code := range out {
		at[libraryName(code)] = i
	}
	for _, code := range add {
		name := libraryName(code)
		if i, ok := at[name]; ok {
			if !replace {
				return nil, fmt.Errorf("Library '%s' already exists", name)
			}
			out[i] = code
			continue
		}
		at[name] = len(out)
		out = append(out, code)
	}
	return out, nil
}

// libraryName is the name= of a library's shebang line ("" when none).
func libraryName(code string) string {
	line, _, _ := strings.Cut(code, "\n")
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, "name="); ok {
			return v
		}
	}
	return ""
}
