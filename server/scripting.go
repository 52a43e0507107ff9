package server

// The scripting commands (EVAL, EVALSHA, SCRIPT …) register themselves in
// the engine's command table from luavm's init.
import _ "limitdb/luavm"
