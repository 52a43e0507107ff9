package engine

import (
	"strconv"

	"limitdb/resp"
)

// Pub/Sub and keyspace notifications, engine side. The engine stays pure:
// it delivers nothing itself. PUBLISH and every keyspace event a command
// raises go to the Ctx's Publisher, which the server implements
// (server/pubsub.go): it finds the subscribers, delivers when the unit
// ends and fans the message out to the other nodes of a cluster. A Ctx
// without one (followers and recovery applying effects, tests) raises
// nothing, which is what "followers apply effects silently" means.

// Publisher receives what the commands run with a Ctx publish.
type Publisher interface {
	// Publish sends message on channel and returns the number of this
	// node's receivers, PUBLISH's reply.
	Publish(channel, message []byte, f PubFlags) int
	// Introspect answers PUBSUB CHANNELS, NUMPAT, NUMSUB, SHARDCHANNELS
	// and SHARDNUMSUB (argv[1]) from this node's subscriptions.
	Introspect(argv [][]byte, w *resp.Writer)
}

// PubFlags describe a message for its Publisher.
type PubFlags uint8

const (
	// PubShard: a shard channel (SPUBLISH), which patterns never match.
	PubShard PubFlags = 1 << iota
	// PubAfterWrite: the unit changed state before publishing (MULTI,
	// a script), so the message may reveal those changes.
	PubAfterWrite
	// PubEvent: a keyspace event, which reveals its unit's change.
	PubEvent
)

// pubFlags are the flags of a PUBLISH run with c.
func (c *Ctx) pubFlags(f PubFlags) PubFlags {
	if c.Eff != nil && c.Eff.N > 0 {
		f |= PubAfterWrite
	}
	return f
}

// Notification classes: Redis 7.0's NOTIFY_* bits (server.h), the letters
// of notify-keyspace-events. NotifyRatelimit is limitdb's own ('r'): the
// native limiter commands' events. It is not part of 'A', so that every
// value Redis accepts means the same here (and prints the same), and
// because a limiter event per RL.ALLOW is a flood nobody should get by
// asking for "everything".
const (
	NotifyKeyspace  = 1 << 0  // K
	NotifyKeyevent  = 1 << 1  // E
	NotifyGeneric   = 1 << 2  // g
	NotifyString    = 1 << 3  // $
	NotifyList      = 1 << 4  // l
	NotifySet       = 1 << 5  // s
	NotifyHash      = 1 << 6  // h
	NotifyZSet      = 1 << 7  // z
	NotifyExpired   = 1 << 8  // x
	NotifyEvicted   = 1 << 9  // e
	NotifyStream    = 1 << 10 // t
	NotifyKeyMiss   = 1 << 11 // m (not in A, as in Redis)
	NotifyModule    = 1 << 13 // d
	NotifyNew       = 1 << 14 // n (not in A, as in Redis)
	NotifyRatelimit = 1 << 20 // r (limitdb)

	NotifyAll = NotifyGeneric | NotifyString | NotifyList | NotifySet | NotifyHash |
		NotifyZSet | NotifyExpired | NotifyEvicted | NotifyStream | NotifyModule
)

// ParseNotifyFlags is Redis's keyspaceEventsStringToFlags plus 'r'; ok is
// false when a character names no class.
func ParseNotifyFlags(s string) (flags int, ok bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 'A':
			flags |= NotifyAll
		case 'g':
			flags |= NotifyGeneric
		case '$':
			flags |= NotifyString
		case 'l':
			flags |= NotifyList
		case 's':
			flags |= NotifySet
		case 'h':
			flags |= NotifyHash
		case 'z':
			flags |= NotifyZSet
		case 'x':
			flags |= NotifyExpired
		case 'e':
			flags |= NotifyEvicted
		case 'K':
			flags |= NotifyKeyspace
		case 'E':
			flags |= NotifyKeyevent
		case 't':
			flags |= NotifyStream
		case 'm':
			flags |= NotifyKeyMiss
		case 'd':
			flags |= NotifyModule
		case 'n':
			flags |= NotifyNew
		case 'r':
			flags |= NotifyRatelimit
		default:
			return 0, false
		}
	}
	return flags, true
}

