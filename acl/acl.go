// Package acl holds limitdb's users and their permissions as Redis 7.0's
// ACL has them: passwords, on/off, command bits and categories, key and
// channel patterns, selectors. All users live in one ACL value whose
// serialized form is the ACL LIST / aclfile text (Lines, Load), so that a
// replicated log can carry it. It has no clock, no randomness and never
// lets Go map order reach a result; the permission check (Check) does not
// allocate. See DESIGN.md.
package acl

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"

	"limitdb/engine"
)

// Key permissions of a pattern: %R~ reads, %W~ writes, ~ both.
const (
	permRead  = 1
	permWrite = 2
	permAll   = permRead | permWrite
)

// KeyPattern is one ~, %R~ or %W~ pattern.
type KeyPattern struct {
	Perm    uint8
	Pattern string
	// isPre: the pattern is prefix followed by one final '*' with no
	// other glob character (the usual "app:*"), so a key matches when it
	// starts with prefix; literal: no glob character at all. Both skip
	// the recursive glob matcher on the per-command path; the whole check
	// is ~30 ns a command (BenchmarkCheckKeyPatterns, 3 checks an op).
	prefix  string
	isPre   bool
	literal bool
}

func newKeyPattern(perm uint8, pat string) KeyPattern {
	k := KeyPattern{Perm: perm, Pattern: pat}
	body := strings.TrimSuffix(pat, "*")
	if !strings.ContainsAny(body, "*?[\\") {
		if len(body) < len(pat) {
			k.prefix, k.isPre = body, true
		} else {
			k.literal = true
		}
	}
	return k
}

// matches reports whether key matches the pattern (Redis's
// stringmatchlen, case-sensitive).
func (k *KeyPattern) matches(key string) bool {
	switch {
	case k.isPre:
		return strings.HasPrefix(key, k.prefix)
	case k.literal:
		return key == k.Pattern
	}
	return engine.Match(k.Pattern, key, false)
}

// Selector is one set of command, key and channel permissions; a user has
// a root selector and any number of (…) selectors, and may run a command
// when any one of them allows it.
type Selector struct {
	allKeys, allChannels, allCommands bool
	// future: set by +@all and cleared by -@all (Redis's reserved bit
	// "may run commands added later"); it decides whether the command
	// rules are described from +@all or from -@all.
	future bool
	cmds   []uint64 // bit per engine.Command.ID
	// firstArgs[id] lists the allowed first arguments (+select|0) of an
	// otherwise denied command without subcommands.
	firstArgs [][]string
	keys      []KeyPattern
	channels  []string
}

func newSelector() *Selector {
	return &Selector{cmds: make([]uint64, (commands().size+63)/64)}
}

func (s *Selector) clone() *Selector {
	c := *s
	c.cmds = append([]uint64(nil), s.cmds...)
	if s.firstArgs != nil {
		c.firstArgs = make([][]string, len(s.firstArgs))
		for i, a := range s.firstArgs {
			c.firstArgs[i] = append([]string(nil), a...)
		}
	}
	c.keys = append([]KeyPattern(nil), s.keys...)
	c.channels = append([]string(nil), s.channels...)
	return &c
}

func (s *Selector) bit(id int) bool {
	w := id >> 6
	return w < len(s.cmds) && s.cmds[w]&(1<<(id&63)) != 0
}

func (s *Selector) setBit(id int, on bool) {
	w := id >> 6
	for w >= len(s.cmds) {
		s.cmds = append(s.cmds, 0)
	}
	if on {
		s.cmds[w] |= 1 << (id & 63)
	} else {
		s.cmds[w] &^= 1 << (id & 63)
		s.allCommands = false
	}
}

// User flags, in the order Redis describes them.
const (
	flagOn = 1 << iota
	flagOff
	flagNoPass
	flagSkipSanitize
	flagSanitize
)

var userFlagNames = []struct {
	f    int
	name string
}{{flagOn, "on"}, {flagOff, "off"}, {flagNoPass, "nopass"}, {flagSkipSanitize, "skip-sanitize-payload"}, {flagSanitize, "sanitize-payload"}}

