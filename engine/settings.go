package engine

import "strconv"

// Cluster-wide settings that are not keys: the ACL (users and their
// rules, requirepass being the default user's password) and the encoding
// thresholds (which decide encodings, and through them reply orders).
// Every node must hold the same, so they change through effects like the
// data: the server, which owns the ACL and CONFIG, records
// LIMITDB.ACL / LIMITDB.CONFIG units through the door whenever they
// change on the executing node; followers apply them and the engine hands
// them to the server through Settings' hooks. Snapshots carry both.

// Settings is the engine's part of the cluster-wide settings.
type Settings struct {
	// ACL is the users in aclfile form (ACL LIST lines); "" until a node
	// published them.
	ACL string
	// OnACL makes the server adopt an ACL applied or restored here.
	OnACL func(text string) error
	// OnConfig tells the server a cluster-wide parameter changed here.
	OnConfig func(name, value string)
}

// SharedParams are the CONFIG parameters that are cluster-wide (the
// encoding thresholds and their ziplist aliases, and proto-max-bulk-len,
// which bounds what string commands may build), with their engine setter.
var SharedParams = map[string]bool{
	"hash-max-listpack-entries": true, "hash-max-ziplist-entries": true,
	"hash-max-listpack-value": true, "hash-max-ziplist-value": true,
	"set-max-intset-entries":    true,
	"zset-max-listpack-entries": true, "zset-max-ziplist-entries": true,
	"zset-max-listpack-value": true, "zset-max-ziplist-value": true,
	"proto-max-bulk-len": true,
	// the executing node raises the events, with the cluster's classes
	"notify-keyspace-events": true,
}

const errSettings = "ERR LIMITDB.CONFIG takes cluster-wide parameters with integer values"

func init() {
	Register(
		&Command{Name: "limitdb.acl", Arity: 2, Flags: "write admin noscript loading stale", Group: "server", Since: "7.0.0",
			Summary: "Replaces the users with the ones given in aclfile form (an effect: how ACL changes replicate).", Run: cmdLimitdbACL},
		&Command{Name: "limitdb.config", Arity: -3, Flags: "write admin noscript loading stale", Group: "server", Since: "7.0.0",
			Summary: "Sets cluster-wide parameters (an effect: how CONFIG SET of encoding thresholds replicates).", Run: cmdLimitdbConfig},
	)
}

// cmdLimitdbACL: LIMITDB.ACL text — the users become text's (the server
// validates it as ACL LOAD does; on error nothing changes).
func cmdLimitdbACL(c *Ctx, argv [][]byte) {
	text := string(argv[1])
	if f := c.E.Settings.OnACL; f != nil {
		if err := f(text); err != nil {
			c.W.Error("ERR " + err.Error())
			return
		}
	}
	c.E.Settings.ACL = text
	c.E.Stats.Dirty++
	c.W.OK()
}

// cmdLimitdbConfig: LIMITDB.CONFIG name value [name value …] — sets
// cluster-wide parameters (SharedParams) to integers, all or none.
func cmdLimitdbConfig(c *Ctx, argv [][]byte) {
	if len(argv)%2 != 1 {
		c.W.Error(ErrSyntax)
		return
	}
	vals := make([]int64, 0, len(argv)/2)
	for i := 1; i < len(argv); i += 2 {
		v, err := strconv.ParseInt(string(argv[i+1]), 10, 64)
		if !SharedParams[string(argv[i])] || err != nil || v < 0 {
			c.W.Error(errSettings)
			return
		}
		vals = append(vals, v)
	}
	for i := 1; i < len(argv); i += 2 {
		name := string(argv[i])
		c.E.SetEncodingLimit(name, vals[i/2])
		if f := c.E.Settings.OnConfig; f != nil {
			f(name, string(argv[i+1]))
		}
	}
	c.E.Stats.Dirty++
	c.W.OK()
}
