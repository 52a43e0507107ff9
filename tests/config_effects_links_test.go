package tests

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The settings of a node's links to the others and to clients beyond
// one machine: cluster-announce-* (containers, NAT) and TLS between nodes.

// effectClusterAnnounce: cluster-announce-ip, -port and -bus-port replace
// the addresses a cluster-mode node gives clients and the other nodes:
// CLUSTER NODES and CLUSTER SLOTS show them (so MOVED names them), and
// the Raft configuration holds the announced inter-node address. Each
// name is checked alone: the others keep the listeners' values.
func effectClusterAnnounce(t *testing.T, c *Conn, addr, name string) {
	refusedWith("7", immutable)(t, c, addr, name)
	raftPort := freePortOn(t, "127.0.0.1")
	val := map[string]string{"cluster-announce-ip": "10.1.2.3", "cluster-announce-port": "7777", "cluster-announce-bus-port": "17777"}[name]
	p := mustProc(t, "", "--cluster-enabled", "yes", "--raft-addr", "127.0.0.1:"+strconv.Itoa(raftPort), "--"+name, val)
	host, port, bus := "127.0.0.1", strconv.Itoa(p.port), strconv.Itoa(raftPort)
	switch name {
	case "cluster-announce-ip":
		host = val
	case "cluster-announce-port":
		port = val
	default:
		bus = val
	}
	ctx := context.Background()
	nodes, err := p.cli.Do(ctx, "CLUSTER", "NODES").Text()
	if err != nil {
		t.Fatal(err)
	}
	if want := " " + host + ":" + port + "@" + bus + " myself,master "; !strings.Contains(nodes, want) {
		t.Fatalf("CLUSTER NODES without %q:\n%s", want, nodes)
	}
	if err := p.cli.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", "0", "16383").Err(); err != nil {
		t.Fatal(err)
	}
	slots, err := p.cli.Do(ctx, "CLUSTER", "SLOTS").Slice()
	if err != nil {
		t.Fatal(err)
	}
	if m := slots[0].([]any)[2].([]any); m[0] != host || strconv.FormatInt(m[1].(int64), 10) != port {
		t.Fatalf("CLUSTER SLOTS' master %v, want %s %s", m, host, port)
	}
	info, _ := p.raftInfo()
	if want := "raft_addr=" + net.JoinHostPort(map[bool]string{true: host, false: "127.0.0.1"}[name == "cluster-announce-ip"], bus) + ","; !strings.Contains(info["raft_member0"], want) {
		t.Fatalf("the Raft configuration's member %q, want %s", info["raft_member0"], want)
	}
}

// effectLinkTLS: with tls-cluster (or tls-replication) yes every
// inter-node link is TLS, each end presenting its certificate and
// verifying the other's against the CA. Two such nodes form a cluster and
// replicate over it; a third that does not speak TLS (tls-replication)
// or whose certificate another CA issued (tls-cluster) is taken into the
// configuration by its RAFT JOIN (the client port) but never receives an
// entry, and never votes: its links fail their handshakes.
func effectLinkTLS(t *testing.T, c *Conn, addr, name string) {
	refusedWith("yes", immutable)(t, c, addr, name)
	pki := newTestPKI(t)
	on := func(p *testPKI) []string {
		return []string{"--" + name, "yes", "--tls-cert-file", p.certFile, "--tls-key-file", p.keyFile, "--tls-ca-cert-file", p.caFile}
	}
	a, b := twoNodes(t, on(pki), on(pki))
	ctx := context.Background()
	if err := a.cli.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool {
		v, err := b.cli.Do(ctx, "GET", "k").Text()
		return err == nil && v == "v"
	}) {
		t.Fatal("the write did not reach the second node over TLS")
	}
	var third []string
	if name == "tls-cluster" {
		third = on(newTestPKI(t))
	}
	ra := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePortOn(t, "127.0.0.1")))
	x := mustProc(t, "", append([]string{"--node-id", "x", "--raft-addr", ra, "--join", a.addr()}, third...)...)
	time.Sleep(3 * time.Second)
	if m, _ := x.raftInfo(); m["raft_applied_index"] != "0" {
		t.Fatalf("a node without the cluster's TLS applied %s entries\n%s", m["raft_applied_index"], x.output())
	}
	if m, _ := a.raftInfo(); strings.Count(strings.Join(mapValues(m, "raft_member"), " "), "voter=1") != 2 {
		t.Fatalf("members %v", mapValues(m, "raft_member"))
	}
	if !strings.Contains(a.output(), "TLS handshake") {
		t.Fatalf("no refused TLS handshake in the leader's log:\n%s", a.output())
	}
}

// mapValues is the values of m whose keys start with prefix.
func mapValues(m map[string]string, prefix string) []string {
	var vs []string
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			vs = append(vs, v)
		}
	}
	return vs
}
