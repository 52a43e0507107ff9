package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"limitdb/engine"
	"limitdb/luavm"
	"limitdb/resp"
)

// mustAOFRedis is a redis-server that appends every write to its incr
// AOF at once (fsync always, no timestamps, no rewrite): the stream the
// effect tests compare limitdb's records with.
func mustAOFRedis(t *testing.T) *Redis {
	t.Helper()
	return mustRedis(t, "--appendonly", "yes", "--appendfsync", "always",
		"--aof-timestamp-enabled", "no", "--auto-aof-rewrite-percentage", "0")
}

// TestEffects compares limitdb's effect stream with Redis 7.0's, command
// by command: every line of the effect scenarios (scenarios/effects/*.txt)
// and of the differential scenarios (scenarios/**.txt) runs on a redis-server
// that writes an append-only file and on an in-process engine recording
// its effects (engine.Ctx.Eff); what each command appended to Redis's
// incr AOF must be what the engine recorded for it. Each command's record
// is also applied to a follower engine (Engine.Apply), whose strict
// digest must then equal the engine's. The rules of the comparison, and
// what is skipped, are in scenarios/README.md ("effects/").
func TestEffects(t *testing.T) {
	r := mustAOFRedis(t)
	aof, err := openAOF(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer aof.f.Close()
	ctl := mustDial(t, r.Addr)
	// only lazy expiry, as in the engine: the active cycle would add DELs
	// at random points of Redis's stream
	if _, err := ctl.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0"); err != nil {
		t.Fatal(err)
	}
	files := append(scenarioFiles(t, "scenarios/effects"), scenarioFiles(t, "scenarios")...)
	total, ran := 0, 0
	seen := map[string]bool{}
	// Redis's Lua generator survives SCRIPT FLUSH (its state is global
	// in the process), so each file's engine starts where the last left
	luaRand := uint64(luavm.Seed48)
	for _, f := range files {
		name := strings.TrimSuffix(f, ".txt")
		t.Run(name, func(t *testing.T) {
			total += runEffectScenario(t, r.Addr, aof, f, readScenario(t, f), seen, &luaRand)
			ran++
		})
	}
	t.Logf("%d commands compared in %d files", total, ran)
	if ran < len(files) {
		return // a subset was asked for
	}
	// every write command of the table that Redis has is compared at
	// least once (the native limiters' effects are tested in engine/,
	// limitdb's settings effects by TestClusterSettings)
	var missing []string
	for _, cmd := range engine.Commands() {
		for _, c := range append([]*engine.Command{cmd}, cmd.Subs...) {
			if c.IsWrite() && !c.Has(engine.FlagConn) && c.Group != "ratelimit" && !strings.HasPrefix(c.Name, "limitdb.") && !seen[c.Name] {
				missing = append(missing, c.Name)
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("write commands never compared: %v", missing)
	}
}

// effectsVerbose (EFFECTS_VERBOSE=1) logs both streams of every command.
var effectsVerbose = os.Getenv("EFFECTS_VERBOSE") != ""

// aofFile follows Redis's incr AOF.
type aofFile struct {
	f   *os.File
	buf []byte
	db  int // the database the AOF has selected
}

func openAOF(dir string) (*aofFile, error) {
	m, _ := filepath.Glob(filepath.Join(dir, "appendonlydir", "*.incr.aof"))
	if len(m) != 1 {
		return nil, fmt.Errorf("want one incr AOF in %s, found %q", dir, m)
	}
	f, err := os.Open(m[0])
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, 2); err != nil {
		return nil, err
	}
	return &aofFile{f: f, db: -1}, nil
}

// effect is one propagated command and the database it ran in.
type effect struct {
	db   int
	argv []string
}

func (e effect) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%d]", e.db)
	for _, a := range e.argv {
		b.WriteByte(' ')
		if a == "" || strings.ContainsAny(a, " \"\r\n") || len(a) > 60 {
			if len(a) > 60 {
				a = a[:57] + "..."
			}
			a = strconv.Quote(a)
		}
		b.WriteString(a)
	}
	return b.String()
}

