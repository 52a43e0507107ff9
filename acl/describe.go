package acl

import (
	"strings"

	"limitdb/engine"
)

// Describe returns the user's rules in ACL SETUSER form, as ACL LIST shows
// them after "user <name> ": flags, #password hashes, the root selector,
// then each other selector in parentheses.
func (u *User) Describe() string {
	var b strings.Builder
	for _, f := range userFlagNames {
		if u.flags&f.f != 0 {
			b.WriteString(f.name)
			b.WriteByte(' ')
		}
	}
	for _, p := range u.passwords {
		b.WriteByte('#')
		b.WriteString(p)
		b.WriteByte(' ')
	}
	for i, s := range u.selectors {
		if i == 0 {
			b.WriteString(s.describe())
		} else {
			b.WriteString(" (" + s.describe() + ")")
		}
	}
	return b.String()
}

// describe: key patterns, channel patterns, command rules.
func (s *Selector) describe() string {
	var b strings.Builder
	if s.allKeys {
		b.WriteString("~* ")
	} else {
		for _, k := range s.keys {
			b.WriteString(k.String())
			b.WriteByte(' ')
		}
	}
	if s.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range s.channels {
			b.WriteString("&" + c + " ")
		}
	}
	b.WriteString(s.CommandRules())
	return b.String()
}

// String is the pattern in rule form: ~p, %R~p or %W~p.
func (k KeyPattern) String() string {
	switch k.Perm {
	case permRead:
		return "%R~" + k.Pattern
	case permWrite:
		return "%W~" + k.Pattern
	}
	return "~" + k.Pattern
}

// KeysString is the selector's key patterns as ACL GETUSER shows them.
func (s *Selector) KeysString() string {
	if s.allKeys {
		return "~*"
	}
	parts := make([]string, len(s.keys))
	for i, k := range s.keys {
		parts[i] = k.String()
	}
	return strings.Join(parts, " ")
}

// ChannelsString is the selector's channel patterns as ACL GETUSER shows them.
func (s *Selector) ChannelsString() string {
	if s.allChannels {
		return "&*"
	}
	parts := make([]string, len(s.channels))
	for i, c := range s.channels {
		parts[i] = "&" + c
	}
	return strings.Join(parts, " ")
}

// Selector returns the user's selector i (0 is the root one).
func (u *User) Selector(i int) *Selector { return u.selectors[i] }

// CommandRules describes the command bits with the fewest rules Redis's
// way: start from +@all (when the selector may run future commands) or
// -@all, greedily apply the category that best fits what remains, then
// fix single commands. Redis emits the single commands in its hash
// table's order; limitdb in name order.
func (s *Selector) CommandRules() string {
	cmds := commands().list
	var b strings.Builder
	additive := !s.future
	fake := newSelector()
	if additive {
		b.WriteString("-@all ")
	} else {
		b.WriteString("+@all ")
		_ = fake.apply("+@all")
	}
	temp := &Selector{cmds: append([]uint64(nil), s.cmds...)}
	applied := make([]bool, len(engine.CategoryNames))
	for {
		best, minDiff, maxSame := -1, int(^uint(0)>>1), 0
		for j := range engine.CategoryNames {
			if applied[j] {
				continue
			}
			on, off := 0, 0
			for _, c := range cmds {
				if c.cats&(1<<j) != 0 {
					if temp.bit(c.id) {
						on++
					} else {
						off++
					}
				}
			}
			diff, same := off, on
			if !additive {
				diff, same = on, off
			}
			if same > diff && (diff < minDiff || (diff == minDiff && same > maxSame)) {
				best, minDiff, maxSame = j, diff, same
			}
		}
		if best < 0 {
			break
		}
		name := engine.CategoryNames[best]
		if additive {
			fake.setCategory(1<<best, true)
			temp.setCategory(1<<best, false)
			b.WriteString("+@" + name + " ")
		} else {
			fake.setCategory(1<<best, false)
			temp.setCategory(1<<best, true)
			b.WriteString("-@" + name + " ")
		}
		applied[best] = true
	}
	for _, c := range cmds {
		if ub := s.bit(c.id); ub != fake.bit(c.id) {
			if ub {
				b.WriteString("+")
			} else {
				b.WriteString("-")
			}
			b.WriteString(c.name + " ")
			fake.change(c, ub)
		}
		if c.parent == nil && !s.bit(c.id) && c.id < len(s.firstArgs) {
			for _, a := range s.firstArgs[c.id] {
				b.WriteString("+" + c.name + "|" + a + " ")
			}
		}
	}
	return strings.TrimSuffix(b.String(), " ")
}