// NotifyFlagsString is Redis's keyspaceEventsFlagsToString, with 'r' after
// the classes. Like Redis's, it drops 'n' when 'A' is printed.
func NotifyFlagsString(flags int) string {
	var b []byte
	if flags&NotifyAll == NotifyAll {
		b = append(b, 'A')
		if flags&NotifyRatelimit != 0 {
			b = append(b, 'r')
		}
	} else {
		for _, f := range []struct {
			bit int
			c   byte
		}{{NotifyGeneric, 'g'}, {NotifyString, '$'}, {NotifyList, 'l'}, {NotifySet, 's'},
			{NotifyHash, 'h'}, {NotifyZSet, 'z'}, {NotifyExpired, 'x'}, {NotifyEvicted, 'e'},
			{NotifyStream, 't'}, {NotifyModule, 'd'}, {NotifyNew, 'n'}, {NotifyRatelimit, 'r'}} {
			if flags&f.bit != 0 {
				b = append(b, f.c)
			}
		}
	}
	if flags&NotifyKeyspace != 0 {
		b = append(b, 'K')
	}
	if flags&NotifyKeyevent != 0 {
		b = append(b, 'E')
	}
	if flags&NotifyKeyMiss != 0 {
		b = append(b, 'm')
	}
	return string(b)
}

// PUBLISH and SPUBLISH are engine commands so that MULTI and scripts
// can run them. Like Redis they are may_replicate, which read-only
// scripts refuse; a follower does not forward them (server.route): a
// message is not state, it is published where it is sent.
func init() {
	Register(
		&Command{Name: "publish", Arity: 3, Flags: "pubsub loading stale fast may_replicate", Group: "pubsub", Since: "2.0.0",
			Summary: "Posts a message to a channel.", Run: cmdPublish},
		&Command{Name: "spublish", Arity: 3, Flags: "pubsub loading stale fast may_replicate", FirstKey: 1, LastKey: 1, Step: 1, Group: "pubsub", Since: "7.0.0",
			Summary: "Post a message to a shard channel", Run: cmdSPublish},
		&Command{Name: "pubsub", Arity: -2, Group: "pubsub", Since: "2.8.0", Summary: "A container for Pub/Sub commands.", Subs: []*Command{
			{Name: "channels", Arity: -2, Flags: "pubsub loading stale", Group: "pubsub", Since: "2.8.0", Summary: "Returns the active channels.", Run: cmdPubsubIntrospect},
			{Name: "numpat", Arity: 2, Flags: "pubsub loading stale", Group: "pubsub", Since: "2.8.0", Summary: "Returns a count of unique pattern subscriptions.", Run: cmdPubsubIntrospect},
			{Name: "numsub", Arity: -2, Flags: "pubsub loading stale", Group: "pubsub", Since: "2.8.0", Summary: "Returns a count of subscribers to channels.", Run: cmdPubsubIntrospect},
			{Name: "shardchannels", Arity: -2, Flags: "pubsub loading stale", Group: "pubsub", Since: "7.0.0", Summary: "Returns the active shard channels.", Run: cmdPubsubIntrospect},
			{Name: "shardnumsub", Arity: -2, Flags: "pubsub loading stale", Group: "pubsub", Since: "7.0.0", Summary: "Returns the count of subscribers of shard channels.", Run: cmdPubsubIntrospect},
			{Name: "help", Arity: 2, Flags: "loading stale", Group: "pubsub", Since: "6.2.0", Summary: "Returns helpful text about the different subcommands.", Run: cmdPubsubHelp},
		}},
	)
}

