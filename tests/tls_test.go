package tests

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"limitdb/server"
)

// testPKI is a CA with a server certificate (for 127.0.0.1) and a client
// certificate, written as PEM files.
type testPKI struct {
	dir                 string
	caFile              string
	certFile, keyFile   string
	clientCert          tls.Certificate
	roots               *x509.CertPool
	clientCrt, clientKy string
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	p := &testPKI{dir: dir, roots: x509.NewCertPool()}
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "limitdb test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	p.roots.AddCert(ca)
	p.caFile = writePEM(t, dir, "ca.crt", "CERTIFICATE", caDER)
	issue := func(name string, serial int64, usage x509.ExtKeyUsage, ips []net.IP) (string, string, tls.Certificate) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, _ := x509.MarshalECPrivateKey(key)
		cf := writePEM(t, dir, name+".crt", "CERTIFICATE", der)
		kf := writePEM(t, dir, name+".key", "EC PRIVATE KEY", kder)
		pair, err := tls.LoadX509KeyPair(cf, kf)
		if err != nil {
			t.Fatal(err)
		}
		return cf, kf, pair
	}
	p.certFile, p.keyFile, _ = issue("server", 2, x509.ExtKeyUsageServerAuth, []net.IP{net.ParseIP("127.0.0.1")})
	p.clientCrt, p.clientKy, p.clientCert = issue("client", 3, x509.ExtKeyUsageClientAuth, nil)
	return p
}

func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	f := filepath.Join(dir, name)
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// tlsOptions are the start-up options giving a server TLS on tlsPort.
func (p *testPKI) tlsOptions(tlsPort int) []string {
	return []string{"--tls-port", strconv.Itoa(tlsPort), "--tls-cert-file", p.certFile,
		"--tls-key-file", p.keyFile, "--tls-ca-cert-file", p.caFile}
}

// pingTLS runs PING through go-redis over TLS; withCert adds the client
// certificate; minV/maxV bound the client's TLS versions (0: default).
func (p *testPKI) pingTLS(addr string, withCert bool, minV, maxV uint16) error {
	conf := &tls.Config{RootCAs: p.roots, MinVersion: minV, MaxVersion: maxV}
	if withCert {
		conf.Certificates = []tls.Certificate{p.clientCert}
	}
	c := redis.NewClient(&redis.Options{Addr: addr, TLSConfig: conf, MaxRetries: -1, DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second, Protocol: 2})
	defer c.Close()
	r, err := c.Ping(context.Background()).Result()
	if err == nil && r != "PONG" {
		err = fmt.Errorf("PING answered %q", r)
	}
	return err
}

// plainOnTLS sends a plain PING to a TLS port and returns what comes back
// before the server closes (or 1 s passes).
func plainOnTLS(t *testing.T, addr string) []byte {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write([]byte("PING\r\n"))
	nc.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 512)
	n, _ := nc.Read(buf)
	return buf[:n]
}

// TestTLS runs the same TLS checks (from Redis's tests/unit/tls.tcl)
// against redis-server and limitdb, each serving a plain port and a
// tls-port at once: go-redis over TLS with a client certificate is
// served; a plain client on the TLS port gets no RESP reply;
// tls-auth-clients yes|no|optional decides whether a client without a
// certificate is served; tls-protocols limits the versions; CONFIG SET
// tls-port moves the TLS listener.
func TestTLS(t *testing.T) {
	p := newTestPKI(t)
	rTLS, _ := freePort()
	rAddr := mustRedisBare(t, append(p.tlsOptions(rTLS), "--save", "", "--appendonly", "no")...)
	lTLS, _ := freePort()
	srv := mustLimitdbConfig(t, server.Config{Addr: "127.0.0.1:0"}, "", p.tlsOptions(lTLS)...)
	for _, target := range []struct{ name, plain, tls string }{
		{"redis", rAddr, fmt.Sprintf("127.0.0.1:%d", rTLS)},
		{"limitdb", srv.Addr().String(), fmt.Sprintf("127.0.0.1:%d", lTLS)},
	} {
		t.Run(target.name, func(t *testing.T) { checkTLS(t, p, target.plain, target.tls) })
	}
	// tls-ca-cert-dir (limitdb reads every file in it; Redis's OpenSSL
	// wants c_rehash names, so this part is limitdb's own)
	ctl := mustDial(t, srv.Addr().String())
	caDir, emptyDir := filepath.Join(p.dir, "cas"), filepath.Join(p.dir, "empty")
	os.Mkdir(caDir, 0o755)
	os.Mkdir(emptyDir, 0o755)
	pem, _ := os.ReadFile(p.caFile)
	os.WriteFile(filepath.Join(caDir, "ca.pem"), pem, 0o644)
	tlsAddr := srv.TLSAddr().String()
	if r := mustDo(t, ctl, "CONFIG", "SET", "tls-ca-cert-file", "", "tls-ca-cert-dir", caDir); string(r) != "+OK\r\n" {
		t.Fatalf("tls-ca-cert-dir: %q", r)
	}
	if err := p.pingTLS(tlsAddr, true, 0, 0); err != nil {
		t.Fatalf("client certificate checked against tls-ca-cert-dir: %v", err)
	}
	mustDo(t, ctl, "CONFIG", "SET", "tls-ca-cert-dir", emptyDir)
	if err := p.pingTLS(tlsAddr, true, 0, 0); err == nil {
		t.Fatal("client certificate accepted with no CA in tls-ca-cert-dir")
	}
}

