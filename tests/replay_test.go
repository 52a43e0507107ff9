package tests

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"limitdb/engine"
	"limitdb/resp"
)

// TestReplay: random units (commands of every type, transactions,
// scripts drawing math.random, SPOP/SRANDMEMBER, expiry as the clock
// moves, the active cycle, eviction, the native limiters) run on engine A
// with effects recorded; each unit's record is applied to engine B with
// Engine.Apply, and after every unit both have the same StrictDigest
// (values, deadlines, limiter state, script cache, clock, encodings).
func TestReplay(t *testing.T) {
	units := 4000
	if testing.Short() {
		units = 800
	}
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { replay(t, seed, units) })
	}
}

// replayer holds the two engines and the generator.
type replayer struct {
	t        *testing.T
	rng      *rand.Rand
	a, b     *engine.Engine
	c        *engine.Ctx
	eff      *engine.Effects
	rec      []byte
	db       int
	now      int64
	lastRec  int64 // ClockMs of the last record B applied
	log      []string
	records  int
	commands map[string]int
}

func replay(t *testing.T, seed uint64, units int) {
	p := &replayer{t: t, rng: rand.New(rand.NewPCG(seed, 7)), a: engine.New(), b: engine.New(),
		eff: engine.NewEffects(), now: 1_790_000_000_000, commands: map[string]int{}}
	p.a.SetEvictPolicy(engine.PolicyAllKeysRandom, 5)
	p.c = &engine.Ctx{E: p.a, W: resp.NewWriter(), Eff: p.eff}
	for u := 0; u < units; u++ {
		p.unit()
		a, b := p.digestA(), p.b.StrictDigest()
		if a != b {
			t.Fatalf("unit %d: digests differ (A %s, B %s); last units:\n%s", u, a.Hex(), b.Hex(), strings.Join(p.log[max(0, len(p.log)-12):], "\n"))
		}
		if u%97 == 96 {
			// a third engine restored from A's snapshot (as a follower
			// installing one) holds the same state
			var buf bytes.Buffer
			snap := p.a.Capture()
			if _, err := snap.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			snap.Release()
			c := engine.New()
			if err := c.LoadSnapshot(&buf); err != nil {
				t.Fatalf("unit %d: loading A's snapshot: %v", u, err)
			}
			if dc, da := c.StrictDigest(), p.a.StrictDigest(); dc != da {
				t.Fatalf("unit %d: the snapshot-restored engine differs (A %s, C %s)", u, da.Hex(), dc.Hex())
			}
		}
	}
	var names []string
	for n := range p.commands {
		names = append(names, n)
	}
	t.Logf("%d units, %d records, %d command kinds", units, p.records, len(names))
}

// digestA is A's StrictDigest with the clock of the last record: a unit
// without effects leaves no record, so B does not learn its time (what
// the door's clock floor needs is the time of what changed the state).
func (p *replayer) digestA() engine.Digest {
	saved := p.a.ClockMs
	p.a.ClockMs = p.lastRec
	d := p.a.StrictDigest()
	p.a.ClockMs = saved
	return d
}

// unit runs one unit on A and applies its record to B.
func (p *replayer) unit() {
	// mostly close together (limiters and short deadlines see partial
	// expiry), sometimes far apart (keys expire)
	if p.rng.IntN(4) == 0 {
		p.now += int64(p.rng.IntN(400))
	} else {
		p.now += int64(p.rng.IntN(8))
	}
	p.a.ClockMs = p.now
	p.c.Now = p.now
	p.eff.Reset()
	var desc []string
	switch r := p.rng.IntN(100); {
	case r < 3:
		n := 0
		for _, db := range p.a.DBs {
			n += p.c.ActiveExpire(db, 4)
		}
		desc = append(desc, fmt.Sprintf("active expire (%d)", n))
	case r < 5:
		p.c.DB = p.a.DBs[p.db]
		_, res := p.c.Evict(1, 1)
		desc = append(desc, fmt.Sprintf("evict (%v)", res))
	case r < 10:
		// a transaction: its commands are one unit
		p.c.InMulti = true
		for i := 0; i < 2+p.rng.IntN(3); i++ {
			desc = append(desc, p.run(p.command()))
		}
		p.c.InMulti = false
	default:
		desc = append(desc, p.run(p.command()))
	}
	line := fmt.Sprintf("t=%d db=%d: %s", p.now, p.db, strings.Join(desc, " ; "))
	if p.eff.N > 0 {
		p.rec = engine.AppendRecord(p.rec[:0], p.eff, p.now)
		if err := p.b.Apply(p.rec); err != nil {
			p.t.Fatalf("%s\n  apply: %v\n  record: %q", line, err, p.rec)
		}
		p.lastRec = p.now
		p.records++
		line += fmt.Sprintf("\n    -> %q", p.eff.B)
	}
	p.log = append(p.log, line)
}

