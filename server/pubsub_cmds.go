package server

import (
	"sort"
	"strconv"
	"strings"

	"limitdb/engine"
	"limitdb/resp"
)

// The Pub/Sub commands (Redis 7.0.15's pubsub.c) and CLIENT REPLY, whose
// silencing spares pushes. Delivery is pubsub.go's; PUBLISH, SPUBLISH and
// PUBSUB are engine commands (engine/notify.go) so that scripts can run
// them; PUBSUB's answers come from here (Introspect).

func init() {
	reg := func(name string, arity int, since, summary string, h connHandler) {
		registerConn(&engine.Command{Name: name, Arity: arity, Flags: "pubsub noscript loading stale", Group: "pubsub", Since: since, Summary: summary}, h)
	}
	reg("subscribe", -2, "2.0.0", "Listens for messages published to channels.", cmdSubscribe)
	reg("unsubscribe", -1, "2.0.0", "Stops listening to messages posted to channels.", cmdUnsubscribe)
	reg("psubscribe", -2, "2.0.0", "Listens for messages published to channels that match one or more patterns.", cmdPSubscribe)
	reg("punsubscribe", -1, "2.0.0", "Stops listening to messages published to channels that match one or more patterns.", cmdPUnsubscribe)
	registerConn(&engine.Command{Name: "ssubscribe", Arity: -2, Flags: "pubsub noscript loading stale", FirstKey: 1, LastKey: -1, Step: 1, Group: "pubsub", Since: "7.0.0", Summary: "Listens for messages published to shard channels."}, cmdSSubscribe)
	registerConn(&engine.Command{Name: "sunsubscribe", Arity: -1, Flags: "pubsub noscript loading stale", FirstKey: 1, LastKey: -1, Step: 1, Group: "pubsub", Since: "7.0.0", Summary: "Stops listening to messages posted to shard channels."}, cmdSUnsubscribe)
}

// errSSubscribeMulti is Redis 7.0.15's refusal of SSUBSCRIBE inside MULTI
// (pubsub.c).
const errSSubscribeMulti = "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client"

// errSubscribeForwarded refuses a subscription inside a MULTI block sent
// to a cluster follower: the block runs on the leader, where the client
// has no connection to push messages to (limitdb's own text).
const errSubscribeForwarded = "ERR limitdb: (P|S)SUBSCRIBE inside MULTI cannot run on a cluster follower (the block runs on the leader); subscribe outside MULTI"

// forwardedSubscribe answers the subscribe commands of a follower's
// client run on the leader (no connection) with errSubscribeForwarded.
func forwardedSubscribe(cl *client) bool {
	if cl.connless() {
		cl.w.Error(errSubscribeForwarded)
		return true
	}
	return false
}

// errSubscribedOnly is the refusal of any other command to a RESP2 client
// with subscriptions (server.c processCommand).
func errSubscribedOnly(cmd *engine.Command) string {
	return "ERR Can't execute '" + cmd.Name + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
}

// allowedSubscribed names the commands a RESP2 client may send while
// subscribed (RESP3 clients may send any).
func allowedSubscribed(cmd *engine.Command) bool {
	switch cmd.Name {
	case "ping", "subscribe", "ssubscribe", "unsubscribe", "sunsubscribe", "psubscribe", "punsubscribe", "quit", "reset":
		return true
	}
	return false
}

// Pushes to the client itself: the confirmations of (un)subscribing.

// pushCount appends "*3 kind name :count" (RESP3: '>'); a nil name is
// the null of UNSUBSCRIBE without subscriptions.
func (cl *client) pushCount(kind string, name []byte, null bool, count int) {
	out := cl.selfOut()
	b := *out
	if cl.w.Proto >= 3 {
		b = append(b, ">3\r\n"...)
	} else {
		b = append(b, "*3\r\n"...)
	}
	b = appendBulkString(b, kind)
	switch {
	case !null:
		b = appendBulk(b, name)
	case cl.w.Proto >= 3:
		b = append(b, "_\r\n"...)
	default:
		b = append(b, "$-1\r\n"...)
	}
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(count), 10)
	*out = append(b, '\r', '\n')
}

func (cl *client) subCount() int {
	if cl.ps == nil {
		return 0
	}
	return cl.ps.subscriptions()
}

