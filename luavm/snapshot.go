package luavm

import (
	"fmt"
	"slices"
	"strconv"

	"limitdb/engine"
)

// The scripting state in snapshots (engine.ScriptsCodec): every cached
// script body as an aux field named "lua" — the name Redis up to 6.2 used
// for the same purpose, and which Redis 7.0 reads and ignores — in SHA
// order, and the math.random generator's state as "limitdb-lua-rand".
// Loading compiles the bodies again into a fresh State (its interpreter
// is built on first use).

const auxLuaRand = "limitdb-lua-rand"

func init() {
	engine.RegisterScriptsCodec(engine.ScriptsCodec{
		Owns: func(key string) bool { return key == "lua" || key == auxLuaRand },
		Save: saveScripts,
		Load: loadScripts,
	})
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

func loadScripts(fields []engine.AuxField) (any, error) {
	st := &State{Scripts: map[string]*Script{}, Rand48: Seed48}
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
			proto, msg := compile(f.Value)
			if msg != "" {
				return nil, fmt.Errorf("a cached script does not compile: %s", msg)
			}
			sha := SHA1Hex([]byte(f.Value))
			st.Scripts[sha] = &Script{SHA: sha, Body: f.Value, proto: proto}
		}
	}
	return st, nil
}
