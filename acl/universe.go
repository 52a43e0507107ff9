package acl

import (
	"sort"
	"strings"
	"sync"

	"limitdb/engine"
)

// entry is one command of the ACL's command universe: every command and
// subcommand of limitdb's table (id = engine.Command.ID) plus those of
// Redis 7.0 that limitdb lacks (ids after them). Rules may name any of
// them and categories count over all of them, as in Redis; only limitdb's
// own can ever be checked.
type entry struct {
	name   string
	cats   uint64
	id     int
	parent *entry
	subs   []*entry
}

type universe struct {
	list   []*entry          // top-level names in order, each followed by its subcommands
	byName map[string]*entry // by lower-case full name; lookups only
	size   int               // number of ids
}

var (
	uniOnce sync.Once
	uni     *universe
)

// commands returns the universe, built once from the static command
// tables (the engine registers every command from init functions).
func commands() *universe {
	uniOnce.Do(func() { uni = buildUniverse() })
	return uni
}

func buildUniverse() *universe {
	u := &universe{byName: map[string]*entry{}}
	var tops []*entry
	for _, c := range engine.Commands() {
		e := &entry{name: c.Name, cats: c.Cats, id: c.ID}
		for _, s := range c.Subs {
			se := &entry{name: s.Name, cats: s.Cats, id: s.ID, parent: e}
			e.subs = append(e.subs, se)
			u.byName[se.name] = se
		}
		u.byName[e.name] = e
		tops = append(tops, e)
	}
	next := engine.NumCommandIDs()
	for _, r := range engine.RedisOnlyCommands() {
		e := &entry{name: r.Name, cats: r.Cats, id: next}
		next++
		if i := strings.IndexByte(r.Name, '|'); i >= 0 {
			p := u.byName[r.Name[:i]]
			if p == nil {
				continue // a subcommand of a container neither has
			}
			e.parent = p
			p.subs = append(p.subs, e)
		} else {
			tops = append(tops, e)
		}
		u.byName[e.name] = e
	}
	u.size = next
	sort.Slice(tops, func(i, j int) bool { return tops[i].name < tops[j].name })
	for _, t := range tops {
		u.list = append(u.list, t)
		u.list = append(u.list, t.subs...)
	}
	return u
}

// lookup finds a command or "container|sub" by name, case-insensitively.
func lookup(name string) *entry {
	return commands().byName[strings.ToLower(name)]
}
