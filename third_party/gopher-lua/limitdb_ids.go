package lua

import "strconv"

// limitdb patch: object ids.
//
// Lua shows a table, function, userdata or thread as its address
// ("table: 0x55d0c3a4b2e0") and hashes such objects by address when they are
// table keys. Go addresses would make tostring() and the order of tables
// keyed by objects change from call to call and from node to node, so every
// object gets an id from a counter of its state when it is created, and the
// id stands for the address in both uses.

// RunObjectIDs is where a script run's ids start: luavm sets the counter to
// it before every run (SetObjectIDs), so a script's objects get the same ids
// on every call. Objects made outside runs (the sandbox, compiled scripts'
// functions, argument tables) count up from 1 and never reach it, so no two
// live objects share an id.
const RunObjectIDs = 1 << 32

// objectAddrBase makes the shown address look like a heap address, with
// the 12 hex digits Redis's usually have.
const objectAddrBase = 0x550000000000

// newID is the id of a new object.
func (g *Global) newID() uint64 {
	g.nextID++
	return g.nextID
}

// SetObjectIDs makes next the id of the next object created and returns
// the previous position of the counter (to restore after a run).
func (ls *LState) SetObjectIDs(next uint64) uint64 {
	prev := ls.G.nextID + 1
	ls.G.nextID = next - 1
	return prev
}

// objectAddr is the address an object shows; 16-byte steps, as malloc's.
func objectAddr(v LValue) uint64 {
	var id uint64
	switch x := v.(type) {
	case *LTable:
		id = x.id
	case *LFunction:
		id = x.id
	case *LUserData:
		id = x.id
	case *LState:
		id = x.id
	}
	return objectAddrBase + id<<4
}

// objectString is Lua's "<type>: 0x<address>" (luaB_tostring's %p).
func objectString(kind string, id uint64) string {
	b := make([]byte, 0, len(kind)+16)
	b = append(b, kind...)
	b = append(b, ": 0x"...)
	b = strconv.AppendUint(b, objectAddrBase+id<<4, 16)
	return string(b)
}
