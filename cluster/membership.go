package cluster

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/raft"
)

// Membership changes one server at a time, as Raft's single-server
// changes require: a new node joins as a non-voter (adding a voter to a
// cluster of one would raise the quorum to two at once, before the new
// node has anything), and the leader promotes it once it has applied
// nearly everything (its ping reports its applied index).

// A member's Raft server ID is its node-id and the incarnation of its
// dir: "n2@5f0c3a9e1b2d4c6f". The incarnation is 64 random bits written to
// dir/raft/incarnation (synced) when the node first creates its Raft
// state, before it joins or bootstraps; a dir that lost its Raft state (a
// wiped or replaced disk) makes a new one. Raft connections name the ID
// they are meant for and a node refuses those meant for another
// (transport.go), so a node that comes back with an empty dir under its
// old node-id and address never votes or acknowledges as the member it
// was, with the log and the vote it lost: it is a new server, and joins
// (RAFT JOIN, --join) like one. A dir written before incarnations existed
// keeps its node-id as its Raft ID.

// incarnationFile holds the dir's incarnation (in dir/raft).
const incarnationFile = "incarnation"

// incarnation reads the incarnation of the dir's Raft state ("" for
// older Raft state without one), or, when there is no Raft state, makes a
// new one: a dir whose log and vote are gone is a new server even if the
// file survived (or a start crashed before joining; the leader then
// replaces the non-voter it added).
func incarnation(dir string, existing bool) (string, error) {
	p := filepath.Join(dir, incarnationFile)
	if existing {
		b, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			return "", nil
		}
		return strings.TrimSpace(string(b)), err
	}
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	inc := hex.EncodeToString(r[:])
	if err := writeSynced(p, []byte(inc)); err != nil {
		return "", fmt.Errorf("cluster: writing %s: %w", p, err)
	}
	return inc, nil
}

// writeSynced writes a new file and syncs it and its folder, so that the
// incarnation is on disk before anything of the Raft state is.
func writeSynced(p string, b []byte) error {
	tmp := p + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(p))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// raftID is the Raft server ID of node-id with incarnation inc.
func raftID(node, inc string) raft.ServerID {
	if inc == "" {
		return raft.ServerID(node)
	}
	return raft.ServerID(node + "@" + inc)
}

// nodeName is the node-id part of a Raft server ID (what RAFT INFO shows
// and RAFT REMOVE takes).
func nodeName(id raft.ServerID) string {
	s := string(id)
	if i := strings.LastIndexByte(s, '@'); i >= 0 && len(s)-i-1 == 16 {
		if _, err := hex.DecodeString(s[i+1:]); err == nil {
			return s[:i]
		}
	}
	return s
}

// dialedAs handles a Raft connection refused because it was meant for
// id. When id is this node-id under another incarnation and this node is
// a cluster of one, a cluster still holds this node as a member: its dir
// was replaced and it was started without --join, so it bootstrapped a
// new, empty cluster that would serve its clients apart from that
// cluster's data. It stops, saying so. (A wiped node that is joining has
// no configuration yet, and one that rejoined is not alone: stale dials
// for its old ID are only refused.)
func (n *Node) dialedAs(id string) {
	if nodeName(raft.ServerID(id)) != n.cfg.NodeID || !n.ready.Load() {
		return
	}
	servers := n.raft.GetConfiguration().Configuration().Servers
	if len(servers) != 1 || servers[0].ID != n.rid {
		return
	}
	n.fatalOnce.Do(func() {
		n.log.Error("cluster: stopping: another cluster holds this node as its member "+id+
			", so its dir was replaced: empty the dir again and start it with --join naming a member of that cluster, to rejoin as a new member (README, \"Replacing a node's disk\"), or RAFT REMOVE it there first",
			"node", string(n.rid))
		os.Exit(1)
	})
}

// promoteLag is how far behind the leader's commit index a non-voter may
// be and still be promoted.
const promoteLag = 64

// JoinProof is what a joining node sends with RAFT JOIN: with a cluster
// secret, HMAC-SHA256(secret, "join" id addr) in hex; without, "".
func JoinProof(secret, id, addr string) string {
	if secret == "" {
		return ""
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("join\x00" + id + "\x00" + addr))
	return hex.EncodeToString(m.Sum(nil))
}

// checkJoin does CheckJoin (api.go).
func (n *Node) checkJoin(id, addr, proof string, remote net.Addr) error {
	if n.cfg.Secret == "" {
		if !loopback(remote) {
			return ErrJoinAuth
		}
		return nil
	}
	if !hmac.Equal([]byte(proof), []byte(JoinProof(n.cfg.Secret, id, addr))) {
		return ErrJoinAuth
	}
	return nil
}

