package tests

import (
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Effect tests of the tls-* parameters, on TestConfigEffects's limitdb:
// each turns a TLS port on with certificates of its own (see newTestPKI)
// and turns it off again when it ends. Clients are go-redis over TLS
// (testPKI.pingTLS); a testPKI copy with another client certificate is a
// client that certificate authority did not sign.

// tlsOn configures the certificates of a new test PKI and a TLS port,
// and returns the PKI and the TLS address.
func tlsOn(t *testing.T, c *Conn) (*testPKI, string) {
	t.Helper()
	p := newTestPKI(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		expectDo(t, c, "+OK\r\n", "CONFIG", "SET", "tls-port", "0")
		expectDo(t, c, "+OK\r\n", "CONFIG", "SET", "tls-cert-file", "", "tls-key-file", "", "tls-ca-cert-file", "",
			"tls-ca-cert-dir", "", "tls-auth-clients", "yes", "tls-protocols", "")
	})
	expectDo(t, c, "+OK\r\n", "CONFIG", "SET", "tls-cert-file", p.certFile, "tls-key-file", p.keyFile,
		"tls-ca-cert-file", p.caFile, "tls-port", strconv.Itoa(port))
	return p, "127.0.0.1:" + strconv.Itoa(port)
}

// withClientCert is p as seen by a client presenting other's certificate.
func withClientCert(p, other *testPKI) *testPKI {
	q := *p
	q.clientCert = other.clientCert
	return &q
}

