package tests

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"limitdb/door"
	"limitdb/engine"
	"limitdb/server"
)

// TestBlockingEffects runs the scenarios where clients block (@send,
// @read, @blocked) on a redis-server writing an append-only file and on a
// limitdb server whose door hands its records to the test, and compares
// the two effect streams of each file: a client served later is recorded
// as the pop Redis propagates (BLPOP → LPOP, BLMOVE → LMOVE … LEFT|RIGHT,
// BZMPOP → ZPOPMIN key n), in the same place (after the unit that pushed),
// a key found expired when its waiters are served as a DEL of its own.
// MULTI/EXEC wrapping is compared too. limitdb-only effects (SCRIPT LOAD,
// CONFIG SET of replicated settings) are left out.
func TestBlockingEffects(t *testing.T) {
	r := mustAOFRedis(t)
	m, _ := filepath.Glob(filepath.Join(r.dir, "appendonlydir", "*.incr.aof"))
	if len(m) != 1 {
		t.Fatalf("want one incr AOF, found %q", m)
	}
	aof, err := os.Open(m[0])
	if err != nil {
		t.Fatal(err)
	}
	defer aof.Close()
	sink := &recordSink{}
	srv := server.New(server.Config{Addr: "127.0.0.1:0", Effects: door.Records(sink.add)}, engine.New())
	srv.SetDebugCommand("yes")
	serveLimitdb(t, srv)
	for _, f := range scenarioFiles(t, "scenarios") {
		lines := readScenario(t, f)
		if !blockingScenario(lines) {
			continue
		}
		t.Run(strings.TrimPrefix(f, "scenarios/"), func(t *testing.T) {
			io.Copy(io.Discard, aof) // what earlier files left
			sink.take()
			runScenarioOn(t, r.Addr, srv.Addr().String(), f, lines, 2)
			raw, _ := io.ReadAll(aof)
			want := aofStream(t, raw)
			got := sink.take()
			i, j := 0, 0
			for i < len(want) || j < len(got) {
				if i < len(want) && j < len(got) && sameStreamEffect(want[i], got[j]) {
					i++
					j++
					continue
				}
				t.Fatalf("effect streams differ at redis #%d, limitdb #%d:\n  redis:   %v\n  limitdb: %v", i, j, window(want, i), window(got, j))
			}
		})
	}
}

// sameStreamEffect compares two effects, or MULTI / EXEC markers (db -1).
func sameStreamEffect(a, b effect) bool {
	if a.db < 0 || b.db < 0 {
		return a.db == b.db && strings.EqualFold(a.argv[0], b.argv[0])
	}
	return sameEffect(a, b, false)
}

func window(effs []effect, i int) []effect {
	return effs[max(0, i-3):min(len(effs), i+4)]
}

// aofStream parses Redis's AOF bytes: SELECT folded into each effect's
// database, MULTI and EXEC kept as markers.
func aofStream(t *testing.T, raw []byte) []effect {
	cmds, rest, err := splitRESP(raw)
	if err != nil || len(rest) != 0 {
		t.Fatalf("AOF: %v (%d bytes left)", err, len(rest))
	}
	var out []effect
	db := 0
	for _, argv := range cmds {
		switch strings.ToUpper(argv[0]) {
		case "SELECT":
			db, _ = strconv.Atoi(argv[1])
		case "MULTI", "EXEC":
			out = append(out, effect{-1, argv})
		default:
			out = append(out, effect{db, argv})
		}
	}
	return out
}

// recordSink is a door.Log keeping the effects of every record.
type recordSink struct {
	mu   sync.Mutex
	effs []effect
}

func (s *recordSink) add(rec []byte) {
	h, body, err := engine.ParseRecordHeader(rec)
	if err != nil {
		panic(err)
	}
	cmds, _, err := splitRESP(body)
	if err != nil {
		panic(err)
	}
	var out []effect
	db, dropped := h.DB, false
	for _, argv := range cmds {
		switch strings.ToUpper(argv[0]) {
		case "SELECT":
			db, _ = strconv.Atoi(argv[1])
		case "MULTI", "EXEC":
			out = append(out, effect{-1, argv})
		default:
			e := effect{db, argv}
			if limitdbOnly(e) || strings.EqualFold(argv[0], "CONFIG") {
				dropped = true
				continue
			}
			out = append(out, e)
		}
	}
	if dropped && len(out) <= 3 && len(out) > 0 && out[0].db < 0 {
		// a unit wrapped because of an effect Redis does not have (a
		// script's SCRIPT LOAD): Redis sends its one effect bare
		out = out[1 : len(out)-1]
	}
	s.mu.Lock()
	s.effs = append(s.effs, out...)
	s.mu.Unlock()
}

// take returns the effects so far and forgets them.
func (s *recordSink) take() []effect {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.effs
	s.effs = nil
	return out
}