func checkTLS(t *testing.T, p *testPKI, plainAddr, tlsAddr string) {
	ctl := mustDial(t, plainAddr)
	defer ctl.Close()
	set := func(args ...string) {
		t.Helper()
		if r := mustDo(t, ctl, append([]string{"CONFIG", "SET"}, args...)...); string(r) != "+OK\r\n" {
			t.Fatalf("CONFIG SET %q: %q", args, r)
		}
	}
	if err := p.pingTLS(tlsAddr, true, 0, 0); err != nil {
		t.Fatalf("TLS client with certificate: %v", err)
	}
	if r := plainOnTLS(t, tlsAddr); len(r) > 0 && (r[0] == '+' || r[0] == '-') {
		t.Fatalf("plain client on the TLS port got a RESP reply %q", r)
	}
	if err := p.pingTLS(tlsAddr, false, 0, 0); err == nil {
		t.Fatal("tls-auth-clients yes served a client without a certificate")
	}
	set("tls-auth-clients", "no")
	if err := p.pingTLS(tlsAddr, false, 0, 0); err != nil {
		t.Fatalf("tls-auth-clients no: %v", err)
	}
	set("tls-auth-clients", "optional")
	if err := p.pingTLS(tlsAddr, false, 0, 0); err != nil {
		t.Fatalf("tls-auth-clients optional, no certificate: %v", err)
	}
	if err := p.pingTLS(tlsAddr, true, 0, 0); err != nil {
		t.Fatalf("tls-auth-clients optional, certificate: %v", err)
	}
	set("tls-auth-clients", "yes")
	if err := p.pingTLS(tlsAddr, false, 0, 0); err == nil {
		t.Fatal("tls-auth-clients yes again served a client without a certificate")
	}
	set("tls-protocols", "TLSv1.2")
	if err := p.pingTLS(tlsAddr, true, tls.VersionTLS13, tls.VersionTLS13); err == nil {
		t.Fatal("tls-protocols TLSv1.2 accepted a TLS 1.3-only client")
	}
	if err := p.pingTLS(tlsAddr, true, tls.VersionTLS12, tls.VersionTLS12); err != nil {
		t.Fatalf("tls-protocols TLSv1.2, TLS 1.2 client: %v", err)
	}
	set("tls-protocols", "")
	if err := p.pingTLS(tlsAddr, true, tls.VersionTLS13, tls.VersionTLS13); err != nil {
		t.Fatalf("default protocols, TLS 1.3 client: %v", err)
	}
	// a bad certificate file is refused and the old configuration stays
	if r := mustDo(t, ctl, "CONFIG", "SET", "tls-cert-file", filepath.Join(p.dir, "missing.crt")); string(r) != "-ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to update TLS configuration. Check server logs.\r\n" {
		t.Fatalf("missing certificate file: %q", r)
	}
	if err := p.pingTLS(tlsAddr, true, 0, 0); err != nil {
		t.Fatalf("after a refused tls-cert-file: %v", err)
	}
	np, _ := freePort()
	set("tls-port", strconv.Itoa(np))
	newAddr := fmt.Sprintf("127.0.0.1:%d", np)
	if err := p.pingTLS(newAddr, true, 0, 0); err != nil {
		t.Fatalf("new tls-port: %v", err)
	}
	if nc, err := net.DialTimeout("tcp", tlsAddr, time.Second); err == nil {
		nc.Close()
		t.Fatal("old tls-port still accepts")
	}
	if r := mustDo(t, ctl, "PING"); string(r) != "+PONG\r\n" {
		t.Fatalf("plain port: %q", r)
	}
}
