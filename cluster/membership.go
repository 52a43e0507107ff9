package cluster

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
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

// ErrJoinAuth refuses a join without the cluster's credentials.
var ErrJoinAuth = errors.New("ERR RAFT JOIN refused: wrong cluster secret (or, with none set, not from a loopback address)")

// CheckJoin authenticates a RAFT JOIN received on a client connection
// from remote.
func (n *Node) CheckJoin(id, addr, proof string, remote net.Addr) error {
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

// Join adds node id at raft address addr: directly on the leader, else
// through the leader's forwarding connection.
func (n *Node) Join(id, addr string) error {
	return n.onLeader(func() error { return n.addNode(id, addr) },
		frameJoin, appendBytes(appendBytes(nil, []byte(id)), []byte(addr)))
}

// Remove removes node id from the cluster (through the leader).
func (n *Node) Remove(id string) error {
	return n.onLeader(func() error { return n.removeNode(id) }, frameRemove, appendBytes(nil, []byte(id)))
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
	if !a.ok {
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
			return nil // already a member (a restarted joiner)
		}
		if string(s.ID) == id || string(s.Address) == addr {
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
	for _, s := range servers {
		if string(s.ID) == id {
			n.log.Info("cluster: removing a node", "node", id)
			return n.raft.RemoveServer(s.ID, 0, 10*time.Second).Error()
		}
	}
	return fmt.Errorf("ERR no such node: %s", id)
}

// maybePromote makes a caught-up non-voter a voter (on the leader).
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
			n.log.Info("cluster: promoting a caught-up node to voter", "node", id)
			if err := n.raft.AddVoter(s.ID, s.Address, 0, 10*time.Second).Error(); err != nil {
				n.log.Warn("cluster: promotion failed", "node", id, "err", err.Error())
			}
			return
		}
	}
}

// join asks a member, through its client port, to add this node, and
// retries for a while (the member may be electing).
func (n *Node) join() error {
	if n.cfg.RaftAddr == "" {
		return errors.New("cluster: --join needs --raft-addr (the address the others reach this node at)")
	}
	addr := n.trans.LocalAddr()
	proof := JoinProof(n.cfg.Secret, n.cfg.NodeID, string(addr))
	var last error
	for i := 0; i < 60; i++ {
		last = n.joinOnce(string(addr), proof)
		if last == nil {
			n.log.Info("cluster: joined", "through", n.cfg.Join, "node", n.cfg.NodeID)
			return nil
		}
		if strings.Contains(last.Error(), "refused") {
			break
		}
		select {
		case <-time.After(500 * time.Millisecond):
		case <-n.closing:
			return last
		}
	}
	return fmt.Errorf("cluster: joining through %s: %w", n.cfg.Join, last)
}

// joinOnce sends RAFT JOIN over RESP to the member's client port.
func (n *Node) joinOnce(addr, proof string) error {
	c, err := net.DialTimeout("tcp", n.cfg.Join, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(40 * time.Second))
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
	if n.cfg.JoinPass != "" {
		args := []string{"AUTH", n.cfg.JoinPass}
		if n.cfg.JoinUser != "" {
			args = []string{"AUTH", n.cfg.JoinUser, n.cfg.JoinPass}
		}
		if _, err := cmd(args...); err != nil {
			return err
		}
	}
	_, err = cmd("RAFT", "JOIN", n.cfg.NodeID, addr, proof)
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
			self = self || s.ID == raft.ServerID(n.cfg.NodeID)
		}
	}
	return voters == 1 && self
}
