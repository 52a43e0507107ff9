package engine

// KeyFlag is a key spec flag of Redis 7's command table: how a command
// uses a key (RO/RW/OW/RM) and what it does to it (ACCESS, UPDATE, INSERT,
// DELETE). ACL's %R~ and %W~ patterns are checked against them.
type KeyFlag uint16

const (
	KeyRO KeyFlag = 1 << iota
	KeyRW
	KeyOW
	KeyRM
	KeyAccess
	KeyUpdate
	KeyInsert
	KeyDelete
	KeyNotKey
	KeyIncomplete
	KeyVariableFlags
)

// Reads reports whether the key's value is read (Redis's CMD_KEY_ACCESS).
func (f KeyFlag) Reads() bool { return f&KeyAccess != 0 }

// Writes reports whether the key is changed (INSERT, DELETE or UPDATE).
func (f KeyFlag) Writes() bool { return f&(KeyInsert|KeyDelete|KeyUpdate) != 0 }

// KeySpec says where a command's keys are, as Redis 7's key specs do:
// the search starts at BeginIndex (the index form; limitdb has no command
// whose spec starts at a keyword), then takes either a range (LastKey
// relative to the start, negative counts from the end; Limit splits the
// rest) or KeyNum: a count at start+KeyNumIdx, keys from start+FirstKey.
type KeySpec struct {
	Flags                   KeyFlag
	BeginIndex              int
	LastKey, KeyStep, Limit int
	KeyNum                  bool
	KeyNumIdx, FirstKey     int
	Notes                   string // Redis's note, shown by COMMAND INFO
	// Unsupported: the spec starts at a keyword or is "unknown" in
	// Redis's JSON. Only a command with GetKeys may have one (attachMeta
	// panics otherwise): its keys come from GetKeys, as Redis falls back
	// to the getkeys_proc when a spec cannot be followed.
	Unsupported bool
}

// KeyRef is one key a GetKeys function found: its position in argv and
// how the command uses it.
type KeyRef struct {
	Pos   int
	Flags KeyFlag
}

// span returns the argument range [first, last] and step of the spec in
// argv, and false when the arguments do not fit it (Redis's invalid_spec).
func (ks *KeySpec) span(argv [][]byte) (first, last, step int, ok bool) {
	argc := len(argv)
	first = ks.BeginIndex
	step = max(ks.KeyStep, 1)
	if ks.KeyNum {
		if ks.KeyNumIdx >= argc-first {
			return 0, 0, 0, false
		}
		n, ok := ParseIntB(argv[first+ks.KeyNumIdx])
		if !ok || n < 0 || n > int64(argc) {
			return 0, 0, 0, false
		}
		first += ks.FirstKey
		last = first + int(n) - 1
	} else if ks.LastKey >= 0 {
		last = first + ks.LastKey
	} else if ks.Limit == 0 {
		last = argc + ks.LastKey
	} else {
		last = first + ((argc-first)/ks.Limit + ks.LastKey)
	}
	if last >= argc || last < first || first >= argc {
		return 0, 0, 0, false
	}
	return first, last, step, true
}

// KeyIter walks the key arguments of a command (positions in argv and
// their flags) without allocating. As in Redis, if any spec does not fit
// the arguments the command has no keys (it will fail its own parsing).
type KeyIter struct {
	cmd       *Command
	argv      [][]byte
	si        int // next spec
	pos, last int
	step      int
	flags     KeyFlag
	inSpan    bool
	invalid   bool
	// refs holds what cmd.GetKeys found (nrefs of them; ref is the next),
	// for a command whose specs cannot be followed.
	refs       [2]KeyRef
	nrefs, ref int
	useGetKeys bool
}

// Keys returns an iterator over the key arguments of argv for cmd.
func (cmd *Command) Keys(argv [][]byte) KeyIter {
	it := KeyIter{cmd: cmd, argv: argv}
	if cmd.GetKeys != nil {
		// GetKeys (an indirect call) makes what it is passed escape: a
		// variable of this branch's own, so that only the commands with
		// a GetKeys pay the allocation, not every keyed command's iterator
		var refs [2]KeyRef
		it.useGetKeys = true
		it.nrefs = cmd.GetKeys(argv, &refs)
		it.refs = refs
		return it
	}
	if len(cmd.KeySpecs) == 1 {
		return it // Next checks the only spec itself
	}
	for i := range cmd.KeySpecs {
		if _, _, _, ok := cmd.KeySpecs[i].span(argv); !ok {
			it.invalid = true
			break
		}
	}
	return it
}

// Next returns the next key's position and flags; ok is false at the end.
func (it *KeyIter) Next() (pos int, flags KeyFlag, ok bool) {
	if it.useGetKeys {
		if it.ref >= it.nrefs {
			return 0, 0, false
		}
		r := it.refs[it.ref]
		it.ref++
		return r.Pos, r.Flags, true
	}
	if it.invalid {
		return 0, 0, false
	}
	for {
		if it.inSpan {
			if it.pos <= it.last && it.pos < len(it.argv) {
				p := it.pos
				it.pos += it.step
				return p, it.flags, true
			}
			it.inSpan = false
		}
		specs := it.cmd.KeySpecs
		if it.si >= len(specs) {
			return 0, 0, false
		}
		ks := &specs[it.si]
		it.si++
		first, last, step, ok := ks.span(it.argv)
		if !ok {
			it.invalid = true
			return 0, 0, false
		}
		it.pos, it.last, it.step, it.inSpan = first, last, step, true
		it.flags = ks.Flags
		if ks.Flags&KeyVariableFlags != 0 {
			it.flags = VariableKeyFlags(it.cmd, it.argv)
		}
	}
}

// VariableKeyFlags resolves the flags of a spec marked VARIABLE_FLAGS;
// SET is the only such command limitdb has: with GET it reads and
// updates its key, without it only overwrites it.
func VariableKeyFlags(cmd *Command, argv [][]byte) KeyFlag {
	for _, a := range argv[min(3, len(argv)):] {
		if EqualFold(a, "get") {
			return KeyRW | KeyAccess | KeyUpdate
		}
	}
	return KeyOW | KeyUpdate
}

// movableKeys is Redis's populateCommandLegacyRangeSpec test for the
// movablekeys flag: some key is outside what the legacy first/last/step
// range can describe (a keynum or unknown spec, a range of step > 1 or
// not following the previous one, an incomplete spec).
func movableKeys(specs []KeySpec) bool {
	if len(specs) == 1 && !specs[0].KeyNum && !specs[0].Unsupported {
		return specs[0].Flags&KeyIncomplete != 0
	}
	prevLast := 0
	for i := range specs {
		ks := &specs[i]
		if ks.KeyNum || ks.Unsupported || ks.Flags&KeyIncomplete != 0 {
			return true
		}
		if ks.KeyStep != 1 || (prevLast != 0 && prevLast != ks.BeginIndex-1) {
			return true
		}
		last := ks.LastKey
		if last >= 0 {
			last += ks.BeginIndex
		}
		// Redis compares as unsigned: a negative lastkey wins
		if uint(last) > uint(prevLast) {
			prevLast = last
		}
	}
	return false
}