// tlsServed fails the test unless p's client (with its certificate when
// withCert) gets PONG over TLS at addr, limited to the TLS version v
// when v is not 0.
func tlsServed(t *testing.T, p *testPKI, addr string, withCert bool, v uint16, what string) {
	t.Helper()
	if err := p.pingTLS(addr, withCert, v, v); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// tlsRefused fails the test if that client gets PONG.
func tlsRefused(t *testing.T, p *testPKI, addr string, withCert bool, v uint16, what string) {
	t.Helper()
	if err := p.pingTLS(addr, withCert, v, v); err == nil {
		t.Fatalf("%s: served", what)
	}
}

// effectTLSPort: no TLS listener while 0; one that serves TLS clients
// (and gives a plain client no RESP reply) once set; gone at 0 again.
func effectTLSPort(t *testing.T, c *Conn, addr, name string) {
	p := newTestPKI(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	tlsAddr := "127.0.0.1:" + strconv.Itoa(port)
	defer configSet(t, c, "tls-cert-file", "")
	defer configSet(t, c, "tls-key-file", "")
	defer configSet(t, c, "tls-ca-cert-file", "")
	expectDo(t, c, "+OK\r\n", "CONFIG", "SET", "tls-cert-file", p.certFile, "tls-key-file", p.keyFile, "tls-ca-cert-file", p.caFile)
	tlsRefused(t, p, tlsAddr, true, 0, "tls-port 0")
	configSet(t, c, name, strconv.Itoa(port))
	defer configSet(t, c, name, "0")
	tlsServed(t, p, tlsAddr, true, 0, name+" set")
	if r := plainOnTLS(t, tlsAddr); len(r) > 0 && (r[0] == '+' || r[0] == '-') {
		t.Fatalf("plain client on the TLS port got a RESP reply %q", r)
	}
	configSet(t, c, name, "0")
	if nc, err := net.DialTimeout("tcp", tlsAddr, time.Second); err == nil {
		nc.Close()
		t.Fatalf("%s 0: the TLS port still accepts", name)
	}
	expectDo(t, c, "+PONG\r\n", "PING")
}

// effectTLSKeyPair (tls-cert-file, tls-key-file): the file is loaded: set
// alone to another pair's file it does not match the other half and is
// refused (the old certificate stays); set with its other half, new
// handshakes present the new certificate (a client trusting only its
// authority is served, one trusting only the old one is not).
func effectTLSKeyPair(t *testing.T, c *Conn, addr, name string) {
	p, tlsAddr := tlsOn(t, c)
	q := newTestPKI(t)
	file := map[string]string{"tls-cert-file": q.certFile, "tls-key-file": q.keyFile}[name]
	expectDo(t, c, "-ERR CONFIG SET failed (possibly related to argument '"+name+"') - Unable to update TLS configuration. Check server logs.\r\n",
		"CONFIG", "SET", name, file)
	tlsServed(t, p, tlsAddr, true, 0, "after a refused "+name)
	expectDo(t, c, "+OK\r\n", "CONFIG", "SET", "tls-cert-file", q.certFile, "tls-key-file", q.keyFile)
	// the client certificate is still checked against p's authority
	tlsServed(t, withClientCert(q, p), tlsAddr, true, 0, "the new certificate")
	tlsRefused(t, p, tlsAddr, true, 0, "a client trusting only the old certificate's authority")
}

// effectTLSCAFile: client certificates are accepted when signed by the
// authority in tls-ca-cert-file, and only then.
func effectTLSCAFile(t *testing.T, c *Conn, addr, name string) {
	p, tlsAddr := tlsOn(t, c)
	q := newTestPKI(t)
	tlsServed(t, p, tlsAddr, true, 0, "client of the configured authority")
	tlsRefused(t, withClientCert(p, q), tlsAddr, true, 0, "client of another authority")
	configSet(t, c, name, q.caFile)
	tlsServed(t, withClientCert(p, q), tlsAddr, true, 0, "client of the new authority")
	tlsRefused(t, p, tlsAddr, true, 0, "client of the old authority")
}

// effectTLSCADir: the same with the authorities of the files in
// tls-ca-cert-dir (tls-ca-cert-file empty).
func effectTLSCADir(t *testing.T, c *Conn, addr, name string) {
	p, tlsAddr := tlsOn(t, c)
	q := newTestPKI(t)
	dir := filepath.Join(t.TempDir(), "cas")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(q.caFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "q.pem"), pem, 0o644); err != nil {
		t.Fatal(err)
	}
	expectDo(t, c, "+OK\r\n", "CONFIG", "SET", "tls-ca-cert-file", "", name, dir)
	tlsServed(t, withClientCert(p, q), tlsAddr, true, 0, "client of the authority in the directory")
	tlsRefused(t, p, tlsAddr, true, 0, "client of an authority not in the directory")
	if err := os.Remove(filepath.Join(dir, "q.pem")); err != nil {
		t.Fatal(err)
	}
	configSet(t, c, name, dir) // reloaded even when unchanged
	tlsRefused(t, withClientCert(p, q), tlsAddr, true, 0, "client of an authority removed from the directory")
}

// effectTLSAuthClients: yes requires a client certificate, no ignores it,
// optional verifies one if given.
func effectTLSAuthClients(t *testing.T, c *Conn, addr, name string) {
	p, tlsAddr := tlsOn(t, c)
	stranger := withClientCert(p, newTestPKI(t))
	tlsRefused(t, p, tlsAddr, false, 0, "yes, no certificate")
	tlsServed(t, p, tlsAddr, true, 0, "yes, certificate")
	configSet(t, c, name, "no")
	tlsServed(t, p, tlsAddr, false, 0, "no, no certificate")
	configSet(t, c, name, "optional")
	tlsServed(t, p, tlsAddr, false, 0, "optional, no certificate")
	tlsServed(t, p, tlsAddr, true, 0, "optional, certificate")
	tlsRefused(t, stranger, tlsAddr, true, 0, "optional, certificate of another authority")
	configSet(t, c, name, "yes")
	tlsRefused(t, p, tlsAddr, false, 0, "yes again, no certificate")
}

// effectTLSProtocols: only the listed TLS versions are accepted.
func effectTLSProtocols(t *testing.T, c *Conn, addr, name string) {
	p, tlsAddr := tlsOn(t, c)
	configSet(t, c, name, "TLSv1.2")
	tlsServed(t, p, tlsAddr, true, tls.VersionTLS12, "TLSv1.2, 1.2 client")
	tlsRefused(t, p, tlsAddr, true, tls.VersionTLS13, "TLSv1.2, 1.3 client")
	configSet(t, c, name, "TLSv1.3")
	tlsServed(t, p, tlsAddr, true, tls.VersionTLS13, "TLSv1.3, 1.3 client")
	tlsRefused(t, p, tlsAddr, true, tls.VersionTLS12, "TLSv1.3, 1.2 client")
	configSet(t, c, name, "TLSv1.2 TLSv1.3")
	tlsServed(t, p, tlsAddr, true, tls.VersionTLS12, "both, 1.2 client")
	tlsServed(t, p, tlsAddr, true, tls.VersionTLS13, "both, 1.3 client")
}