func (cl *client) shardCount() int {
	if cl.ps == nil {
		return 0
	}
	return len(cl.ps.shard)
}

// cmdSubscribe: SUBSCRIBE channel [channel …] — one "subscribe" push per
// channel with the client's count of channels and patterns.
func cmdSubscribe(s *Server, cl *client, argv [][]byte) {
	if forwardedSubscribe(cl) {
		return
	}
	for _, ch := range argv[1:] {
		s.subscribe(cl, string(ch), false)
		cl.pushCount("subscribe", ch, false, cl.subCount())
	}
}

// cmdUnsubscribe: UNSUBSCRIBE [channel …] — one "unsubscribe" push per
// channel (every subscribed one without arguments, in subscription
// order; a null channel when there was none).
func cmdUnsubscribe(s *Server, cl *client, argv [][]byte) {
	if len(argv) > 1 {
		for _, ch := range argv[1:] {
			s.unsubscribe(cl, string(ch), false)
			cl.pushCount("unsubscribe", ch, false, cl.subCount())
		}
		return
	}
	var chans []string
	if cl.ps != nil {
		chans = channelsOf(cl.ps.chans)
	}
	for _, ch := range chans {
		s.unsubscribe(cl, ch, false)
		cl.pushCount("unsubscribe", []byte(ch), false, cl.subCount())
	}
	if len(chans) == 0 {
		cl.pushCount("unsubscribe", nil, true, cl.subCount())
	}
}

// cmdPSubscribe: PSUBSCRIBE pattern [pattern …] — "psubscribe" pushes.
func cmdPSubscribe(s *Server, cl *client, argv [][]byte) {
	if forwardedSubscribe(cl) {
		return
	}
	for _, p := range argv[1:] {
		s.psubscribe(cl, string(p))
		cl.pushCount("psubscribe", p, false, cl.subCount())
	}
}

// cmdPUnsubscribe: PUNSUBSCRIBE [pattern …] — "punsubscribe" pushes;
// without arguments every pattern in subscription order (Redis's list).
func cmdPUnsubscribe(s *Server, cl *client, argv [][]byte) {
	if len(argv) > 1 {
		for _, p := range argv[1:] {
			s.punsubscribe(cl, string(p))
			cl.pushCount("punsubscribe", p, false, cl.subCount())
		}
		return
	}
	n := 0
	for cl.ps != nil && len(cl.ps.pats) > 0 {
		p := cl.ps.pats[0]
		s.punsubscribe(cl, p)
		cl.pushCount("punsubscribe", []byte(p), false, cl.subCount())
		n++
	}
	if n == 0 {
		cl.pushCount("punsubscribe", nil, true, cl.subCount())
	}
}

// cmdSSubscribe: SSUBSCRIBE shardchannel [shardchannel …] — "ssubscribe"
// pushes with the count of shard channels. Refused inside MULTI (Redis's
// deny-blocking rule, which SUBSCRIBE escapes there). A limitdb cluster
// is a single shard: every node has every shard channel.
func cmdSSubscribe(s *Server, cl *client, argv [][]byte) {
	if cl.ctx.InMulti {
		cl.w.Error(errSSubscribeMulti)
		return
	}
	if forwardedSubscribe(cl) {
		return
	}
	for _, ch := range argv[1:] {
		s.subscribe(cl, string(ch), true)
		cl.pushCount("ssubscribe", ch, false, cl.shardCount())
	}
}

// cmdSUnsubscribe: SUNSUBSCRIBE [shardchannel …].
func cmdSUnsubscribe(s *Server, cl *client, argv [][]byte) {
	if len(argv) > 1 {
		for _, ch := range argv[1:] {
			s.unsubscribe(cl, string(ch), true)
			cl.pushCount("sunsubscribe", ch, false, cl.shardCount())
		}
		return
	}
	var chans []string
	if cl.ps != nil {
		chans = channelsOf(cl.ps.shard)
	}
	for _, ch := range chans {
		s.unsubscribe(cl, ch, true)
		cl.pushCount("sunsubscribe", []byte(ch), false, cl.shardCount())
	}
	if len(chans) == 0 {
		cl.pushCount("sunsubscribe", nil, true, cl.shardCount())
	}
}

// Introspect implements engine.Publisher for PUBSUB's subcommands (the
// engine's command, so that scripts may call it) from this node's
// subscriptions; a cluster's other nodes are not counted.
func (cl *client) Introspect(argv [][]byte, w *resp.Writer) { cl.s.introspect(argv, w) }