// onLeader runs a membership change here when this node leads, else asks
// the leader with the frame.
func (n *Node) onLeader(here func() error, frame byte, body []byte) error {
	if n.raft.State() == raft.Leader {
		return here()
	}
	a, err := n.fwd.call(frame, body, 30*time.Second)
	if err != nil {
		return err
	}
	if !a.ok() {
		return errors.New(string(a.data))
	}
	return nil
}

// leaderServers is the configuration, on the leader only.
func (n *Node) leaderServers() ([]raft.Server, error) {
	if n.raft.State() != raft.Leader {
		return nil, errNotLeader
	}
	cf := n.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return nil, err
	}
	return cf.Configuration().Servers, nil
}

func (n *Node) addNode(id, addr string) error {
	servers, err := n.leaderServers()
	if err != nil {
		return err
	}
	for _, s := range servers {
		if string(s.ID) == id && string(s.Address) == addr {
			return nil // already a member (RAFT JOIN sent again)
		}
		// the same node-id or address under another incarnation: that
		// member's dir is gone, and the new one takes its place, as a
		// non-voter until it caught up
		if nodeName(s.ID) == nodeName(raft.ServerID(id)) || string(s.Address) == addr {
			n.log.Info("cluster: removing a member replaced by a new incarnation", "node", string(s.ID), "by", id)
			if err := n.raft.RemoveServer(s.ID, 0, 10*time.Second).Error(); err != nil {
				return err
			}
		}
	}
	n.log.Info("cluster: adding a node as a non-voter", "node", id, "raft-addr", addr)
	return n.raft.AddNonvoter(raft.ServerID(id), raft.ServerAddress(addr), 0, 10*time.Second).Error()
}

func (n *Node) removeNode(id string) error {
	servers, err := n.leaderServers()
	if err != nil {
		return err
	}
	if s, ok := findMember(servers, id); ok {
		n.log.Info("cluster: removing a node", "node", string(s.ID))
		return n.raft.RemoveServer(s.ID, 0, 10*time.Second).Error()
	}
	return fmt.Errorf("ERR no such node: %s", id)
}

// findMember finds the server a user names: by its node-id (what RAFT
// INFO shows) or its whole Raft ID.
func findMember(servers []raft.Server, name string) (raft.Server, bool) {
	for _, s := range servers {
		if string(s.ID) == name || nodeName(s.ID) == name {
			return s, true
		}
	}
	return raft.Server{}, false
}

// maybePromote makes a caught-up non-voter a voter (on the leader). The
// forward link's ping handler calls it; AddVoter waits up to 10 s for the
// change to commit (longer than the follower's ping deadline), so it runs
// on a goroutine of its own, one at a time, and the link keeps answering
// pings and forwarded units meanwhile.
func (n *Node) maybePromote(id string, applied uint64) {
	if id == "" || n.raft.State() != raft.Leader {
		return
	}
	if applied+promoteLag < n.raft.CommitIndex() {
		return
	}
	cf := n.raft.GetConfiguration()
	if cf.Error() != nil {
		return
	}
	for _, s := range cf.Configuration().Servers {
		if string(s.ID) == id && s.Suffrage == raft.Nonvoter {
			if !n.promoting.CompareAndSwap(false, true) {
				return
			}
			n.log.Info("cluster: promoting a caught-up node to voter", "node", id)
			go func() {
				defer n.promoting.Store(false)
				if err := n.raft.AddVoter(s.ID, s.Address, 0, 10*time.Second).Error(); err != nil {
					n.log.Warn("cluster: promotion failed", "node", id, "err", err.Error())
				}
			}()
			return
		}
	}
}

// Joining is asynchronous: New starts joinLoop and returns, so the server
// serves while the node joins. Until the leader has added it the node
// has no configuration and knows no leader: it answers PING, INFO and
// RAFT INFO (raft_joining:1), a write or a linearizable read waits
// leader-wait-ms for a leader and then answers -CLUSTERDOWN, as on any
// follower without one, and a READONLY read sees the empty data set, as
// on a follower that is catching up. The loop retries until the join
// succeeds or the node closes: a member that is down, not listening yet
// (a "connection refused"), electing, or without a quorum (the leader of
// a cluster that just lost a node cannot change its configuration until
// its first entry commits) is a reason to wait, never to give up; only a
// refusal of this node's credentials, which retrying cannot mend, stops
// the process. Before, New joined in line: the process answered nothing
// until the leader had committed the change, and a dial refused ended
// the start.
const (
	joinBackoff    = 250 * time.Millisecond // the first wait after a failed attempt; doubled after each
	joinBackoffMax = 5 * time.Second
	// joinAttempt bounds one attempt (RAFT JOIN is answered once the
	// leader has committed the removal of an old incarnation and the
	// addition): the next attempt asks again, which is harmless
	// (addNode: a member already there is +OK)
	joinAttempt = 15 * time.Second
)