// run executes one command on A (SELECT switches the database, as the
// connection layer does) and describes it with its reply.
func (p *replayer) run(args []string) string {
	p.commands[strings.ToLower(args[0])]++
	if strings.EqualFold(args[0], "select") {
		p.db, _ = strconv.Atoi(args[1])
		return strings.Join(args, " ")
	}
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	c := p.c
	c.DB = p.a.DBs[p.db]
	c.W.Reset()
	if cmd := c.Resolve(argv); cmd != nil {
		c.Call(cmd, argv)
	}
	reply := string(c.W.B)
	if len(reply) > 60 {
		reply = reply[:60] + "…"
	}
	return fmt.Sprintf("%s => %q", strings.Join(args, " "), reply)
}

func (p *replayer) pick(s ...string) string { return s[p.rng.IntN(len(s))] }
func (p *replayer) n(k int) string          { return strconv.Itoa(p.rng.IntN(k)) }

// key draws a key of a family: mostly its own type, sometimes another's.
func (p *replayer) key(family string) string {
	if p.rng.IntN(20) == 0 {
		family = p.pick("s", "l", "h", "t", "z", "r")
	}
	if family == "r" {
		return family + p.n(6) // r0 … r5, one per algorithm
	}
	return family + p.n(4)
}

// ttl draws an expiry option of a few hundred ms, or none.
func (p *replayer) ttl() []string {
	switch p.rng.IntN(6) {
	case 0:
		return []string{"PX", strconv.Itoa(1 + p.rng.IntN(400))}
	case 1:
		return []string{"EX", "1"}
	case 2:
		return []string{"PXAT", strconv.FormatInt(p.now+int64(p.rng.IntN(500))-100, 10)}
	}
	return nil
}

var replayScripts = []string{
	// math.random drives what is written: the effect carries the result
	"redis.call('set', KEYS[1], math.random(1000)); redis.call('sadd', KEYS[2], math.random(8), math.random(8)); return redis.call('spop', KEYS[2])",
	"return redis.call('srandmember', KEYS[1], 3)",
	"redis.call('incr', KEYS[1]); return redis.call('pexpire', KEYS[1], math.random(300))",
	"redis.call('select', 2); redis.call('lpush', KEYS[1], math.random(9)); redis.call('select', 0); return redis.call('rpush', KEYS[1], 'x')",
	"local v = redis.call('get', KEYS[1]); if v then redis.call('hset', KEYS[2], 'f', v) end; return v",
	"return redis.call('rl.allow', KEYS[1], 5, 1000)",
	"redis.call('zadd', KEYS[1], math.random(100), 'm' .. math.random(5)); return redis.call('zpopmin', KEYS[1])",
	"return redis.pcall('incrbyfloat', KEYS[1], '0.5')",
}