func (p nodePub) Introspect(argv [][]byte, w *resp.Writer) { p.s.introspect(argv, w) }

func (s *Server) introspect(argv [][]byte, w *resp.Writer) {
	switch strings.ToLower(string(argv[1])) {
	case "channels":
		channelList(w, argv, s.ps.channels)
	case "shardchannels":
		channelList(w, argv, s.ps.shard)
	case "numpat":
		w.Int(int64(len(s.ps.patterns)))
	case "numsub":
		numsub(w, argv, s.ps.channels)
	case "shardnumsub":
		numsub(w, argv, s.ps.shard)
	}
}

// channelList replies the channels of reg matching pattern (all without
// one), sorted (Redis's order is its hash table's).
func channelList(w *resp.Writer, argv [][]byte, reg map[string][]*client) {
	if len(argv) > 3 {
		w.Error(subSyntaxErr(argv))
		return
	}
	var out []string
	for ch := range reg {
		if len(argv) == 2 || engine.Match(string(argv[2]), ch, false) {
			out = append(out, ch)
		}
	}
	sort.Strings(out)
	w.Array(len(out))
	for _, ch := range out {
		w.BulkString(ch)
	}
}

// numsub replies channel, count pairs (a flat array, also in RESP3);
// pattern subscribers are not counted.
func numsub(w *resp.Writer, argv [][]byte, reg map[string][]*client) {
	w.Array(2 * (len(argv) - 2))
	for _, ch := range argv[2:] {
		w.Bulk(ch)
		w.Int(int64(len(reg[string(ch)])))
	}
}

// --- CLIENT REPLY -----------------------------------------------------------

// clientPS.quiet bits: Redis's CLIENT_REPLY_OFF and CLIENT_REPLY_SKIP_NEXT
// (the command after CLIENT REPLY SKIP has its reply dropped).
const (
	replyOff = 1 << iota
	replySkipNext
)

// cmdClientReply: CLIENT REPLY ON|OFF|SKIP — ON replies OK; OFF and SKIP
// reply nothing. Replies are dropped, pushes (messages, subscription
// confirmations) still sent, as Redis's CLIENT_PUSHING does.
func cmdClientReply(s *Server, cl *client, argv [][]byte) {
	st := cl.psOf()
	switch strings.ToLower(string(argv[2])) {
	case "on":
		st.quiet = 0
		st.replyOn = true
		cl.w.OK()
	case "off":
		st.quiet |= replyOff
	case "skip":
		if st.quiet&replyOff == 0 {
			st.quiet |= replySkipNext
		}
	default:
		cl.w.Error(engine.ErrSyntax)
	}
}

// dispatchQuiet is dispatch for a client whose replies CLIENT REPLY
// drops: the command's output is cut back to what it pushed to itself.
func (s *Server) dispatchQuiet(cl *client, argv [][]byte) *cmdStat {
	st := cl.ps
	skip := st.quiet&replySkipNext != 0
	st.quiet &^= replySkipNext
	silent := skip || st.quiet&replyOff != 0
	st.silent, st.replyOn = silent, false
	mark := len(cl.w.B)
	r := s.dispatch(cl, argv)
	st.silent = false
	if silent && !st.replyOn {
		// (CLIENT REPLY ON clears the flags before its reply, which is
		// sent, as in Redis)
		cl.w.B = append(cl.w.B[:mark], st.quietB...)
	} else {
		cl.w.B = append(cl.w.B, st.quietB...)
	}
	st.quietB = st.quietB[:0]
	return r
}

// appendPingSubscribed is PING's reply to a RESP2 client with
// subscriptions: *2 pong <message or "">.
func appendPingSubscribed(b []byte, argv [][]byte) []byte {
	b = append(b, "*2\r\n$4\r\npong\r\n"...)
	if len(argv) == 2 {
		return appendBulk(b, argv[1])
	}
	return append(b, "$0\r\n\r\n"...)
}

// resetPubsub is RESET's part: every subscription dropped without a
// reply, CLIENT REPLY back to ON (Redis's clearClientConnectionState).
func (s *Server) resetPubsub(cl *client) {
	s.unsubscribeAll(cl)
	cl.ps.quiet = 0
}
