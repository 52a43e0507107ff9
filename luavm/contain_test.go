package luavm

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"limitdb/engine"
	"limitdb/resp"
)

// TestPanicInLibrary: a Go panic inside a library function called by a
// script (injected here) is the script's error reply, and the interpreter
// runs the next script.
func TestPanicInLibrary(t *testing.T) {
	e := engine.New()
	evalOnce(t, e, "return 1") // build the VM
	v := StateOf(e).vm
	v.G.RawSetString("boom", v.L.NewFunction(func(L *lua.LState) int {
		var m map[string]int
		m["x"] = 1 // nil map write: a runtime panic
		return 0
	}))
	got := evalOnce(t, e, "return boom()")
	if !strings.HasPrefix(got, "-ERR ") || !strings.Contains(got, "assignment to entry in nil map") {
		t.Fatalf("panic reply: %q", got)
	}
	if got := evalOnce(t, e, "local ok, err = pcall(boom) return {tostring(ok), 1 + 1}"); got != "*2\r\n$5\r\nfalse\r\n:2\r\n" {
		t.Fatalf("pcall of a panicking function: %q", got)
	}
	if got := evalOnce(t, e, "return 1 + 1"); got != ":2\r\n" {
		t.Fatalf("after the panic: %q", got)
	}
}

// TestPanicOutsideInterpreter: a panic during a run but outside the
// interpreter's pcall (e.g. in a conversion) replaces whatever part of the
// reply was written by one error, and the next script gets a fresh VM.
func TestPanicOutsideInterpreter(t *testing.T) {
	e := engine.New()
	evalOnce(t, e, "return 1")
	st := StateOf(e)
	v := st.vm
	w := resp.NewWriter()
	w.BulkString("earlier reply")
	mark := len(w.B)
	v.name = "0123456789012345678901234567890123456789"
	c := &engine.Ctx{E: e, DB: e.DBs[0], W: w}
	func() {
		defer st.finish(c, v, mark)
		w.Array(3) // half a reply
		panic("conversion bug")
	}()
	if want := "$13\r\nearlier reply\r\n-ERR Error running script 0123456789012345678901234567890123456789, internal error: conversion bug\r\n"; string(w.B) != want {
		t.Fatalf("reply: %q", w.B)
	}
	if st.vm != nil {
		t.Fatal("the VM was kept after a panic")
	}
	if got := evalOnce(t, e, "return 1 + 1"); got != ":2\r\n" {
		t.Fatalf("next script: %q", got)
	}
}