// User is one ACL user. Connections keep a pointer to it: a change made
// with SetUser is copied into the same User, so they see it at once.
type User struct {
	Name      string
	flags     int
	passwords []string // lower-case hex SHA-256, in the order added
	selectors []*Selector
	gone      bool // deleted or replaced: its connections are being closed
	// free: the user may run everything on every key and channel (one
	// selector with allcommands, allkeys, allchannels) so Check returns
	// at once; kept up to date by every change.
	free bool
}

func newUser(name string) *User {
	u := &User{Name: name, flags: flagOff, selectors: []*Selector{newSelector()}}
	u.refresh()
	return u
}

func (u *User) clone() *User {
	c := *u
	c.passwords = append([]string(nil), u.passwords...)
	c.selectors = make([]*Selector, len(u.selectors))
	for i, s := range u.selectors {
		c.selectors[i] = s.clone()
	}
	return &c
}

// Free reports whether the user may run every command on every key and
// channel (the default user's usual state): callers skip Check then.
func (u *User) Free() bool { return u.free }

// Gone reports whether the user was deleted or replaced (ACL DELUSER, ACL
// LOAD): connections still pointing at it must be closed.
func (u *User) Gone() bool { return u.gone }

// MarkGone flags a removed user: every check fails from now on.
func (u *User) MarkGone() { u.gone, u.free = true, false }

func (u *User) refresh() {
	u.free = false
	if u.gone {
		return
	}
	for _, s := range u.selectors {
		if s.allCommands && s.allKeys && s.allChannels {
			u.free = true
		}
	}
}

// Enabled reports whether the user is on.
func (u *User) Enabled() bool { return u.flags&flagOff == 0 && u.flags&flagOn != 0 }

// NoPass reports whether any password authenticates the user.
func (u *User) NoPass() bool { return u.flags&flagNoPass != 0 }

// Flags lists the user's flags as ACL GETUSER shows them.
func (u *User) Flags() []string {
	var out []string
	for _, f := range userFlagNames {
		if u.flags&f.f != 0 {
			out = append(out, f.name)
		}
	}
	return out
}

// Passwords returns the user's password hashes.
func (u *User) Passwords() []string { return u.passwords }

// NumSelectors returns the number of selectors besides the root one.
func (u *User) NumSelectors() int { return len(u.selectors) - 1 }

// HashPassword is the stored form of a password: SHA-256, lower-case hex.
func HashPassword(p []byte) string {
	h := sha256.Sum256(p)
	return hex.EncodeToString(h[:])
}

// ACL is the set of users. The default user always exists.
type ACL struct {
	users map[string]*User // lookups only; order comes from names
	names []string         // sorted, as Redis's radix tree lists them
}

// DefaultName is the user every new connection starts as.
const DefaultName = "default"

// New returns an ACL with only the default user (on, nopass, +@all ~* &*).
func New() *ACL {
	a := &ACL{users: map[string]*User{}}
	a.add(newDefaultUser())
	return a
}

func newDefaultUser() *User {
	u := newUser(DefaultName)
	for _, op := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		if err := u.apply(op); err != nil {
			panic("acl: default user: " + err.Error())
		}
	}
	u.refresh()
	return u
}

func (a *ACL) add(u *User) {
	a.users[u.Name] = u
	i := sort.SearchStrings(a.names, u.Name)
	a.names = append(a.names, "")
	copy(a.names[i+1:], a.names[i:])
	a.names[i] = u.Name
}

// User returns the named user, or nil.
func (a *ACL) User(name string) *User { return a.users[name] }

// Default returns the default user.
func (a *ACL) Default() *User { return a.users[DefaultName] }

// Users returns every user in name order.
func (a *ACL) Users() []*User {
	out := make([]*User, len(a.names))
	for i, n := range a.names {
		out[i] = a.users[n]
	}
	return out
}

// Len is the number of users.
func (a *ACL) Len() int { return len(a.names) }

// Error is a rule that could not be applied; its text is Redis's.
type Error string

func (e Error) Error() string { return string(e) }

// RuleError is a SETUSER rule that failed: Index is its position among
// the (selector-merged) rules, Why the reason.
type RuleError struct {
	Index int
	Rule  string
	Why   Error
}