// read returns the commands Redis appended since the last call (SELECTs
// folded into each command's database; MULTI/EXEC reported by wrapped).
func (a *aofFile) read() (effs []effect, wrapped bool, err error) {
	chunk := make([]byte, 64<<10)
	for {
		n, err := a.f.Read(chunk)
		a.buf = append(a.buf, chunk[:n]...)
		if n == 0 || err != nil {
			break
		}
	}
	cmds, rest, err := splitRESP(a.buf)
	if err != nil {
		return nil, false, err
	}
	a.buf = append(a.buf[:0], rest...)
	for _, argv := range cmds {
		switch strings.ToUpper(argv[0]) {
		case "SELECT":
			a.db, _ = strconv.Atoi(argv[1])
		case "MULTI", "EXEC":
			wrapped = true
		default:
			effs = append(effs, effect{a.db, argv})
		}
	}
	return effs, wrapped, nil
}

// splitRESP parses complete RESP arrays of bulk strings from b.
func splitRESP(b []byte) (cmds [][]string, rest []byte, err error) {
	for len(b) > 0 {
		var argv []string
		p := b
		line := func() (string, bool) {
			i := bytes.Index(p, []byte("\r\n"))
			if i < 0 {
				return "", false
			}
			l := string(p[:i])
			p = p[i+2:]
			return l, true
		}
		h, ok := line()
		if !ok {
			return cmds, b, nil
		}
		if h == "" || h[0] != '*' {
			return nil, nil, fmt.Errorf("AOF: unexpected %q", h)
		}
		n, _ := strconv.Atoi(h[1:])
		complete := true
		for i := 0; i < n; i++ {
			h, ok := line()
			if !ok {
				complete = false
				break
			}
			l, _ := strconv.Atoi(h[1:])
			if len(p) < l+2 {
				complete = false
				break
			}
			argv = append(argv, string(p[:l]))
			p = p[l+2:]
		}
		if !complete {
			return cmds, b, nil
		}
		cmds = append(cmds, argv)
		b = p
	}
	return cmds, nil, nil
}

// engineEffects lists what the engine recorded for one command.
func engineEffects(f *engine.Effects) []effect {
	var out []effect
	db := f.DB
	for _, cmd := range f.Commands() {
		argv := make([]string, len(cmd))
		for i, a := range cmd {
			argv[i] = string(a)
		}
		if strings.EqualFold(argv[0], "select") {
			db, _ = strconv.Atoi(argv[1])
			continue
		}
		out = append(out, effect{db, argv})
	}
	return out
}

// limitdbOnly names the effects Redis never writes: the native limiters'
// RL.SET, the script cache's SCRIPT LOAD / FLUSH and the policy
// registry's LIMITDB.POLICY.
func limitdbOnly(e effect) bool {
	switch strings.ToUpper(e.argv[0]) {
	case "RL.SET", "SCRIPT", "LIMITDB.POLICY":
		return true
	}
	return false
}

// effectScenario is the state of one scenario run.
type effectScenario struct {
	t        *testing.T
	file     string
	e        *engine.Engine
	follower *engine.Engine // applies the engine's records (Engine.Apply)
	c        *engine.Ctx
	eff      *engine.Effects
	aof      *aofFile
	volatile map[dbKey]bool // keys that had a deadline at some point
	// noEffects: the unit's effects are not compared (@noeffects: limitdb
	// records what Redis leaves out on purpose, as redis.set_repl's)
	noEffects bool
}

// effConn is one scenario connection: Redis's and the engine's database.
type effConn struct {
	r  *Conn
	db int
}

