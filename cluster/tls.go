package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"time"
)

// TLS between nodes (tls-cluster, tls-replication): every stream of the
// inter-node listener — Raft, forwarding, Pub/Sub, clock probes, queries
// between nodes and groups — shares one listener, so one switch covers
// them all. Both ends present this node's certificate and verify the
// other's chain against the CAs, as Redis's cluster bus and replication
// links do with tls-auth-clients: peers are addressed by IP and port
// (Raft's configuration holds addresses, not names), so, as Redis's
// OpenSSL setup, the chain is verified and the host name is not. A
// verified certificate replaces the loopback rule of a node without
// cluster-secret; the secret's handshake and masterauth's credentials
// still run inside the TLS session when configured.

// LinkTLS is what the inter-node links are secured with.
type LinkTLS struct {
	Cert tls.Certificate
	CAs  *x509.CertPool
	// MinVersion and MaxVersion follow tls-protocols (0: Go's defaults)
	MinVersion, MaxVersion uint16
}

var errNoPeerCert = errors.New("cluster: the peer presented no TLS certificate")

// verify checks a peer's chain against the CAs (client or server use).
func (l *LinkTLS) verify(raw [][]byte) error {
	if len(raw) == 0 {
		return errNoPeerCert
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, b := range raw {
		c, err := x509.ParseCertificate(b)
		if err != nil {
			return err
		}
		certs[i] = c
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{Roots: l.CAs, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	return err
}

func (l *LinkTLS) config() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{l.Cert},
		MinVersion:   max(l.MinVersion, tls.VersionTLS12),
		MaxVersion:   l.MaxVersion,
		// the chain is checked in VerifyPeerCertificate, the name is not
		// (above); ClientAuth asks the dialer for its certificate
		InsecureSkipVerify: true,
		ClientAuth:         tls.RequireAnyClientCert,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			return l.verify(raw)
		},
	}
}

// server runs the accepting side's handshake within handshakeTimeout.
func (l *LinkTLS) server(c net.Conn) (net.Conn, error) {
	tc := tls.Server(c, l.config())
	tc.SetDeadline(time.Now().Add(handshakeTimeout))
	if err := tc.Handshake(); err != nil {
		return nil, fmt.Errorf("cluster: TLS handshake: %w", err)
	}
	tc.SetDeadline(time.Time{})
	return tc, nil
}

// client runs the dialing side's handshake within timeout.
func (l *LinkTLS) client(c net.Conn, timeout time.Duration) (net.Conn, error) {
	tc := tls.Client(c, l.config())
	if timeout <= 0 || timeout > handshakeTimeout {
		timeout = handshakeTimeout
	}
	tc.SetDeadline(time.Now().Add(timeout))
	if err := tc.Handshake(); err != nil {
		return nil, fmt.Errorf("cluster: TLS handshake with %s: %w", c.RemoteAddr(), err)
	}
	tc.SetDeadline(time.Time{})
	return tc, nil
}
