package acl

import (
	"errors"
	"strconv"
	"strings"
)

// Load parses an aclfile's text (the Lines form) into a new ACL, as Redis's
// ACLLoadFromFile does: every line is "user <name> <rule> …" split on
// single spaces; any error leaves nothing loaded and the error text lists
// them all with the file name and line number. A file without a default
// user gets the standard one.
func Load(text, filename string) (*ACL, error) {
	a := &ACL{users: map[string]*User{}}
	var errs strings.Builder
	for i, line := range strings.Split(text, "\n") {
		n := strconv.Itoa(i + 1)
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		argv := strings.Split(line, " ")
		if argv[0] != "user" || len(argv) < 2 {
			errs.WriteString(filename + ":" + n + " should start with user keyword followed by the username. ")
			continue
		}
		if hasSpace(argv[1]) {
			errs.WriteString("'" + filename + ":" + n + ": username '" + argv[1] + "' contains invalid characters. ")
			continue
		}
		if a.users[argv[1]] != nil {
			errs.WriteString("WARNING: Duplicate user '" + argv[1] + "' found on line " + n + ". ")
			continue
		}
		u := newUser(argv[1])
		a.add(u)
		args, bad := mergeSelectorArgs(argv[2:])
		if bad >= 0 {
			errs.WriteString(filename + ":" + n + ": Unmatched parenthesis in selector definition.")
		}
		syntax := false
		for _, op := range args {
			op = strings.Trim(op, "\t\r\n")
			if err := u.apply(op); err != nil {
				if errors.Is(err, errUnknownCmd) {
					errs.WriteString(filename + ":" + n + ": Error in applying operation '" + op + "': " + err.Error() + ". ")
				} else if !syntax {
					errs.WriteString(filename + ":" + n + ": " + err.Error() + ". ")
					syntax = true
				}
			}
		}
		u.refresh()
	}
	if errs.Len() > 0 {
		errs.WriteString("WARNING: ACL errors detected, no change to the previously active ACL rules was performed")
		return nil, Error(errs.String())
	}
	if a.users[DefaultName] == nil {
		a.add(newDefaultUser())
	}
	return a, nil
}

// Text is the aclfile form of the ACL: Lines, each ending in a newline.
func (a *ACL) Text() string {
	var b strings.Builder
	for _, l := range a.Lines() {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// Replace makes a hold b's users (ACL LOAD, or a replicated snapshot).
// The default user keeps its identity (connections point at it) and takes
// b's rules. It returns the users of a that are gone (replaced or
// removed): connections authenticated as them must be closed.
func (a *ACL) Replace(b *ACL) (gone []*User) {
	def := a.Default()
	for _, n := range a.names {
		if n != DefaultName {
			gone = append(gone, a.users[n])
		}
	}
	*def = *b.Default()
	def.Name = DefaultName
	b.users[DefaultName] = def
	a.users, a.names = b.users, b.names
	return gone
}

// Adopt makes a hold b's users as a replica applies a replicated ACL: a
// user present in both keeps its identity and takes b's rules in place
// (as ACL SETUSER changes it: its connections stay, with the new rules),
// a user b lacks is gone (its connections must be closed), b's new users
// join. It returns the users that are gone.
func (a *ACL) Adopt(b *ACL) (gone []*User) {
	for _, n := range a.names {
		old := a.users[n]
		nu := b.users[n]
		if nu == nil {
			gone = append(gone, old)
			continue
		}
		*old = *nu
		b.users[n] = old
	}
	a.users, a.names = b.users, b.names
	return gone
}