func runEffectScenario(t *testing.T, addr string, aof *aofFile, file string, lines []scenarioLine, seen map[string]bool, luaRand *uint64) int {
	if blockingScenario(lines) {
		t.Skip("clients block: TestBlockingEffects compares this file's effects on live servers")
	}
	s := &effectScenario{t: t, file: file, e: engine.New(), follower: engine.New(), eff: engine.NewEffects(), aof: aof, volatile: map[dbKey]bool{}}
	luavm.StateOf(s.e).Rand48 = *luaRand
	defer func() { *luaRand = luavm.StateOf(s.e).Rand48 }()
	s.c = &engine.Ctx{E: s.e, DB: s.e.DBs[0], W: resp.NewWriter(), Eff: s.eff}
	conns := map[string]*effConn{}
	defer func() {
		for _, c := range conns {
			c.r.Close()
		}
	}()
	dial := func() *effConn {
		c := mustDial(t, addr)
		return &effConn{r: c}
	}
	cur := dial()
	conns["default"] = cur
	for _, cmd := range [][]string{{"FLUSHALL"}, {"SCRIPT", "FLUSH"}, {"FUNCTION", "FLUSH"}} {
		if _, err := cur.r.Do(cmd...); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := aof.read(); err != nil {
		t.Fatal(err)
	}
	// parse every line first: a transaction is looked at whole
	type line struct {
		n         int
		args      []string
		mode      string
		tol       int64
		random    bool
		noEffects bool
		sleep     int
		minute    int
		conn      string
		directive bool
	}
	var ls []line
	for _, l := range lines {
		text := l.text
		x := line{n: l.n, mode: "exact"}
		if strings.HasPrefix(text, "@") {
			word, rest, _ := strings.Cut(text, " ")
			switch word {
			case "@proto", "@aclfile":
				continue
			case "@sleep":
				x.sleep, _ = strconv.Atoi(strings.TrimSpace(rest))
				x.directive = true
			case "@minute":
				x.minute, _ = strconv.Atoi(strings.TrimSpace(rest))
				x.directive = true
			case "@conn":
				x.conn = strings.TrimSpace(rest)
				x.directive = true
			case "@sort", "@words", "@acllog":
				x.mode, text = word[1:], rest
			case "@shape", "@nocompare", "@expect":
				// a random reply (SPOP, SRANDMEMBER …): its effects are
				// compared as @random ones
				x.mode, text, x.random = word[1:], rest, true
			case "@tol":
				n, rest2, _ := strings.Cut(rest, " ")
				x.tol, _ = strconv.ParseInt(n, 10, 64)
				x.mode, text = "tol", rest2
			case "@random":
				x.mode, text, x.random = "nocompare", rest, true
			case "@noeffects":
				text, x.noEffects = rest, true
			case "@inmemory":
				text = rest
			default:
				t.Fatalf("%s:%d: unknown directive %s", file, l.n, word)
			}
		}
		if !x.directive {
			args, err := SplitLine(text)
			if err != nil {
				t.Fatalf("%s:%d: %v", file, l.n, err)
			}
			if len(args) == 0 {
				continue
			}
			x.args = args
		}
		ls = append(ls, x)
	}
	compared := 0
	note := func(args []string) {
		compared++
		if cmd := engine.Lookup([]byte(args[0])); cmd != nil {
			seen[cmd.Name] = true
			if len(cmd.Subs) > 0 && len(args) > 1 {
				if sub := cmd.Sub([]byte(args[1])); sub != nil {
					seen[sub.Name] = true
				}
			}
		}
	}
	for i := 0; i < len(ls); i++ {
		x := ls[i]
		switch {
		case x.sleep > 0:
			time.Sleep(time.Duration(x.sleep) * time.Millisecond)
			continue
		case x.minute > 0:
			awayFromMinute(time.Duration(x.minute) * time.Second)
			continue
		case x.conn != "":
			if conns[x.conn] == nil {
				conns[x.conn] = dial()
			}
			cur = conns[x.conn]
			continue
		}
		if strings.EqualFold(x.args[0], "multi") {
			// a transaction is one unit; it runs when every command in it
			// is one the comparison runs (else it is skipped on both
			// sides), up to its EXEC or DISCARD
			j, ok := i+1, true
			for ; j < len(ls); j++ {
				y := ls[j]
				if y.directive {
					ok = false
					continue
				}
				if name := strings.ToLower(y.args[0]); name == "exec" || name == "discard" {
					break
				}
				if cmd := engine.Lookup([]byte(y.args[0])); cmd != nil && cmd.Has(engine.FlagConn) && cmd.Name != "select" {
					ok = false
				}
			}
			if j == len(ls) || len(ls[j].args) != 1 {
				ok = false // no end, or an EXEC that is itself refused
			}
			if ok {
				var q [][]string
				random := false
				for _, y := range ls[i+1 : j] {
					q = append(q, y.args)
					random = random || y.random
				}
				s.transaction(x.n, cur, q, ls[j].args, ls[j].mode, random)
				for _, a := range q {
					note(a)
				}
			}
			i = j
			continue
		}
		if !s.runnable(x.args) {
			continue
		}
		s.noEffects = x.noEffects
		s.step(x.n, cur, x.args, x.mode, x.tol, x.random)
		s.noEffects = false
		note(x.args)
	}
	return compared
}

// transaction runs MULTI, the queued commands and EXEC (or DISCARD) on
// both sides; the engine runs the queue as one unit, as the door does.
func (s *effectScenario) transaction(n int, conn *effConn, queue [][]string, end []string, mode string, random bool) {
	t := s.t
	where := fmt.Sprintf("%s:%d: MULTI … %s", s.file, n, strings.Join(end, " "))
	if _, err := conn.r.Do("MULTI"); err != nil {
		t.Fatal(err)
	}
	c := s.c
	failed := false
	for _, args := range queue {
		ref, err := conn.r.Do(args...)
		if err != nil {
			t.Fatalf("%s: redis: %v", where, err)
		}
		// queue-time checks: an unknown command or a wrong arity fails
		// the transaction
		c.W.Reset()
		argv := toArgv(args)
		if strings.EqualFold(args[0], "select") || c.Resolve(argv) != nil {
			c.W.Status("QUEUED")
		} else {
			failed = true
		}
		if !bytes.Equal(ref, c.W.B) && !bytes.HasPrefix(ref, []byte("-")) {
			t.Errorf("%s: queueing %v: redis %q, limitdb %q", where, args, ref, c.W.B)
		}
	}
	ref, err := conn.r.Do(end...)
	if err != nil {
		t.Fatalf("%s: redis: %v", where, err)
	}
	s.begin()
	switch {
	case strings.EqualFold(end[0], "discard"):
		c.W.OK()
	case failed:
		c.W.Error("EXECABORT Transaction discarded because of previous errors.")
	default:
		c.W.Array(len(queue))
		c.InMulti = true
		for _, args := range queue {
			s.exec(conn, args)
		}
		c.InMulti = false
	}
	s.finish(where, conn, ref, mode, 0, random)
}

// runnable reports whether a scenario command runs in the comparison:
// engine commands do; connection commands (CLIENT, CONFIG, DEBUG, WATCH,
// HELLO …) and commands limitdb lacks are skipped on both sides, except
// SELECT (each connection's database) and CONFIG SET of the encoding
// thresholds, which the engine holds (Engine.Enc).
func (s *effectScenario) runnable(args []string) bool {
	cmd := engine.Lookup([]byte(args[0]))
	switch {
	case cmd == nil:
		return false
	case cmd.Name == "select":
		return true
	case cmd.Name == "config":
		if len(args) < 4 || len(args)%2 != 0 || !strings.EqualFold(args[1], "set") {
			return false
		}
		probe := engine.New()
		for i := 2; i+1 < len(args); i += 2 {
			v, err := strconv.ParseInt(args[i+1], 10, 64)
			if err != nil || !probe.SetEncodingLimit(strings.ToLower(args[i]), v) {
				return false
			}
		}
		return true
	}
	return !cmd.Has(engine.FlagConn)
}

// step runs one command on both sides and compares replies and effects.
func (s *effectScenario) step(n int, conn *effConn, args []string, mode string, tol int64, random bool) {
	where := fmt.Sprintf("%s:%d: %s", s.file, n, strings.Join(args, " "))
	ref, err := conn.r.Do(args...)
	if err != nil {
		s.t.Fatalf("%s: redis: %v", where, err)
	}
	s.begin()
	s.exec(conn, args)
	s.finish(where, conn, ref, mode, tol, random)
}

func toArgv(args []string) [][]byte {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	return argv
}

// begin starts a unit on the engine: its time, an empty reply and effects.
func (s *effectScenario) begin() {
	c := s.c
	c.Now = time.Now().UnixMilli()
	s.e.ClockMs = c.Now
	c.W.Reset()
	s.eff.Reset()
}

// exec runs one command on the engine, its reply appended to c.W.
func (s *effectScenario) exec(conn *effConn, args []string) {
	c := s.c
	c.DB = s.e.DBs[conn.db]
	argv := toArgv(args)
	switch cmd := engine.Lookup(argv[0]); {
	case cmd != nil && cmd.Name == "select":
		id, err := strconv.Atoi(args[1])
		if len(args) != 2 || err != nil || id < 0 || id >= engine.NumDBs {
			c.W.Error("ERR DB index is out of range")
		} else {
			conn.db = id
			c.W.OK()
		}
	case cmd != nil && cmd.Name == "config":
		for i := 2; i+1 < len(args); i += 2 {
			v, _ := strconv.ParseInt(args[i+1], 10, 64)
			s.e.SetEncodingLimit(strings.ToLower(args[i]), v)
			s.follower.SetEncodingLimit(strings.ToLower(args[i]), v)
		}
		c.W.OK()
	default:
		if cmd := c.Resolve(argv); cmd != nil {
			c.Call(cmd, argv)
		}
	}
}

// finish compares the unit's reply and effects with Redis's (reply ref,
// what the AOF gained), applies its record to the follower and, after a
// random unit, brings the engine to Redis's outcome.
func (s *effectScenario) finish(where string, conn *effConn, ref []byte, mode string, tol int64, random bool) {
	t := s.t
	c := s.c
	redisEffs, wrapped, err := s.aof.read()
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if msg := compareReplies(mode, tol, ref, c.W.B); msg != "" && !bytes.HasPrefix(ref, []byte("-")) {
		// the reply only shows that both sides hold the same data; an
		// error text may differ where the engine lacks the server's part
		t.Errorf("%s: %s (the sides diverged)\n  redis:   %q\n  limitdb: %q", where, msg, ref, c.W.B)
	}
	limEffs := engineEffects(s.eff)
	if effectsVerbose {
		t.Logf("%s\n  redis:   %v %v\n  limitdb: %v", where, wrapped, redisEffs, limEffs)
	}
	// the record the door would log for this unit; the follower applies
	// it and must then hold the same state
	rec := engine.AppendRecord(nil, s.eff, c.Now)
	_, body, err := engine.ParseRecordHeader(rec)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if s.eff.N > 0 {
		if err := s.follower.Apply(rec); err != nil {
			t.Fatalf("%s: follower: %v", where, err)
		}
		if a, b := s.e.StrictDigest(), s.follower.StrictDigest(); a != b {
			t.Fatalf("%s: the follower's state differs after applying %q", where, rec)
		}
	}
	limWrapped := bytes.HasPrefix(body, []byte("*1\r\n$5\r\nMULTI\r\n"))
	if msg := s.compareEffects(redisEffs, limEffs, wrapped, limWrapped, random); msg != "" && !s.noEffects {
		t.Errorf("%s: %s\n  redis:   %v\n  limitdb: %v", where, msg, redisEffs, limEffs)
	}
	s.noteVolatile(redisEffs)
	s.noteVolatile(limEffs)
	if random {
		// the sides chose differently: the engine takes Redis's outcome
		// for the keys the unit changed, so that what follows stays
		// comparable
		done := map[dbKey]bool{}
		for _, e := range append(redisEffs, limEffs...) {
			if len(e.argv) > 1 && !done[dbKey{e.db, e.argv[1]}] {
				done[dbKey{e.db, e.argv[1]}] = true
				s.resync(conn, e.db, e.argv[1])
			}
		}
		if _, _, err := s.aof.read(); err != nil {
			t.Fatal(err)
		}
	}
}

// resync makes key of database db in the engine what it is in Redis
// (value and deadline), reading it on conn (left on its database); the
// follower applies the same change.
func (s *effectScenario) resync(conn *effConn, db int, key string) {
	t := s.t
	do := func(args ...string) []byte {
		r, err := conn.r.Do(args...)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	list := func(args ...string) []string {
		cmds, _, err := splitRESP(do(args...))
		if err != nil || len(cmds) > 1 {
			t.Fatalf("resync %s: %v", key, err)
		}
		if len(cmds) == 0 {
			return nil
		}
		return cmds[0]
	}
	do("SELECT", strconv.Itoa(db))
	defer do("SELECT", strconv.Itoa(conn.db))
	typ := strings.TrimSpace(string(do("TYPE", key))[1:])
	var cmds [][]string
	cmds = append(cmds, []string{"DEL", key})
	switch typ {
	case "string":
		v := list("MGET", key)
		cmds = append(cmds, []string{"SET", key, v[0]})
	case "set":
		cmds = append(cmds, append([]string{"SADD", key}, list("SMEMBERS", key)...))
	case "list":
		cmds = append(cmds, append([]string{"RPUSH", key}, list("LRANGE", key, "0", "-1")...))
	case "hash":
		cmds = append(cmds, append([]string{"HSET", key}, list("HGETALL", key)...))
	case "zset":
		m := list("ZRANGE", key, "0", "-1", "WITHSCORES")
		z := []string{"ZADD", key}
		for i := 0; i+1 < len(m); i += 2 {
			z = append(z, m[i+1], m[i])
		}
		cmds = append(cmds, z)
	}
	if typ != "none" {
		if at, ok := replyInt(do("PEXPIRETIME", key)); ok && at > 0 {
			cmds = append(cmds, []string{"PEXPIREAT", key, strconv.FormatInt(at, 10)})
		}
	}
	// the same commands on the follower, as effects
	eff := engine.NewEffects()
	c := &engine.Ctx{E: s.e, DB: s.e.DBs[db], W: resp.NewWriter(), Now: time.Now().UnixMilli(), Eff: eff}
	for _, cmd := range cmds {
		argv := make([][]byte, len(cmd))
		for i, a := range cmd {
			argv[i] = []byte(a)
		}
		c.Exec(argv)
	}
	if eff.N > 0 {
		if err := s.follower.Apply(engine.AppendRecord(nil, eff, s.e.ClockMs)); err != nil {
			t.Fatalf("resync %s: follower: %v", key, err)
		}
	}
}

// noteVolatile remembers the keys the effects gave a deadline (or moved
// with one), whose DELs by expiry may fall on either side of a command.
func (s *effectScenario) noteVolatile(effs []effect) {
	for _, e := range effs {
		a := e.argv
		switch strings.ToUpper(a[0]) {
		case "SET":
			for _, o := range a[3:] {
				if strings.EqualFold(o, "PXAT") {
					s.volatile[dbKey{e.db, a[1]}] = true
				}
			}
		case "PEXPIREAT", "RL.SET":
			s.volatile[dbKey{e.db, a[1]}] = true
		case "RENAME", "RENAMENX", "COPY":
			if s.isVolatile(e.db, a[1]) {
				s.volatile[dbKey{e.db, a[2]}] = true
			}
		}
	}
}

// dbKey is a key of one database.
type dbKey struct {
	db  int
	key string
}

func (s *effectScenario) isVolatile(db int, key string) bool { return s.volatile[dbKey{db, key}] }

// compareEffects returns "" when the two streams agree: command names
// compared without case, integers that look like unix ms times within
// 2 s, a DEL of a key that had a deadline ignored when the other side
// has none at that point (expiry at a slightly different time),
// limitdb-only effects ignored. With random, only the command names and
// keys are compared (SPOP's members differ).
func (s *effectScenario) compareEffects(ref, got []effect, refWrapped, gotWrapped, random bool) string {
	var lim []effect
	ignored := false
	for _, e := range got {
		if limitdbOnly(e) {
			ignored = true
			continue
		}
		lim = append(lim, e)
	}
	ref = sortDelRuns(ref)
	lim = sortDelRuns(lim)
	i, j := 0, 0
	for i < len(ref) || j < len(lim) {
		if i < len(ref) && j < len(lim) && sameEffect(ref[i], lim[j], random) {
			i, j = i+1, j+1
			continue
		}
		if i < len(ref) && s.expiryDel(ref[i]) {
			i, ignored = i+1, true
			continue
		}
		if j < len(lim) && s.expiryDel(lim[j]) {
			j, ignored = j+1, true
			continue
		}
		if i < len(ref) && j < len(lim) {
			return fmt.Sprintf("effect %d differs", i+1)
		}
		return "effect streams differ in length"
	}
	if refWrapped != gotWrapped && !ignored {
		return fmt.Sprintf("MULTI/EXEC wrapping differs (redis %v, limitdb %v)", refWrapped, gotWrapped)
	}
	return ""
}

// sortDelRuns sorts each run of consecutive one-key DELs: keys reclaimed
// together (SCAN, RANDOMKEY, FLUSH…) come in hash-table order, which is
// each server's own.
func sortDelRuns(effs []effect) []effect {
	out := append([]effect(nil), effs...)
	isDel := func(e effect) bool { return len(e.argv) == 2 && strings.EqualFold(e.argv[0], "DEL") }
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && isDel(out[j]) {
			j++
		}
		if j == i {
			i++
			continue
		}
		sort.Slice(out[i:j], func(a, b int) bool {
			x, y := out[i+a], out[i+b]
			return x.db < y.db || x.db == y.db && x.argv[1] < y.argv[1]
		})
		i = j
	}
	return out
}

func (s *effectScenario) expiryDel(e effect) bool {
	return len(e.argv) == 2 && strings.EqualFold(e.argv[0], "DEL") && s.isVolatile(e.db, e.argv[1])
}

func sameEffect(a, b effect, random bool) bool {
	if a.db != b.db || len(a.argv) != len(b.argv) || !strings.EqualFold(a.argv[0], b.argv[0]) {
		return false
	}
	if random {
		return len(a.argv) < 2 || a.argv[1] == b.argv[1]
	}
	for k := 1; k < len(a.argv); k++ {
		if a.argv[k] != b.argv[k] && !closeTimes(a.argv[k], b.argv[k]) {
			return false
		}
	}
	return true
}

// closeTimes reports whether x and y are unix times of now-ish, both in
// milliseconds or both in seconds, within 2 s of each other (deadlines
// computed from each side's clock, a script that stores TIME's seconds).
func closeTimes(x, y string) bool {
	a, err1 := strconv.ParseInt(x, 10, 64)
	b, err2 := strconv.ParseInt(y, 10, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	for _, unit := range []int64{1, 1000} { // ms, s
		now := time.Now().UnixMilli() / unit
		near := func(v int64) bool { return v > now-365*86400e3/unit && v < now+20*365*86400e3/unit }
		if near(a) && near(b) && a-b <= 2000/unit && b-a <= 2000/unit {
			return true
		}
	}
	return false
}