// joinLoop asks a member, through its client port, to add this node,
// until it is added or the node closes.
func (n *Node) joinLoop() {
	addr := string(n.trans.LocalAddr())
	proof := JoinProof(n.cfg.Secret, string(n.rid), addr)
	wait := joinBackoff
	var lastErr string
	var lastLog time.Time
	for attempt := 1; ; attempt++ {
		err := n.joinOnce(addr, proof)
		if err == nil {
			n.joining.Store(false)
			n.log.Info("cluster: joined", "through", n.cfg.Join, "node", string(n.rid), "attempts", attempt)
			return
		}
		select {
		case <-n.closing:
			return
		default:
		}
		if joinFatal(err) {
			n.fatalOnce.Do(func() {
				n.log.Error("cluster: stopping: the cluster refused this node's credentials (masteruser/masterauth, cluster-secret); retrying cannot mend that",
					"through", n.cfg.Join, "node", string(n.rid), "err", err.Error())
				os.Exit(1)
			})
		}
		// each new error is logged, a repeated one every 30 s
		if m := err.Error(); m != lastErr || time.Since(lastLog) >= 30*time.Second {
			n.log.Warn("cluster: join attempt failed, retrying", "through", n.cfg.Join, "node", string(n.rid),
				"attempt", attempt, "retry_in", wait.String(), "err", m)
			lastErr, lastLog = m, time.Now()
		}
		select {
		case <-time.After(wait):
		case <-n.closing:
			return
		}
		wait = min(2*wait, joinBackoffMax)
	}
}

// joinFatal reports whether a join attempt's error is a refusal of this
// node's credentials. Anything else (a dial refused, no leader, a
// leadership change, a timeout) is retried.
func joinFatal(err error) bool {
	m := err.Error()
	for _, p := range []string{"WRONGPASS", "NOAUTH", "NOPERM", ErrJoinAuth.Error()} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// Joining reports whether this node is still joining (started with
// --join on an empty dir and not added yet).
func (n *Node) Joining() bool { return n.joining.Load() }

// joinOnce sends RAFT JOIN over RESP to the member's client port.
func (n *Node) joinOnce(addr, proof string) error {
	c, err := net.DialTimeout("tcp", n.cfg.Join, 5*time.Second)
	if err != nil {
		return err
	}
	done := make(chan struct{})
	defer close(done)
	go func() { // Close does not wait out an attempt
		select {
		case <-n.closing:
			c.Close()
		case <-done:
		}
	}()
	defer c.Close()
	c.SetDeadline(time.Now().Add(joinAttempt))
	r := bufio.NewReader(c)
	cmd := func(args ...string) (string, error) {
		var b strings.Builder
		b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
		for _, a := range args {
			b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
		}
		if _, err := c.Write([]byte(b.String())); err != nil {
			return "", err
		}
		line, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(line, "-") {
			return "", errors.New(line[1:])
		}
		return line, nil
	}
	// masteruser and masterauth, as a Redis replica authenticates to its
	// master (AUTH pass, or AUTH user pass with a masteruser)
	if n.cfg.Link != nil {
		if user, pass := n.cfg.Link.LinkCredentials(); pass != "" {
			args := []string{"AUTH", pass}
			if user != "" {
				args = []string{"AUTH", user, pass}
			}
			if _, err := cmd(args...); err != nil {
				return fmt.Errorf("%w (AUTH with masteruser/masterauth)", err)
			}
		}
	}
	_, err = cmd("RAFT", "JOIN", string(n.rid), addr, proof)
	return err
}

// soleVoter reports whether this node is the only voter of the newest
// configuration Raft holds (committed or not): then its own log write
// commits an entry (proposer.stored). Raft's configuration is read
// without a round trip through its goroutines (a copy of the newest).
func (n *Node) soleVoter() bool {
	voters, self := 0, false
	for _, s := range n.raft.GetConfiguration().Configuration().Servers {
		if s.Suffrage == raft.Voter {
			voters++
			self = self || s.ID == n.rid
		}
	}
	return voters == 1 && self
}
