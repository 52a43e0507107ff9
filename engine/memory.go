package engine

import "runtime/debug"

// MEMORY: Redis 7.0's memory introspection container. USAGE reports what
// maxmemory accounting charges a key (entry.memUsage: calibrated against
// Go's heap, not Redis's jemalloc sizes, so the numbers differ from
// Redis's); SAMPLES is validated as Redis does but every key is measured
// whole. STATS is not implemented.

var memoryHelp = []string{
	"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DOCTOR",
	"    Return memory problems reports.",
	"MALLOC-STATS",
	"    Return internal statistics report from the memory allocator.",
	"PURGE",
	"    Attempt to purge dirty pages for reclamation by the allocator.",
	"USAGE <key> [SAMPLES <count>]",
	"    Return memory in bytes used by <key> and its value. Nested values are",
	"    sampled up to <count> times (default: 5, 0 means sample all).",
	"HELP",
	"    Prints this help.",
}

func init() {
	sub := func(name string, arity int, flags, summary string, fn func(*Ctx, [][]byte)) *Command {
		c := &Command{Name: name, Arity: arity, Flags: flags, Group: "server", Since: "4.0.0", Summary: summary, Run: fn}
		if name == "usage" {
			c.FirstKey, c.LastKey, c.Step = 2, 2, 1
		}
		return c
	}
	Register(&Command{
		Name: "memory", Arity: -2, Group: "server", Since: "4.0.0",
		Summary: "A container for memory diagnostics commands",
		Subs: []*Command{
			sub("usage", -3, "readonly", "Estimate the memory usage of a key", cmdMemoryUsage),
			sub("doctor", 2, "", "Outputs memory problems report", cmdMemoryDoctor),
			sub("malloc-stats", 2, "", "Show allocator internal stats", cmdMemoryMallocStats),
			sub("purge", 2, "", "Ask the allocator to release memory", cmdMemoryPurge),
			sub("help", 2, "loading stale", "Show helpful text about the different subcommands", func(c *Ctx, _ [][]byte) { writeHelp(c.W, memoryHelp) }),
		},
	})
}

// cmdMemoryUsage: MEMORY USAGE key [SAMPLES count] — bytes, or null for a
// missing key. As Redis, the key is looked up without expiring it.
func cmdMemoryUsage(c *Ctx, argv [][]byte) {
	for j := 3; j < len(argv); j++ {
		if !EqualFold(argv[j], "samples") || j+1 >= len(argv) {
			c.W.Error(ErrSyntax)
			return
		}
		n, ok := ParseIntB(argv[j+1])
		if !ok {
			c.W.Error(ErrNotInt)
			return
		}
		if n < 0 {
			c.W.Error(ErrSyntax)
			return
		}
		j++
	}
	e := c.DB.dict.find(bstr(argv[2]))
	if e == nil {
		c.W.Null()
		return
	}
	c.W.Int(e.memUsage())
}

func cmdMemoryDoctor(c *Ctx, argv [][]byte) {
	c.W.Verbatim("Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n")
}

func cmdMemoryMallocStats(c *Ctx, argv [][]byte) {
	c.W.BulkString("Stats not supported for the current allocator") // Redis built without jemalloc
}

// cmdMemoryPurge returns freed memory to the OS, as jemalloc's purge does.
func cmdMemoryPurge(c *Ctx, argv [][]byte) {
	debug.FreeOSMemory()
	c.W.OK()
}
