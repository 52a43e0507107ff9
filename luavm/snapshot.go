package luavm

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"limitdb/engine"
)

// The scripting state in snapshots (engine.ScriptsCodec): every cached
// script body as an aux field named "lua" — the name Redis up to 6.2 used
// for the same purpose, and which Redis 7.0 reads and ignores — in SHA
// order, the math.random generator's state as "limitdb-lua-rand", and the
// function libraries as Redis 7.0 writes them (their code, one
// RDB_OPCODE_FUNCTION2 each, in name order). Loading compiles the bodies
// again into a fresh State (its interpreter is built on first use) and
// loads the libraries, from a limitdb snapshot or a Redis dump.rdb.

const auxLuaRand = "limitdb-lua-rand"

func init() {
	engine.RegisterScriptsCodec(engine.ScriptsCodec{
		Owns:      func(key string) bool { return key == "lua" || key == auxLuaRand },
		Save:      saveScripts,
		Functions: saveFunctions,
		Load:      loadScripts,
	})
	engine.FunctionCodes = func(e *engine.Engine) []string {
		st, _ := e.Scripts.(*State)
		return saveFunctions(st)
	}
}

// saveFunctions returns the libraries' code in name order.
func saveFunctions(scripts any) []string {
	st, _ := scripts.(*State)
	if st == nil {
		return nil
	}
	var out []string
	for _, l := range st.fn.sorted() {
		out = append(out, l.Code)
	}
	return out
}

func saveScripts(scripts any) []engine.AuxField {
	st, _ := scripts.(*State)
	if st == nil {
		return nil
	}
	fields := []engine.AuxField{{Key: auxLuaRand, Value: strconv.FormatUint(st.Rand48, 10)}}
	shas := make([]string, 0, len(st.Scripts))
	for sha := range st.Scripts {
		shas = append(shas, sha)
	}
	slices.Sort(shas)
	for _, sha := range shas {
		fields = append(fields, engine.AuxField{Key: "lua", Value: st.Scripts[sha].Body})
	}
	return fields
}

func loadScripts(fields []engine.AuxField, libs []string) (any, error) {
	st := newState()
	for _, f := range fields {
		switch f.Key {
		case auxLuaRand:
			v, err := strconv.ParseUint(f.Value, 10, 64)
			if err != nil || v >= 1<<48 {
				return nil, fmt.Errorf("bad %s aux field", auxLuaRand)
			}
			st.Rand48 = v
		case "lua":
			// compiled as SCRIPT LOAD would, without its effect or limit:
			// the body was accepted where the snapshot was taken
			sha := SHA1Hex([]byte(f.Value))
			s, msg := newScript(sha, f.Value, 0)
			if s == nil {
				return nil, fmt.Errorf("a cached script does not compile: %s", msg)
			}
			st.Scripts[sha] = s
		}
	}
	// as rdbFunctionLoad, without a time bound: the file's libraries
	// loaded where it was written
	for _, code := range libs {
		if _, msg := st.create(code, false, &st.fn, loadOpts{}); msg != "" {
			return nil, fmt.Errorf("Failed loading library, %s", strings.TrimPrefix(msg, "ERR "))
		}
	}
	return st, nil
}