// cmdPubsubIntrospect: PUBSUB CHANNELS|NUMPAT|NUMSUB|SHARDCHANNELS|
// SHARDNUMSUB — answered by the node's Publisher (scripts may call them,
// as in Redis); without one there are no subscribers.
func cmdPubsubIntrospect(c *Ctx, argv [][]byte) {
	if c.Pub != nil {
		c.Pub.Introspect(argv, c.W)
		return
	}
	switch {
	case EqualFold(argv[1], "numpat"):
		c.W.Int(0)
	case EqualFold(argv[1], "numsub") || EqualFold(argv[1], "shardnumsub"):
		c.W.Array(2 * (len(argv) - 2))
		for _, ch := range argv[2:] {
			c.W.Bulk(ch)
			c.W.Int(0)
		}
	default:
		c.W.EmptyArray()
	}
}

// cmdPubsubHelp: PUBSUB HELP — Redis 7.0.15's text.
func cmdPubsubHelp(c *Ctx, argv [][]byte) {
	lines := []string{
		"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"CHANNELS [<pattern>]",
		"    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT",
		"    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]",
		"    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
		"SHARDCHANNELS [<pattern>]",
		"    Return the currently active shard level channels matching a <pattern> (default: '*').",
		"SHARDNUMSUB [<shardchannel> ...]",
		"    Return the number of subscribers for the specified shard level channel(s)",
		"HELP",
		"    Prints this help.",
	}
	c.W.Array(len(lines))
	for _, l := range lines {
		c.W.Status(l)
	}
}

// cmdPublish: PUBLISH channel message — the number of this node's
// subscribers that received it (a cluster's other nodes are not counted,
// as in Redis Cluster). A message is not state: nothing is recorded.
func cmdPublish(c *Ctx, argv [][]byte) {
	n := 0
	if c.Pub != nil {
		n = c.Pub.Publish(argv[1], argv[2], c.pubFlags(0))
	}
	c.W.Int(int64(n))
}

// cmdSPublish: SPUBLISH shardchannel message — PUBLISH for shard channels
// (a limitdb cluster is one shard: every node has every channel).
func cmdSPublish(c *Ctx, argv [][]byte) {
	n := 0
	if c.Pub != nil {
		n = c.Pub.Publish(argv[1], argv[2], c.pubFlags(PubShard))
	}
	c.W.Int(int64(n))
}

// notify raises a keyspace event in the current database, as Redis's
// notifyKeyspaceEvent(class, event, key, db->id). With notifications off
// for the class it costs this one test of the engine's flags.
func (c *Ctx) notify(class int, event string, key []byte) {
	if c.E.Notify&class != 0 {
		c.notifyBytes(class, event, key)
	}
}

// notifyBytes is notify's slow path (kept out of line so that notify is
// inlined: one load and one test when the class is off).
func (c *Ctx) notifyBytes(class int, event string, key []byte) {
	c.notifyIn(c.DB, class, event, bstr(key))
}

// notifyKey is notify with a string key in db.
func (c *Ctx) notifyKey(db *DB, class int, event string, key string) {
	if c.E.Notify&class != 0 {
		c.notifyIn(db, class, event, key)
	}
}

// notifyIn publishes the event on __keyspace@<db>__:<key> (K) and
// __keyevent@<db>__:<event> (E), in that order, as Redis does.
func (c *Ctx) notifyIn(db *DB, class int, event, key string) {
	if c.Pub == nil || c.E.Notify&(NotifyKeyspace|NotifyKeyevent) == 0 {
		return
	}
	b := c.E.notifyBuf[:0]
	if c.E.Notify&NotifyKeyspace != 0 {
		b = c.publishEvent(b, "__keyspace@", db, key, event)
	}
	if c.E.Notify&NotifyKeyevent != 0 {
		b = c.publishEvent(b, "__keyevent@", db, event, key)
	}
	if cap(b) <= 4096 {
		c.E.notifyBuf = b[:0]
	}
}

// publishEvent publishes message on the channel <prefix><db>__:<name>,
// both built in b (the engine's notifyBuf, reused), which it returns.
func (c *Ctx) publishEvent(b []byte, prefix string, db *DB, name, message string) []byte {
	b = append(b[:0], prefix...)
	b = strconv.AppendInt(b, int64(db.ID), 10)
	b = append(b, "__:"...)
	b = append(b, name...)
	n := len(b)
	b = append(b, message...)
	c.Pub.Publish(b[:n], b[n:], PubEvent)
	return b
}
