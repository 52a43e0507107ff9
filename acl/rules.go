package acl

import (
	"strings"

	"limitdb/engine"
	"limitdb/resp"
)

// The reasons a rule is refused (Redis's ACLSetUserStringError texts).
var (
	errSyntax       = Error("Syntax error")
	errUnknownCmd   = Error("Unknown command or category name in ACL")
	errKeyAfterAll  = Error("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
	errChanAfterAll = Error("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels")
	errNoSuchPass   = Error("The password you are trying to remove from the user does not exist")
	errBadHash      = Error("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	errSubFirstArg  = Error("Allowing first-arg of a subcommand is not supported")
)

// apply applies one user rule (on, off, >pass, #hash, <pass, !hash,
// nopass, resetpass, reset, (selector), clearselectors, or a selector
// rule for the root selector).
func (u *User) apply(op string) error {
	if op == "" {
		return nil
	}
	switch {
	case strings.EqualFold(op, "on"):
		u.flags = u.flags&^flagOff | flagOn
	case strings.EqualFold(op, "off"):
		u.flags = u.flags&^flagOn | flagOff
	case strings.EqualFold(op, "skip-sanitize-payload"):
		u.flags = u.flags&^flagSanitize | flagSkipSanitize
	case strings.EqualFold(op, "sanitize-payload"):
		u.flags = u.flags&^flagSkipSanitize | flagSanitize
	case strings.EqualFold(op, "nopass"):
		u.flags |= flagNoPass
		u.passwords = nil
	case strings.EqualFold(op, "resetpass"):
		u.flags &^= flagNoPass
		u.passwords = nil
	case op[0] == '>' || op[0] == '#':
		h, err := passHash(op)
		if err != nil {
			return err
		}
		if indexOf(u.passwords, h) < 0 {
			u.passwords = append(u.passwords, h)
		}
		u.flags &^= flagNoPass
	case op[0] == '<' || op[0] == '!':
		h, err := passHash(op)
		if err != nil {
			return err
		}
		i := indexOf(u.passwords, h)
		if i < 0 {
			return errNoSuchPass
		}
		u.passwords = append(u.passwords[:i:i], u.passwords[i+1:]...)
	case op[0] == '(' && op[len(op)-1] == ')':
		s := newSelector()
		args, ok := resp.SplitArgs([]byte(op[1:len(op)-1]), nil)
		if !ok {
			// Redis's sdssplitargs fails and the selector has no rules
			args = nil
		}
		for _, a := range args {
			if err := s.apply(string(a)); err != nil {
				return err
			}
		}
		u.selectors = append(u.selectors, s)
	case strings.EqualFold(op, "clearselectors"):
		u.selectors = u.selectors[:1]
	case strings.EqualFold(op, "reset"):
		for _, r := range []string{"resetpass", "resetkeys", "resetchannels", "off", "sanitize-payload", "clearselectors", "-@all"} {
			_ = u.apply(r)
		}
	default:
		return u.selectors[0].apply(op)
	}
	return nil
}

// passHash is the stored hash a password rule names: >pass and <pass
// hash the password, #hash and !hash give it (checked).
func passHash(op string) (string, error) {
	if op[0] == '>' || op[0] == '<' {
		return HashPassword([]byte(op[1:])), nil
	}
	if !validHash(op[1:]) {
		return "", errBadHash
	}
	return op[1:], nil
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// apply applies one selector rule: allkeys/~*, resetkeys, ~p, %RW~p,
// allchannels/&*, resetchannels, &p, allcommands/+@all, nocommands/-@all,
// +cmd, -cmd, +cmd|sub, +cmd|firstarg, +@cat, -@cat.
func (s *Selector) apply(op string) error {
	if op == "" {
		return errSyntax // an empty word inside (…), e.g. from "(\"\")"
	}
	switch {
	case strings.EqualFold(op, "allkeys") || op == "~*":
		s.allKeys, s.keys = true, nil
	case strings.EqualFold(op, "resetkeys"):
		s.allKeys, s.keys = false, nil
	case strings.EqualFold(op, "allchannels") || op == "&*":
		s.allChannels, s.channels = true, nil
	case strings.EqualFold(op, "resetchannels"):
		s.allChannels, s.channels = false, nil
	case strings.EqualFold(op, "allcommands") || strings.EqualFold(op, "+@all"):
		for i := range s.cmds {
			s.cmds[i] = ^uint64(0)
		}
		s.allCommands, s.future, s.firstArgs = true, true, nil
	case strings.EqualFold(op, "nocommands") || strings.EqualFold(op, "-@all"):
		for i := range s.cmds {
			s.cmds[i] = 0
		}
		s.allCommands, s.future, s.firstArgs = false, false, nil
	case op[0] == '~' || op[0] == '%':
		if s.allKeys {
			return errKeyAfterAll
		}
		perm, off := uint8(permAll), 1
		if op[0] == '%' {
			perm = 0
			for ; off < len(op); off++ {
				c := op[off]
				if (c == 'R' || c == 'r') && perm&permRead == 0 {
					perm |= permRead
				} else if (c == 'W' || c == 'w') && perm&permWrite == 0 {
					perm |= permWrite
				} else if c == '~' {
					off++
					break
				} else {
					return errSyntax
				}
			}
		}
		pat := op[min(off, len(op)):]
		// %~p (no permission) is a syntax error in redis-server 7.0.15
		// (checked by experiment: the pattern could not be described)
		if perm == 0 || hasSpace(pat) {
			return errSyntax
		}
		for i := range s.keys {
			if s.keys[i].Pattern == pat {
				s.keys[i].Perm |= perm
				return nil
			}
		}
		s.keys = append(s.keys, newKeyPattern(perm, pat))
	case op[0] == '&':
		if s.allChannels {
			return errChanAfterAll
		}
		pat := op[1:]
		if hasSpace(pat) {
			return errSyntax
		}
		if indexOf(s.channels, pat) < 0 {
			s.channels = append(s.channels, pat)
		}
	case op[0] == '+' && (len(op) < 2 || op[1] != '@'):
		name := op[1:]
		i := strings.LastIndexByte(name, '|')
		if i < 0 {
			cmd := lookup(name)
			if cmd == nil {
				return errUnknownCmd
			}
			s.change(cmd, true)
			return nil
		}
		cmd := lookup(name[:i])
		if cmd == nil {
			return errUnknownCmd
		}
		if cmd.parent != nil {
			return errSubFirstArg
		}
		sub := name[i+1:]
		if sub == "" {
			return errSyntax
		}
		if len(cmd.subs) > 0 {
			sc := lookup(name)
			if sc == nil {
				return errUnknownCmd
			}
			s.change(sc, true)
			return nil
		}
		s.addFirstArg(cmd.id, sub)
	case op[0] == '-' && (len(op) < 2 || op[1] != '@'):
		cmd := lookup(op[1:])
		if cmd == nil {
			return errUnknownCmd
		}
		s.change(cmd, false)
	case (op[0] == '+' || op[0] == '-') && op[1] == '@':
		cat := engine.CategoryByName(op[2:])
		if cat == 0 {
			return errUnknownCmd
		}
		s.setCategory(cat, op[0] == '+')
	default:
		return errSyntax
	}
	return nil
}

// change allows or denies a command and, for a container, all its
// subcommands; it forgets the command's allowed first arguments.
func (s *Selector) change(cmd *entry, allow bool) {
	s.setBit(cmd.id, allow)
	if cmd.id < len(s.firstArgs) {
		s.firstArgs[cmd.id] = nil
	}
	for _, sub := range cmd.subs {
		s.setBit(sub.id, allow)
	}
}

func (s *Selector) addFirstArg(id int, arg string) {
	for len(s.firstArgs) <= id {
		s.firstArgs = append(s.firstArgs, nil)
	}
	for _, a := range s.firstArgs[id] {
		if strings.EqualFold(a, arg) {
			return
		}
	}
	s.firstArgs[id] = append(s.firstArgs[id], arg)
}

// setCategory applies +@cat / -@cat: every command in the category (and,
// for a container in it, all its subcommands) is allowed or denied.
func (s *Selector) setCategory(cat uint64, allow bool) {
	for _, e := range commands().list {
		if e.cats&cat != 0 {
			s.change(e, allow)
		}
	}
}