// command draws one command.
func (p *replayer) command() []string {
	c := func(a ...string) []string { return a }
	with := func(a []string, b ...string) []string { return append(a, b...) }
	algos := []string{"gcra", "token-bucket", "leaky-bucket", "fixed-window", "sliding-window", "sliding-log"}
	switch p.rng.IntN(62) {
	case 0:
		return with(c("SET", p.key("s"), p.n(100)), p.ttl()...)
	case 1:
		return c("INCRBY", p.key("s"), p.n(10))
	case 2:
		return c("INCRBYFLOAT", p.key("s"), p.pick("1.5", "0.1", "-3"))
	case 3:
		return c("APPEND", p.key("s"), "ab")
	case 4:
		return c("GETEX", p.key("s"), p.pick("EX", "PX", "PERSIST"), "1")[:p.pick2(3, 4)]
	case 5:
		return c("GETDEL", p.key("s"))
	case 6:
		return c("GETSET", p.key("s"), p.n(9))
	case 7:
		return c("SETRANGE", p.key("s"), p.n(5), "xy")
	case 8:
		return c("MSET", p.key("s"), "1", p.key("s"), "2")
	case 9:
		return c("SETBIT", p.key("s"), p.n(20), p.n(2))
	case 10:
		return c(p.pick("EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"), p.key(p.pick("s", "l", "h", "t", "z")), p.pick("1", "0", "300", strconv.FormatInt(p.now/1000+1, 10), strconv.FormatInt(p.now+200, 10)))
	case 11:
		return c("PERSIST", p.key(p.pick("s", "l", "h")))
	case 12:
		return c("LPUSH", p.key("l"), p.n(9), p.n(9))
	case 13:
		return c("RPUSH", p.key("l"), p.n(9))
	case 14:
		return c(p.pick("LPOP", "RPOP"), p.key("l"), p.pick("1", "2"))[:p.pick2(2, 3)]
	case 15:
		return c("LMOVE", p.key("l"), p.key("l"), p.pick("LEFT", "RIGHT"), p.pick("LEFT", "RIGHT"))
	case 16:
		return c("LMPOP", "2", p.key("l"), p.key("l"), p.pick("LEFT", "RIGHT"), "COUNT", p.pick("1", "3"))
	case 17:
		return c("LTRIM", p.key("l"), p.n(3), p.pick("-1", "2", "0"))
	case 18:
		return c("LREM", p.key("l"), p.pick("0", "1", "-1"), p.n(9))
	case 19:
		return c("LINSERT", p.key("l"), p.pick("BEFORE", "AFTER"), p.n(9), "new")
	case 20:
		return c("HSET", p.key("h"), "f"+p.n(5), p.n(9), "g"+p.n(5), p.n(9))
	case 21:
		return c("HINCRBY", p.key("h"), "f"+p.n(5), p.n(5))
	case 22:
		return c("HINCRBYFLOAT", p.key("h"), "f"+p.n(5), p.pick("0.5", "1e3", "-2.25"))
	case 23:
		return c("HDEL", p.key("h"), "f"+p.n(5), "g"+p.n(5))
	case 24:
		return c("SADD", p.key("t"), p.n(20), p.n(20), p.pick("a", "b", "c"))
	case 25:
		return c("SREM", p.key("t"), p.n(20))
	case 26:
		return c("SPOP", p.key("t"))
	case 27:
		return c("SPOP", p.key("t"), p.n(6))
	case 28:
		return c("SRANDMEMBER", p.key("t"), p.pick("2", "-3"))
	case 29:
		return c("SMOVE", p.key("t"), p.key("t"), p.n(20))
	case 30:
		return c(p.pick("SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"), p.key("t"), p.key("t"), p.key("t"))
	case 31:
		return c("ZADD", p.key("z"), p.n(50), "m"+p.n(8), p.n(50), "m"+p.n(8))
	case 32:
		return c("ZINCRBY", p.key("z"), p.pick("1.5", "-1"), "m"+p.n(8))
	case 33:
		return c(p.pick("ZPOPMIN", "ZPOPMAX"), p.key("z"), p.n(3))
	case 34:
		return c("ZMPOP", "2", p.key("z"), p.key("z"), p.pick("MIN", "MAX"), "COUNT", p.pick("1", "2"))
	case 35:
		return c("ZREMRANGEBYSCORE", p.key("z"), "0", p.n(30))
	case 36:
		return c(p.pick("ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"), p.key("z"), "2", p.key("z"), p.key("z"))
	case 37:
		return c("ZRANGESTORE", p.key("z"), p.key("z"), "0", p.n(4))
	case 38:
		return c("DEL", p.key(p.pick("s", "l", "h", "t", "z", "r")), p.key("s"))
	case 39:
		return c(p.pick("RENAME", "RENAMENX"), p.key(p.pick("s", "l", "t")), p.key(p.pick("s", "l", "t")))
	case 40:
		return c("COPY", p.key(p.pick("s", "h", "z", "r")), p.key(p.pick("s", "h", "z", "r")), "DB", p.n(3), "REPLACE")[:p.pick2(3, 6)]
	case 41:
		return c("MOVE", p.key(p.pick("s", "l", "r")), p.n(3))
	case 42:
		return c("SELECT", p.n(3))
	case 43:
		if p.rng.IntN(10) == 0 {
			return c("SWAPDB", p.n(3), p.n(3))
		}
		return c("GET", p.key("s"))
	case 44:
		if p.rng.IntN(20) == 0 {
			return c(p.pick("FLUSHDB", "FLUSHALL"))
		}
		return c("EXISTS", p.key("s"), p.key("l"), p.key("t"))
	case 45, 46:
		// limiter rI uses algorithm I (another one would be refused)
		i := p.rng.IntN(len(algos))
		return c("RL.ALLOW", "r"+strconv.Itoa(i), p.pick("3", "5"), p.pick("50", "500"), "ALGO", algos[i], "COST", p.pick("1", "2"))
	case 47:
		i, j := p.rng.IntN(len(algos)), p.rng.IntN(len(algos))
		return c("RL.ALLOWALL", "2", "r"+strconv.Itoa(i), "4", "80", "r"+strconv.Itoa(j), "6", "100", "ALGO", algos[i])
	case 48:
		return c("RL.REFUND", p.key("r"), p.pick("1", "3"))
	case 49:
		return c("RL.RESET", p.key("r"))
	case 50:
		return c("CL.THROTTLE", "c"+p.n(3), "3", "10", "1", p.pick("1", "2", "0"))
	case 51:
		return c("RL.PEEK", p.key("r"), "5", "1000")
	case 52, 53, 54:
		s := replayScripts[p.rng.IntN(len(replayScripts))]
		return c("EVAL", s, "2", p.key(p.pick("s", "t", "l", "z", "r")), p.key(p.pick("t", "h")))
	case 55:
		return c("SCRIPT", "LOAD", replayScripts[p.rng.IntN(len(replayScripts))])
	case 56:
		if p.rng.IntN(10) == 0 {
			return c("SCRIPT", "FLUSH")
		}
		s := replayScripts[p.rng.IntN(len(replayScripts))]
		return c("EVALSHA", sha1hex(s), "2", p.key("s"), p.key("t"))
	case 57:
		return c("SETEX", p.key("s"), "1", "v")
	case 58:
		return c("PSETEX", p.key("s"), p.n(300), "v")
	case 59, 60:
		// list elements and set members are small numbers, so "s*" and
		// "h*->f<n>" find string keys and hash fields (some expiring)
		a := c(p.pick("SORT", "SORT_RO"), p.key(p.pick("l", "t", "z")))
		if p.rng.IntN(2) == 0 {
			a = with(a, "BY", p.pick("s*", "nosort", "h*->f1", "x"))
		}
		if p.rng.IntN(3) == 0 {
			a = with(a, "LIMIT", p.n(3), p.pick("1", "2", "-1"))
		}
		if p.rng.IntN(3) == 0 {
			a = with(a, "GET", p.pick("#", "s*", "h*->g2"))
		}
		if p.rng.IntN(2) == 0 {
			a = with(a, p.pick("ALPHA", "DESC"))
		}
		if a[0] == "SORT" && p.rng.IntN(4) != 0 {
			a = with(a, "STORE", p.key("l"))
		}
		return a
	default:
		return c(p.pick("HGETALL", "SMEMBERS", "TTL", "TYPE", "RL.INFO"), p.key(p.pick("h", "t", "l", "z", "s", "r")))
	}
}

// pick2 returns a or b.
func (p *replayer) pick2(a, b int) int {
	if p.rng.IntN(2) == 0 {
		return a
	}
	return b
}