func (e *RuleError) Error() string {
	return "Error in ACL SETUSER modifier '" + e.Rule + "': " + string(e.Why)
}

// UnknownCommand reports whether the rule names a command or category
// that does not exist (config files report it apart).
func (e *RuleError) UnknownCommand() bool { return e.Why == errUnknownCmd }

// SetUser applies ACL SETUSER rules to the named user, creating it when
// missing. Rules are applied to a copy first, so on error nothing changes.
// It returns the user and whether it existed before.
func (a *ACL) SetUser(name string, rules []string) (*User, error) {
	if hasSpace(name) {
		return nil, Error("Usernames can't contain spaces or null characters")
	}
	args, bad := mergeSelectorArgs(rules)
	if bad >= 0 {
		return nil, Error("Unmatched parenthesis in acl selector starting at '" + rules[bad] + "'.")
	}
	old := a.users[name]
	var tmp *User
	if old != nil {
		tmp = old.clone()
	} else {
		tmp = newUser(name)
	}
	for i, op := range args {
		if err := tmp.apply(op); err != nil {
			return nil, &RuleError{Index: i, Rule: op, Why: err.(Error)}
		}
	}
	tmp.refresh()
	if old != nil {
		*old = *tmp
		return old, nil
	}
	a.add(tmp)
	return tmp, nil
}

// DelUser removes the named user (never the default one) and returns it.
func (a *ACL) DelUser(name string) *User {
	u := a.users[name]
	if u == nil || name == DefaultName {
		return nil
	}
	delete(a.users, name)
	i := sort.SearchStrings(a.names, name)
	a.names = append(a.names[:i], a.names[i+1:]...)
	return u
}

// SetDefaultPassword implements requirepass: the default user's passwords
// are replaced by pass, or it becomes nopass when pass is empty.
func (a *ACL) SetDefaultPassword(pass string) {
	u := a.Default()
	_ = u.apply("resetpass")
	if pass == "" {
		_ = u.apply("nopass")
	} else {
		_ = u.apply(">" + pass)
	}
	u.refresh()
}

// Authenticate returns the user that name and pass log in as, or nil
// (unknown user, user off, or wrong password).
func (a *ACL) Authenticate(name, pass []byte) *User {
	u := a.users[string(name)]
	if u == nil || u.flags&flagOff != 0 {
		return nil
	}
	if u.NoPass() {
		return u
	}
	h := sha256.Sum256(pass)
	var hx [64]byte
	hex.Encode(hx[:], h[:])
	for _, p := range u.passwords {
		if constEq(p, hx[:]) {
			return u
		}
	}
	return nil
}

// constEq compares a stored hash with a computed one in time independent
// of where they differ.
func constEq(a string, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	var d byte
	for i := range b {
		d |= a[i] ^ b[i]
	}
	return d == 0
}

// Lines is the serialized form of the ACL: one "user <name> <rules>" line
// per user in name order, the text of ACL LIST and of an aclfile.
func (a *ACL) Lines() []string {
	out := make([]string, 0, len(a.names))
	for _, n := range a.names {
		out = append(out, "user "+n+" "+a.users[n].Describe())
	}
	return out
}

// hasSpace is Redis's ACLStringHasSpaces: C isspace or NUL.
func hasSpace(s string) bool {
	return strings.ContainsAny(s, " \t\n\v\f\r\x00")
}

// mergeSelectorArgs joins the words of a selector written over several
// arguments ("(+get" "~x)") into one; bad is the index of an unclosed one.
func mergeSelectorArgs(argv []string) (out []string, bad int) {
	open := -1
	var sel string
	for j, op := range argv {
		if len(op) > 0 && op[0] == '(' && op[len(op)-1] != ')' {
			sel, open = op, j
			continue
		}
		if open >= 0 {
			sel += " " + op
			if len(op) > 0 && op[len(op)-1] == ')' {
				out = append(out, sel)
				open = -1
			}
			continue
		}
		out = append(out, op)
	}
	if open >= 0 {
		return nil, open
	}
	return out, -1
}
